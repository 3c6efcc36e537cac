// attn_combine: merge a head's split-KV partials by log-sum-exp
// (runner/op_attn_combine.go).
__device__ void op_attn_combine(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1], S = T[TASK_ARG0 + 2];
  for (u64 b = 0; b < B; b++) {
    const u64 part = row_addr(ACC(R, 0), b, 4 * S * D), lse = row_addr(ACC(R, 1), b, 4 * S);
    for (u64 t = threadIdx.x; t < D; t += blockDim.x) {
      float M = ldf(H, lse);
      for (u64 s = 1; s < S; s++) M = fmaxf(M, ldf(H, lse + 4 * s));
      float L = 0.f, O = 0.f;
      for (u64 s = 0; s < S; s++) {
        const float c = expf(ldf(H, lse + 4 * s) - M);
        L += c;
        O += c * ldf(H, part + 4 * (s * D + t));
      }
      stbf(H, row_addr(ACC(W, 0), b, 2 * D) + 2 * t, O / L);
    }
  }
}
