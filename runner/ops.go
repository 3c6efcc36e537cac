package runner

import (
	"fmt"
	"sort"

	"github.com/megaproof/megaproof/schedule"
)

// Operation codes of task bodies, as encoded for the GPU (go generate
// writes them to kernels/opcodes.cuh). The names are the values of
// schedule.Task.Op that the runner understands. Codes below 16 are the
// byte operations of [Ops]; codes from 16 are the numeric operations of
// [NumericOps].
const (
	opNop   = 0
	opFill  = 1
	opCopy  = 2
	opAdd   = 3
	opScale = 4
	opMix   = 5
	opMixAt = 6

	opCodeEmbed          = 16
	opCodeRMSNorm        = 17
	opCodeGEMV           = 18
	opCodeRoPE           = 19
	opCodeKVAppend       = 20
	opCodeAttention      = 21
	opCodeAttnPartial    = 22
	opCodeAttnCombine    = 23
	opCodeResidualAdd    = 24
	opCodeSiLUMul        = 25
	opCodeArgmax         = 26
	opCodeNormGEMV       = 27
	opCodeGEMVAdd        = 28
	opCodeNormGateUp     = 29
	opCodeRoPEAppend     = 30
	opCodeNormGEMVArgmax = 31
	opCodeArgmaxTiles    = 32
	opCodeCombineGEMVAdd = 33
	opCodeFirstNumeric   = opCodeEmbed
)

// Ops lists the byte operations the runner executes, by the name a task
// gives in [schedule.Task.Op] ("noop" is a synonym of "nop"; the numeric
// operations of a Llama decode step are listed by [NumericOps]). Every
// byte operation works on bytes: a task's
// reads form an input stream (its read accesses concatenated, each access
// row by row) and its writes an output stream, and out[i] is:
//
//   - "" or "nop": nothing is read or written.
//   - "fill": byte(mix32(seed + i·0x9E3779B9)).
//   - "copy": in[i mod len(in)].
//   - "add8": the sum mod 256 over every read access k of read_k[i mod len(read_k)].
//   - "scale": in[i mod len(in)]·k + c mod 256 (params "k", default 3, and "c", default 1).
//   - "mix": byte(mix32(h + i·0x9E3779B9)) where h = seed + Σ_j term(j, in[j])
//     mod 2^32 over every byte read: a hash of exactly the bytes read, so a
//     stale or torn read changes the output.
//   - "mixat": the same hash h, but the byte written at heap address a is
//     byte(mix32(h + a·0x9E3779B9)): keyed by the address instead of the
//     stream index, so a task whose write accesses overlap (a byte written
//     twice, by two accesses or by overlapping rows) writes it the same
//     value both times. With "mix" such a byte gets two different values,
//     one per stream index; the CPU keeps the later one and the GPU's
//     threads race for it, so the result is not defined.
//
// "seed" is the param "seed", defaulting to the task's index. copy, add8 and
// scale need at least one read; no operation but mix and mixat may write a
// byte it also reads (they read everything before they write).
var Ops = []string{"nop", "fill", "copy", "add8", "scale", "mix", "mixat"}

// opCodes maps every op name the runner knows to its code.
var opCodes = func() map[string]uint64 {
	m := map[string]uint64{"": opNop, "nop": opNop, "noop": opNop, "fill": opFill, "copy": opCopy, "add8": opAdd, "scale": opScale, "mix": opMix, "mixat": opMixAt}
	for _, o := range numOps {
		m[o.name] = o.code
	}
	return m
}()

// opCanonical is the name of each op code.
var opCanonical = func() map[uint64]string {
	m := map[uint64]string{opNop: "nop", opFill: "fill", opCopy: "copy", opAdd: "add8", opScale: "scale", opMix: "mix", opMixAt: "mixat"}
	for _, o := range numOps {
		m[o.code] = o.name
	}
	return m
}()

// mix32 is MurmurHash3's 32-bit finalizer; the CUDA source has the same.
func mix32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x85EBCA6B
	x ^= x >> 13
	x *= 0xC2B2AE35
	x ^= x >> 16
	return x
}

// mixTerm is one read byte's contribution to a mix hash.
func mixTerm(j uint64, b byte) uint32 {
	return mix32(uint32(j)*0x85EBCA6B + uint32(b)*0xC2B2AE35 + 0x27D4EB2F)
}

