// attention and attn_partial: one query head over a window of the KV cache
// (runner/op_attention.go, runner/op_attn_partial.go). Up to ATT_WARPS
// warps each take chunks of KC consecutive keys, every ATT_WARPS·KC-th
// chunk: the K and V rows of a chunk are loaded together (2·KC loads in
// flight per lane), the KC scores reduced across the warp side by side,
// and the online softmax (max, sum, output) updated once per chunk; lane
// l holds dims [l·E, (l+1)·E) with E = D/32. The block then merges the
// warps' states.

// ld_e loads E consecutive bf16 from p as fp32, as one vector load where
// E is 2, 4 or 8.
template <int E>
__device__ __forceinline__ void ld_e(const u8 *p, float *f) {
  if (E == 8) {
    unpack8(*(const uint4 *)p, f);
  } else if (E == 4) {
    const uint2 v = *(const uint2 *)p;
    f[0] = __uint_as_float(v.x << 16), f[1] = __uint_as_float(v.x & 0xffff0000u);
    f[2] = __uint_as_float(v.y << 16), f[3] = __uint_as_float(v.y & 0xffff0000u);
  } else if (E == 2) {
    const u32 v = *(const u32 *)p;
    f[0] = __uint_as_float(v << 16), f[1] = __uint_as_float(v & 0xffff0000u);
  } else {
#pragma unroll
    for (int e = 0; e < E; e++) f[e] = bf2f(((const u16 *)p)[e]);
  }
}

// ld_n is ld_e for a run-time count ne ≤ E of elements, zero above it.
template <int E>
__device__ __forceinline__ void ld_n(const u8 *p, float *f, u32 ne) {
#pragma unroll
  for (int e = 0; e < E; e++) f[e] = (u32)e < ne ? bf2f(((const u16 *)p)[e]) : 0.f;
}

// op_attn_e is the body for E dims per lane (EXACT), or for D/32 ≤ E dims
// per lane with scalar loads (not EXACT).
template <bool PARTIAL, int E, int KC, bool EXACT>
__device__ void op_attn_e(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1], n = T[TASK_ARG0 + 2];
  const float scale = __uint_as_float((u32)T[TASK_ARG0 + 3]);
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 nwa = (blockDim.x >> 5) < ATT_WARPS ? (blockDim.x >> 5) : ATT_WARPS;
  const u32 ne = EXACT ? E : (u32)(D / 32);
  for (u64 b = 0; b < B; b++) {
    const u64 qa = row_addr(ACC(R, 0), b, 2 * D);
    const u64 ka = row_addr(ACC(R, 1), b, 2 * n * D), va = row_addr(ACC(R, 2), b, 2 * n * D);
    float m = neg_inf(), l = 0.f, o[E], q[E];
#pragma unroll
    for (int e = 0; e < E; e++) o[e] = 0.f;
    if (warp < nwa) {
      if (EXACT) ld_e<E>(H + qa + 2 * lane * ne, q);
      else ld_n<E>(H + qa + 2 * lane * ne, q, ne);
      const u8 *kp = H + ka + 2 * lane * ne, *vp = H + va + 2 * lane * ne;
      for (u64 j0 = (u64)warp * KC; j0 < n; j0 += (u64)nwa * KC) {
        float kf[KC][E], vf[KC][E], d[KC];
#pragma unroll
        for (int c = 0; c < KC; c++) {
          if (j0 + c < n) {
            if (EXACT) {
              ld_e<E>(kp + 2 * (j0 + c) * D, kf[c]);
              ld_e<E>(vp + 2 * (j0 + c) * D, vf[c]);
            } else {
              ld_n<E>(kp + 2 * (j0 + c) * D, kf[c], ne);
              ld_n<E>(vp + 2 * (j0 + c) * D, vf[c], ne);
            }
          } else {
#pragma unroll
            for (int e = 0; e < E; e++) kf[c][e] = 0.f, vf[c][e] = 0.f;
          }
        }
#pragma unroll
        for (int c = 0; c < KC; c++) {
          float s = 0.f;
#pragma unroll
          for (int e = 0; e < E; e++) s += q[e] * kf[c][e];
          d[c] = s;
        }
#pragma unroll
        for (int x = 16; x; x >>= 1)
#pragma unroll
          for (int c = 0; c < KC; c++) d[c] += __shfl_xor_sync(0xffffffffu, d[c], x);
        float mn = m;
#pragma unroll
        for (int c = 0; c < KC; c++) {
          d[c] = j0 + c < n ? d[c] * scale : neg_inf();
          mn = fmaxf(mn, d[c]);
        }
        const float cm = expf(m - mn);
        l *= cm;
#pragma unroll
        for (int e = 0; e < E; e++) o[e] *= cm;
#pragma unroll
        for (int c = 0; c < KC; c++) {
          const float p = expf(d[c] - mn);
          l += p;
#pragma unroll
          for (int e = 0; e < E; e++) o[e] = fmaf(p, vf[c][e], o[e]);
        }
        m = mn;
      }
    }
    __syncthreads(); // the previous row's merge is over
    if (warp < nwa) {
      if (lane == 0) s_ml[2 * warp] = m, s_ml[2 * warp + 1] = l;
#pragma unroll
      for (int e = 0; e < E; e++)
        if ((u32)e < ne) s_att[warp * D + lane * ne + e] = o[e];
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

template <bool PARTIAL>
__device__ void op_attn(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  // KC·E ≤ 32: the chunk's K and V rows take at most 64 registers.
  switch (T[TASK_ARG0 + 1] / 32) {
  case 1: op_attn_e<PARTIAL, 1, 16, true>(T, R, W, H); break;
  case 2: op_attn_e<PARTIAL, 2, 16, true>(T, R, W, H); break;
  case 4: op_attn_e<PARTIAL, 4, 8, true>(T, R, W, H); break;
  case 8: op_attn_e<PARTIAL, 8, 2, true>(T, R, W, H); break;
  default: op_attn_e<PARTIAL, 8, 2, false>(T, R, W, H); break;
  }
}
