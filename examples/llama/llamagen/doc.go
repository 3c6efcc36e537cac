// Package llamagen generates decode-step megakernel schedules for
// Llama-family models, the way megakernel compilers (Mirage MPK, Hazy "No
// Bubbles", AutoMegaKernel) lay them out, and hands them to megaproof as
// [schedule.Program] values.
//
// One decode step is: embed the input token; per layer RMSNorm, q/k/v GEMV
// tiles, RoPE, KV-cache append, attention over the whole window (or split-KV
// partials plus a combine), o-projection tiles, residual add, RMSNorm,
// gate/up GEMV tiles, SiLU·mul, down tiles and a residual add; then the
// final norm, lm-head tiles and an argmax.
//
// # Footprints
//
// Every access is byte-precise. Activations are bf16 row-major matrices
// [batch, n] (kind scratch); a GEMV tile reads its whole input vector and
// the rows [c, c+n) of its [out, in] weight, and writes the column slice
// [c, c+n) of its output (a 1-D range for batch 1, a 2-D tile otherwise).
// KV caches are [batch, kv_heads, max_seq, head_dim] (kind state): the
// append writes row pos of each plane, attention for a head reads rows
// [0, pos] of its kv head (rows below pos are prior state). Weights are
// kind weight, the token is kind input, logits and the sampled token are
// kind output.
//
// # Synchronization
//
// Producer groups signal a counter (+1 release per tile) and consumers wait
// with the exact number of signals they need: an all-join for whole-vector
// inputs, and distinct per-group counters where a consumer needs a subset
// (RoPE and attention of a kv-head group wait only on the q/k/v tiles that
// overlap that group; SiLU·mul tile j waits on gate tile j and up tile j).
// With [Config.Epoch] one counter per kind is shared by all layers with
// layer-scaled thresholds, as MPK does. [Barrier] replaces counters by
// per-layer grid barriers between stages.
//
// A layer is twelve dependent stages (thirteen with split-KV): norm,
// q/k/v, RoPE, KV append, attention, o, add, norm, gate/up, SiLU·mul,
// down, add. [Config.Fuse] emits five: q/k/v tiles that normalize their
// input themselves (norm_gemv), RoPE with the KV append per kv-head group
// (rope_append), attention, o tiles that add their columns to the
// residual (gemv_add), gate/up tiles that normalize, project and apply
// SiLU·mul (norm_gate_up), and down tiles with the residual add; the lm
// head normalizes too and picks each tile's best token (norm_gemv_argmax)
// for a final pick over one pair per tile (argmax_tiles). Fused and
// unfused schedules compute the same numbers; verify checks the fused
// footprints like any others. [Config.FuseCombine] also moves the
// split-KV combine into the o tiles (combine_gemv_add), one stage fewer.
//
// At batch > 1 a head's attention task (each split chunk and combine)
// covers every sequence; [Config.RowAttention] emits one task per sequence
// instead (params row and rows), whose accesses are that sequence's rows,
// so that the batch spreads over the workers.
//
// # Strategies
//
// [RoundRobin] and [Balanced] (cost-sorted LPT per stage) build static
// per-worker queues by assigning tasks in a global topological order, so
// every queue is consistent with one order and no resident worker can wait
// on a task queued behind its own. [Dynamic] leaves every task unpinned.
// [Config.Pages] places per-layer scratch in an arena of that many slots so
// that layer l and layer l+Pages alias; writers of a reused slot wait on a
// credit counter that the slot's previous layer releases when it finishes.
//
// # Tests
//
// [Configs] lists the named configurations the tests verify safe, and
// [Twin] makes one-edit unsafe variants (dropped wait, lowered or raised
// threshold, shifted tile, relaxed signal, one worker too many) with the
// finding codes megaproof must report for them.
package llamagen
