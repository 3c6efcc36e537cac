#!/bin/sh
# Compiles the runner's kernel source to PTX with clang (no CUDA toolkit
# needed), to catch C++ and inline-assembly errors before a device run.
# Usage: scripts/gpu/cudacheck.sh   (needs clang; Debian: apt-get install clang)
set -e
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MEGAPROOF_KERNEL_SRC="$tmp/kernel.cu" go test ./runner -run TestKernelSourceDump -count=1 >/dev/null
cat > "$tmp/shim.h" <<'H'
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) uint2 { unsigned int x, y; };
__device__ uint4 make_uint4(unsigned, unsigned, unsigned, unsigned);
__device__ float fmaf(float, float, float);
__device__ void __syncthreads() __attribute__((convergent));
__device__ void __trap();
__device__ void __nanosleep(unsigned);
__device__ float __uint_as_float(unsigned);
__device__ float __int_as_float(int);
__device__ unsigned __float_as_uint(float);
__device__ float __shfl_xor_sync(unsigned, float, int);
__device__ int __shfl_xor_sync(unsigned, int, int);
__device__ unsigned short __ldg(const unsigned short *);
__device__ unsigned long long __ldg(const unsigned long long *);
__device__ unsigned int __ldg(const unsigned int *);
__device__ uint4 __ldg(const uint4 *);
__device__ float rsqrtf(float); __device__ float expf(float); __device__ float logf(float); __device__ float fmaxf(float, float);
__device__ unsigned atomicAdd(unsigned *, unsigned);
__device__ unsigned long long atomicAdd(unsigned long long *, unsigned long long);
__device__ unsigned long long atomicExch(unsigned long long *, unsigned long long);
__device__ unsigned long long atomicMax(unsigned long long *, unsigned long long);
__device__ unsigned atomicCAS(unsigned *, unsigned, unsigned);
H
for arch in ${CUDACHECK_ARCHS:-sm_80}; do # CUDACHECK_ARCHS="sm_80 sm_90" where clang knows sm_90
	clang++ -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=$arch -std=c++17 \
		-include "$tmp/shim.h" -Wall -Wno-unused-function -S -o "$tmp/kernel.ptx" "$tmp/kernel.cu"
	echo "cudacheck $arch: ok ($(grep -c '^\s*ld\.' "$tmp/kernel.ptx") loads in the PTX)"
done
