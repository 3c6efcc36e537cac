package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Heap is a data heap that stays in place across runs of programs with one
// buffer layout: on the device ([Resident]) or on the host ([HostHeap]).
type Heap interface {
	// Run executes a prepared program once on the heap.
	Run(e *Encoded, o Options) (*Outcome, error)
	// Read returns a buffer's current bytes.
	Read(name string) ([]byte, error)
	// Write replaces a buffer's bytes.
	Write(name string, data []byte) error
	// Close releases the heap.
	Close() error
}

// HostHeap is a [Heap] on the host: runs execute the CPU reference (the
// greedy order of [Reference]) on it.
type HostHeap struct {
	layout *Encoded
	heap   []byte
}

// NewHostHeap lays out and fills a host heap for e as [Device.NewResident]
// does on the device.
func NewHostHeap(e *Encoded, o Options) (*HostHeap, error) {
	img, err := e.ImageFrom(o.Poison, o.Init)
	if err != nil {
		return nil, err
	}
	return &HostHeap{layout: e, heap: img}, nil
}

// Run executes e's CPU reference on the heap. Like [Resident.Run] it
// requires a prepared program unless o.AllowUnsafe.
func (h *HostHeap) Run(e *Encoded, o Options) (*Outcome, error) {
	if !e.verified && !o.AllowUnsafe {
		return nil, fmt.Errorf("%w: program %q was not prepared with Prepare", ErrUnverified, e.prog.Name)
	}
	if e.HeapBytes != h.layout.HeapBytes {
		return nil, fmt.Errorf("runner: program %q does not have the heap's layout", e.prog.Name)
	}
	for i := range e.BufferAddr {
		if e.BufferAddr[i] != h.layout.BufferAddr[i] || e.prog.Buffers[i].Name != h.layout.prog.Buffers[i].Name {
			return nil, fmt.Errorf("runner: program %q: buffer %q differs from the heap's layout", e.prog.Name, e.prog.Buffers[i].Name)
		}
	}
	t0 := time.Now()
	if err := e.execute(h.heap); err != nil {
		return nil, err
	}
	return &Outcome{Total: time.Since(t0)}, nil
}

func (h *HostHeap) find(name string) ([]byte, error) {
	for i, b := range h.layout.prog.Buffers {
		if b.Name == name {
			a := h.layout.BufferAddr[i]
			return h.heap[a : a+b.Size], nil
		}
	}
	return nil, fmt.Errorf("runner: no buffer %q", name)
}

// Read returns a copy of the named buffer's bytes.
func (h *HostHeap) Read(name string) ([]byte, error) {
	b, err := h.find(name)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// Write replaces the named buffer's bytes.
func (h *HostHeap) Write(name string, data []byte) error {
	b, err := h.find(name)
	if err != nil {
		return err
	}
	if len(b) != len(data) {
		return fmt.Errorf("runner: buffer %q has %d bytes, not %d", name, len(b), len(data))
	}
	copy(b, data)
	return nil
}

// Close does nothing.
func (h *HostHeap) Close() error { return nil }

// Step is one decode step of a [Generation]: the tokens it read and wrote
// per sequence, its logits when kept, and its times.
type Step struct {
	Pos    int
	In     []int32
	Out    []int32
	Logits [][]float32 // per sequence, when Generation.KeepLogits says so
	// Kernel is the kernel time (device heaps); Wall is the whole step as
	// the generation loop pays it: token upload, run, token download.
	Kernel, Wall time.Duration
}

// ioHeap is a heap that runs a step with its token traffic on the run's
// stream ([Resident.RunIO]).
type ioHeap interface {
	RunIO(e *Encoded, o Options, inName string, in []byte, outName string, out []byte) (*Outcome, error)
}

// Generation is greedy decoding with llamagen decode-step programs: the
// step at position pos reads buffer "token" ([batch] int32), writes
// "next_token" and "logits" ([batch, vocab] fp32), and the next step's
// token is the last step's next_token.
type Generation struct {
	Heap Heap
	// Program returns the prepared program of position pos.
	Program func(pos int) (*Encoded, error)
	// Opt is passed to every run.
	Opt Options
	// KeepLogits reports whether the logits of position pos are read back.
	KeepLogits func(pos int) bool
	// Force, when set, chooses the tokens fed to the step after position
	// pos from the step's own output (teacher forcing); nil feeds the
	// output (greedy decoding).
	Force func(pos int, out []int32) []int32
}

// Run decodes n steps from position start with first as the tokens at
// start (one per sequence).
func (g *Generation) Run(ctx context.Context, start, n int, first []int32) ([]Step, error) {
	tok := append([]int32(nil), first...)
	steps := make([]Step, 0, n)
	buf := make([]byte, 4*len(tok))
	nb := make([]byte, 4*len(tok))
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		pos := start + i
		e, err := g.Program(pos)
		if err != nil {
			return steps, err
		}
		t0 := time.Now()
		for b, t := range tok {
			binary.LittleEndian.PutUint32(buf[4*b:], uint32(t))
		}
		var out *Outcome
		if io, ok := g.Heap.(ioHeap); ok {
			// The token in, the launch and the next token out on one
			// stream, with one wait.
			out, err = io.RunIO(e, g.Opt, "token", buf, "next_token", nb)
			if err != nil {
				return steps, fmt.Errorf("position %d: %w", pos, err)
			}
		} else {
			if err := g.Heap.Write("token", buf); err != nil {
				return steps, err
			}
			if out, err = g.Heap.Run(e, g.Opt); err != nil {
				return steps, fmt.Errorf("position %d: %w", pos, err)
			}
			if nb, err = g.Heap.Read("next_token"); err != nil {
				return steps, err
			}
		}
		st := Step{Pos: pos, In: tok, Out: make([]int32, len(tok)), Kernel: out.Kernel}
		for b := range st.Out {
			st.Out[b] = int32(binary.LittleEndian.Uint32(nb[4*b:]))
		}
		st.Wall = time.Since(t0)
		if g.KeepLogits != nil && g.KeepLogits(pos) {
			lb, err := g.Heap.Read("logits")
			if err != nil {
				return steps, err
			}
			v := len(lb) / 4 / len(tok)
			for b := range tok {
				row := make([]float32, v)
				for j := range row {
					row[j] = math.Float32frombits(binary.LittleEndian.Uint32(lb[4*(b*v+j):]))
				}
				st.Logits = append(st.Logits, row)
			}
		}
		steps = append(steps, st)
		tok = st.Out
		if g.Force != nil {
			tok = g.Force(pos, st.Out)
		}
	}
	return steps, nil
}
