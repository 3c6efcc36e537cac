// megaproof interpreter kernel. Compiled at load by NVRTC (see runner/cuda.go)
// after kernels/opcodes.cuh (generated), kernels/numeric.cuh and the numeric
// op bodies kernels/ops/*.cuh. One block per worker; thread 0 performs every
// synchronization operation, the whole block executes task bodies. Layouts
// match runner/encode.go.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define INS_WAIT 1
#define INS_SIGNAL 2
#define INS_ARRIVE 3
#define INS_AWAIT 4
#define INS_ACQUIRE 5
#define INS_RELEASE 6
#define INS_FENCE 7
#define INS_BEGIN 8
#define INS_END 9

// Worker states in the status table.
#define ST_RUNNING 0
#define ST_DONE 1
#define ST_TIMEOUT 2
#define ST_ABORTED 3

struct Params {
  u8 *heap;
  const u64 *ins;
  const u32 *streams;
  const u64 *tasks;
  const u64 *accs;
  u64 *counters;
  u64 *barriers;
  u64 *sems;
  u32 *claim;      // per dynamic task: 0 free, 1 claimed, 2 done
  const u32 *dyninfo;
  u64 *ctl;        // [0] abort flag, [1] dynamic tasks done, [2] lowest unclaimed dynamic task
  u64 *status;     // 8 words per worker
  const u32 *perm; // block -> worker
  u64 nworkers, ndyn, timeout_ns, max_delay_ns, seed, nins;
  u64 pf_bytes;    // L2 prefetch budget per unmet wait (0: off)
  u64 *trace;      // 0, or 4 words per task: wait start, body start, body end, worker
};

// One encoded instruction (see runner/encode.go), read as one 16-byte word.
struct alignas(16) Ins {
  u64 x, y;
};

// Instructions cached in shared memory per block (a window of the streams).
#define ICN 256

struct Blk {
  alignas(16) u64 icache[2 * ICN];
  u32 ibase;  // first instruction in icache, or 0xffffffff
  u32 pc;     // sync_run's outcome: where to continue
  u64 deadline;
  u64 dynrun;
  u32 worker;
  u32 cursor;
  int res;
  int dyn;
  u32 mix;
  u32 staged; // the task whose record and accesses are in s_trec, or 0xffffffff
};

// A numeric task's record and its accesses, copied into shared memory by
// thread 0 while it waits for the task's inputs (stage_next), so that the
// body does not start with dependent loads of the tables.
#define STAGE_ACC 16
__shared__ u64 s_trec[TASK_WORDS];
__shared__ u64 s_tacc[4 * STAGE_ACC];

__device__ __forceinline__ u64 gtimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ u32 mix32(u32 x) {
  x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
  return x;
}

