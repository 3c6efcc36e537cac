package runner

// opArgmax picks the next token: the index of the largest logit per
// sequence, the lowest index among equal maxima (as torch.argmax).
//
//	reads:  logits [B, vocab] fp32 (contiguous, the whole buffer)
//	writes: token [B] int32 (the whole buffer)
//	params: batch (default 1), vocab
//
// NaN logits never win. The device code scans the vocabulary in
// per-thread tiles and reduces (value, index) pairs across the block.
// Exact.
var opArgmax = &numOp{
	name: "argmax", code: opCodeArgmax,
	reads: 1, writes: []elemKind{elemI32},
	check: func(c *checker) [numArgs]uint64 {
		B, V := c.batch(), c.param("vocab", 1)
		c.acc("read", 0, 0, 4*B*V, 0, 0, 4*B*V)
		c.acc("write", 0, 0, 4*B, 0, 0, 4*B)
		return [numArgs]uint64{B, V}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, V := a[0], a[1]
		for b := uint64(0); b < B; b++ {
			best, idx := float32(0), int64(-1)
			for i := uint64(0); i < V; i++ {
				v := ldF32(h, r[0].addr+4*(b*V+i))
				if v == v && (idx < 0 || v > best) {
					best, idx = v, int64(i)
				}
			}
			if idx < 0 {
				idx = 0
			}
			stU32(h, w[0].addr+4*b, uint32(idx))
		}
	},
}
