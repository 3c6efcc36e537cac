package runner

// opNormGEMVArgmax is an lm-head tile that also picks its best token: a
// norm_gemv tile of fp32 logits, then, per sequence, the largest of its
// logits with its vocabulary index, so that the final pick reads one pair
// per tile ([opArgmaxTiles]) instead of the whole vocabulary.
//
//	reads:  those of norm_gemv
//	writes: logits[:, n_off:n_off+n] of [B, out] fp32 (out_elem 4);
//	        part[:, tile] of [B, tiles] pairs of 8 bytes (the logit as fp32, its index as int32)
//	params: those of norm_gemv with out_elem 4, and tile, tiles
//
// The pair holds the largest logit of the tile and the lowest index among
// equal maxima (NaN never wins; index −1 when every logit is NaN), the
// logit exactly as written. Tolerance: gemv's on the logits; the pair is
// the device's own logits' maximum, checked exactly against them.
var opNormGEMVArgmax = &numOp{
	name: "norm_gemv_argmax", code: opCodeNormGEMVArgmax,
	reads: 3, writes: []elemKind{elemF32, elemPair},
	check: func(c *checker) [numArgs]uint64 {
		g := gemvCheck(c, true, "out")
		eps := normCheck(c, g, 2)
		if c.err == nil && g.elem != 4 {
			c.fail("param \"out_elem\" = %d, want 4 (fp32 logits)", g.elem)
		}
		tile, tiles := c.param("tile", 0), c.param("tiles", 1)
		if c.err == nil && tile >= tiles {
			c.fail("tile %d of %d", tile, tiles)
		}
		c.acc("write", 1, 8*tile, 8, g.B, 8*tiles, 0)
		if b := c.p.Buffers[c.t.Writes[1].Buffer]; c.err == nil && b.Size != 8*g.B*tiles {
			c.fail("write 1 (buffer %q): %d bytes, want batch %d × tiles %d × 8", b.Name, b.Size, g.B, tiles)
		}
		return [numArgs]uint64{g.B, g.n, g.k, g.elem, g.rnd, f32bits(eps), g.off}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		opNormGEMV.run(a, r, w[:1], h)
		B, n, off := a[0], a[1], a[6]
		for b := uint64(0); b < B; b++ {
			best, idx := bestLogit(h, rowAddr(w[0], b, 4*n), n)
			if idx >= 0 {
				idx += int64(off)
			}
			p := rowAddr(w[1], b, 8)
			stF32(h, p, best)
			stU32(h, p+4, uint32(int32(idx)))
		}
	},
	tol: gemvTol,
}

// bestLogit returns the largest of the n fp32 values at a and the lowest
// index among equal maxima; NaN never wins, and the index is −1 (value 0)
// when every value is NaN.
func bestLogit(h []byte, a, n uint64) (float32, int64) {
	best, idx := float32(0), int64(-1)
	for i := uint64(0); i < n; i++ {
		v := ldF32(h, a+4*i)
		if v == v && (idx < 0 || v > best) {
			best, idx = v, int64(i)
		}
	}
	return best, idx
}
