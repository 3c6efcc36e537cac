// argmax: the lowest index of the largest logit (runner/op_argmax.go). Each
// thread scans a strided tile of the vocabulary; warps, then the block,
// reduce (value, index) pairs.
__device__ __forceinline__ bool am_better(float v, int i, float best, int bi) {
  return i >= 0 && (bi < 0 || v > best || (v == best && i < bi));
}

// am_reduce reduces every thread's (best, bi) over the block; thread 0
// gets the result.
__device__ void am_reduce(float &best, int &bi) {
  const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int m = 16; m; m >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, best, m);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
    if (am_better(ov, oi, best, bi)) best = ov, bi = oi;
  }
  __syncthreads();
  if (lane == 0) s_red[w] = best, s_redi[w] = bi;
  __syncthreads();
  if (threadIdx.x == 0) {
    best = s_red[0], bi = s_redi[0];
    for (u32 k = 1; k < nw; k++)
      if (am_better(s_red[k], s_redi[k], best, bi)) best = s_red[k], bi = s_redi[k];
  }
}

// am_scan is the block's (largest, lowest index) over the n fp32 at lg,
// valid in thread 0; NaN never wins, index −1 when every value is NaN.
__device__ void am_scan(const u8 *H, u64 lg, u64 n, float &best, int &bi) {
  best = 0.f, bi = -1;
  for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = ldf(H, lg + 4 * i);
    if (v == v && (bi < 0 || v > best)) best = v, bi = (int)i;
  }
  am_reduce(best, bi);
}

__device__ void op_argmax(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], V = T[TASK_ARG0 + 1];
  for (u64 b = 0; b < B; b++) {
    float best;
    int bi;
    am_scan(H, ACC(R, 0)[0] + 4 * V * b, V, best, bi);
    if (threadIdx.x == 0) *(int *)(H + ACC(W, 0)[0] + 4 * b) = bi < 0 ? 0 : bi;
  }
}

// argmax_tiles: the pick among the lm-head tiles' best pairs
// (runner/op_argmax_tiles.go).
__device__ void op_argmax_tiles(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1];
  for (u64 b = 0; b < B; b++) {
    const u64 p = ACC(R, 0)[0] + 8 * n * b;
    float best = 0.f;
    int bi = -1;
    for (u64 t = threadIdx.x; t < n; t += blockDim.x) {
      const float v = ldf(H, p + 8 * t);
      const int i = *(const int *)(H + p + 8 * t + 4);
      if (am_better(v, i, best, bi)) best = v, bi = i;
    }
    am_reduce(best, bi);
    if (threadIdx.x == 0) *(int *)(H + ACC(W, 0)[0] + 4 * b) = bi < 0 ? 0 : bi;
  }
}

// norm_gemv_argmax: an lm-head tile and its best pair
// (runner/op_norm_gemv_argmax.go).
__device__ void op_norm_gemv_argmax(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], off = T[TASK_ARG0 + 6];
  op_norm_gemv(T, R, W, H);
  __syncthreads(); // the tile's logits are written
  for (u64 b = 0; b < B; b++) {
    float best;
    int bi;
    am_scan(H, row_addr(ACC(W, 0), b, 4 * n), n, best, bi);
    if (threadIdx.x == 0) {
      const u64 p = row_addr(ACC(W, 1), b, 8);
      stf(H, p, best);
      *(int *)(H + p + 4) = bi < 0 ? -1 : bi + (int)off;
    }
  }
}
