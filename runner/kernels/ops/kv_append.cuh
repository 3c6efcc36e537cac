// kv_rows: copy the B rows of D bf16 of access S into access Y.
__device__ void kv_rows(const u64 *S, const u64 *Y, u8 *H, u64 B, u64 D) {
  for (u64 b = 0; b < B; b++) {
    const u64 src = row_addr(S, b, 2 * D), dst = row_addr(Y, b, 2 * D);
    for (u64 i = threadIdx.x; i < D; i += blockDim.x) *(u16 *)(H + dst + 2 * i) = *(const u16 *)(H + src + 2 * i);
  }
}

// kv_append: copy the key and value rows into the caches (runner/op_kv_append.go).
__device__ void op_kv_append(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  for (int a = 0; a < 2; a++) kv_rows(ACC(R, a), ACC(W, a), H, T[TASK_ARG0], T[TASK_ARG0 + 1]);
}
