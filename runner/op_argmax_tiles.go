package runner

// opArgmaxTiles picks the next token from the lm-head tiles' best pairs
// ([opNormGEMVArgmax]): the index of the largest logit per sequence, the
// lowest index among equal maxima, as [opArgmax] over the whole
// vocabulary.
//
//	reads:  part [B, tiles] pairs of 8 bytes (fp32 logit, int32 index; the whole buffer)
//	writes: token [B] int32 (the whole buffer)
//	params: batch (default 1), tiles
//
// Pairs with a negative index (a tile of NaN) never win; with none left
// the token is 0. Exact.
var opArgmaxTiles = &numOp{
	name: "argmax_tiles", code: opCodeArgmaxTiles,
	reads: 1, writes: []elemKind{elemI32},
	check: func(c *checker) [numArgs]uint64 {
		B, n := c.batch(), c.param("tiles", 1)
		c.acc("read", 0, 0, 8*B*n, 0, 0, 8*B*n)
		c.acc("write", 0, 0, 4*B, 0, 0, 4*B)
		return [numArgs]uint64{B, n}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n := a[0], a[1]
		for b := uint64(0); b < B; b++ {
			best, idx := float32(0), int64(-1)
			for t := uint64(0); t < n; t++ {
				p := r[0].addr + 8*(b*n+t)
				v, i := ldF32(h, p), int64(int32(ldU32(h, p+4)))
				if i >= 0 && (idx < 0 || v > best || (v == best && i < idx)) {
					best, idx = v, i
				}
			}
			stU32(h, w[0].addr+4*b, uint32(max(idx, 0)))
		}
	},
}
