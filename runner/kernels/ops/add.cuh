// add: the residual add y = bf16(a + b) (runner/op_add.go).
__device__ void op_add(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 n = T[TASK_ARG0], a = ACC(R, 0)[0], b = ACC(R, 1)[0], y = ACC(W, 0)[0];
  for (u64 i = threadIdx.x; i < n; i += blockDim.x) stbf(H, y + 2 * i, ldbf(H, a + 2 * i) + ldbf(H, b + 2 * i));
}