// initByte is byte j of the initial contents of buffer b (inputs, weights
// and state start with it).
func initByte(b int, j uint64) byte {
	return byte(mix32(uint32(b)*0x01000193 + uint32(j)*0x9E3779B9 + 0x165667B1))
}

// span is the heap byte range [lo, hi) of one row of an access.
type span struct{ lo, hi uint64 }

// access is an access resolved to heap addresses.
type access struct {
	addr, length, rows, stride uint64
}

func (a access) size() uint64 { return a.length * a.rows }

// at is the heap address of byte i of the access's stream.
func (a access) at(i uint64) uint64 { return a.addr + (i/a.length)*a.stride + i%a.length }

// streamAt is the heap address of byte i of the concatenation of accs.
func streamAt(accs []access, i uint64) uint64 {
	for _, a := range accs {
		if n := a.size(); i < n {
			return a.at(i)
		} else {
			i -= n
		}
	}
	return 0
}

func streamLen(accs []access) uint64 {
	var n uint64
	for _, a := range accs {
		n += a.size()
	}
	return n
}

// body is a task's body: its operation, operands and resolved footprint.
type body struct {
	op     uint64
	seed   uint64
	k, c   uint64
	args   [numArgs]uint64 // numeric ops' argument words
	reads  []access
	writes []access
}

// run executes the body on heap (the CPU reference of the GPU code).
func (b *body) run(heap []byte) {
	if o := numByCode[b.op]; o != nil {
		o.run(&b.args, b.reads, b.writes, heap)
		return
	}
	n := streamLen(b.writes)
	switch b.op {
	case opFill:
		for i := uint64(0); i < n; i++ {
			heap[streamAt(b.writes, i)] = byte(mix32(uint32(b.seed) + uint32(i)*0x9E3779B9))
		}
	case opCopy, opScale:
		r := streamLen(b.reads)
		for i := uint64(0); i < n; i++ {
			v := heap[streamAt(b.reads, i%r)]
			if b.op == opScale {
				v = v*byte(b.k) + byte(b.c)
			}
			heap[streamAt(b.writes, i)] = v
		}
	case opAdd:
		for i := uint64(0); i < n; i++ {
			var s byte
			for _, a := range b.reads {
				s += heap[a.at(i%a.size())]
			}
			heap[streamAt(b.writes, i)] = s
		}
	case opMix, opMixAt:
		h := uint32(b.seed)
		var j uint64
		for _, a := range b.reads {
			for e := uint64(0); e < a.size(); e++ {
				h += mixTerm(j, heap[a.at(e)])
				j++
			}
		}
		for i := uint64(0); i < n; i++ {
			ad := streamAt(b.writes, i)
			if b.op == opMixAt {
				heap[ad] = byte(mix32(h + uint32(ad)*0x9E3779B9))
			} else {
				heap[ad] = byte(mix32(h + uint32(i)*0x9E3779B9))
			}
		}
	}
}

// spans lists the heap rows of accs.
func spans(accs []access) []span {
	var out []span
	for _, a := range accs {
		for r := uint64(0); r < a.rows; r++ {
			lo := a.addr + r*a.stride
			out = append(out, span{lo, lo + a.length})
		}
	}
	return out
}

// overlaps reports whether some row of xs overlaps some row of ys.
func overlaps(xs, ys []span) bool {
	if len(xs) == 0 || len(ys) == 0 {
		return false
	}
	type ev struct {
		span
		w bool
	}
	all := make([]ev, 0, len(xs)+len(ys))
	for _, s := range xs {
		all = append(all, ev{s, false})
	}
	for _, s := range ys {
		all = append(all, ev{s, true})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	var endX, endY uint64
	for _, e := range all {
		if e.w {
			if e.lo < endX {
				return true
			}
			endY = max(endY, e.hi)
		} else {
			if e.lo < endY {
				return true
			}
			endX = max(endX, e.hi)
		}
	}
	return false
}

// param reads an integer operand with a default.
func param(ps schedule.Params, key string, def int64) int64 {
	if v, ok := ps.Get(key); ok {
		return v
	}
	return def
}

// opError describes a task body the runner cannot execute.
func opError(name, format string, args ...any) error {
	return fmt.Errorf("runner: task %q: %s", name, fmt.Sprintf(format, args...))
}
