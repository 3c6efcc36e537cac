package runner

// opRMSNorm is Llama's RMSNorm, rounded where PyTorch's bf16 LlamaRMSNorm
// rounds.
//
//	reads:  x [B, hidden] bf16 (contiguous); weight [hidden] bf16 (the whole buffer)
//	writes: y [B, hidden] bf16 (contiguous)
//	params: batch (default 1), hidden, eps_e9 (ε × 10⁹)
//
// With s = Σ x[b,i]² in fp32 and r = 1/√(s/hidden + ε):
// y[b,i] = bf16(weight[i] · bf16(x[b,i] · r)). Tolerance: the sum's order
// and the device's rsqrt move results by at most a rounding of each bf16
// step.
var opRMSNorm = &numOp{
	name: "rmsnorm", code: opCodeRMSNorm,
	reads: 2, writes: []elemKind{elemBF16},
	check: func(c *checker) (a [numArgs]uint64) {
		B, H := c.batch(), c.param("hidden", 1)
		eps := c.fixed("eps", 0)
		c.acc("read", 0, 0, 2*B*H, 0, 0, 0)
		c.acc("read", 1, 0, 2*H, 0, 0, 2*H)
		c.acc("write", 0, 0, 2*B*H, 0, 0, 0)
		return [numArgs]uint64{B, H, f32bits(eps)}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, H, eps := a[0], a[1], bitsF32(a[2])
		for b := uint64(0); b < B; b++ {
			for i, v := range normRow(h, r[0].addr+2*H*b, r[1].addr, H, eps) {
				stBF(h, w[0].addr+2*H*b+2*uint64(i), v)
			}
		}
	},
	tol: Tolerance{Abs: 1e-6, Rel: 1.0 / 64},
}

// normRow is one row of RMSNorm: the n bf16 values at x normalized with
// the bf16 weight at w, bf16(w[i] · bf16(x[i] · r)), as float32.
func normRow(h []byte, x, w, n uint64, eps float32) []float32 {
	v := loadBF(h, x, n)
	var s float32
	for _, e := range v {
		s += e * e
	}
	inv := rsqrtf(s/float32(n) + eps)
	for i, e := range v {
		v[i] = rbf(ldBF(h, w+2*uint64(i)) * rbf(e*inv))
	}
	return v
}
