// run_numeric executes numeric op `op` of a task (T: its record, R/W: its
// read and write accesses) with the whole block. An op code the kernel
// does not know traps: the launch fails instead of skipping the body.
// It and the bodies with long loops (gemv_vec, the attention bodies) are
// not inlined: each gets its own register allocation, and the
// interpreter's state is saved once around a body rather than spilled
// inside the bodies' loops.
__device__ __noinline__ void run_numeric(u64 op, const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  switch (op) {
  case OP_EMBED: op_embed(T, R, W, H); break;
  case OP_RMSNORM: op_rmsnorm(T, R, W, H); break;
  case OP_GEMV: op_gemv(T, R, W, H); break;
  case OP_ROPE: op_rope(T, R, W, H); break;
  case OP_KV_APPEND: op_kv_append(T, R, W, H); break;
  case OP_ATTENTION: op_attn<false>(T, R, W, H); break;
  case OP_ATTN_PARTIAL: op_attn<true>(T, R, W, H); break;
  case OP_ATTN_COMBINE: op_attn_combine(T, R, W, H); break;
  case OP_ADD: op_add(T, R, W, H); break;
  case OP_SILU_MUL: op_silu_mul(T, R, W, H); break;
  case OP_ARGMAX: op_argmax(T, R, W, H); break;
  case OP_NORM_GEMV: op_norm_gemv(T, R, W, H); break;
  case OP_GEMV_ADD: op_gemv_add(T, R, W, H); break;
  case OP_NORM_GATE_UP: op_norm_gate_up(T, R, W, H); break;
  case OP_ROPE_APPEND: op_rope_append(T, R, W, H); break;
  case OP_NORM_GEMV_ARGMAX: op_norm_gemv_argmax(T, R, W, H); break;
  case OP_ARGMAX_TILES: op_argmax_tiles(T, R, W, H); break;
  case OP_COMBINE_GEMV_ADD: op_combine_gemv_add(T, R, W, H); break;
  default: __trap();
  }
}
