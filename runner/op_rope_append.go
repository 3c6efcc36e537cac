package runner

// opRoPEAppend is RoPE and the KV append of one kv-head group in one task:
// it rotates the group's query heads into qr and its key head straight
// into row pos of the key cache, and copies its value head into row pos of
// the value cache.
//
//	reads:  q[:, g·rep·D : (g+1)·rep·D] of [B, heads·D] bf16; k[:, g·D : (g+1)·D] and
//	        v[:, g·D : (g+1)·D] of [B, kv_heads·D] bf16; table row pos of [max_seq, D] bf16
//	writes: qr (q's slice); row pos of plane g of kcache and of vcache,
//	        [B, kv_heads, max_seq, D] bf16
//	params: batch (default 1), group g, pos, heads, kv_heads, heads_per_group rep,
//	        head_dim D (even), theta, max_seq
//
// The rotation is opRoPE's and the copy opKVAppend's, so the result
// equals the rope task followed by the kv_append task. Tolerance: rope's.
var opRoPEAppend = &numOp{
	name: "rope_append", code: opCodeRoPEAppend,
	reads: 4, writes: []elemKind{elemBF16, elemBF16, elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		B, g, pos := c.batch(), c.param("group", 0), c.param("pos", 0)
		heads, kvh, rep, D := c.param("heads", 1), c.param("kv_heads", 1), c.param("heads_per_group", 1), c.param("head_dim", 2)
		S := c.param("max_seq", 1)
		c.param("theta", 1)
		if c.err == nil && (D%2 != 0 || heads != kvh*rep || g >= kvh || pos >= S) {
			c.fail("head_dim %d must be even, heads %d = kv_heads %d × heads_per_group %d, group %d < kv_heads, pos %d < max_seq %d", D, heads, kvh, rep, g, pos, S)
		}
		c.acc("read", 0, 2*g*rep*D, 2*rep*D, B, 2*heads*D, 0)
		c.acc("write", 0, 2*g*rep*D, 2*rep*D, B, 2*heads*D, 0)
		plane := 2 * kvh * S * D
		for i := 1; i <= 2; i++ {
			c.acc("read", i, 2*g*D, 2*D, B, 2*kvh*D, 0)
			c.acc("write", i, 2*(g*S+pos)*D, 2*D, B, plane, B*plane)
		}
		c.acc("read", 3, 2*pos*D, 2*D, 0, 0, 0)
		if b := c.p.Buffers[c.t.Reads[3].Buffer]; c.err == nil && b.Size%(2*D) != 0 {
			c.fail("read 3 (buffer %q): the table's %d bytes are not rows of head_dim %d bf16", b.Name, b.Size, D)
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
				rotate(h, src, dst, r[3].addr, D)
			}
			copy(h[rowAddr(w[2], b, 2*D):rowAddr(w[2], b, 2*D)+2*D], h[rowAddr(r[2], b, 2*D):])
		}
	},
	tol: Tolerance{Abs: 1e-6, Rel: 1.0 / 128},
}
