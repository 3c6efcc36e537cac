// kv_append: copy the key and value rows into the caches (runner/op_kv_append.go).
__device__ void op_kv_append(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1];
  for (int a = 0; a < 2; a++)
    for (u64 b = 0; b < B; b++) {
      const u64 src = row_addr(ACC(R, a), b, 2 * D), dst = row_addr(ACC(W, a), b, 2 * D);
      for (u64 i = threadIdx.x; i < D; i += blockDim.x) *(u16 *)(H + dst + 2 * i) = *(const u16 *)(H + src + 2 * i);
    }
}
