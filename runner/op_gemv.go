package runner

// opGEMV is one tile of a matrix-vector product (a batch of them for
// batch > 1): output columns [n_off, n_off+n) of y = x·Wᵀ.
//
//	reads:  x [B, k] bf16 (contiguous, the whole input); W rows [n_off, n_off+n) of [out, k] bf16
//	writes: y[:, n_off:n_off+n] of [B, out], bf16 or fp32 (out_elem 2 or 4)
//	params: batch (default 1), n_off, n, k, out (y's width, default n_off+n
//	        for batch 1), out_elem (default 2), round_bf16 (0 or 1, default 0)
//
// y[b,j] = Σ_i x[b,i]·W[j,i], accumulated in fp32 and stored as bf16
// (out_elem 2) or fp32 (out_elem 4; with round_bf16 1 the fp32 value is
// first rounded to bf16, which is what PyTorch's bf16 lm_head produces).
// The device code reads W with 16-byte vector loads (8 bf16) when k is a
// multiple of 8 and the operands are 16-byte aligned, and reduces each
// row's partial sums across a warp. Tolerance: the fp32 sum's order
// differs (and the device fuses multiply-adds); a bf16 result may land one
// rounding step away.
var opGEMV = &numOp{
	name: "gemv", code: opCodeGEMV,
	reads: 2, writes: []elemKind{elemBF16},
	kindsOf: func(a *[numArgs]uint64) []elemKind {
		if a[3] == 4 {
			return []elemKind{elemF32}
		}
		return []elemKind{elemBF16}
	},
	check: func(c *checker) (a [numArgs]uint64) {
		B, off, n, k := c.batch(), c.param("n_off", 0), c.param("n", 1), c.param("k", 1)
		out := c.optParam("out", int64(off+n), 1)
		elem := c.optParam("out_elem", 2, 2)
		rnd := c.optParam("round_bf16", 0, 0)
		if c.err == nil && elem != 2 && elem != 4 {
			c.fail("param \"out_elem\" = %d, want 2 (bf16) or 4 (fp32)", elem)
		}
		if c.err == nil && rnd > 1 {
			c.fail("param \"round_bf16\" = %d, want 0 or 1", rnd)
		}
		if c.err == nil && off+n > out {
			c.fail("columns [%d, %d) outside an output of width %d", off, off+n, out)
		}
		c.acc("read", 0, 0, 2*B*k, 0, 0, 0)
		c.acc("read", 1, 2*off*k, 2*n*k, 0, 0, 0)
		if c.err == nil && c.p.Buffers[c.t.Reads[1].Buffer].Size%(2*k) != 0 {
			c.fail("read 1 (buffer %q): %d bytes are not rows of k = %d bf16", c.p.Buffers[c.t.Reads[1].Buffer].Name, c.p.Buffers[c.t.Reads[1].Buffer].Size, k)
		}
		c.acc("write", 0, elem*off, elem*n, B, elem*out, 0)
		if c.err == nil && c.p.Buffers[c.t.Writes[0].Buffer].Size != B*out*elem {
			c.fail("write 0 (buffer %q): %d bytes, want batch %d × out %d × %d", c.p.Buffers[c.t.Writes[0].Buffer].Name, c.p.Buffers[c.t.Writes[0].Buffer].Size, B, out, elem)
		}
		return [numArgs]uint64{B, n, k, elem, rnd}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k, elem, rnd := a[0], a[1], a[2], a[3], a[4]
		for b := uint64(0); b < B; b++ {
			x := r[0].addr + 2*k*b
			y := rowAddr(w[0], b, elem*n)
			for j := uint64(0); j < n; j++ {
				wr := r[1].addr + 2*k*j
				var s float32
				for i := uint64(0); i < k; i++ {
					s += ldBF(h, x+2*i) * ldBF(h, wr+2*i)
				}
				if elem == 2 {
					stBF(h, y+2*j, s)
				} else {
					if rnd == 1 {
						s = rbf(s)
					}
					stF32(h, y+4*j, s)
				}
			}
		}
	},
	tol: Tolerance{Abs: 1e-4, Rel: 1.0 / 64},
}
