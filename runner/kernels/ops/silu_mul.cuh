// silu_mul: act = bf16(bf16(silu(gate)) · up) (runner/op_silu_mul.go).
__device__ void op_silu_mul(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1];
  for (u64 b = 0; b < B; b++) {
    const u64 g = row_addr(ACC(R, 0), b, 2 * n), u = row_addr(ACC(R, 1), b, 2 * n), y = row_addr(ACC(W, 0), b, 2 * n);
    for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
      const float x = ldbf(H, g + 2 * i);
      stbf(H, y + 2 * i, rbf(x / (1.f + expf(-x))) * ldbf(H, u + 2 * i));
    }
  }
}
