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
			x := r[0].addr + 2*H*b
			var s float32
			for i := uint64(0); i < H; i++ {
				v := ldBF(h, x+2*i)
				s += v * v
			}
			inv := rsqrtf(s/float32(H) + eps)
			for i := uint64(0); i < H; i++ {
				stBF(h, w[0].addr+2*H*b+2*i, ldBF(h, r[1].addr+2*i)*rbf(ldBF(h, x+2*i)*inv))
			}
		}
	},
	tol: Tolerance{Abs: 1e-6, Rel: 1.0 / 64},
}
