package runner

import (
	"fmt"
	"math"
	"sort"

	"github.com/megaproof/megaproof/schedule"
)

// Numeric operations compute a Llama decode step: bf16 storage, fp32
// arithmetic. Each one lives in its own file, runner/op_<name>.go (its
// documentation, the checks of its params against its footprint, its CPU
// reference and its tolerance), with its device code in
// runner/kernels/ops/<name>.cuh. The CPU reference is the specification;
// the device code is tested against it.
//
// A numeric task's operands are its accesses, in the order the op's
// documentation gives: the device code reads and writes exactly the bytes
// of its footprint. The scalars it needs travel as task params (integers;
// real numbers as fixed point with the suffix _e9, value × 10⁹). Encode
// decodes them into up to [numArgs] argument words per task, the same
// words the CPU reference and the device code read, and refuses a task
// whose params, footprint and buffer sizes disagree, naming the task.

// numArgs is the number of op argument words in a task record.
const numArgs = 8

// elemKind is how an op's output bytes are compared with the reference.
type elemKind uint8

const (
	elemBF16 elemKind = iota // 2-byte bfloat16
	elemF32                  // 4-byte float32
	elemI32                  // 4-byte int32, compared exactly
	elemPair                 // 8 bytes: an fp32 value and an int32 index, compared exactly
)

func (k elemKind) size() uint64 {
	switch k {
	case elemBF16:
		return 2
	case elemPair:
		return 8
	}
	return 4
}

// Tolerance is how far a device result may be from the CPU reference:
// |got − ref| ≤ Abs + Rel·|ref|, elementwise. The zero value demands
// equality.
type Tolerance struct{ Abs, Rel float64 }

// Allows reports whether got is within the tolerance of ref. NaN is never
// within any tolerance.
func (t Tolerance) Allows(ref, got float64) bool {
	if math.IsNaN(ref) || math.IsNaN(got) {
		return false
	}
	if ref == got {
		return true
	}
	return math.Abs(got-ref) <= t.Abs+t.Rel*math.Abs(ref)
}

// numOp is one numeric operation.
type numOp struct {
	name   string
	code   uint64
	doc    string
	reads  int        // accesses read, in order
	writes []elemKind // accesses written, in order, with their element types
	// check validates the task's params and footprint and returns its
	// argument words.
	check func(c *checker) [numArgs]uint64
	// run is the CPU reference.
	run func(a *[numArgs]uint64, r, w []access, heap []byte)
	tol Tolerance
	// kindsOf, when set, gives the written element types from the
	// argument words instead of writes.
	kindsOf func(a *[numArgs]uint64) []elemKind
}

// kinds returns the element types of the task's writes.
func (o *numOp) kinds(a *[numArgs]uint64) []elemKind {
	if o.kindsOf != nil {
		return o.kindsOf(a)
	}
	return o.writes
}

// numOps lists the numeric operations, in op-code order.
var numOps = []*numOp{opEmbed, opRMSNorm, opGEMV, opRoPE, opKVAppend, opAttention, opAttnPartial, opAttnCombine, opResidualAdd, opSiLUMul, opArgmax, opNormGEMV, opGEMVAdd, opNormGateUp, opRoPEAppend, opNormGEMVArgmax, opArgmaxTiles, opCombineGEMVAdd}

// numByName maps an op name to its numeric operation.
var numByName = func() map[string]*numOp {
	m := map[string]*numOp{}
	for _, o := range numOps {
		m[o.name] = o
	}
	return m
}()

// numByCode maps an op code to its numeric operation.
var numByCode = func() map[uint64]*numOp {
	m := map[uint64]*numOp{}
	for _, o := range numOps {
		m[o.code] = o
	}
	return m
}()

// OpTolerance returns the tolerance of a numeric operation's device results
// against its CPU reference, and false for an op that is not numeric (byte
// ops are exact).
func OpTolerance(op string) (Tolerance, bool) {
	o, ok := numByName[op]
	if !ok {
		return Tolerance{}, false
	}
	return o.tol, true
}

// NumericOps lists the numeric operations the runner executes, by the name
// a task gives in [schedule.Task.Op].
func NumericOps() []string {
	out := make([]string, len(numOps))
	for i, o := range numOps {
		out[i] = o.name
	}
	return out
}

// checker validates one numeric task; the first disagreement is kept.
type checker struct {
	p   *schedule.Program
	t   *schedule.Task
	op  *numOp
	err error
}

func (c *checker) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("runner: task %q (op %s): %s", c.t.Name, c.op.name, fmt.Sprintf(format, args...))
	}
}

// param returns a required param, at least lo.
func (c *checker) param(key string, lo int64) uint64 {
	v, ok := c.t.Params.Get(key)
	if !ok {
		c.fail("param %q is missing", key)
		return 0
	}
	if v < lo {
		c.fail("param %q = %d, want at least %d", key, v, lo)
		return 0
	}
	return uint64(v)
}

// optParam returns a param with a default, at least lo.
func (c *checker) optParam(key string, def, lo int64) uint64 {
	if _, ok := c.t.Params.Get(key); !ok {
		return uint64(def)
	}
	return c.param(key, lo)
}

// fixed returns a required real param given as key_e9 (value × 10⁹).
func (c *checker) fixed(key string, lo int64) float32 {
	return float32(float64(c.param(key+"_e9", lo)) * 1e-9)
}

