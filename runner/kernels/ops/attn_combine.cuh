// attn_combine: merge a head's split-KV partials by log-sum-exp
// (runner/op_attn_combine.go); combine_gemv_add: the merge of every head
// as the prologue of an o tile (runner/op_combine_gemv_add.go). Both sum
// the splits in order with fmaf, so they compute the same bits.
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
        O = fmaf(c, ldf(H, part + 4 * (s * D + t)), O);
      }
      stbf(H, row_addr(ACC(W, 0), b, 2 * D) + 2 * t, O / L);
    }
  }
}

// Merge coefficients of combine_gemv_add: c_s of every partial row, then
// Σ c_s of every (row, head) (runner.MaxCombineRows of each at most).
__shared__ float s_coef[MAX_COMBINE_ROWS];
__shared__ float s_csum[MAX_COMBINE_ROWS];

// combine_gemv_add: the combine of every head into shared memory, rounded
// to bf16 as attn_combine stores it, then the o tile with the residual add
// (gemv_add). The coefficients come first, one thread a (row, head); then
// a thread takes 4 consecutive dims of a head and loads their partials of
// every split at once (16-byte loads where the rows allow), so the merge
// costs two dependent round trips to L2, not one a split.
__device__ __noinline__ void op_combine_gemv_add(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u32 D = (u32)T[TASK_ARG0 + 3], S = (u32)T[TASK_ARG0 + 4];
  const u64 *Part = ACC(R, 0), *Lse = ACC(R, 1);
  const u32 rows = (u32)(B * k / D); // (batch row, head) pairs
  for (u32 r = threadIdx.x; r < rows; r += blockDim.x) {
    const u64 lse = row_addr(Lse, r, 4 * S);
    float M = ldf(H, lse);
    for (u32 s = 1; s < S; s++) M = fmaxf(M, ldf(H, lse + 4 * s));
    float L = 0.f;
    for (u32 s = 0; s < S; s++) {
      const float c = expf(ldf(H, lse + 4 * s) - M);
      L += c;
      s_coef[r * S + s] = c;
    }
    s_csum[r] = L;
  }
  __syncthreads();
  u16 *xs = (u16 *)s_att;
  const bool vec = aligned16(Part);
  for (u32 q = threadIdx.x; q < rows * D / 4; q += blockDim.x) {
    const u32 r = 4 * q / D, t = 4 * q % D;
    const u8 *p = H + row_addr(Part, r, 4 * S * D) + 4 * t;
    float o[4] = {0.f, 0.f, 0.f, 0.f};
    for (u32 s0 = 0; s0 < S; s0 += 8) {
      float4 v[8];
#pragma unroll
      for (int u = 0; u < 8; u++) {
        const u8 *a = p + 4 * (u64)(s0 + u) * D;
        if (s0 + u < S) v[u] = vec ? *(const float4 *)a : make_float4(((const float *)a)[0], ((const float *)a)[1], ((const float *)a)[2], ((const float *)a)[3]);
      }
#pragma unroll
      for (int u = 0; u < 8; u++) {
        if (s0 + u < S) {
          const float c = s_coef[r * S + s0 + u];
          o[0] = fmaf(c, v[u].x, o[0]), o[1] = fmaf(c, v[u].y, o[1]);
          o[2] = fmaf(c, v[u].z, o[2]), o[3] = fmaf(c, v[u].w, o[3]);
        }
      }
    }
    const float L = s_csum[r];
    const u32 lo = f2bf(o[0] / L) | (u32)f2bf(o[1] / L) << 16, hi = f2bf(o[2] / L) | (u32)f2bf(o[3] / L) << 16;
    *(uint2 *)(xs + 4 * q) = make_uint2(lo, hi);
  }
  __syncthreads();
  gemv_run((const u8 *)xs, true, H, ACC(R, 2)[0], ACC(W, 0), ACC(R, 3), B, n, k, 2, 0);
}
