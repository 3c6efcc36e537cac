package runner

// opAttnPartial is one chunk of a split-KV attention (flash-decoding):
// [opAttention] over the chunk's rows, kept in fp32 with its log-sum-exp
// for [opAttnCombine].
//
//	reads:  as attention's, for the chunk [kv_start, kv_start+kv_len)
//	writes: part[:, (h·P+s)·D : (h·P+s+1)·D] of [B, heads·P·D] fp32;
//	        lse[:, h·P+s] of [B, heads·P] fp32
//	params: attention's (row and rows included), and split s, splits,
//	        part_splits P (default splits: the partials laid out per head,
//	        at least splits)
//
// part = Σ p_j v_j / Σ p_j and lse = m + ln Σ p_j (p_j = exp(s_j − m)),
// both fp32. Tolerance: exp and the sums' order.
var opAttnPartial = &numOp{
	name: "attn_partial", code: opCodeAttnPartial,
	reads: 3, writes: []elemKind{elemF32, elemF32},
	check: func(c *checker) [numArgs]uint64 {
		row, B, D, n, scale := checkAttn(c)
		batch := c.batch()
		hd, heads := c.param("head", 0), c.param("heads", 1)
		s, splits := c.param("split", 0), c.param("splits", 1)
		ps := c.optParam("part_splits", int64(splits), 1)
		if c.err == nil && s >= splits {
			c.fail("split %d of %d", s, splits)
		}
		if c.err == nil && ps < splits {
			c.fail("part_splits %d below splits %d", ps, splits)
		}
		c.accRows("write", 0, row, 4*(hd*ps+s)*D, 4*D, B, 4*heads*ps*D, batch*4*heads*ps*D)
		c.accRows("write", 1, row, 4*(hd*ps+s), 4, B, 4*heads*ps, batch*4*heads*ps)
		return [numArgs]uint64{B, D, n, f32bits(scale)}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, D := a[0], a[1]
		for b := uint64(0); b < B; b++ {
			o, lse := attnWindow(a, r, b, h)
			dst := rowAddr(w[0], b, 4*D)
			for i := uint64(0); i < D; i++ {
				stF32(h, dst+4*i, o[i])
			}
			stF32(h, rowAddr(w[1], b, 4), lse)
		}
	},
	tol: Tolerance{Abs: 1e-5, Rel: 1e-4},
}
