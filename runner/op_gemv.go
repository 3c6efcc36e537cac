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
	kindsOf: gemvKinds,
	check: func(c *checker) [numArgs]uint64 {
		g := gemvCheck(c, true, "out")
		return [numArgs]uint64{g.B, g.n, g.k, g.elem, g.rnd}
	},
	run: func(a *[numArgs]uint64, r, w []access, h []byte) {
		B, n, k, elem, rnd := a[0], a[1], a[2], a[3], a[4]
		for b := uint64(0); b < B; b++ {
			gemvRows(h, loadBF(h, r[0].addr+2*k*b, k), r[1].addr, n, k, func(j uint64, s float32) {
				storeGEMV(h, rowAddr(w[0], b, elem*n)+elem*j, elem, rnd, s)
			})
		}
	},
	tol: gemvTol,
}

// gemvTol is the tolerance of every GEMV-shaped op.
var gemvTol = Tolerance{Abs: 1e-4, Rel: 1.0 / 64}

// gemvKinds gives a GEMV's output element type from its out_elem word.
func gemvKinds(a *[numArgs]uint64) []elemKind {
	if a[3] == 4 {
		return []elemKind{elemF32}
	}
	return []elemKind{elemBF16}
}

// gemvShape is what the checks of a GEMV-shaped op found.
type gemvShape struct{ B, off, n, k, out, elem, rnd uint64 }

// gemvCheck checks the params and accesses that every GEMV-shaped op
// shares: x (read 0, [B, k] bf16, contiguous), the weight rows (read 1,
// rows [n_off, n_off+n) of a [·, k] bf16 matrix) and the output (write 0,
// columns [n_off, n_off+n) of [B, out], out the param outKey). With elems, out_elem and
// round_bf16 may choose an fp32 output; without, the output is bf16.
func gemvCheck(c *checker, elems bool, outKey string) gemvShape {
	B, off, n, k := c.batch(), c.param("n_off", 0), c.param("n", 1), c.param("k", 1)
	g := gemvShape{B: B, off: off, n: n, k: k, out: c.optParam(outKey, int64(off+n), 1), elem: 2}
	if elems {
		g.elem, g.rnd = c.optParam("out_elem", 2, 2), c.optParam("round_bf16", 0, 0)
	}
	if c.err == nil && g.elem != 2 && g.elem != 4 {
		c.fail("param \"out_elem\" = %d, want 2 (bf16) or 4 (fp32)", g.elem)
	}
	if c.err == nil && g.rnd > 1 {
		c.fail("param \"round_bf16\" = %d, want 0 or 1", g.rnd)
	}
	if c.err == nil && off+n > g.out {
		c.fail("columns [%d, %d) outside an output of width %d", off, off+n, g.out)
	}
	c.acc("read", 0, 0, 2*B*k, 0, 0, 0)
	c.weightRows(1, g)
	c.outCols(0, g)
	return g
}

// weightRows checks read i as the rows [n_off, n_off+n) of a bf16 matrix
// of k columns.
func (c *checker) weightRows(i int, g gemvShape) {
	c.acc("read", i, 2*g.off*g.k, 2*g.n*g.k, 0, 0, 0)
	if b := c.p.Buffers[c.t.Reads[i].Buffer]; c.err == nil && b.Size%(2*g.k) != 0 {
		c.fail("read %d (buffer %q): %d bytes are not rows of k = %d bf16", i, b.Name, b.Size, g.k)
	}
}

// outCols checks write i as the columns [n_off, n_off+n) of a [B, out]
// matrix of the shape's elements, in a buffer of exactly that size.
func (c *checker) outCols(i int, g gemvShape) {
	c.acc("write", i, g.elem*g.off, g.elem*g.n, g.B, g.elem*g.out, 0)
	if b := c.p.Buffers[c.t.Writes[i].Buffer]; c.err == nil && b.Size != g.B*g.out*g.elem {
		c.fail("write %d (buffer %q): %d bytes, want batch %d × out %d × %d", i, b.Name, b.Size, g.B, g.out, g.elem)
	}
}

// gemvRows calls emit(j, Σ_i x[i]·W[j,i]) for the n rows of the bf16
// matrix at wa (k elements a row), summing in fp32 in index order.
func gemvRows(h []byte, x []float32, wa, n, k uint64, emit func(j uint64, s float32)) {
	for j := uint64(0); j < n; j++ {
		wr := wa + 2*k*j
		var s float32
		for i := uint64(0); i < k; i++ {
			s += x[i] * ldBF(h, wr+2*i)
		}
		emit(j, s)
	}
}

// loadBF reads n bf16 values at a.
func loadBF(h []byte, a, n uint64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = ldBF(h, a+2*uint64(i))
	}
	return v
}

// storeGEMV stores one GEMV result at y: bf16 (elem 2) or fp32, rounded
// to bf16 first when rnd is 1.
func storeGEMV(h []byte, y, elem, rnd uint64, s float32) {
	switch {
	case elem == 2:
		stBF(h, y, s)
	case rnd == 1:
		stF32(h, y, rbf(s))
	default:
		stF32(h, y, s)
	}
}
