// attention and attn_partial: one query head over a window of the KV cache
// (runner/op_attention.go, runner/op_attn_partial.go). Up to ATT_WARPS
// warps each take chunks of KC consecutive keys, every ATT_WARPS·KC-th
// chunk: the K and V rows of a chunk are loaded together (2·KC loads in
// flight per lane), the KC scores reduced across the warp side by side,
// and the online softmax (max, sum, output) updated once per chunk; lane
// l holds dims [l·E, (l+1)·E) with E = D/32 (op_attn_e). For head_dim 64
// and 128 with 16-byte aligned rows, op_attn_v takes the keys instead, a
// key to D/8 lanes (see there). The block then merges the warps' states.

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

// attn_merge merges the nwa warps' states of batch row b (s_ml, s_att) and
// writes the output: the normalized head, or the partial and its
// log-sum-exp.
template <bool PARTIAL>
__device__ __forceinline__ void attn_merge(const u64 *W, u8 *H, u64 b, u64 D, u32 nwa) {
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

// op_attn_e is the body for E dims per lane (EXACT), or for D/32 ≤ E dims
// per lane with scalar loads (not EXACT).
template <bool PARTIAL, int E, int KC, bool EXACT>
__device__ __noinline__ void op_attn_e(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1], n = T[TASK_ARG0 + 2];
  const float scale = __uint_as_float((u32)T[TASK_ARG0 + 3]);
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 nwa = (blockDim.x >> 5) < ATT_WARPS ? (blockDim.x >> 5) : ATT_WARPS;
  const u32 ne = EXACT ? E : (u32)(D / 32);
  for (u64 b = 0; b < B; b++) {
    const u64 qa = row_addr(ACC(R, 0), b, 2 * D);
    const u64 ka = row_addr(ACC(R, 1), b, 2 * n * D), va = row_addr(ACC(R, 2), b, 2 * n * D);
    const u8 *kb = H + ka, *vb = H + va;
    float m = neg_inf(), l = 0.f, o[E], q[E];
#pragma unroll
    for (int e = 0; e < E; e++) o[e] = 0.f;
    if (warp < nwa) {
      if (EXACT) ld_e<E>(H + qa + 2 * lane * ne, q);
      else ld_n<E>(H + qa + 2 * lane * ne, q, ne);
      const u8 *kp = kb + 2 * lane * ne, *vp = vb + 2 * lane * ne;
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
    attn_merge<PARTIAL>(W, H, b, D, nwa);
  }
}

// op_attn_v is the body for head_dim D = 8·G (G lanes of a warp per key,
// 8 dims each, one 16-byte load a row of K or V per lane): a warp takes
// 32/G keys side by side and U rounds of them at once, a key's score is
// reduced over its G lanes only (log2 G shuffles), and each group of G
// lanes keeps its own online softmax state, merged within the warp by
// shuffles and across the warps as op_attn_e merges them. It takes about a
// third of op_attn_e's instructions per key. q, K and V rows must be
// 16-byte aligned.
template <bool PARTIAL, int G, int U>
__device__ __noinline__ void op_attn_v(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 1], n = T[TASK_ARG0 + 2];
  const float scale = __uint_as_float((u32)T[TASK_ARG0 + 3]);
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 nwa = (blockDim.x >> 5) < ATT_WARPS ? (blockDim.x >> 5) : ATT_WARPS;
  constexpr u32 RPW = 32 / G; // keys side by side in a warp
  const u32 sub = lane % G, grp = lane / G;
  const u32 step = nwa * RPW; // keys between a slot's rounds
  for (u64 b = 0; b < B; b++) {
    const u64 qa = row_addr(ACC(R, 0), b, 2 * D);
    const u64 ka = row_addr(ACC(R, 1), b, 2 * n * D), va = row_addr(ACC(R, 2), b, 2 * n * D);
    const u8 *kb = H + ka, *vb = H + va;
    // m starts finite: a key group may see no key in a round (the rounds
    // are the warp's, for its shuffles), and exp(m - max) must stay 0 or 1.
    float m = -1e30f, l = 0.f, o[8], q[8];
#pragma unroll
    for (int e = 0; e < 8; e++) o[e] = 0.f;
    if (warp < nwa) {
      unpack8(*(const uint4 *)(H + qa + 16 * sub), q);
      const u8 *kp = kb + 16 * sub, *vp = vb + 16 * sub;
      for (u32 jb = warp * RPW; jb < n; jb += U * step) {
        const u32 j0 = jb + grp;
        uint4 kv[U], vv[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
          const u32 j = j0 + u * step;
          if (j < n) kv[u] = *(const uint4 *)(kp + (u64)j * 2 * D), vv[u] = *(const uint4 *)(vp + (u64)j * 2 * D);
          else kv[u] = make_uint4(0, 0, 0, 0), vv[u] = make_uint4(0, 0, 0, 0);
        }
        float d[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
          float kf[8];
          unpack8(kv[u], kf);
          float s = 0.f;
#pragma unroll
          for (int e = 0; e < 8; e++) s += q[e] * kf[e];
          d[u] = s;
        }
#pragma unroll
        for (int x = G / 2; x; x >>= 1)
#pragma unroll
          for (int u = 0; u < U; u++) d[u] += __shfl_xor_sync(0xffffffffu, d[u], x);
        float mn = m;
#pragma unroll
        for (int u = 0; u < U; u++) {
          d[u] = j0 + u * step < n ? d[u] * scale : neg_inf();
          mn = fmaxf(mn, d[u]);
        }
        const float cm = expf(m - mn);
        l *= cm;
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] *= cm;
#pragma unroll
        for (int u = 0; u < U; u++) {
          const float p = expf(d[u] - mn);
          float vf[8];
          unpack8(vv[u], vf);
          l += p;
#pragma unroll
          for (int e = 0; e < 8; e++) o[e] = fmaf(p, vf[e], o[e]);
        }
        m = mn;
      }
      // The warp's key groups (lanes sub, sub+G, …) merge their states.
#pragma unroll
      for (int x = G; x < 32; x <<= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, x), l2 = __shfl_xor_sync(0xffffffffu, l, x);
        const float M = fmaxf(m, m2);
        const float c1 = l > 0.f ? expf(m - M) : 0.f, c2 = l2 > 0.f ? expf(m2 - M) : 0.f;
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = o[e] * c1 + __shfl_xor_sync(0xffffffffu, o[e], x) * c2;
        l = l * c1 + l2 * c2, m = M;
      }
    }
    __syncthreads(); // the previous row's merge is over
    if (warp < nwa && grp == 0) {
      if (lane == 0) s_ml[2 * warp] = m, s_ml[2 * warp + 1] = l;
#pragma unroll
      for (int e = 0; e < 8; e++) s_att[warp * D + 8 * sub + e] = o[e];
    }
    __syncthreads();
    attn_merge<PARTIAL>(W, H, b, D, nwa);
  }
}

