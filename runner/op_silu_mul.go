package runner

// opSiLUMul is the gated activation of Llama's MLP on one tile of columns.
//
//	reads:  gate[:, n_off:n_off+n] and up[:, n_off:n_off+n] of [B, width] bf16
//	writes: act[:, n_off:n_off+n] of [B, width] bf16
//	params: batch (default 1), n_off, n, width (default n_off+n for batch 1)
//
// act = bf16(bf16(silu(gate)) · up) with silu(g) = g / (1 + exp(−g)) in
// fp32: PyTorch's bf16 rounding of act_fn(gate) * up. Tolerance: exp; one
// bf16 rounding.
var opSiLUMul = &numOp{
	name: "silu_mul", code: opCodeSiLUMul,
	reads: 2, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		B, off, n := c.batch(), c.param("n_off", 0), c.param("n", 1)
		width := c.optParam("width", int64(off+n), 1)
		if c.err == nil && off+n > width {
			c.fail("columns [%d, %d) outside width %d", off, off+n, width)
		}
		c.acc("read", 0, 2*off, 2*n, B, 2*width, 0)
		c.acc("read", 1, 2*off, 2*n, B, 2*width, 0)
		c.acc("write", 0, 2*off, 2*n, B, 2*width, 0)
		return [numArgs]uint64{B, n}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n := a[0], a[1]
		for b := uint64(0); b < B; b++ {
			g, u, y := rowAddr(r[0], b, 2*n), rowAddr(r[1], b, 2*n), rowAddr(w[0], b, 2*n)
			for i := uint64(0); i < n; i++ {
				x := ldBF(h, g+2*i)
				stBF(h, y+2*i, rbf(x/(1+expf(-x)))*ldBF(h, u+2*i))
			}
		}
	},
	tol: Tolerance{Abs: 1e-6, Rel: 1.0 / 64},
}
