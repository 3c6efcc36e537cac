// Package amk reads AutoMegaKernel (AMK) IR JSON, the on-disk format of
// AMK's MegakernelProgram (IR 0.x, documented in AMK's docs/IR_SPEC.md with
// schedule/ir.py as its reference), into a [schedule.Program] with op-aware
// memory footprints, so megaproof can verify AMK schedules directly.
//
// [Detect] tells AMK IR from megaproof JSON by its top-level keys (a
// truncated AMK document is still detected, so that [Unmarshal] reports the
// syntax error), and [DetectReader] does so on a stream, reading no more
// than the decision needs; [Unmarshal], [Decode] and [DecodeLimit] map it,
// and [DecodeAuto] reads a stream of either format. Like
// [schedule.DecodeLimit], the readers build the program in one pass without
// a tree of the document, stream from an io.Reader, and bound the input.
// Errors are a *[schedule.Error] whose diagnostics carry invalid.* codes
// and JSON paths into the AMK document.
//
// # Tasks and synchronization
//
// Every AMK task becomes one task named t<id>.<OP> (for example
// "t12.GEMV_TILE"): its waits, in order, as acquire waits at gpu scope; its
// body's footprint; then one release signal of +1 on its out_counter. AMK's
// GPU wait is a relaxed atomicAdd(c, 0) without a trailing fence; the
// mapping follows AMK's documented contract (acquire) instead. Counters are
// 32 bits wide, named c<id>, and start at their init.
//
// # Placement and launch
//
// A task with sm set is pinned to worker sm; each worker runs its pinned
// tasks in task-list order (AMK's IR_SPEC per-SM queue). A task with sm
// null or absent is dynamic ([schedule.Dynamic]) and runs once ready. AMK's
// loader places unpinned tasks itself after validation (along a topological
// order, or on SM 0 when other tasks are pinned); that placement is not in
// the IR, so the mapping does not guess it.
//
// The launch has one worker per SM of target.num_sms, one co-resident
// worker per SM, and is cooperative unless target.supports_cooperative is
// false. AMK launches cooperatively with grid = min(num_sms, occupancy ×
// SMs) and refuses zero occupancy, so one block per SM is exactly the
// co-residency its grid relies on; the IR records no occupancy of its own.
// Without a target the launch has max(sm)+1 SMs (1 when nothing is pinned);
// megaproof does not assume AMK loader's 82-SM default. A task pinned to an
// SM the launch does not have is invalid.worker.
//
// # Buffers
//
// Kinds: WEIGHT and CONST → weight, IO_INPUT → input, IO_OUTPUT → output,
// ACTIVATION → scratch, KV_CACHE → state (rows not written in this pass are
// prior state). A buffer's size is its element count times its dtype's
// width (I4 packs two elements per byte, rounded up); buffers are
// row-major. Names are AMK's, with #<id> appended when two buffers share
// one.
//
// pages: the buffers bound to one page (buffer_to_page) alias at offset 0
// of one [schedule.Arena] per page, named page<id> and sized to the largest
// buffer bound to it. Pages without buffers are dropped.
//
// # Footprints
//
// Byte-precise, with element widths from dtype; a packed I4 run covers
// every byte that holds one of its elements.
//
//   - GEMV_TILE, GEMM_TILE write columns [n_off, n_off+N_tile) of the last
//     axis of each output in every row (a rows × stride tile when the
//     output has more than one row; AMK's kernel derives the rows from the
//     output, so M_tile and m_off do not narrow them). An I4 output whose
//     rows do not start on byte boundaries gets one byte span from the
//     first row's first byte to the last row's last byte instead. Inputs
//     are read whole.
//   - KV_APPEND writes sequence row pos of each output: axis 0 of a cache
//     of rank 3 or less, axis 1 of a rank-4 batched cache (one run per
//     batch entry, as a tile). An input that is also an output (the cache
//     updated in place) is not read; other inputs are read whole.
//   - ATTENTION_TILE reads its K and V operands (inputs 1 and 2, as in AMK's
//     reference semantics) over sequence rows [kv_start, kv_start+kv_len)
//     on the same axes; other inputs are read whole, outputs written whole.
//   - Every other op reads all inputs and writes all outputs whole.
//
// A footprint outside its buffer, including a negative offset, is mapped
// as it is: the verifier reports it as out-of-bounds. Offsets and lengths
// beyond 2^60 bytes saturate there (still out of bounds).
//
// # What is invalid
//
// Besides malformed JSON (invalid UTF-8 included) and wrong types: a
// document without its tasks, buffers or counters list (invalid.missing,
// also when the list is null); a dangling buffer, counter or
// page id; a duplicate id or JSON key; a wait threshold below 1 or above
// 2^32-1; a counter init outside uint32; more than [MaxInputs] inputs,
// [MaxOutputs] outputs or [MaxWaits] waits, or a rank above [MaxRank] (AMK's
// ABI capacities); a dimension below 1 or a buffer over 2^56 bytes; an
// unknown kind, dtype, memory space or opcode; a negative sm; a target
// without a positive num_sms; a missing or
// non-int32 footprint param (n_off, N_tile, pos, kv_start, kv_len), or a
// zero or negative N_tile or kv_len; an ir_version or abi_version whose
// major is not [IRMajor]. AMK's per-op arity table is not enforced (AMK's
// own asymmetric-quantized GEMV tiles take four inputs), nor are its
// race and deadlock rules: those are the verifier's to decide.
//
// Fields megaproof does not use (meta beyond model and gpu, config,
// est_bytes, est_flops, label, note, source, live ranges, page sizes, and
// target fields other than name, num_sms and supports_cooperative) are
// accepted as they come, and so are unknown keys: AMK's format is
// additive and its own reader ignores keys it does not know. Integer
// params are kept in [schedule.Task.Params]; float and structured params
// are not. Wherever an integer is expected, one written as an integral
// float (512.0 from Python's /) counts, as in JSON Schema; a fraction is
// invalid.type.
package amk