// aligned16 tells whether every batch row of access A starts 16-byte
// aligned.
__device__ __forceinline__ bool aligned16(const u64 *A) { return A[0] % 16 == 0 && (A[2] <= 1 || A[3] % 16 == 0); }

template <bool PARTIAL>
__device__ void op_attn(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 D = T[TASK_ARG0 + 1];
  if ((D == 64 || D == 128) && aligned16(ACC(R, 0)) && aligned16(ACC(R, 1)) && aligned16(ACC(R, 2))) {
    if (D == 64) op_attn_v<PARTIAL, 8, 4>(T, R, W, H);
    else op_attn_v<PARTIAL, 16, 4>(T, R, W, H);
    return;
  }
  // KC·E ≤ 32: the chunk's K and V rows take at most 64 registers.
  switch (D / 32) {
  case 1: op_attn_e<PARTIAL, 1, 16, true>(T, R, W, H); break;
  case 2: op_attn_e<PARTIAL, 2, 16, true>(T, R, W, H); break;
  case 4: op_attn_e<PARTIAL, 4, 8, true>(T, R, W, H); break;
  case 8: op_attn_e<PARTIAL, 8, 2, true>(T, R, W, H); break;
  default: op_attn_e<PARTIAL, 8, 2, false>(T, R, W, H); break;
  }
}
