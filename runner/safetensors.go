package runner

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// Safetensors is a safetensors file opened for reading: its header is
// parsed, tensor data is read on demand. It implements [Tensors],
// converting BF16, F16 and F32 tensors to bfloat16 (round to nearest
// even).
type Safetensors struct {
	r       io.ReaderAt
	closer  io.Closer
	base    int64 // offset of the data section
	size    int64 // bytes of the data section
	tensors map[string]TensorInfo
}

// TensorInfo is one tensor's entry in a safetensors header.
type TensorInfo struct {
	Dtype   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// Elements is the number of elements of the tensor's shape.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

var dtypeSize = map[string]int64{"BF16": 2, "F16": 2, "F32": 4}

// maxHeader bounds a safetensors header (the format allows 100 MB).
const maxHeader = 100 << 20

// OpenSafetensors opens a safetensors file and reads its header.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	s, err := ReadSafetensors(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.closer = f
	return s, nil
}

// ReadSafetensors reads the header of a safetensors image of size bytes
// read through r. Every tensor of a dtype the reader converts (BF16, F16,
// F32) must have data offsets that match its shape and lie inside the
// data section; other dtypes are listed but cannot be read.
func ReadSafetensors(r io.ReaderAt, size int64) (*Safetensors, error) {
	var lenb [8]byte
	if _, err := r.ReadAt(lenb[:], 0); err != nil {
		return nil, fmt.Errorf("runner: safetensors: reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n > maxHeader || int64(n) > size-8 {
		return nil, fmt.Errorf("runner: safetensors: header of %d bytes in a file of %d", n, size)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("runner: safetensors: reading the header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("runner: safetensors: header: %w", err)
	}
	s := &Safetensors{r: r, base: 8 + int64(n), size: size - 8 - int64(n), tensors: map[string]TensorInfo{}}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var t TensorInfo
		if err := json.Unmarshal(msg, &t); err != nil {
			return nil, fmt.Errorf("runner: safetensors: tensor %q: %w", name, err)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("runner: safetensors: tensor %q: negative dimension in shape %v", name, t.Shape)
			}
		}
		if es, ok := dtypeSize[t.Dtype]; ok {
			lo, hi := t.Offsets[0], t.Offsets[1]
			if lo < 0 || hi < lo || hi > s.size || hi-lo != es*t.Elements() {
				return nil, fmt.Errorf("runner: safetensors: tensor %q (%s %v): data offsets [%d, %d) in a data section of %d bytes", name, t.Dtype, t.Shape, lo, hi, s.size)
			}
		}
		s.tensors[name] = t
	}
	return s, nil
}

// Close closes the file of OpenSafetensors.
func (s *Safetensors) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// Names lists the tensors, sorted.
func (s *Safetensors) Names() []string {
	out := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Info returns a tensor's header entry.
func (s *Safetensors) Info(name string) (TensorInfo, bool) {
	t, ok := s.tensors[name]
	return t, ok
}

// Has reports whether the file holds the tensor.
func (s *Safetensors) Has(name string) bool { _, ok := s.tensors[name]; return ok }

// Tensor returns the tensor's n elements as bfloat16 bytes.
func (s *Safetensors) Tensor(name string, n int) ([]byte, error) {
	t, ok := s.tensors[name]
	if !ok {
		return nil, fmt.Errorf("runner: safetensors: no tensor %q", name)
	}
	if t.Elements() != int64(n) {
		return nil, fmt.Errorf("runner: safetensors: tensor %q has shape %v (%d elements), want %d", name, t.Shape, t.Elements(), n)
	}
	es, ok := dtypeSize[t.Dtype]
	if !ok {
		return nil, fmt.Errorf("runner: safetensors: tensor %q has dtype %s (want BF16, F16 or F32)", name, t.Dtype)
	}
	raw := make([]byte, es*int64(n))
	if _, err := s.r.ReadAt(raw, s.base+t.Offsets[0]); err != nil {
		return nil, fmt.Errorf("runner: safetensors: tensor %q: %w", name, err)
	}
	switch t.Dtype {
	case "BF16":
		return raw, nil
	case "F16":
		out := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			h := f32ToBF16(f16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
			binary.LittleEndian.PutUint16(out[2*i:], h)
		}
		return out, nil
	default: // F32
		out := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			h := f32ToBF16(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
			binary.LittleEndian.PutUint16(out[2*i:], h)
		}
		return out, nil
	}
}

// f16ToF32 widens an IEEE half.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: value = man · 2⁻²⁴.
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// WriteSafetensors writes tensors (name → bf16 bytes and shape) as a
// safetensors image of BF16 tensors, in name order. Tests use it to make
// files; scripts/gpu/llama_ref.py writes the same format with the
// safetensors package.
func WriteSafetensors(w io.Writer, tensors map[string][]byte, shapes map[string][]int64) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{}
	var off int64
	for _, n := range names {
		sz := int64(len(tensors[n]))
		hdr[n] = TensorInfo{Dtype: "BF16", Shape: shapes[n], Offsets: [2]int64{off, off + sz}}
		off += sz
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	var lenb [8]byte
	binary.LittleEndian.PutUint64(lenb[:], uint64(len(js)))
	if _, err := w.Write(lenb[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := w.Write(tensors[n]); err != nil {
			return err
		}
	}
	return nil
}
