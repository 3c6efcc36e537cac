// rmsnorm: y = bf16(w · bf16(x · rsqrt(mean(x²) + eps))) (runner/op_rmsnorm.go).
__device__ void op_rmsnorm(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], Hd = T[TASK_ARG0 + 1];
  const float eps = __uint_as_float((u32)T[TASK_ARG0 + 2]);
  const u64 wa = ACC(R, 1)[0];
  for (u64 b = 0; b < B; b++) {
    const u64 x = ACC(R, 0)[0] + 2 * Hd * b, y = ACC(W, 0)[0] + 2 * Hd * b;
    float s = 0.f;
    for (u64 i = threadIdx.x; i < Hd; i += blockDim.x) {
      float v = ldbf(H, x + 2 * i);
      s += v * v;
    }
    s = block_sum(s);
    const float inv = rsqrtf(s / (float)Hd + eps);
    for (u64 i = threadIdx.x; i < Hd; i += blockDim.x)
      stbf(H, y + 2 * i, ldbf_w(H, wa + 2 * i) * rbf(ldbf(H, x + 2 * i) * inv));
  }
}
