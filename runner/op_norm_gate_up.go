package runner

// opNormGateUp is one tile of Llama's MLP input side in one task: RMSNorm
// of x, the gate and up projections of the same columns, and SiLU·mul of
// the two.
//
//	reads:  x [B, k] bf16 (contiguous, the whole input); Wgate rows [n_off, n_off+n) and Wup rows
//	        [n_off, n_off+n) of [width, k] bf16; the norm weight [k] bf16 (the whole buffer)
//	writes: gate, up and act [:, n_off:n_off+n] of [B, width] bf16
//	params: batch (default 1), n_off, n, k, width (default n_off+n for batch 1), eps_e9;
//	        batch × k at most MaxNormElems
//
// gate and up are norm_gemv's outputs for the two weights, and act =
// bf16(bf16(silu(gate)) · up) as opSiLUMul computes it from them, so the
// result equals rmsnorm, the two gemv tasks and silu_mul in sequence. The
// device writes gate and up, synchronizes the block and reads them back
// for act. Tolerance: gemv's.
var opNormGateUp = &numOp{
	name: "norm_gate_up", code: opCodeNormGateUp,
	reads: 4, writes: []elemKind{elemBF16, elemBF16, elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		g := gemvCheck(c, false, "width")
		c.weightRows(2, g)
		eps := normCheck(c, g, 3)
		c.outCols(1, g)
		c.outCols(2, g)
		return [numArgs]uint64{g.B, g.n, g.k, f32bits(eps)}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k, eps := a[0], a[1], a[2], bitsF32(a[3])
		for b := uint64(0); b < B; b++ {
			x := normRow(h, r[0].addr+2*k*b, r[3].addr, k, eps)
			gate, up, act := rowAddr(w[0], b, 2*n), rowAddr(w[1], b, 2*n), rowAddr(w[2], b, 2*n)
			gemvRows(h, x, r[1].addr, n, k, func(j uint64, s float32) { stBF(h, gate+2*j, s) })
			gemvRows(h, x, r[2].addr, n, k, func(j uint64, s float32) { stBF(h, up+2*j, s) })
			for j := uint64(0); j < n; j++ {
				g := ldBF(h, gate+2*j)
				stBF(h, act+2*j, rbf(g/(1+expf(-g)))*ldBF(h, up+2*j))
			}
		}
	},
	tol: gemvTol,
}
