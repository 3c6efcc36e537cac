// rope: rotate the group's query heads and its key head by the table row
// (runner/op_rope.go), with PyTorch's bf16 rounding of each product.
__device__ void op_rope(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], rep = T[TASK_ARG0 + 1], D = T[TASK_ARG0 + 2], half = D / 2;
  const u64 tab = ACC(R, 2)[0];
  for (u64 b = 0; b < B; b++) {
    for (u64 idx = threadIdx.x; idx < (rep + 1) * half; idx += blockDim.x) {
      const u64 hd = idx / half, i = idx % half;
      u64 src, dst;
      if (hd < rep) {
        src = row_addr(ACC(R, 0), b, 2 * rep * D) + 2 * D * hd;
        dst = row_addr(ACC(W, 0), b, 2 * rep * D) + 2 * D * hd;
      } else {
        src = row_addr(ACC(R, 1), b, 2 * D);
        dst = row_addr(ACC(W, 1), b, 2 * D);
      }
      const float cs = ldbf_w(H, tab + 2 * i), sn = ldbf_w(H, tab + 2 * (half + i));
      const float x0 = ldbf(H, src + 2 * i), x1 = ldbf(H, src + 2 * (half + i));
      stbf(H, dst + 2 * i, rbf(x0 * cs) - rbf(x1 * sn));
      stbf(H, dst + 2 * (half + i), rbf(x1 * cs) + rbf(x0 * sn));
    }
  }
}
