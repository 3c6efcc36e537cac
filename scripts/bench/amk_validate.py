"""A reconstruction of AutoMegaKernel's validate(), for timing only.

AutoMegaKernel (AMK) is not installed here. This file rebuilds its
validate() from the project's notes on it (every rule, in order, with its
algorithm: /work/shared/peers/amk.md, section 2, citing schedule/ir.py
847-1114), so that megaproof's batch can be timed against it on the same
files, on the same machine, in the same run. It is not AMK's code, and its
verdicts are not used: only its cost is. Rules 1a-1g, 2, 3, the Kahn
acyclicity check over dependency_edges() (built twice, as the notes say),
the big-integer ancestor masks of the RAW provenance check and the
multi-writer WAW check (both up to 8,000 tasks), the on-chip, SM-queue,
page and output checks. Programs are loaded into dataclasses first, as
AMK's loader does; only validate() is timed.

    go test ./schedule/amk -run TestE2Population -e2.out e2   # the 360 files
    python3 scripts/bench/amk_validate.py e2/*.json

Where a checkout of AMK is at hand, scripts/bench/amk_e2.py times AMK's
own validate() on the files AMK's own lowering writes, and is the
comparison to use. This reconstruction's op table is not that of AMK at
a514bbc (EMBED, ROPE and RMSNORM take other inputs and params there): it
rejects AMK's own lowerings, so run it only on the generated toys.
"""

import collections
import dataclasses
import json
import statistics
import sys
import time

READONLY = {"WEIGHT", "CONST", "IO_INPUT"}
ONCHIP = {"SMEM", "REGISTER"}
UNIMPLEMENTED_OPS = frozenset()
PROVENANCE_MAX_TASKS = 8000


@dataclasses.dataclass
class OpSpec:
    min_inputs: int
    max_inputs: int
    n_outputs: int
    required: tuple


OP_REGISTRY = {
    "NOP": OpSpec(0, 8, 1, ()),
    "EMBED": OpSpec(1, 2, 1, ()),
    "RMSNORM": OpSpec(2, 2, 1, ("eps",)),
    "GEMV_TILE": OpSpec(2, 3, 1, ("K", "N_tile", "n_off")),
    "GEMM_TILE": OpSpec(2, 3, 1, ("K", "N_tile", "n_off", "M_tile", "m_off")),
    "ROPE": OpSpec(3, 3, 1, ("head_dim", "pos")),
    "KV_APPEND": OpSpec(2, 2, 1, ("pos",)),
    "ATTENTION_TILE": OpSpec(3, 4, 1, ("head_dim", "kv_start", "kv_len", "scale", "n_heads", "n_kv_heads")),
    "ADD": OpSpec(2, 2, 1, ()),
    "SILU_MUL": OpSpec(2, 2, 1, ()),
}
INT_PARAMS = {"K", "N_tile", "n_off", "M_tile", "m_off", "hidden", "pos", "head_dim", "kv_start", "kv_len", "n_heads", "n_kv_heads"}
FLOAT_PARAMS = {"eps", "scale", "theta"}


@dataclasses.dataclass
class Buffer:
    id: int
    name: str
    kind: str
    dtype: str
    shape: tuple
    space: str = "HBM"
    source: object = None


@dataclasses.dataclass
class Wait:
    counter: int
    threshold: int


@dataclasses.dataclass
class Task:
    id: int
    op: str
    inputs: list
    outputs: list
    out_counter: int
    waits: list
    params: dict
    sm: object = None
    est_bytes: int = 0
    est_flops: int = 0
    label: str = ""


@dataclasses.dataclass
class Counter:
    id: int
    init: int = 0
    note: str = ""


@dataclasses.dataclass
class Program:
    meta: dict
    target: dict
    buffers: list
    counters: list
    tasks: list
    pages: object = None
    config: object = None


def load(path):
    with open(path) as f:
        d = json.load(f)
    return Program(
        meta=d.get("meta") or {},
        target=d.get("target") or {},
        buffers=[Buffer(b["id"], b["name"], b["kind"], b["dtype"], tuple(b["shape"]), b.get("space") or "HBM", b.get("source")) for b in d["buffers"]],
        counters=[Counter(c["id"], c.get("init") or 0, c.get("note") or "") for c in d["counters"]],
        tasks=[Task(t["id"], t["op"], list(t["inputs"]), list(t["outputs"]), t["out_counter"],
                    [Wait(w["counter"], w["threshold"]) for w in (t.get("waits") or [])],
                    dict(t.get("params") or {}), t.get("sm"), t.get("est_bytes", 0), t.get("est_flops", 0), t.get("label", ""))
               for t in d["tasks"]],
        pages=d.get("pages"), config=d.get("config"))


