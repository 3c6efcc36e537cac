package runner

// opEmbed gathers embedding rows by token id.
//
//	reads:  token [B] int32 (the whole buffer); table [vocab, hidden] bf16 (the whole buffer)
//	writes: x [B, hidden] bf16 (contiguous)
//	params: batch (default 1), hidden, vocab
//
// x[b] = table[token[b]]; a token outside [0, vocab) gives a row of zeros.
// The result is a copy, so the tolerance is exact.
var opEmbed = &numOp{
	name: "embed", code: opCodeEmbed,
	reads: 2, writes: []elemKind{elemBF16},
	check: func(c *checker) (a [numArgs]uint64) {
		B, H, V := c.batch(), c.param("hidden", 1), c.param("vocab", 1)
		c.acc("read", 0, 0, 4*B, 0, 0, 4*B)
		c.acc("read", 1, 0, 2*V*H, 0, 0, 2*V*H)
		c.acc("write", 0, 0, 2*B*H, 0, 0, 0)
		return [numArgs]uint64{B, H, V}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, H, V := a[0], a[1], a[2]
		for b := uint64(0); b < B; b++ {
			tok := int32(ldU32(h, r[0].addr+4*b))
			dst := w[0].addr + 2*H*b
			if tok < 0 || uint64(tok) >= V {
				clear(h[dst : dst+2*H])
				continue
			}
			copy(h[dst:dst+2*H], h[r[1].addr+2*H*uint64(tok):])
		}
	},
}
