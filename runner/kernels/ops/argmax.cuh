// argmax: the lowest index of the largest logit (runner/op_argmax.go). Each
// thread scans a strided tile of the vocabulary; warps, then the block,
// reduce (value, index) pairs.
__device__ __forceinline__ bool am_better(float v, int i, float best, int bi) {
  return i >= 0 && (bi < 0 || v > best || (v == best && i < bi));
}

__device__ void op_argmax(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], V = T[TASK_ARG0 + 1];
  const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (u64 b = 0; b < B; b++) {
    const u64 lg = ACC(R, 0)[0] + 4 * V * b;
    float best = 0.f;
    int bi = -1;
    for (u64 i = threadIdx.x; i < V; i += blockDim.x) {
      const float v = ldf(H, lg + 4 * i);
      if (v == v && (bi < 0 || v > best)) best = v, bi = (int)i;
    }
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
      *(int *)(H + ACC(W, 0)[0] + 4 * b) = bi < 0 ? 0 : bi;
    }
  }
}
