package runner

// MaxNormElems is the most elements (batch × k) whose RMSNorm a fused GEMV
// ([opNormGEMV], [opNormGateUp]) keeps in shared memory: the normalized
// input of every batch row is computed once per task into the block's
// 16 KiB scratch and read from there by every output row.
const MaxNormElems = 8192

// opNormGEMV is a GEMV tile whose input is RMSNorm of x: RMSNorm fused
// into the projection that reads it, so that no task and no dependent hop
// sits between them.
//
//	reads:  x [B, k] bf16 (contiguous, the whole input); W rows [n_off, n_off+n) of [out, k] bf16;
//	        the norm weight [k] bf16 (the whole buffer)
//	writes: y[:, n_off:n_off+n] of [B, out], bf16 or fp32 (out_elem 2 or 4)
//	params: those of gemv, and eps_e9 (ε × 10⁹); batch × k at most MaxNormElems
//
// y = gemv(rmsnorm(x)): every element of the normalized input is rounded
// exactly as opRMSNorm rounds it, so the result equals the rmsnorm task
// followed by the gemv task. Tolerance: gemv's.
var opNormGEMV = &numOp{
	name: "norm_gemv", code: opCodeNormGEMV,
	reads: 3, writes: []elemKind{elemBF16},
	kindsOf: gemvKinds,
	check: func(c *checker) [numArgs]uint64 {
		g := gemvCheck(c, true, "out")
		eps := normCheck(c, g, 2)
		return [numArgs]uint64{g.B, g.n, g.k, g.elem, g.rnd, f32bits(eps)}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k, elem, rnd, eps := a[0], a[1], a[2], a[3], a[4], bitsF32(a[5])
		for b := uint64(0); b < B; b++ {
			gemvRows(h, normRow(h, r[0].addr+2*k*b, r[2].addr, k, eps), r[1].addr, n, k, func(j uint64, s float32) {
				storeGEMV(h, rowAddr(w[0], b, elem*n)+elem*j, elem, rnd, s)
			})
		}
	},
	tol: gemvTol,
}

// normCheck checks the norm weight of a fused GEMV (read i, [k] bf16, the
// whole buffer), the eps_e9 param and the shared-memory bound, and returns
// ε.
func normCheck(c *checker, g gemvShape, i int) float32 {
	eps := c.fixed("eps", 0)
	c.acc("read", i, 0, 2*g.k, 0, 0, 2*g.k)
	if c.err == nil && g.B*g.k > MaxNormElems {
		c.fail("batch %d × k %d = %d normalized inputs, more than the %d a fused norm holds", g.B, g.k, g.B*g.k, MaxNormElems)
	}
	return eps
}
