// embed: x[b] = table[token[b]] (runner/op_embed.go).
__device__ void op_embed(const u64 *T, const u64 *R, const u64 *W, u8 *H) {
  const u64 B = T[TASK_ARG0], Hd = T[TASK_ARG0 + 1], V = T[TASK_ARG0 + 2];
  for (u64 b = 0; b < B; b++) {
    int tok = *(const int *)(H + ACC(R, 0)[0] + 4 * b);
    u64 dst = ACC(W, 0)[0] + 2 * Hd * b;
    bool ok = tok >= 0 && (u64)tok < V;
    u64 src = ACC(R, 1)[0] + 2 * Hd * (ok ? (u64)tok : 0);
    for (u64 i = threadIdx.x; i < Hd; i += blockDim.x)
      *(u16 *)(H + dst + 2 * i) = ok ? __ldg((const u16 *)(H + src + 2 * i)) : (u16)0;
  }
}