def dependency_edges(prog):
    producers = collections.defaultdict(list)
    for t in prog.tasks:
        producers[t.out_counter].append(t.id)
    edges = set()
    for t in prog.tasks:
        for w in t.waits:
            for p in producers.get(w.counter, ()):
                if p != t.id:
                    edges.add((p, t.id))
    return sorted(edges)


def region(t):
    if t.op in ("GEMV_TILE", "GEMM_TILE"):
        n0 = t.params.get("n_off", 0)
        cols = (n0, n0 + t.params.get("N_tile", 0))
        rows = None
        if t.op == "GEMM_TILE":
            m0 = t.params.get("m_off", 0)
            rows = (m0, m0 + t.params.get("M_tile", 0))
        return cols, rows
    return None


def disjoint(a, b):
    if a is None or b is None:
        return False
    (c1, r1), (c2, r2) = a, b
    if c1[1] <= c2[0] or c2[1] <= c1[0]:
        return True
    return r1 is not None and r2 is not None and (r1[1] <= r2[0] or r2[1] <= r1[0])


def validate(prog):
    errors, warnings = [], []
    buf_ids = {b.id for b in prog.buffers}
    ctr_ids = {c.id for c in prog.counters}
    # 1a-1g: per task.
    for t in prog.tasks:
        for b in t.inputs + t.outputs:
            if b not in buf_ids:
                errors.append(f"task {t.id}: buffer {b} does not exist")
        if t.out_counter not in ctr_ids:
            errors.append(f"task {t.id}: out_counter {t.out_counter} does not exist")
        if len(t.inputs) > 8 or len(t.outputs) > 4 or len(t.waits) > 8:
            errors.append(f"task {t.id}: ABI caps")
        for b in t.inputs + t.outputs:
            if b in buf_ids and len(prog.buffers[b].shape) > 4:
                errors.append(f"task {t.id}: rank")
        for w in t.waits:
            if w.counter not in ctr_ids:
                errors.append(f"task {t.id}: wait counter {w.counter} does not exist")
            if not isinstance(w.threshold, int) or isinstance(w.threshold, bool) or w.threshold < 1:
                errors.append(f"task {t.id}: threshold {w.threshold!r}")
            if w.counter == t.out_counter:
                errors.append(f"task {t.id}: waits on its own out_counter")
        if t.op in UNIMPLEMENTED_OPS:
            errors.append(f"task {t.id}: unimplemented {t.op}")
        spec = OP_REGISTRY.get(t.op)
        if spec is None:
            errors.append(f"task {t.id}: unknown op {t.op}")
        else:
            if not spec.min_inputs <= len(t.inputs) <= spec.max_inputs or len(t.outputs) != spec.n_outputs:
                errors.append(f"task {t.id}: arity")
            for k in spec.required:
                if k not in t.params:
                    errors.append(f"task {t.id}: missing param {k}")
        for k, v in t.params.items():
            if k in INT_PARAMS:
                if not isinstance(v, int) or isinstance(v, bool) or not -2**31 <= v < 2**31:
                    errors.append(f"task {t.id}: param {k} not int32")
            elif k in FLOAT_PARAMS:
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    errors.append(f"task {t.id}: param {k} not a number")
            else:
                warnings.append(f"task {t.id}: unknown param {k}")
    # 2, 3: satisfiability and shared-counter all-joins.
    nprod = collections.Counter(t.out_counter for t in prog.tasks)
    for t in prog.tasks:
        for w in t.waits:
            n = nprod.get(w.counter, 0)
            if n < 1 or w.threshold > n:
                errors.append(f"task {t.id}: wait on counter {w.counter} >= {w.threshold} unsatisfiable ({n} producers)")
            elif n > 1 and w.threshold != n:
                errors.append(f"task {t.id}: partial wait on shared counter {w.counter}")
    # 4: acyclicity (Kahn).
    edges = dependency_edges(prog)
    n = len(prog.tasks)
    succ = [[] for _ in range(n)]
    preds = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in edges:
        succ[a].append(b)
        preds[b].append(a)
        indeg[b] += 1
    queue = collections.deque(i for i in range(n) if indeg[i] == 0)
    topo = []
    while queue:
        u = queue.popleft()
        topo.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    acyclic = len(topo) == n
    if not acyclic:
        errors.append("dependency cycle")
    kind = {b.id: b.kind for b in prog.buffers}
    anc = []
    if acyclic and n <= PROVENANCE_MAX_TASKS:
        # 5: RAW provenance with big-integer ancestor masks.
        dependency_edges(prog)  # built a second time, as AMK does
        anc = [0] * n
        for u in topo:
            a = 0
            for p in preds[u]:
                a |= anc[p] | (1 << p)
            anc[u] = a
        writers = collections.defaultdict(list)
        for t in prog.tasks:
            for b in t.outputs:
                if kind.get(b) not in READONLY:
                    writers[b].append(t.id)
        for t in prog.tasks:
            for b in t.inputs:
                if kind.get(b) in READONLY:
                    continue
                ws = writers.get(b, [])
                if not ws and kind.get(b) == "KV_CACHE":
                    continue
                if ws == [t.id]:
                    warnings.append(f"task {t.id}: only writer of what it reads")
                    continue
                for w in ws:
                    if w != t.id and not (anc[t.id] >> w) & 1:
                        errors.append(f"task {t.id}: reads buffer {b} without waiting for writer {w}")
        # 5a: multi-writer WAW.
        for b, ws in writers.items():
            if len(ws) < 2:
                continue
            ctrs = {prog.tasks[w].out_counter for w in ws}
            if len(ctrs) == 1:
                regs = [region(prog.tasks[w]) for w in ws]
                if all(disjoint(regs[i], regs[j]) for i in range(len(ws)) for j in range(i)):
                    continue
            for i in range(len(ws)):
                for j in range(i):
                    x, y = ws[i], ws[j]
                    if not ((anc[x] >> y) & 1 or (anc[y] >> x) & 1):
                        errors.append(f"buffer {b}: writers {x} and {y} unordered")
    elif acyclic:
        warnings.append("race checks skipped above 8000 tasks")
    # 5b: on-chip buffers.
    for b in prog.buffers:
        if b.space in ONCHIP:
            sms = {t.sm for t in prog.tasks if b.id in t.inputs or b.id in t.outputs}
            if len(sms) > 1:
                errors.append(f"buffer {b.id}: on-chip on several SMs")
    # 6: per-SM queue order.
    if any(t.sm is not None for t in prog.tasks):
        pos = {t.id: i for i, t in enumerate(prog.tasks)}
        for a, b in edges:
            sa, sb = prog.tasks[a].sm, prog.tasks[b].sm
            if sa is not None and sa == sb and pos[a] > pos[b]:
                errors.append(f"tasks {a}, {b}: queue order")
        for t in prog.tasks:
            if t.sm is not None and not 0 <= t.sm < prog.target.get("num_sms", 0):
                errors.append(f"task {t.id}: sm out of range")
    # 7: pages (none in these programs) need the ancestor masks.
    if prog.pages and anc:
        pass
    # 8: outputs written; target name.
    written = {b for t in prog.tasks for b in t.outputs}
    for b in prog.buffers:
        if b.kind == "IO_OUTPUT" and b.id not in written:
            errors.append(f"buffer {b.id}: output never written")
    if prog.meta.get("gpu") not in (None, prog.target.get("name")):
        warnings.append("meta.gpu differs from target.name")
    return errors, warnings


def main(paths):
    progs = [load(p) for p in paths]
    reps = 5
    per = []  # per program: median CPU seconds of one validate()
    rejected = 0
    c0 = time.process_time()
    w0 = time.perf_counter()
    for prog in progs:
        ts = []
        for _ in range(reps):
            t0 = time.process_time()
            errors, _ = validate(prog)
            ts.append(time.process_time() - t0)
        per.append(statistics.median(ts))
        rejected += bool(errors)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    calls = reps * len(progs)
    print(json.dumps({
        "programs": len(progs), "rejected": rejected, "calls": calls,
        "cpu_us_per_program": round(cpu / calls * 1e6, 1),
        "wall_us_per_program": round(wall / calls * 1e6, 1),
        "median_us": round(statistics.median(per) * 1e6, 1),
        "programs_per_cpu_s": round(calls / cpu, 1),
        "python": sys.version.split()[0],
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
