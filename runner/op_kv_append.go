package runner

// opKVAppend writes one position's key and value rows of one kv head into
// the caches.
//
//	reads:  kr[:, g·D : (g+1)·D] of [B, kv_heads·D] bf16; v[:, g·D : (g+1)·D] likewise
//	writes: row pos of plane g of kcache and of vcache, [B, kv_heads, max_seq, D] bf16
//	params: batch (default 1), group g, pos, head_dim D, kv_heads, max_seq
//
// A copy: exact.
var opKVAppend = &numOp{
	name: "kv_append", code: opCodeKVAppend,
	reads: 2, writes: []elemKind{elemBF16, elemBF16},
	check: func(c *checker) (a [numArgs]uint64) {
		B, g, pos := c.batch(), c.param("group", 0), c.param("pos", 0)
		D, kvh, S := c.param("head_dim", 1), c.param("kv_heads", 1), c.param("max_seq", 1)
		if c.err == nil && (g >= kvh || pos >= S) {
			c.fail("group %d must be below kv_heads %d and pos %d below max_seq %d", g, kvh, pos, S)
		}
		plane := 2 * kvh * S * D
		for i := 0; i < 2; i++ {
			c.acc("read", i, 2*g*D, 2*D, B, 2*kvh*D, 0)
			c.acc("write", i, 2*(g*S+pos)*D, 2*D, B, plane, B*plane)
		}
		return [numArgs]uint64{B, D}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, D := a[0], a[1]
		for i := 0; i < 2; i++ {
			for b := uint64(0); b < B; b++ {
				copy(h[rowAddr(w[i], b, 2*D):rowAddr(w[i], b, 2*D)+2*D], h[rowAddr(r[i], b, 2*D):])
			}
		}
	},
}