// batch is the "batch" param (default 1).
func (c *checker) batch() uint64 { return c.optParam("batch", 1, 1) }

// seqs returns the sequences a task covers of a batch: its first, "row"
// (default 0), its count, "rows" (default the rest of the batch), and the
// batch.
func (c *checker) seqs() (row, n, batch uint64) {
	batch = c.batch()
	row = c.optParam("row", 0, 0)
	if c.err != nil {
		return 0, 0, batch
	}
	if row >= batch {
		c.fail("row %d outside batch %d", row, batch)
		return 0, 0, batch
	}
	n = c.optParam("rows", int64(batch-row), 1)
	if c.err == nil && row+n > batch {
		c.fail("rows [%d, %d) outside batch %d", row, row+n, batch)
	}
	return row, n, batch
}

// accRows is acc for the n rows from row of a batched buffer whose rows
// are stride bytes apart: row 0 of the task starts at off + row·stride.
func (c *checker) accRows(what string, i int, row, off, length, n, stride, whole uint64) {
	c.acc(what, i, off+row*stride, length, n, stride, whole)
}

// acc checks access i of the reads ("read") or writes ("write") against
// the expected offset, row length and, for rows > 1, row count and stride.
// A 1-row access may be given as rows 0 or 1. whole > 0 also requires the
// buffer to be exactly that many bytes.
func (c *checker) acc(what string, i int, off, length, rows, stride, whole uint64) {
	if c.err != nil {
		return
	}
	as := c.t.Reads
	if what == "write" {
		as = c.t.Writes
	}
	a := as[i]
	b := c.p.Buffers[a.Buffer]
	desc := fmt.Sprintf("%s %d (buffer %q)", what, i, b.Name)
	switch {
	case a.Offset != int64(off):
		c.fail("%s: offset %d, want %d", desc, a.Offset, off)
	case a.Length != length:
		c.fail("%s: row length %d bytes, want %d", desc, a.Length, length)
	case a.RowCount() != max(rows, 1):
		c.fail("%s: %d rows, want %d (batch)", desc, a.RowCount(), max(rows, 1))
	case rows > 1 && a.Stride != stride:
		c.fail("%s: row stride %d bytes, want %d", desc, a.Stride, stride)
	case whole > 0 && b.Size != whole:
		c.fail("%s: buffer of %d bytes, want %d", desc, b.Size, whole)
	}
}

// checkNumeric validates task t of p as numeric op o and returns its
// argument words.
func checkNumeric(p *schedule.Program, t *schedule.Task, o *numOp) ([numArgs]uint64, error) {
	c := &checker{p: p, t: t, op: o}
	if len(t.Reads) != o.reads || len(t.Writes) != len(o.writes) {
		c.fail("%d reads and %d writes, want %d and %d", len(t.Reads), len(t.Writes), o.reads, len(o.writes))
		return [numArgs]uint64{}, c.err
	}
	args := o.check(c)
	return args, c.err
}

// Element access on the heap (little-endian, as on the GPU).

func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// f32ToBF16 rounds to the nearest bfloat16, ties to even (as PyTorch and
// the device code do); NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// rbf rounds f to bfloat16 precision.
func rbf(f float32) float32 { return bf16ToF32(f32ToBF16(f)) }

func ldBF(h []byte, a uint64) float32 { return bf16ToF32(uint16(h[a]) | uint16(h[a+1])<<8) }

func stBF(h []byte, a uint64, f float32) {
	v := f32ToBF16(f)
	h[a], h[a+1] = byte(v), byte(v>>8)
}

func ldU32(h []byte, a uint64) uint32 {
	return uint32(h[a]) | uint32(h[a+1])<<8 | uint32(h[a+2])<<16 | uint32(h[a+3])<<24
}

func stU32(h []byte, a uint64, v uint32) {
	h[a], h[a+1], h[a+2], h[a+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func ldF32(h []byte, a uint64) float32    { return math.Float32frombits(ldU32(h, a)) }
func stF32(h []byte, a uint64, f float32) { stU32(h, a, math.Float32bits(f)) }

// rowAddr is the heap address of row b of an operand whose rows are
// rowBytes apart when the access is one contiguous range.
func rowAddr(a access, b, rowBytes uint64) uint64 {
	if a.rows > 1 {
		return a.addr + b*a.stride
	}
	return a.addr + b*rowBytes
}

func f32bits(f float32) uint64 { return uint64(math.Float32bits(f)) }
func bitsF32(w uint64) float32 { return math.Float32frombits(uint32(w)) }

// expf and friends are the fp32 functions of the references (computed in
// float64 and rounded; the device's are within 2 ulp of these).
func expf(x float32) float32   { return float32(math.Exp(float64(x))) }
func logf(x float32) float32   { return float32(math.Log(float64(x))) }
func rsqrtf(x float32) float32 { return float32(1 / math.Sqrt(float64(x))) }

// opCodeNames returns every op code with its canonical name, sorted by
// code, for the generated header.
func opCodeNames() []opName {
	out := make([]opName, 0, len(opCanonical))
	for code, name := range opCanonical {
		out = append(out, opName{name, code})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].code < out[j].code })
	return out
}

type opName struct {
	name string
	code uint64
}
