// attention and attn_partial: one query head over a window of the KV cache
// (runner/op_attention.go, runner/op_attn_partial.go). Up to ATT_WARPS
// warps each stream every ATT_WARPS-th key with an online softmax (lane l
// holds dims [l·D/32, (l+1)·D/32)); the block then merges the warps'
// (max, sum, output) states.
template <bool PARTIAL>
__device__ void op_attn(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1], n = T[TASK_ARG0 + 2];
  const float scale = __uint_as_float((u32)T[TASK_ARG0 + 3]);
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 nwa = (blockDim.x >> 5) < ATT_WARPS ? (blockDim.x >> 5) : ATT_WARPS;
  const u32 E = (u32)(D / 32);
  for (u64 b = 0; b < B; b++) {
    const u64 qa = row_addr(ACC(R, 0), b, 2 * D);
    const u64 ka = row_addr(ACC(R, 1), b, 2 * n * D), va = row_addr(ACC(R, 2), b, 2 * n * D);
    float m = neg_inf(), l = 0.f, o[8], q[8];
#pragma unroll
    for (int e = 0; e < 8; e++) o[e] = 0.f, q[e] = 0.f;
    if (warp < nwa) {
#pragma unroll
      for (u32 e = 0; e < 8; e++)
        if (e < E) q[e] = ldbf(H, qa + 2 * (lane * E + e));
      for (u64 j = warp; j < n; j += nwa) {
        float d = 0.f;
#pragma unroll
        for (u32 e = 0; e < 8; e++)
          if (e < E) d += q[e] * ldbf(H, ka + 2 * (j * D + lane * E + e));
        d = warp_sum(d) * scale;
        const float mn = fmaxf(m, d), c = expf(m - mn), p = expf(d - mn);
        l = l * c + p;
#pragma unroll
        for (u32 e = 0; e < 8; e++)
          if (e < E) o[e] = o[e] * c + p * ldbf(H, va + 2 * (j * D + lane * E + e));
        m = mn;
      }
    }
    __syncthreads(); // the previous row's merge is over
    if (warp < nwa) {
      if (lane == 0) s_ml[2 * warp] = m, s_ml[2 * warp + 1] = l;
#pragma unroll
      for (u32 e = 0; e < 8; e++)
        if (e < E) s_att[warp * D + lane * E + e] = o[e];
    }
    __syncthreads();
    for (u64 t = threadIdx.x; t < D; t += blockDim.x) {
      float M = neg_inf();
      for (u32 w = 0; w < nwa; w++) M = fmaxf(M, s_ml[2 * w]);
      float L = 0.f, O = 0.f;
      for (u32 w = 0; w < nwa; w++) {
        const float c = s_ml[2 * w + 1] > 0.f ? expf(s_ml[2 * w] - M) : 0.f;
        L += s_ml[2 * w + 1] * c;
        O += s_att[w * D + t] * c;
      }
      if (PARTIAL) {
        stf(H, row_addr(ACC(W, 0), b, 4 * D) + 4 * t, O / L);
        if (t == 0) stf(H, row_addr(ACC(W, 1), b, 4), M + logf(L));
      } else {
        stbf(H, row_addr(ACC(W, 0), b, 2 * D) + 2 * t, O / L);
      }
    }
  }
}
