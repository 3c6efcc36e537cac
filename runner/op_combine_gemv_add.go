package runner

// MaxCombineRows is the most partial rows (batch × heads × splits) whose
// merge coefficients a [opCombineGEMVAdd] task keeps in shared memory.
const MaxCombineRows = 1024

// opCombineGEMVAdd is attention's o projection with the split-KV combine
// in its prologue and the residual add in its output: every o tile merges
// the partials of all heads itself ([opAttnCombine]'s merge, into shared
// memory), so that no combine task and no dependent hop sits between the
// attention chunks and the projection.
//
//	reads:  part [B, heads·P·D] fp32, the first splits partials of every
//	        (row, head): rows of 4·splits·D bytes, B·heads of them, 4·P·D
//	        apart; lse [B, heads·P] fp32 likewise (4·splits bytes, 4·P
//	        apart); W rows [n_off, n_off+n) of [out, k] bf16;
//	        res[:, n_off:n_off+n] of [B, out] bf16
//	writes: y[:, n_off:n_off+n] of [B, out] bf16
//	params: batch (default 1), n_off, n, k (= heads·head_dim), out
//	        (default n_off+n), heads, head_dim D (a multiple of 4), splits,
//	        part_splits P (default splits; at least splits);
//	        batch × k at most MaxNormElems, batch × heads × splits at most
//	        MaxCombineRows
//
// att = bf16(combine(part, lse)) for every head, exactly as attn_combine
// writes it, then y = bf16(res + bf16(att·Wᵀ)) as gemv_add: the result
// equals the combine tasks followed by the gemv_add task. Tolerance:
// gemv's.
var opCombineGEMVAdd = &numOp{
	name: "combine_gemv_add", code: opCodeCombineGEMVAdd,
	reads: 4, writes: []elemKind{elemBF16},
	check: func(c *checker) [numArgs]uint64 {
		B, off, n, k := c.batch(), c.param("n_off", 0), c.param("n", 1), c.param("k", 1)
		heads, D, S := c.param("heads", 1), c.param("head_dim", 4), c.param("splits", 1)
		P := c.optParam("part_splits", int64(S), 1)
		g := gemvShape{B: B, off: off, n: n, k: k, out: c.optParam("out", int64(off+n), 1), elem: 2}
		if c.err != nil {
			return [numArgs]uint64{}
		}
		switch {
		case k != heads*D:
			c.fail("k %d, want heads %d × head_dim %d", k, heads, D)
		case D%4 != 0:
			c.fail("head_dim %d is not a multiple of 4", D)
		case P < S:
			c.fail("part_splits %d below splits %d", P, S)
		case off+n > g.out:
			c.fail("columns [%d, %d) outside an output of width %d", off, off+n, g.out)
		case B*k > MaxNormElems:
			c.fail("batch %d × k %d = %d combined inputs, more than the %d a task holds", B, k, B*k, MaxNormElems)
		case B*heads*S > MaxCombineRows:
			c.fail("batch %d × heads %d × splits %d = %d partial rows, more than %d", B, heads, S, B*heads*S, MaxCombineRows)
		}
		c.acc("read", 0, 0, 4*S*D, B*heads, 4*P*D, B*4*heads*P*D)
		c.acc("read", 1, 0, 4*S, B*heads, 4*P, B*4*heads*P)
		c.weightRows(2, g)
		c.acc("read", 3, 2*off, 2*n, B, 2*g.out, 0)
		c.outCols(0, g)
		return [numArgs]uint64{B, n, k, D, S}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k, D, S := a[0], a[1], a[2], a[3], a[4]
		heads := k / D
		for b := uint64(0); b < B; b++ {
			x := make([]float32, 0, k)
			for hd := uint64(0); hd < heads; hd++ {
				row := b*heads + hd
				for _, v := range combineHead(h, rowAddr(r[0], row, 4*S*D), rowAddr(r[1], row, 4*S), S, D) {
					x = append(x, rbf(v))
				}
			}
			res, y := rowAddr(r[3], b, 2*n), rowAddr(w[0], b, 2*n)
			gemvRows(h, x, r[2].addr, n, k, func(j uint64, s float32) {
				stBF(h, y+2*j, ldBF(h, res+2*j)+rbf(s))
			})
		}
	},
	tol: gemvTol,
}
