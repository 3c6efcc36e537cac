package runner

import "math"

// opAttention is one query head's attention over a window of the KV cache
// (grouped-query attention: query head h reads kv head h / heads_per_group).
//
//	reads:  qr[:, h·D : (h+1)·D] of [B, heads·D] bf16;
//	        rows [kv_start, kv_start+kv_len) of plane kh of kcache, [B, kv_heads, max_seq, D] bf16;
//	        the same rows of vcache
//	writes: att[:, h·D : (h+1)·D] of [B, heads·D] bf16
//	params: batch (default 1), head h, kv_start, kv_len, heads, kv_heads,
//	        heads_per_group, head_dim D (a multiple of 32, at most 256),
//	        max_seq, scale_e9 (the score scale × 10⁹, 1/√D for Llama);
//	        row and rows (default 0 and the batch): the task covers
//	        sequences [row, row+rows) of the batch, its accesses start at
//	        row row of each buffer
//
// In fp32: s_j = (q·k_j)·scale, m = max s_j, p_j = exp(s_j − m),
// out = bf16(Σ p_j v_j / Σ p_j). The device code streams the window with
// an online softmax per warp and merges the warps' (max, sum, output)
// states. Tolerance: exp and the sums' order; one bf16 rounding.
var opAttention = &numOp{
	name: "attention", code: opCodeAttention,
	reads: 3, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		row, B, D, n, scale := checkAttn(c)
		hd, heads := c.param("head", 0), c.param("heads", 1)
		c.accRows("write", 0, row, 2*hd*D, 2*D, B, 2*heads*D, 0)
		return [numArgs]uint64{B, D, n, f32bits(scale)}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, D := a[0], a[1]
		for b := uint64(0); b < B; b++ {
			o, _ := attnWindow(a, r, b, h)
			dst := rowAddr(w[0], b, 2*D)
			for i := uint64(0); i < D; i++ {
				stBF(h, dst+2*i, o[i])
			}
		}
	},
	tol: Tolerance{Abs: 1e-4, Rel: 1.0 / 64},
}

// checkAttn checks the reads shared by attention and attn_partial; B is
// the task's sequences, from row row of the batch.
func checkAttn(c *checker) (row, B, D, n uint64, scale float32) {
	row, B, batch := c.seqs()
	hd, start, n := c.param("head", 0), c.param("kv_start", 0), c.param("kv_len", 1)
	heads, kvh, rep := c.param("heads", 1), c.param("kv_heads", 1), c.param("heads_per_group", 1)
	D, S := c.param("head_dim", 32), c.param("max_seq", 1)
	scale = c.fixed("scale", 1)
	if c.err != nil {
		return
	}
	switch {
	case D%32 != 0 || D > 256:
		c.fail("head_dim %d: the device code needs a multiple of 32, at most 256", D)
	case heads != kvh*rep || hd >= heads:
		c.fail("heads %d = kv_heads %d × heads_per_group %d, head %d < heads", heads, kvh, rep, hd)
	case start+n > S:
		c.fail("window [%d, %d) outside max_seq %d", start, start+n, S)
	}
	kh := hd / max(rep, 1)
	plane := 2 * kvh * S * D
	c.accRows("read", 0, row, 2*hd*D, 2*D, B, 2*heads*D, 0)
	c.accRows("read", 1, row, 2*(kh*S+start)*D, 2*n*D, B, plane, batch*plane)
	c.accRows("read", 2, row, 2*(kh*S+start)*D, 2*n*D, B, plane, batch*plane)
	return row, B, D, n, scale
}

// attnWindow is the fp32 attention of batch row b over the window: the
// normalized output and the log-sum-exp of the scores.
func attnWindow(a *[numArgs]uint64, r []access, b uint64, h []byte) ([]float32, float32) {
	D, n, scale := a[1], a[2], bitsF32(a[3])
	q := rowAddr(r[0], b, 2*D)
	k, v := rowAddr(r[1], b, 2*n*D), rowAddr(r[2], b, 2*n*D)
	s := make([]float32, n)
	m := float32(math.Inf(-1))
	for j := uint64(0); j < n; j++ {
		var d float32
		for i := uint64(0); i < D; i++ {
			d += ldBF(h, q+2*i) * ldBF(h, k+2*(j*D+i))
		}
		s[j] = d * scale
		m = max(m, s[j])
	}
	o := make([]float32, D)
	var l float32
	for j := uint64(0); j < n; j++ {
		p := expf(s[j] - m)
		l += p
		for i := uint64(0); i < D; i++ {
			o[i] += p * ldBF(h, v+2*(j*D+i))
		}
	}
	for i := range o {
		o[i] /= l
	}
	return o, m + logf(l)
}
