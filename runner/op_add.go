package runner

// opResidualAdd is the residual add of two bf16 activations.
//
//	reads:  a [B, n] bf16, b [B, n] bf16 (contiguous)
//	writes: y [B, n] bf16 (contiguous)
//	params: batch (default 1), n
//
// y = bf16(a + b): the sum of two bf16 values is exact in fp32, so the
// result is exact.
var opResidualAdd = &numOp{
	name: "add", code: opCodeResidualAdd,
	reads: 2, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		B, n := c.batch(), c.param("n", 1)
		c.acc("read", 0, 0, 2*B*n, 0, 0, 0)
		c.acc("read", 1, 0, 2*B*n, 0, 0, 0)
		c.acc("write", 0, 0, 2*B*n, 0, 0, 0)
		return [numArgs]uint64{B * n}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		for i := uint64(0); i < a[0]; i++ {
			stBF(h, w[0].addr+2*i, ldBF(h, r[0].addr+2*i)+ldBF(h, r[1].addr+2*i))
		}
	},
}
