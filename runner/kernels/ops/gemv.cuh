// gemv: one tile of y = x·Wᵀ, fp32 accumulation (runner/op_gemv.go). One
// warp per output row; each lane reads 16 bytes (8 bf16) of the row per
// load, four loads in flight, for up to 8 batch rows at once, and the warp
// reduces the sums.
#define GEMV_BATCH 8
__device__ void op_gemv(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u64 elem = T[TASK_ARG0 + 3], rnd = T[TASK_ARG0 + 4];
  const u64 xa = ACC(R, 0)[0], wa = ACC(R, 1)[0];
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
  const bool vec = k % 8 == 0 && xa % 16 == 0 && wa % 16 == 0;
  for (u64 b0 = 0; b0 < B; b0 += GEMV_BATCH) {
    const u32 nb = (u32)(B - b0 < GEMV_BATCH ? B - b0 : GEMV_BATCH);
    for (u64 j = warp; j < n; j += nwarp) {
      float acc[GEMV_BATCH];
#pragma unroll
      for (int q = 0; q < GEMV_BATCH; q++) acc[q] = 0.f;
      const u64 wr = wa + 2 * j * k;
      if (vec) {
        // Four 16-byte weight loads in flight per lane before the sums.
        const u64 chunks = k / 8;
        for (u64 c0 = lane; c0 < chunks; c0 += 128) {
          uint4 wv[4];
#pragma unroll
          for (int u = 0; u < 4; u++)
            if (c0 + 32 * u < chunks) wv[u] = __ldg((const uint4 *)(H + wr + 16 * (c0 + 32 * u)));
#pragma unroll
          for (int u = 0; u < 4; u++) {
            const u64 c = c0 + 32 * u;
            if (c < chunks) {
              float wf[8], xf[8];
              unpack8(wv[u], wf);
#pragma unroll
              for (int q = 0; q < GEMV_BATCH; q++) {
                if (q < nb) {
                  unpack8(*(const uint4 *)(H + xa + 2 * ((b0 + q) * k + 8 * c)), xf);
#pragma unroll
                  for (int e = 0; e < 8; e++) acc[q] += xf[e] * wf[e];
                }
              }
            }
          }
        }
      } else {
        for (u64 i = lane; i < k; i += 32) {
          const float wv = ldbf_w(H, wr + 2 * i);
#pragma unroll
          for (int q = 0; q < GEMV_BATCH; q++)
            if (q < nb) acc[q] += ldbf(H, xa + 2 * ((b0 + q) * k + i)) * wv;
        }
      }
#pragma unroll
      for (int q = 0; q < GEMV_BATCH; q++) {
        if (q < nb) {
          const float s = warp_sum(acc[q]);
          if (lane == 0) {
            const u64 y = row_addr(ACC(W, 0), b0 + q, elem * n);
            if (elem == 2) stbf(H, y + 2 * j, s);
            else stf(H, y + 4 * j, rnd ? rbf(s) : s);
          }
        }
      }
    }
  }
}
