// silu_rows: act = bf16(bf16(silu(gate)) · up) over the B rows of n columns
// of the accesses G, U and Y (runner/op_silu_mul.go).
__device__ void silu_rows(const u64 *G, const u64 *U, const u64 *Y, u8 *H, u64 B, u64 n) {
  for (u64 b = 0; b < B; b++) {
    const u64 g = row_addr(G, b, 2 * n), u = row_addr(U, b, 2 * n), y = row_addr(Y, b, 2 * n);
    for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
      const float x = ldbf(H, g + 2 * i);
      stbf(H, y + 2 * i, rbf(x / (1.f + expf(-x))) * ldbf(H, u + 2 * i));
    }
  }
}

// silu_mul: the gated activation of one tile (runner/op_silu_mul.go).
__device__ void op_silu_mul(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  silu_rows(ACC(R, 0), ACC(R, 1), ACC(W, 0), H, T[TASK_ARG0], T[TASK_ARG0 + 1]);
}
