package runner

// opAttnCombine merges one head's split-KV partials by their log-sum-exp.
//
//	reads:  part[:, h·P·D : (h·P+splits)·D] of [B, heads·P·D] fp32;
//	        lse[:, h·P : h·P+splits] of [B, heads·P] fp32
//	writes: att[:, h·D : (h+1)·D] of [B, heads·D] bf16
//	params: batch (default 1), head h, splits, heads, head_dim D,
//	        part_splits P (default splits; at least splits), row and rows
//	        (as attention's)
//
// With M = max lse_s and c_s = exp(lse_s − M):
// out = bf16(Σ c_s part_s / Σ c_s), in fp32. Tolerance: exp; one bf16
// rounding.
var opAttnCombine = &numOp{
	name: "attn_combine", code: opCodeAttnCombine,
	reads: 2, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		row, B, batch := c.seqs()
		hd, splits, heads, D := c.param("head", 0), c.param("splits", 1), c.param("heads", 1), c.param("head_dim", 1)
		ps := c.optParam("part_splits", int64(splits), 1)
		if c.err == nil && hd >= heads {
			c.fail("head %d of %d", hd, heads)
		}
		if c.err == nil && ps < splits {
			c.fail("part_splits %d below splits %d", ps, splits)
		}
		c.accRows("read", 0, row, 4*hd*ps*D, 4*splits*D, B, 4*heads*ps*D, batch*4*heads*ps*D)
		c.accRows("read", 1, row, 4*hd*ps, 4*splits, B, 4*heads*ps, batch*4*heads*ps)
		c.accRows("write", 0, row, 2*hd*D, 2*D, B, 2*heads*D, 0)
		return [numArgs]uint64{B, D, splits}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, D, S := a[0], a[1], a[2]
		for b := uint64(0); b < B; b++ {
			o := combineHead(h, rowAddr(r[0], b, 4*S*D), rowAddr(r[1], b, 4*S), S, D)
			dst := rowAddr(w[0], b, 2*D)
			for i, v := range o {
				stBF(h, dst+2*uint64(i), v)
			}
		}
	},
	tol: Tolerance{Abs: 1e-5, Rel: 1.0 / 128},
}

// combineHead merges one head's S partials (D fp32 each, at part) by
// their log-sum-exps (at lse): out = Σ c_s part_s / Σ c_s with
// c_s = exp(lse_s − max lse), in fp32, summed in split order.
func combineHead(h []byte, part, lse, S, D uint64) []float32 {
	m := ldF32(h, lse)
	for s := uint64(1); s < S; s++ {
		m = max(m, ldF32(h, lse+4*s))
	}
	var l float32
	o := make([]float32, D)
	for s := uint64(0); s < S; s++ {
		c := expf(ldF32(h, lse+4*s) - m)
		l += c
		for i := uint64(0); i < D; i++ {
			o[i] += c * ldF32(h, part+4*(s*D+i))
		}
	}
	for i := range o {
		o[i] /= l
	}
	return o
}
