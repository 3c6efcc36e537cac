package runner

import "math"

// opRoPE applies rotary position embeddings to one kv-head group: its
// heads_per_group query heads and its key head, at one position.
//
//	reads:  q[:, g·rep·D : (g+1)·rep·D] of [B, heads·D] bf16;
//	        k[:, g·D : (g+1)·D] of [B, kv_heads·D] bf16;
//	        table row pos of [max_seq, D] bf16 (cos of the D/2 frequencies, then their sin)
//	writes: the same slices of qr and kr
//	params: batch (default 1), group g, pos, heads, kv_heads, heads_per_group rep,
//	        head_dim D (even), theta (the table's base; see [RoPETable])
//
// With h = D/2, c = cos[i], s = sin[i] for i < h (Hugging Face's
// rotate_half layout), each head's x becomes
// out[i] = bf16(bf16(x[i]·c) − bf16(x[i+h]·s)) and
// out[i+h] = bf16(bf16(x[i+h]·c) + bf16(x[i]·s)), PyTorch's bf16 rounding
// of q·cos + rotate_half(q)·sin. Elementwise products of bf16 values are
// exact in fp32, so the device agrees except for fused multiply-adds:
// within one bf16 rounding.
var opRoPE = &numOp{
	name: "rope", code: opCodeRoPE,
	reads: 3, writes: []elemKind{elemBF16, elemBF16},
	check: func(c *checker) (a [numArgs]uint64) {
		B, g, pos := c.batch(), c.param("group", 0), c.param("pos", 0)
		heads, kvh, rep, D := c.param("heads", 1), c.param("kv_heads", 1), c.param("heads_per_group", 1), c.param("head_dim", 2)
		c.param("theta", 1)
		if c.err == nil && (D%2 != 0 || heads != kvh*rep || g >= kvh) {
			c.fail("head_dim %d must be even, heads %d = kv_heads %d × heads_per_group %d, group %d < kv_heads", D, heads, kvh, rep, g)
		}
		for _, i := range []int{0, 1} {
			what := []string{"read", "write"}[i]
			c.acc(what, 0, 2*g*rep*D, 2*rep*D, B, 2*heads*D, 0)
			c.acc(what, 1, 2*g*D, 2*D, B, 2*kvh*D, 0)
		}
		c.acc("read", 2, 2*pos*D, 2*D, 0, 0, 0)
		if c.err == nil && c.p.Buffers[c.t.Reads[2].Buffer].Size%(2*D) != 0 {
			c.fail("read 2 (buffer %q): the table's %d bytes are not rows of head_dim %d bf16", c.p.Buffers[c.t.Reads[2].Buffer].Name, c.p.Buffers[c.t.Reads[2].Buffer].Size, D)
		}
		return [numArgs]uint64{B, rep, D}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, rep, D := a[0], a[1], a[2]
		for b := uint64(0); b < B; b++ {
			for hd := uint64(0); hd <= rep; hd++ { // rep query heads, then the key head
				src, dst := rowAddr(r[0], b, 2*rep*D)+2*D*hd, rowAddr(w[0], b, 2*rep*D)+2*D*hd
				if hd == rep {
					src, dst = rowAddr(r[1], b, 2*D), rowAddr(w[1], b, 2*D)
				}
				rotate(h, src, dst, r[2].addr, D)
			}
		}
	},
	tol: Tolerance{Abs: 1e-6, Rel: 1.0 / 128},
}

// rotate writes the head of D bf16 at src, rotated by the table row at
// tab, to dst: PyTorch's bf16 rounding of x·cos + rotate_half(x)·sin.
func rotate(h []byte, src, dst, tab, D uint64) {
	half := D / 2
	for i := uint64(0); i < half; i++ {
		cs, sn := ldBF(h, tab+2*i), ldBF(h, tab+2*(half+i))
		x0, x1 := ldBF(h, src+2*i), ldBF(h, src+2*(half+i))
		stBF(h, dst+2*i, rbf(x0*cs)-rbf(x1*sn))
		stBF(h, dst+2*(half+i), rbf(x1*cs)+rbf(x0*sn))
	}
}

// RoPETable returns the rotary table of rows positions for head dimension d
// and base theta, as llamagen's "w.rope" buffer holds it: row p is
// cos(p·f_i) for i < d/2, then sin(p·f_i), in bf16, with
// f_i = 1/theta^(2i/d) computed in fp32 as Hugging Face's default rotary
// embedding does (inv_freq in fp32, the angle p·f_i in fp32, its cosine
// and sine rounded to bf16).
func RoPETable(rows, d int, theta float64) []byte {
	half := d / 2
	inv := make([]float32, half)
	for i := range inv {
		e := float32(2*i) / float32(d)
		inv[i] = 1 / float32(math.Pow(theta, float64(e)))
	}
	out := make([]byte, 2*rows*d)
	for p := 0; p < rows; p++ {
		for i := 0; i < half; i++ {
			ang := float64(inv[i] * float32(p))
			stBF(out, uint64(2*(p*d+i)), float32(math.Cos(ang)))
			stBF(out, uint64(2*(p*d+half+i)), float32(math.Sin(ang)))
		}
	}
	return out
}
