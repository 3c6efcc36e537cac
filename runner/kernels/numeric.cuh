// Shared helpers of the numeric op bodies (runner/kernels/ops/*.cuh):
// bf16 conversions identical to runner/numeric.go, operand addressing,
// warp and block reductions. Included after opcodes.cuh, before kernel.cu.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

// An operand is access k of a task: 4 words (heap address, row length,
// rows, stride), see runner/encode.go.
#define ACC(A, k) ((A) + 4 * (k))

__device__ __forceinline__ float bf2f(u16 h) { return __uint_as_float(((u32)h) << 16); }

// f2bf rounds to the nearest bf16, ties to even; NaN stays NaN.
__device__ __forceinline__ u16 f2bf(float f) {
  u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
}

__device__ __forceinline__ float rbf(float f) { return bf2f(f2bf(f)); }
__device__ __forceinline__ float ldbf(const u8 *H, u64 a) { return bf2f(*(const u16 *)(H + a)); }
__device__ __forceinline__ void stbf(u8 *H, u64 a, float f) { *(u16 *)(H + a) = f2bf(f); }
__device__ __forceinline__ float ldf(const u8 *H, u64 a) { return *(const float *)(H + a); }
__device__ __forceinline__ void stf(u8 *H, u64 a, float f) { *(float *)(H + a) = f; }

// Weights are never written while the kernel runs: read-only cache loads.
__device__ __forceinline__ float ldbf_w(const u8 *H, u64 a) { return bf2f(__ldg((const u16 *)(H + a))); }

// row_addr is the address of row b of operand A whose rows are rowbytes
// apart when the access is one contiguous range (rowAddr in numeric.go).
__device__ __forceinline__ u64 row_addr(const u64 *A, u64 b, u64 rowbytes) {
  return A[2] > 1 ? A[0] + b * A[3] : A[0] + b * rowbytes;
}

// unpack8 widens the 8 bf16 of a 16-byte word, element 0 first.
__device__ __forceinline__ void unpack8(uint4 v, float *f) {
  f[0] = __uint_as_float(v.x << 16); f[1] = __uint_as_float(v.x & 0xffff0000u);
  f[2] = __uint_as_float(v.y << 16); f[3] = __uint_as_float(v.y & 0xffff0000u);
  f[4] = __uint_as_float(v.z << 16); f[5] = __uint_as_float(v.z & 0xffff0000u);
  f[6] = __uint_as_float(v.w << 16); f[7] = __uint_as_float(v.w & 0xffff0000u);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int m = 16; m; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// Shared scratch of the numeric bodies.
__shared__ float s_red[33];
__shared__ int s_redi[33];
#define ATT_WARPS 16
#define ATT_MAXD 256
// s_att is also the normalized input of the fused GEMVs (norm_smem): 16 KiB,
// runner.MaxNormElems bf16.
__shared__ __align__(16) float s_att[ATT_WARPS * ATT_MAXD];
__shared__ float s_ml[2 * ATT_WARPS];

// block_sum returns the block-wide sum of v to every thread. The warps'
// partial sums are added in warp order by every thread, so the result is
// the same in every run.
__device__ float block_sum(float v) {
  u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads(); // the previous use of s_red is over
  if (lane == 0) s_red[w] = v;
  __syncthreads();
  float r = 0.f;
  for (u32 i = 0; i < nw; i++) r += s_red[i];
  return r;
}
