package runner

// opGEMVAdd is a GEMV tile with the residual add fused into its output:
// the projection that ends a block of the layer (attention's o, the MLP's
// down) adds its columns to the residual stream itself.
//
//	reads:  x [B, k] bf16 (contiguous, the whole input); W rows [n_off, n_off+n) of [out, k] bf16;
//	        res[:, n_off:n_off+n] of [B, out] bf16
//	writes: y[:, n_off:n_off+n] of [B, out] bf16
//	params: batch (default 1), n_off, n, k, out (default n_off+n for batch 1)
//
// y = bf16(res + bf16(Σ_i x[b,i]·W[j,i])): the gemv task's bf16 output
// added as the add task adds it, so the result equals the two tasks in
// sequence. Tolerance: gemv's.
var opGEMVAdd = &numOp{
	name: "gemv_add", code: opCodeGEMVAdd,
	reads: 3, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		g := gemvCheck(c, false, "out")
		c.acc("read", 2, 2*g.off, 2*g.n, g.B, 2*g.out, 0)
		return [numArgs]uint64{g.B, g.n, g.k}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k := a[0], a[1], a[2]
		for b := uint64(0); b < B; b++ {
			res, y := rowAddr(r[2], b, 2*n), rowAddr(w[0], b, 2*n)
			gemvRows(h, loadBF(h, r[0].addr+2*k*b, k), r[1].addr, n, k, func(j uint64, s float32) {
				stBF(h, y+2*j, ldBF(h, res+2*j)+rbf(s))
			})
		}
	},
	tol: gemvTol,
}
