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
// 32 bits wide, named c<id>, and start at 0: AMK's GPU loader zeroes every
// counter before a launch (vm/loader.py), whatever init says, so init is
// checked (a uint32) and otherwise unused.
//
// # Placement and launch
//
// Tasks run as AMK's GPU loader (vm/loader.py) queues them. With a task
// pinned (sm set), every SM runs its queue one task at a time: the tasks
// pinned to it, and on SM 0 every unpinned task too, in the program's
// topological order, not in task-list order. That order is AMK's
// MegakernelProgram.topological_order: Kahn's algorithm over the edges from
// each counter's producers (the tasks whose out_counter it is) to each task
// that waits on it, each pair once, the tasks without predecessors first
// in ascending id, each task's successors in ascending id. Where that order
// is the task list's on every SM and no task is unpinned, a task is pinned
// to worker sm as it is (its worker's queue, in task-list order). Otherwise
// every task becomes dynamic ([schedule.Dynamic]), and an SM with two or
// more tasks gets a counter queue.sm<s> (QueuePrefix): its k-th task waits,
// after its own waits, for queue.sm<s> >= k and signals +1 on it after its
// own signal, so that the queue's tasks run one at a time, in its order,
// while the task list and its paths stay the document's; Paths locates a
// step on a queue counter at its task. A program whose graph has a cycle,
// which AMK's loader refuses to load, is mapped in task-list order.
//
// Without pinned tasks the loader places every task itself along that
// order (cost-balanced over the SMs it launches, by est_bytes and
// est_flops), and the tasks are dynamic: running them as dynamic tasks
// covers every placement, so a safe verdict holds for the loader's (an
// unsafe one may be of a placement it does not choose).
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
// prior state). A buffer's size is what AMK's GPU loader allocates: its
// element count times the itemsize of the torch dtype the loader stores
// its dtype as (F32 and I32 4 bytes, F16 and BF16 2, I8, U8 and BOOL 1,
// and F8E4M3, F8E5M2 and I4 4, as float32, which the loader's table
// falls back to), except that an I4 weight (WEIGHT or CONST) is bound as
// AMK's quantizer packs it, two elements a byte in rows of ceil(last
// axis / 2) bytes. Buffers are row-major. Names are AMK's, with #<id> appended when two buffers share
// one.
//
// pages are checked (ids, spaces and the buffer ids of buffer_to_page) and
// map to nothing: AMK's GPU loader does not read them and gives every
// activation and output buffer a slot of its own in its arena, so buffers
// bound to one page do not alias.
//
// # Footprints
//
// Byte-precise, with element widths from dtype; a packed I4 run covers
// every byte that holds one of its elements.
//
//   - GEMV_TILE, GEMM_TILE write columns [n_off, n_off+N_tile) of their
//     first output as AMK's kernel indexes it, [M, N] by its first two
//     axes (N = shape[1], M = numel / N; M_tile and m_off do not narrow
//     the rows): of a matrix, those columns in every row (a rows × stride
//     tile when it has more than one row; an I4 matrix whose rows do not
//     start on byte boundaries gets one byte span from the first row's
//     first byte to the last row's last byte instead); of a vector or a
//     scalar, element 0, where every column lands; of an output of rank 3
//     or more, columns shape[2]·… elements apart in rows shape[1]·… apart,
//     each row's columns as one span. With a positive integer params.K,
//     a tile reads K elements of each of x's M rows (input 0, rows
//     stride[0] apart) and of W's rows [n_off, n_off+N_tile) (input 1); a
//     GEMM tile also its bias (input 2, when there is one) at elements
//     [n_off, n_off+N_tile). A GEMV tile with params.qdtype 6 (I8) or 7
//     (I4) reads W's rows as bytes instead, K bytes (I8) or ceil(K/2)
//     bytes (I4) a row whatever W's shape, and its fp16 scales (input 2)
//     and zeros (input 3, when there is one) at rows [n_off,
//     n_off+N_tile) of ceil(K/group) 2-byte elements (group =
//     params.group when positive, else K). The kernels read no other
//     input. Without such a K, or with a qdtype that is not an integer,
//     every input is read whole.
//   - KV_APPEND writes its first output, as AMK's kernel does: a cache of
//     rank 3 or less gets all of new_kv's elements (input 0) from sequence
//     row pos on (axis 0; one row in decode, more when new_kv holds more),
//     a rank-4 batched cache sequence row pos (axis 1) of every batch
//     entry, one run each, as a tile. An input that is also an output (the
//     cache updated in place) is not read; other inputs are read whole.
//   - ATTENTION_TILE reads its K and V operands (inputs 1 and 2, as in AMK's
//     reference semantics) over sequence rows [kv_start, kv_start+kv_len).
//     With positive integer head_dim, n_heads and n_kv_heads, as AMK's
//     kernels do (query head h reads KV head h/rep, rep =
//     n_heads/n_kv_heads): rows of n_kv_heads·head_dim elements, of which
//     KV heads [0, ceil(n_heads/rep)) are read, past the row when n_heads
//     is not a multiple of n_kv_heads (n_heads below n_kv_heads, where the
//     kernel divides by rep = 0, is invalid.value). A q of rank other than
//     3 is read over its first n_heads·head_dim elements, and as many of
//     the first output are written (n_heads·(head_dim+2) for a split-KV
//     partial, flags bit 1); a rank-3 q holds B = shape[0] sequences,
//     each read and written over n_heads·head_dim elements of q and of
//     the output, and each with its window in the caches k.shape[1] rows
//     apart (V indexed as K). Without the head params, along the caches'
//     own rows (axis 0, axis 1 of a rank-4 cache), with q and the outputs
//     whole. Other inputs are read whole.
//   - COPY, ADD and SILU_MUL read as many elements of each operand
//     (input 0, and input 1 for ADD and SILU_MUL) as their first output
//     has, and write that output; RMSNORM reads the rows of params.hidden
//     elements of input 0 that fit its first output and params.hidden
//     elements of its weight (input 1), and writes those rows of the
//     output (without a positive integer hidden, every operand whole).
//     ROPE reads, for every params.head_dim elements of input 0, their
//     first 2·(head_dim/2), writes the same elements of its first output,
//     and reads input 1 (the position) whole; EMBED reads its ids and
//     table whole (the rows taken are data) and writes one table row per
//     id to its first output, one after another.
//     These are AMK's element loops (amk_load_f, amk_store_f), which take
//     F16 and BF16 elements as 2 bytes and any other dtype as a 4-byte
//     float whatever its width, and so do these footprints, KV_APPEND's,
//     attention's, the combine's, the argmax's and the tiles' x, W
//     (unquantized) and bias reads: a
//     buffer the loader stores 1 byte an element (I8, U8, BOOL) is read
//     and written 4 bytes an element, and an access past its buffer is
//     out-of-bounds.
//   - ATTENTION_COMBINE, with positive integer head_dim and n_heads,
//     reads n_heads·(head_dim+2) elements of each input (a split-KV
//     partial) and writes n_heads·head_dim elements of its first output;
//     SAMPLE_ARGMAX reads its logits (input 0) and writes one element of
//     its first output per row of shape[-1] logits. Neither touches
//     other operands.
//   - Every other op reads all inputs and writes all outputs whole.
//
// A footprint outside its buffer, including a negative offset, is mapped
// as it is: the verifier reports it as out-of-bounds. Offsets and lengths
// beyond 2^60 bytes saturate there (still out of bounds).
//
// The opcodes whose GPU kernel traps (LAYERNORM, GELU, MUL,
// DEQUANT, SOFTMAX, ALLREDUCE_SHARD, FUSED but for its GEMV_ADD pattern)
// abort the launch rather than hang or race; the mapping takes them as
// ordinary ops (FUSED's GEMV_ADD included). An attention head_dim above
// 512 traps too, and is mapped as any other. AMK's persistent
// K-step kernel rewrites KV_APPEND's pos and ATTENTION_TILE's kv_len at each
// step; the mapping reads one step as the IR has it.
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
