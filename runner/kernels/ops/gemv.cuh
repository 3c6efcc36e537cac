// gemv: one tile of y = x·Wᵀ, fp32 accumulation (runner/op_gemv.go). One
// warp per output row at a time. On the vector path (k a multiple of 8,
// 16-byte aligned operands) each lane keeps GEMV_U 16-byte weight loads
// in flight without pause: the loads of a warp's rows form one stream of
// groups of 32·GEMV_U chunks of 8 bf16 (a row's last group may be
// partial), and the load for the next group is issued into each register
// as soon as its current value is taken, so a row boundary does not drain
// the pipeline. Weights are read with ld.global.nc.L1::no_allocate (read
// once, no L1 pollution); x is read through L1. Up to GEMV_BATCH batch rows
// share every weight load; the warp reduces each row's sums.
#define GEMV_BATCH 8
#define GEMV_U 8

__device__ __forceinline__ uint4 ld_stream16(const u8 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// dot8 adds the products of the 8 bf16 of w and of x to acc.
__device__ __forceinline__ float dot8(uint4 w, uint4 x, float acc) {
  acc = fmaf(__uint_as_float(x.x << 16), __uint_as_float(w.x << 16), acc);
  acc = fmaf(__uint_as_float(x.x & 0xffff0000u), __uint_as_float(w.x & 0xffff0000u), acc);
  acc = fmaf(__uint_as_float(x.y << 16), __uint_as_float(w.y << 16), acc);
  acc = fmaf(__uint_as_float(x.y & 0xffff0000u), __uint_as_float(w.y & 0xffff0000u), acc);
  acc = fmaf(__uint_as_float(x.z << 16), __uint_as_float(w.z << 16), acc);
  acc = fmaf(__uint_as_float(x.z & 0xffff0000u), __uint_as_float(w.z & 0xffff0000u), acc);
  acc = fmaf(__uint_as_float(x.w << 16), __uint_as_float(w.w << 16), acc);
  acc = fmaf(__uint_as_float(x.w & 0xffff0000u), __uint_as_float(w.w & 0xffff0000u), acc);
  return acc;
}

// gemv_store writes output element j of batch row b to the output access
// Y: bf16 or fp32 (rounded to bf16 first with rnd), or with a residual
// access Res, bf16(res + bf16(s)) (runner/op_gemv_add.go).
__device__ __forceinline__ void gemv_store(const u64 *Y, const u64 *Res, u8 *H, u64 b, u64 j, u64 n, u64 elem, u64 rnd, float s) {
  const u64 y = row_addr(Y, b, elem * n);
  if (Res) stbf(H, y + 2 * j, ldbf(H, row_addr(Res, b, 2 * n) + 2 * j) + rbf(s));
  else if (elem == 2) stbf(H, y + 2 * j, s);
  else stf(H, y + 4 * j, rnd ? rbf(s) : s);
}

// gemv_vec is the vector path for NB batch rows b0 .. b0+NB-1 of x (X:
// row b0, in global or shared memory), with U loads in flight per lane.
// It is a function of its own (noinline) so that its registers are
// allocated for its loop alone: inlined into the interpreter, the weight
// registers were spilled to local memory right after their loads were
// issued, which waited for every group of loads before the next.
template <int NB, int U>
__device__ __noinline__ void gemv_vec(const u8 *X, u8 *H, u64 wa, const u64 *Y, const u64 *Res, u64 b0, u64 n, u64 k, u64 elem, u64 rnd) {
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
  const u32 chunks = (u32)(k / 8);
  const u32 G = 32 * U;                    // chunks per group
  const u32 groups = (chunks + G - 1) / G; // groups per row
  if (warp >= n) return;
  // The current item is group g of row j; the next one (ng, nj).
  u32 j = warp, g = 0;
  const u8 *wrow = H + wa + 2 * (u64)j * k;
  uint4 wv[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    const u32 c = lane + 32 * u;
    wv[u] = c < chunks ? ld_stream16(wrow + 16 * (u64)c) : make_uint4(0, 0, 0, 0);
  }
  float acc[NB];
#pragma unroll
  for (int q = 0; q < NB; q++) acc[q] = 0.f;
  for (;;) {
    u32 ng = g + 1, nj = j;
    if (ng == groups) ng = 0, nj = j + nwarp;
    const bool more = nj < n;
    const u8 *nrow = H + wa + 2 * (u64)nj * k;
#pragma unroll
    for (int u = 0; u < U; u++) {
      const uint4 w = wv[u];
      if (more) {
        const u32 c = ng * G + lane + 32 * u;
        wv[u] = c < chunks ? ld_stream16(nrow + 16 * (u64)c) : make_uint4(0, 0, 0, 0);
      }
      const u32 c = g * G + lane + 32 * u;
      if (c < chunks) {
#pragma unroll
        for (int q = 0; q < NB; q++) {
          const uint4 x = *(const uint4 *)(X + 2 * ((u64)q * k + 8 * (u64)c));
          acc[q] = dot8(w, x, acc[q]);
        }
      }
    }
    if (ng == 0) {
#pragma unroll
      for (int q = 0; q < NB; q++) {
        const float s = warp_sum(acc[q]);
        if (lane == 0) gemv_store(Y, Res, H, b0 + q, j, n, elem, rnd, s);
        acc[q] = 0.f;
      }
    }
    if (!more) break;
    g = ng, j = nj;
  }
}

// gemv_run computes y = x·Wᵀ for the B rows of x (X, contiguous rows of k
// bf16; xvec: 16-byte aligned) and the n weight rows at wa, into Y (with
// Res, added to the residual). Batch rows share weight loads in groups of
// 8 and 4 on the vector path, of GEMV_BATCH on the scalar one.
__device__ void gemv_run(const u8 *X, bool xvec, u8 *H, u64 wa, const u64 *Y, const u64 *Res, u64 B, u64 n, u64 k, u64 elem, u64 rnd) {
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
  if (k % 8 == 0 && xvec && wa % 16 == 0) {
    u64 b0 = 0;
    for (; B - b0 >= 8; b0 += 8) gemv_vec<8, 2>(X + 2 * b0 * k, H, wa, Y, Res, b0, n, k, elem, rnd);
    for (; B - b0 >= 4; b0 += 4) gemv_vec<4, 4>(X + 2 * b0 * k, H, wa, Y, Res, b0, n, k, elem, rnd);
    for (; b0 < B; b0++) gemv_vec<1, GEMV_U>(X + 2 * b0 * k, H, wa, Y, Res, b0, n, k, elem, rnd);
    return;
  }
  for (u64 b0 = 0; b0 < B; b0 += GEMV_BATCH) {
    const u32 nb = (u32)(B - b0 < GEMV_BATCH ? B - b0 : GEMV_BATCH);
    for (u64 j = warp; j < n; j += nwarp) {
      float acc[GEMV_BATCH];
#pragma unroll
      for (int q = 0; q < GEMV_BATCH; q++) acc[q] = 0.f;
      const u64 wr = wa + 2 * j * k;
      for (u64 i = lane; i < k; i += 32) {
        const float wv = ldbf_w(H, wr + 2 * i);
#pragma unroll
        for (int q = 0; q < GEMV_BATCH; q++)
          if (q < nb) acc[q] += ldbf(X, 2 * ((b0 + q) * k + i)) * wv;
      }
#pragma unroll
      for (int q = 0; q < GEMV_BATCH; q++) {
        if (q < nb) {
          const float s = warp_sum(acc[q]);
          if (lane == 0) gemv_store(Y, Res, H, b0 + q, j, n, elem, rnd, s);
        }
      }
    }
  }
}

__device__ void op_gemv(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u64 xa = ACC(R, 0)[0];
  gemv_run(H + xa, xa % 16 == 0, H, ACC(R, 1)[0], ACC(W, 0), 0, B, n, k, T[TASK_ARG0 + 3], T[TASK_ARG0 + 4]);
}

// gemv_add: a GEMV tile added to the residual (runner/op_gemv_add.go).
__device__ void op_gemv_add(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u64 xa = ACC(R, 0)[0];
  gemv_run(H + xa, xa % 16 == 0, H, ACC(R, 1)[0], ACC(W, 0), ACC(R, 2), B, n, k, 2, 0);
}

// norm_smem writes RMSNorm of the B rows of x (k bf16 each, at xa) with
// the weight at wa into the block's scratch, rounded as op_rmsnorm rounds,
// and returns it (B·k ≤ MaxNormElems, checked by the runner). With k a
// multiple of 8 and both operands 16-byte aligned, a thread takes 8
// elements at a time in one load, and its first weight load is issued
// with its first x loads: a row waits on memory about twice, not once for
// every element a thread sums.
__device__ const u8 *norm_smem(u8 *H, u64 xa, u64 wa, u64 B, u64 k, float eps) {
  u16 *xs = (u16 *)s_att;
  if (k % 8 == 0 && xa % 16 == 0 && wa % 16 == 0) {
    const u64 chunks = k / 8, c0 = threadIdx.x;
    const uint4 w0 = c0 < chunks ? __ldg((const uint4 *)(H + wa) + c0) : make_uint4(0, 0, 0, 0);
    for (u64 b = 0; b < B; b++) {
      const uint4 *x = (const uint4 *)(H + xa + 2 * k * b);
      float s = 0.f;
      for (u64 c = c0; c < chunks; c += blockDim.x) {
        float f[8];
        unpack8(x[c], f);
#pragma unroll
        for (int e = 0; e < 8; e++) s += f[e] * f[e];
      }
      s = block_sum(s);
      const float inv = rsqrtf(s / (float)k + eps);
      for (u64 c = c0; c < chunks; c += blockDim.x) {
        float f[8], w[8];
        unpack8(x[c], f);
        unpack8(c == c0 ? w0 : __ldg((const uint4 *)(H + wa) + c), w);
        u32 h[8];
#pragma unroll
        for (int e = 0; e < 8; e++) h[e] = f2bf(w[e] * rbf(f[e] * inv));
        *(uint4 *)(xs + b * k + 8 * c) = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
      }
    }
    __syncthreads();
    return (const u8 *)xs;
  }
  for (u64 b = 0; b < B; b++) {
    const u64 x = xa + 2 * k * b;
    float s = 0.f;
    for (u64 i = threadIdx.x; i < k; i += blockDim.x) {
      const float v = ldbf(H, x + 2 * i);
      s += v * v;
    }
    s = block_sum(s);
    const float inv = rsqrtf(s / (float)k + eps);
    for (u64 i = threadIdx.x; i < k; i += blockDim.x) xs[b * k + i] = f2bf(ldbf_w(H, wa + 2 * i) * rbf(ldbf(H, x + 2 * i) * inv));
  }
  __syncthreads();
  return (const u8 *)xs;
}

// norm_gemv: a GEMV tile of RMSNorm(x) (runner/op_norm_gemv.go).
__device__ void op_norm_gemv(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u8 *X = norm_smem(H, ACC(R, 0)[0], ACC(R, 2)[0], B, k, __uint_as_float((u32)T[TASK_ARG0 + 5]));
  gemv_run(X, true, H, ACC(R, 1)[0], ACC(W, 0), 0, B, n, k, T[TASK_ARG0 + 3], T[TASK_ARG0 + 4]);
}

// norm_gate_up: RMSNorm, the gate and up tiles and SiLU·mul of them
// (runner/op_norm_gate_up.go).
__device__ void op_norm_gate_up(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], n = T[TASK_ARG0 + 1], k = T[TASK_ARG0 + 2];
  const u8 *X = norm_smem(H, ACC(R, 0)[0], ACC(R, 3)[0], B, k, __uint_as_float((u32)T[TASK_ARG0 + 3]));
  gemv_run(X, true, H, ACC(R, 1)[0], ACC(W, 0), 0, B, n, k, 2, 0);
  gemv_run(X, true, H, ACC(R, 2)[0], ACC(W, 1), 0, B, n, k, 2, 0);
  __syncthreads(); // gate and up are written
  silu_rows(ACC(W, 0), ACC(W, 1), ACC(W, 2), H, B, n);
}
