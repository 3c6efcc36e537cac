// rope_rows: rotate the rep query heads of Q into QR and the key head of K
// into KR by the table row at tab, with PyTorch's bf16 rounding of each
// product (runner/op_rope.go).
__device__ void rope_rows(const u64 *Q, const u64 *QR, const u64 *K, const u64 *KR, u64 tab, u8 *H, u64 B, u64 rep, u64 D) {
  const u64 half = D / 2;
  for (u64 b = 0; b < B; b++) {
    for (u64 idx = threadIdx.x; idx < (rep + 1) * half; idx += blockDim.x) {
      const u64 hd = idx / half, i = idx % half;
      u64 src, dst;
      if (hd < rep) {
        src = row_addr(Q, b, 2 * rep * D) + 2 * D * hd;
        dst = row_addr(QR, b, 2 * rep * D) + 2 * D * hd;
      } else {
        src = row_addr(K, b, 2 * D);
        dst = row_addr(KR, b, 2 * D);
      }
      const float cs = ldbf_w(H, tab + 2 * i), sn = ldbf_w(H, tab + 2 * (half + i));
      const float x0 = ldbf(H, src + 2 * i), x1 = ldbf(H, src + 2 * (half + i));
      stbf(H, dst + 2 * i, rbf(x0 * cs) - rbf(x1 * sn));
      stbf(H, dst + 2 * (half + i), rbf(x1 * cs) + rbf(x0 * sn));
    }
  }
}

// rope: one kv-head group's rotation (runner/op_rope.go).
__device__ void op_rope(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  rope_rows(ACC(R, 0), ACC(W, 0), ACC(R, 1), ACC(W, 1), ACC(R, 2)[0], H, T[TASK_ARG0], T[TASK_ARG0 + 1], T[TASK_ARG0 + 2]);
}

// rope_append: the rotation with the key head written into the key cache,
// and the value head copied into the value cache (runner/op_rope_append.go).
__device__ void op_rope_append(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], D = T[TASK_ARG0 + 2];
  rope_rows(ACC(R, 0), ACC(W, 0), ACC(R, 1), ACC(W, 1), ACC(R, 3)[0], H, B, T[TASK_ARG0 + 1], D);
  kv_rows(ACC(R, 2), ACC(W, 2), H, B, D);
}