// Flags: bit 8 relaxed, bits 9-10 scope (0 gpu, 1 cta, 2 sys).
__device__ __forceinline__ u64 ld_sync(const u64 *p, u32 fl) {
  u64 v;
  u32 sc = (fl >> 9) & 3;
  if (fl & 0x100) {
    if (sc == 1) asm volatile("ld.relaxed.cta.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else if (sc == 2) asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } else {
    if (sc == 1) asm volatile("ld.acquire.cta.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else if (sc == 2) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  }
  return v;
}

__device__ __forceinline__ void red_sync(u64 *p, u64 v, u32 fl) {
  u32 sc = (fl >> 9) & 3;
  if (fl & 0x100) {
    if (sc == 1) asm volatile("red.relaxed.cta.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
    else if (sc == 2) asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
    else asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
  } else {
    if (sc == 1) asm volatile("red.release.cta.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
    else if (sc == 2) asm volatile("red.release.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
    else asm volatile("red.release.gpu.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
  }
}

__device__ __forceinline__ u64 cas_sync(u64 *p, u64 cmp, u64 val, u32 fl) {
  u64 old;
  u32 sc = (fl >> 9) & 3;
  if (sc == 1) asm volatile("atom.acq_rel.cta.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(cmp), "l"(val) : "memory");
  else if (sc == 2) asm volatile("atom.acq_rel.sys.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(cmp), "l"(val) : "memory");
  else asm volatile("atom.acq_rel.gpu.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(cmp), "l"(val) : "memory");
  return old;
}

__device__ __forceinline__ void fence_sync(u32 fl) {
  u32 sc = (fl >> 9) & 3;
  if (sc == 1) asm volatile("fence.acq_rel.cta;" ::: "memory");
  else if (sc == 2) asm volatile("fence.acq_rel.sys;" ::: "memory");
  else asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ __forceinline__ u64 ld_relaxed(const u64 *p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ u32 ld_relaxed32(const u32 *p) {
  u32 v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ u64 acc_at(const u64 *a, u64 i) {
  return a[0] + (i / a[1]) * a[3] + i % a[1];
}

__device__ __forceinline__ u64 stream_len(const u64 *a, u32 n) {
  u64 s = 0;
  for (u32 k = 0; k < n; k++) s += a[4 * k + 1] * a[4 * k + 2];
  return s;
}

__device__ __forceinline__ u64 stream_at(const u64 *a, u32 n, u64 i) {
  for (u32 k = 0; k < n; k++) {
    u64 sz = a[4 * k + 1] * a[4 * k + 2];
    if (i < sz) return acc_at(a + 4 * k, i);
    i -= sz;
  }
  return 0;
}

// run_body executes task t's body with the whole block.
__device__ void run_body(const Params &P, Blk &B, u32 t) {
  const u64 *T = P.tasks + TASK_WORDS * (u64)t;
  u64 op = T[0];
  if (op == OP_NOP) return;
  if (op >= OP_FIRST_NUMERIC) {
    if (B.staged == t) {
      run_numeric(op, s_trec, s_tacc, s_tacc + 4 * s_trec[5], P.heap);
    } else {
      run_numeric(op, T, P.accs + 4 * T[4], P.accs + 4 * T[6], P.heap);
    }
    __syncthreads();
    return;
  }
  u32 seed = (u32)T[1];
  u8 k = (u8)T[2], c = (u8)T[3];
  const u64 *R = P.accs + 4 * T[4];
  u32 nr = (u32)T[5];
  const u64 *W = P.accs + 4 * T[6];
  u32 nw = (u32)T[7];
  u8 *H = P.heap;
  u64 n = stream_len(W, nw);
  u32 tid = threadIdx.x, bd = blockDim.x;
  switch (op) {
  case OP_FILL:
    for (u64 i = tid; i < n; i += bd) H[stream_at(W, nw, i)] = (u8)mix32(seed + (u32)i * 0x9E3779B9u);
    break;
  case OP_COPY:
  case OP_SCALE: {
    u64 r = stream_len(R, nr);
    for (u64 i = tid; i < n; i += bd) {
      u8 v = H[stream_at(R, nr, i % r)];
      if (op == OP_SCALE) v = (u8)(v * k + c);
      H[stream_at(W, nw, i)] = v;
    }
    break;
  }
  case OP_ADD8:
    for (u64 i = tid; i < n; i += bd) {
      u8 s = 0;
      for (u32 a = 0; a < nr; a++) {
        const u64 *A = R + 4 * a;
        s += H[acc_at(A, i % (A[1] * A[2]))];
      }
      H[stream_at(W, nw, i)] = s;
    }
    break;
  case OP_MIX:
  case OP_MIXAT: {
    if (tid == 0) B.mix = 0;
    __syncthreads();
    u32 part = 0;
    u64 j0 = 0;
    for (u32 a = 0; a < nr; a++) {
      const u64 *A = R + 4 * a;
      u64 sz = A[1] * A[2];
      for (u64 e = tid; e < sz; e += bd) {
        u32 b = H[acc_at(A, e)];
        part += mix32((u32)(j0 + e) * 0x85EBCA6Bu + b * 0xC2B2AE35u + 0x27D4EB2Fu);
      }
      j0 += sz;
    }
    atomicAdd(&B.mix, part);
    __syncthreads();
    u32 h = seed + B.mix;
    if (op == OP_MIXAT) {
      for (u64 i = tid; i < n; i += bd) {
        u64 ad = stream_at(W, nw, i);
        H[ad] = (u8)mix32(h + (u32)ad * 0x9E3779B9u);
      }
    } else {
      for (u64 i = tid; i < n; i += bd) H[stream_at(W, nw, i)] = (u8)mix32(h + (u32)i * 0x9E3779B9u);
    }
    break;
  }
  default:
    __trap(); // an op code this kernel does not know
  }
  __syncthreads();
}

__device__ void delay(const Params &P, u32 t, u32 phase) {
  if (P.max_delay_ns == 0) return;
  if (threadIdx.x == 0) {
    u32 h = mix32((u32)P.seed ^ mix32(t * 2u + phase + (u32)(P.seed >> 32) * 0x9E3779B9u));
    u64 end = gtimer() + h % P.max_delay_ns;
    while (gtimer() < end) {
    }
  }
  __syncthreads();
}

__device__ void record(const Params &P, Blk &B, int res, u32 th, u32 pc, u64 v) {
  u64 *st = P.status + 8 * (u64)B.worker;
  if (res == ST_TIMEOUT) atomicExch(&P.ctl[0], 1ull);
  st[0] = res;
  st[1] = th;
  st[2] = pc;
  st[3] = v;
}

__device__ bool guard_ready(const Params &P, u32 d, u32 g) {
  u64 pc = P.streams[P.nworkers + d];
  for (u32 j = 0; j < g; j++) {
    u64 w0 = P.ins[2 * (pc + j)], val = P.ins[2 * (pc + j) + 1];
    u32 kind = (u32)w0 & 0xff, obj = (u32)(w0 >> 32);
    const u64 *p = kind == INS_ACQUIRE ? P.sems + obj : P.counters + obj;
    if (ld_relaxed(p) < val) return false;
  }
  return true;
}

// try_claim (thread 0) claims a free dynamic task whose entry guard holds,
// scanning a window from the block's cursor; -1 if none.
__device__ int try_claim(const Params &P, Blk &B, bool simple_only) {
  u32 n = (u32)P.ndyn;
  u32 low = (u32)ld_relaxed(&P.ctl[2]);
  u32 l = low;
  while (l < n && ld_relaxed32(&P.claim[l]) != 0) l++;
  if (l > low) atomicMax(&P.ctl[2], (u64)l);
  if (l >= n) return -1;
  u32 c = B.cursor;
  if (c < l || c >= n) c = l;
  for (int k = 0; k < 64; k++) {
    u32 i = c;
    if (++c >= n) c = l;
    if (ld_relaxed32(&P.claim[i]) != 0) continue;
    u32 info = P.dyninfo[i];
    if (simple_only && !(info >> 31)) continue;
    if (!guard_ready(P, i, info & 0x7fffffffu)) continue;
    if (atomicCAS(&P.claim[i], 0u, 1u) == 0u) {
      B.cursor = c;
      return (int)i;
    }
  }
  B.cursor = c;
  return -1;
}

template <bool HELP> __device__ bool run_thread(const Params &P, Blk &B, u32 th);

__device__ bool run_dyn(const Params &P, Blk &B, u32 d) {
  bool ok = run_thread<false>(P, B, (u32)P.nworkers + d);
  if (ok && threadIdx.x == 0) {
    P.claim[d] = 2;
    atomicAdd(&P.ctl[1], 1ull);
    B.dynrun++;
  }
  return ok;
}

// spin_check (thread 0) is a spin's periodic check: 0 to keep spinning,
// ST_ABORTED or ST_TIMEOUT (recorded in the status table), or 8 + d when
// HELP claimed ready dynamic task d. Out of line, so that the spin and the
// sync-step loop around it stay small.
template <bool HELP>
__device__ __noinline__ int spin_check(const Params &P, Blk &B, u32 th, u32 pc, u64 v) {
  int res = 0;
  if (ld_relaxed(&P.ctl[0])) res = ST_ABORTED;
  else if (gtimer() > B.deadline) res = ST_TIMEOUT;
  if (res) {
    record(P, B, res, th, pc, v);
    return res;
  }
  if (HELP && P.ndyn) {
    int c = try_claim(P, B, true);
    if (c >= 0) return 8 + c;
  }
  return 0;
}

// spin (thread 0) waits until *p >= val (for a semaphore, then takes val
// with a CAS). It returns 0 when it did, else spin_check's answer. The
// deadline, the abort flag and the ready queue are read every 16
// unsuccessful probes.
template <bool HELP>
__device__ __forceinline__ int spin(const Params &P, Blk &B, u64 *p, u64 val, u32 fl, bool sem, u32 th, u32 pc) {
  u32 it = 0;
  u32 lf = sem ? (fl & ~0x100u) : fl;
  for (;;) {
    u64 v = ld_sync(p, lf);
    if (v >= val) {
      if (!sem) return 0;
      if (cas_sync(p, v, v - val, fl) == v) return 0;
      continue;
    }
    if ((++it & 15) == 0) {
      int r = spin_check<HELP>(P, B, th, pc, v);
      if (r) return r;
    }
  }
}

// delay_spin is delay's thread-0 part, for steps that run no body.
__device__ __noinline__ void delay_spin(const Params &P, u32 t, u32 phase) {
  u32 h = mix32((u32)P.seed ^ mix32(t * 2u + phase + (u32)(P.seed >> 32) * 0x9E3779B9u));
  u64 end = gtimer() + h % P.max_delay_ns;
  while (gtimer() < end) {
  }
}

// Classes of predecoded instructions (s_pre), fixed when the window is
// loaded. Bits 56-63 of s_pre[i].x hold the class, bits 0-55 the address
// of the counter or barrier for CL_WAIT and CL_RED; .y holds the value.
#define CL_SKIP 0  // begin of an empty body or end, with no stress delays
#define CL_WAIT 1  // wait or await with acquire at gpu scope: ld.acquire.gpu spin
#define CL_RED 2   // signal or arrive with release at gpu scope: red.release.gpu.add
#define CL_BLOCK 3 // fence or begin of a body: needs the whole block
#define CL_SLOW 4  // any other sync step: sync_step decodes it

__shared__ Ins s_pre[ICN];

// Prefetch ranges of the window's numeric task begins, decoded when the
// window is loaded (so that a waiting thread 0 reads no task record):
// up to two heap ranges per instruction, length 0 when none.
struct PfRange {
  u64 a0, a1;
  u32 n0, n1;
};
__shared__ PfRange s_pf[ICN];

// pf_decode returns the prefetch ranges of task t: the first two reads
// that its prefetch mask names (weights and state), each its whole extent
// when its rows are contiguous, else its first row.
__device__ PfRange pf_decode(const Params &P, u32 t) {
  PfRange r = {0, 0, 0, 0};
  const u64 *T = P.tasks + TASK_WORDS * (u64)t;
  u64 m = __ldg(&T[TASK_PREFETCH]);
  if (!m) return r;
  const u64 *R = P.accs + 4 * __ldg(&T[4]);
  u32 nr = (u32)__ldg(&T[5]);
  int got = 0;
  for (u32 k = 0; k < nr && k < 32 && got < 2; k++) {
    if (!((m >> k) & 1)) continue;
    const u64 *A = R + 4 * k;
    u64 a = __ldg(&A[0]), len = __ldg(&A[1]), rows = __ldg(&A[2]), st = __ldg(&A[3]);
    if (rows > 1 && st == len) len *= rows;
    if (len > 0xffffffffull) len = 0xffffffffull;
    if (got == 0) r.a0 = a, r.n0 = (u32)len;
    else r.a1 = a, r.n1 = (u32)len;
    got++;
  }
  return r;
}

__device__ __forceinline__ Ins predecode(const Params &P, u64 w0, u64 val) {
  u32 kind = (u32)w0 & 0xff, obj = (u32)(w0 >> 32);
  bool plain = (w0 & 0x700) == 0; // acquire/release at gpu scope
  u64 c = CL_SKIP, a = 0, v = val;
  switch (kind) {
  case INS_WAIT:
    if (plain) c = CL_WAIT, a = (u64)(P.counters + obj);
    else c = CL_SLOW;
    break;
  case INS_AWAIT:
    c = CL_WAIT, a = (u64)(P.barriers + obj);
    break;
  case INS_SIGNAL:
    if (plain) c = CL_RED, a = (u64)(P.counters + obj);
    else c = CL_SLOW;
    break;
  case INS_ARRIVE:
    c = CL_RED, a = (u64)(P.barriers + obj), v = 1;
    break;
  case INS_ACQUIRE:
  case INS_RELEASE:
    c = CL_SLOW;
    break;
  case INS_FENCE:
    c = CL_BLOCK;
    break;
  case INS_BEGIN:
    c = val != OP_NOP ? CL_BLOCK : P.max_delay_ns ? CL_SLOW : CL_SKIP;
    break;
  case INS_END:
    c = P.max_delay_ns ? CL_SLOW : CL_SKIP;
    break;
  }
  Ins r;
  r.x = (a & 0x00ffffffffffffffull) | (c << 56);
  r.y = v;
  return r;
}

// fetch makes instruction pc available in the block's shared window,
// loading and predecoding the next ICN instructions with the whole block
// when it is not. Control flow is uniform across the block, so every
// thread calls it.
__device__ __forceinline__ void fetch(const Params &P, Blk &B, u32 pc) {
  u32 b = B.ibase;
  if (b != 0xffffffffu && pc >= b && pc - b < ICN) return;
  __syncthreads();
  u64 n = P.nins - pc;
  if (n > ICN) n = ICN;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
    u64 w0 = __ldg(&P.ins[2 * ((u64)pc + i)]), val = __ldg(&P.ins[2 * ((u64)pc + i) + 1]);
    B.icache[2 * i] = w0;
    B.icache[2 * i + 1] = val;
    s_pre[i] = predecode(P, w0, val);
    PfRange pr = {0, 0, 0, 0};
    if (P.pf_bytes && ((u32)w0 & 0xff) == INS_BEGIN && val >= OP_FIRST_NUMERIC) pr = pf_decode(P, (u32)(w0 >> 32));
    s_pf[i] = pr;
  }
  if (threadIdx.x == 0) B.ibase = pc;
  __syncthreads();
}

__device__ __forceinline__ u32 pre_class(u32 i) { return (u32)(s_pre[i].x >> 56); }

// l2_prefetch (one thread) asks the memory system to bring [a, a+n) of
// global memory into L2: bulk prefetches of at most 64 KiB on sm_90, line
// prefetches before. A prefetch reads no value, so it has no effect on the
// memory model; it only moves bytes that a later load will read.
__device__ __forceinline__ void l2_prefetch(const u8 *a, u64 n) {
  u64 lo = (u64)a & ~15ull, hi = ((u64)a + n + 15) & ~15ull;
#if __CUDA_ARCH__ >= 900 && !defined(MP_NO_BULK_PREFETCH)
  for (u64 p = lo; p < hi; p += 65536) {
    u32 sz = (u32)(hi - p < 65536 ? hi - p : 65536);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(sz) : "memory");
  }
#else
  for (u64 p = lo & ~127ull; p < hi; p += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// stage_next (thread 0, at a wait that is not met yet) copies the record
// and the accesses of the first numeric task that begins in the window
// after pc into s_trec and s_tacc (the tables never change during a run).
__device__ __noinline__ void stage_next(const Params &P, Blk &B, u32 pc, u32 lim) {
  u32 base = B.ibase;
  for (u32 i = pc, n = 0; i < lim && n < 8; i++, n++) {
    if (pre_class(i - base) != CL_BLOCK) continue;
    u64 w0 = B.icache[2 * (i - base)], val = B.icache[2 * (i - base) + 1];
    if (((u32)w0 & 0xff) != INS_BEGIN || val < OP_FIRST_NUMERIC) return;
    u32 t = (u32)(w0 >> 32);
    if (B.staged == t) return;
    const u64 *T = P.tasks + TASK_WORDS * (u64)t;
    u64 rec[TASK_WORDS];
#pragma unroll
    for (int j = 0; j < TASK_WORDS; j++) rec[j] = __ldg(&T[j]);
    u32 na = (u32)(rec[5] + rec[7]);
    // Reads and writes are consecutive in the access table.
    if (na > STAGE_ACC || rec[6] != rec[4] + rec[5]) return;
    const u64 *A = P.accs + 4 * rec[4];
    B.staged = 0xffffffffu;
    for (u32 j = 0; j < 4 * na; j++) s_tacc[j] = __ldg(&A[j]);
#pragma unroll
    for (int j = 0; j < TASK_WORDS; j++) s_trec[j] = rec[j];
    B.staged = t;
    return;
  }
}

// prefetch_ahead (thread 0, at a wait that is not met yet) prefetches the
// ranges (s_pf) of the numeric tasks that follow pc in the shared window,
// from *pf on (tasks before it were prefetched already), until P.pf_bytes
// were issued; *pf moves past them.
__device__ __noinline__ void prefetch_ahead(const Params &P, Blk &B, u32 pc, u32 lim, u32 *pf) {
  u32 base = B.ibase;
  u32 i = pc > *pf ? pc : *pf;
  u64 bytes = 0;
  u32 scan = 0;
  for (; i < lim && scan < 64 && bytes < P.pf_bytes; i++, scan++) {
    const PfRange r = s_pf[i - base];
    if (r.n0) l2_prefetch(P.heap + r.a0, r.n0), bytes += r.n0;
    if (r.n1) l2_prefetch(P.heap + r.a1, r.n1), bytes += r.n1;
  }
  *pf = i;
}

// sync_step (thread 0) executes one CL_SLOW instruction as written: relaxed
// or cta/sys-scoped waits and signals, semaphore acquires and releases,
// and the stress delays of empty bodies. It returns 0 or spin's answer.
template <bool HELP> __device__ __noinline__ int sync_step(const Params &P, Blk &B, u32 th, u32 pc, u64 w0, u64 val) {
  u32 kind = (u32)w0 & 0xff, fl = (u32)w0 & 0xffff, obj = (u32)(w0 >> 32);
  switch (kind) {
  case INS_WAIT:
    return spin<HELP>(P, B, P.counters + obj, val, fl, false, th, pc);
  case INS_AWAIT:
    return spin<HELP>(P, B, P.barriers + obj, val, 0, false, th, pc);
  case INS_ACQUIRE:
    return spin<HELP>(P, B, P.sems + obj, val, fl, true, th, pc);
  case INS_SIGNAL:
    red_sync(P.counters + obj, val, fl);
    break;
  case INS_ARRIVE:
    red_sync(P.barriers + obj, 1, 0);
    break;
  case INS_RELEASE:
    red_sync(P.sems + obj, val, fl & ~0x100u);
    break;
  case INS_BEGIN:
    delay_spin(P, obj, 0);
    delay_spin(P, obj, 1);
    break;
  case INS_END:
    delay_spin(P, obj, 1);
    break;
  }
  return 0;
}

// sync_run (thread 0 alone) executes the run of sync steps that starts at
// pc: waits, awaits, acquires, signals, arrives, releases, and begins of
// empty bodies (their stress delays included), up to the next block step,
// the end of the stream or the end of the shared window. No body runs
// between these steps, so the rest of the block has nothing to order
// against them and waits at one barrier for the whole run: the block
// barrier that follows a wait is the one after the run, and the one that
// precedes a signal is the end barrier of the body before the run
// (run_body, delay and fences end with one). The common steps (acquire
// and release at gpu scope, empty bodies without delays) run from the
// predecoded window; the others go through sync_step. It leaves the
// outcome in B.res (ST_DONE, a failure, or 4: run dynamic task B.dyn,
// then resume), and where to continue in B.pc.
template <bool HELP> __device__ void sync_run(const Params &P, Blk &B, u32 th, u32 pc, u32 end, u32 *pf) {
  u32 base = B.ibase;
  u32 lim = base + ICN < end ? base + ICN : end;
  const u32 lim0 = lim;
  int r = 0;
  for (; pc < lim; pc++) {
    Ins q = s_pre[pc - base];
    u32 c = (u32)(q.x >> 56);
    u64 *a = (u64 *)(q.x & 0x00ffffffffffffffull);
    if (c == CL_SKIP) continue;
    if (c == CL_RED) {
      asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(a), "l"(q.y) : "memory");
      continue;
    }
    if (c == CL_WAIT) {
      u32 it = 0;
      for (;;) {
        u64 v;
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(a) : "memory");
        if (v >= q.y) break;
        if (it == 0) {
          stage_next(P, B, pc, lim0);
          if (P.pf_bytes) prefetch_ahead(P, B, pc, lim0, pf);
        }
        if ((++it & 15) == 0) {
          r = spin_check<HELP>(P, B, th, pc, v);
          if (r) break;
        }
      }
      if (r) break;
      continue;
    }
    if (c == CL_BLOCK) break;
    r = sync_step<HELP>(P, B, th, pc, B.icache[2 * (pc - base)], B.icache[2 * (pc - base) + 1]);
    if (r) break;
  }
  B.res = r == 0 ? ST_DONE : r >= 8 ? 4 : r;
  B.dyn = r >= 8 ? r - 8 : -1;
  B.pc = pc;
}

// run_thread executes stream th with the whole block. Block steps run as
// before; each maximal run of sync steps runs in thread 0 (sync_run) while
// the other threads wait at the barrier that then publishes its outcome.
// Thread 0 writes the next outcome only after another block barrier, so
// every thread has read the last one; run_thread returns with none unread.
template <bool HELP> __device__ bool run_thread(const Params &P, Blk &B, u32 th) {
  u32 end = __ldg(&P.streams[th + 1]);
  u32 pc = __ldg(&P.streams[th]);
  u32 pf = pc;         // thread 0: instructions before pf were considered for prefetch
  u64 tw = 0;          // thread 0, tracing: when the last sync run began
  bool unread = false; // an outcome was read since the last block barrier
  while (pc < end) {
    fetch(P, B, pc);
    u32 i = pc - B.ibase;
    if (pre_class(i) == CL_BLOCK) {
      u64 w0 = B.icache[2 * i];
      u32 obj = (u32)(w0 >> 32);
      if (((u32)w0 & 0xff) == INS_FENCE) {
        __syncthreads();
        fence_sync((u32)w0 & 0xffff);
        __syncthreads();
      } else {
        u64 tb = 0;
        if (P.trace && threadIdx.x == 0) tb = gtimer();
        if (P.max_delay_ns) delay(P, obj, 0);
        run_body(P, B, obj); // ends with a block barrier
        if (P.max_delay_ns) delay(P, obj, 1);
        if (P.trace && threadIdx.x == 0) {
          u64 *tr = P.trace + 4 * (u64)obj;
          tr[0] = tw, tr[1] = tb, tr[2] = gtimer(), tr[3] = B.worker;
        }
      }
      unread = false;
      pc++;
      continue;
    }
    if (unread) __syncthreads();
    if (P.trace && threadIdx.x == 0) tw = gtimer();
    if (threadIdx.x == 0) sync_run<HELP>(P, B, th, pc, end, &pf);
    __syncthreads();
    int res = B.res, d = B.dyn;
    pc = B.pc;
    unread = true;
    if (res == ST_DONE) continue;
    __syncthreads();
    unread = false;
    if (!HELP || res != 4) return false;
    if (!run_dyn(P, B, (u32)d)) return false;
  }
  if (unread) __syncthreads();
  return true;
}

// At most 512 threads per block (runner.MaxBlockThreads), one block per
// SM: the bodies get up to 128 registers per thread, which keeps the
// GEMV's and attention's loads in flight in registers.
extern "C" __global__ void __launch_bounds__(512, 1) mp_interp(Params Pv) {
  // Device functions take the parameters by reference; a copy in shared
  // memory keeps them out of local memory (which acquires invalidate in L1).
  __shared__ Blk B;
  __shared__ Params P;
  if (threadIdx.x == 0) P = Pv;
  __syncthreads();
  u32 worker = P.perm[blockIdx.x];
  if (threadIdx.x == 0) {
    u64 t0 = gtimer();
    B.deadline = t0 + P.timeout_ns;
    B.dynrun = 0;
    B.worker = worker;
    B.ibase = 0xffffffffu;
    B.staged = 0xffffffffu;
    B.cursor = P.ndyn ? (u32)(((u64)worker * 7919u) % P.ndyn) : 0;
    P.status[8 * (u64)worker + 5] = t0;
    P.status[8 * (u64)worker + 1] = worker;
  }
  __syncthreads();
  bool ok = run_thread<true>(P, B, worker);
  // Finished workers claim dynamic tasks until all have run.
  while (ok && P.ndyn) {
    if (threadIdx.x == 0) {
      int res = 0, d = -1;
      for (;;) {
        if (ld_relaxed(&P.ctl[1]) >= P.ndyn) { res = ST_DONE; break; }
        d = try_claim(P, B, false);
        if (d >= 0) { res = 4; break; }
        if (ld_relaxed(&P.ctl[0])) { res = ST_ABORTED; break; }
        if (gtimer() > B.deadline) { res = ST_TIMEOUT; break; }
        __nanosleep(100);
      }
      if (res == ST_TIMEOUT || res == ST_ABORTED) record(P, B, res, 0xffffffffu, 0, 0);
      B.res = res;
      B.dyn = d;
    }
    __syncthreads();
    int res = B.res, d = B.dyn;
    __syncthreads();
    if (res == ST_DONE) break;
    if (res != 4) { ok = false; break; }
    ok = run_dyn(P, B, (u32)d);
  }
  if (threadIdx.x == 0) {
    u64 *st = P.status + 8 * (u64)worker;
    if (ok) st[0] = ST_DONE;
    st[4] = B.dynrun;
    st[6] = gtimer();
  }
}

// mp_task runs one task's body with one block (the stream-launch baseline).
extern "C" __global__ void __launch_bounds__(1024) mp_task(Params Pv, u32 t) {
  __shared__ Blk B;
  __shared__ Params P;
  if (threadIdx.x == 0) P = Pv, B.staged = 0xffffffffu;
  __syncthreads();
  run_body(P, B, t);
}

extern "C" __global__ void mp_empty() {}
