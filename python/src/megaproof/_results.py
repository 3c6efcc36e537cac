"""Typed results: dataclasses mirroring ``megaproof schema result``."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

__all__ = ["Verdict", "Event", "Span", "Location", "Finding", "Stats", "Report", "SchemaError"]


class SchemaError(ValueError):
    """A record that does not have the shape of ``megaproof schema result``."""


class Verdict(str, enum.Enum):
    """The outcome of verifying one document.

    Compare with the members, or with their string values: ``Verdict.SAFE ==
    "safe"`` holds.
    """

    SAFE = "safe"
    """No finding, and the decision is complete: no deadlock, race,
    uninitialized read or out-of-bounds access is possible."""
    UNSAFE = "unsafe"
    """At least one finding, each with a witness where it has one."""
    INVALID = "invalid"
    """The document is malformed or could not be read."""
    INCONCLUSIVE = "inconclusive"
    """No decision: a bound was hit (code ``inconclusive``) or megaproof
    failed internally (code ``internal``)."""

    def __str__(self) -> str:
        return self.value


def _req(d: Mapping[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in d:
        raise SchemaError(f"{where}: missing {key!r}")
    v = d[key]
    if typ is int and isinstance(v, bool) or not isinstance(v, typ):
        raise SchemaError(f"{where}.{key}: want {typ.__name__}, have {type(v).__name__}")
    return v


def _opt(d: Mapping[str, Any], key: str, typ: type, where: str, default: Any) -> Any:
    if key not in d:
        return default
    return _req(d, key, typ, where)


def _strings(d: Mapping[str, Any], key: str, where: str) -> Tuple[str, ...]:
    v = _opt(d, key, list, where, [])
    for i, s in enumerate(v):
        if not isinstance(s, str):
            raise SchemaError(f"{where}.{key}[{i}]: want str, have {type(s).__name__}")
    return tuple(v)


@dataclass(frozen=True)
class Span:
    """The steps ``[start, stop)`` of one thread that an advance runs."""

    thread: int
    start: int
    stop: int
    thread_name: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "span") -> "Span":
        return cls(
            thread=_req(d, "thread", int, where),
            start=_req(d, "from", int, where),
            stop=_req(d, "to", int, where),
            thread_name=_opt(d, "thread_name", str, where, None),
        )

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"thread": self.thread}
        if self.thread_name is not None:
            out["thread_name"] = self.thread_name
        out["from"], out["to"] = self.start, self.stop
        return out


@dataclass(frozen=True)
class Event:
    """One event of a witness, in one of three forms (``kind``):

    - a step: thread ``thread`` executes its ``step``-th operation. Threads
      are the static workers 0..W-1, then one thread per dynamic task in
      task-list order;
    - a hold: thread ``hold`` may not execute its operation ``at`` or any
      later one until the next advance;
    - an advance: every thread runs greedily until none can move (the
      lowest-numbered thread that can move runs until it cannot), except
      past its hold; ``executed`` steps in all, ``spans`` per thread, and
      ``marks`` the steps that matter among them.

    A replay (``megaproof replay``, ``schedule.Replay``) expands holds and
    advances into the steps they stand for (docs/SEMANTICS.md, "Compact
    witnesses")."""

    thread: Optional[int] = None
    step: Optional[int] = None
    task: Optional[str] = None
    """The name of the task the step belongs to."""
    op: Optional[str] = None
    """What the step does: ``"wait ready >= 2"``, ``"begin"``, ``"end"``...;
    for a hold ``"hold before step 12 (end)"``, for an advance
    ``"advance: 5,412 steps of 131 threads"``."""
    thread_name: Optional[str] = None
    """The thread: ``"worker 3"``, or ``task "x"`` for a dynamic task."""
    object: Optional[str] = None
    """The sync object the step touches: ``"counter ready"``, ``"barrier b"``..."""
    value: Optional[int] = None
    """The object's value right after the event, in a replay of the witness."""
    marked: bool = False
    """The event matters: a racing body begins, a stuck thread's last step..."""
    path: Optional[str] = None
    """The JSON path of the step in the input document."""
    hold: Optional[int] = None
    """A hold: the thread it holds."""
    at: Optional[int] = None
    """A hold: the step it holds its thread before."""
    advance: bool = False
    """The event is an advance."""
    executed: int = 0
    """An advance: the number of steps it runs."""
    spans: Tuple[Span, ...] = ()
    """An advance: the steps it runs of each thread it moves."""
    marks: Tuple["Event", ...] = ()
    """An advance: the steps that matter among those it runs."""

    @property
    def kind(self) -> str:
        """``"step"``, ``"hold"`` or ``"advance"``."""
        if self.advance:
            return "advance"
        if self.hold is not None:
            return "hold"
        return "step"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "event") -> "Event":
        keys = {k for k in ("thread", "step", "hold", "at", "advance") if k in d}
        if keys == {"advance"}:
            if d["advance"] is not True:
                raise SchemaError(f"{where}.advance: want true, have {d['advance']!r}")
            form: Dict[str, Any] = {"advance": True}
        elif keys == {"hold", "at"}:
            form = {"hold": _req(d, "hold", int, where), "at": _req(d, "at", int, where)}
        elif keys == {"thread", "step"}:
            form = {"thread": _req(d, "thread", int, where), "step": _req(d, "step", int, where)}
        else:
            raise SchemaError(f"{where}: want the keys of a step (thread, step), a hold (hold, at) or an advance, have {sorted(keys)}")
        return cls(
            **form,
            task=_opt(d, "task", str, where, None),
            op=_opt(d, "op", str, where, None),
            thread_name=_opt(d, "thread_name", str, where, None),
            object=_opt(d, "object", str, where, None),
            value=_opt(d, "value", int, where, None),
            marked=_opt(d, "marked", bool, where, False),
            path=_opt(d, "path", str, where, None),
            executed=_opt(d, "executed", int, where, 0),
            spans=tuple(Span.from_dict(s, f"{where}.spans[{i}]") for i, s in enumerate(_opt(d, "spans", list, where, []))),
            marks=tuple(Event.from_dict(m, f"{where}.marks[{i}]") for i, m in enumerate(_opt(d, "marks", list, where, []))),
        )

    def to_dict(self) -> Dict[str, Any]:
        """The event as ``megaproof verify --json`` prints it."""
        if self.kind == "advance":
            out: Dict[str, Any] = {"advance": True}
        elif self.kind == "hold":
            out = {"hold": self.hold, "at": self.at}
        else:
            out = {"thread": self.thread, "step": self.step}
        for k in ("thread_name", "task", "op", "object", "value"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.marked:
            out["marked"] = True
        if self.path is not None:
            out["path"] = self.path
        if self.executed:
            out["executed"] = self.executed
        if self.spans:
            out["spans"] = [s.to_dict() for s in self.spans]
        if self.marks:
            out["marks"] = [m.to_dict() for m in self.marks]
        return out

    def __str__(self) -> str:
        if self.kind == "advance":
            return self.op or "advance"
        if self.kind == "hold":
            return f"hold {self.hold} before {self.at}"
        what = f" {self.task}: {self.op}" if self.task is not None and self.op is not None else ""
        return f"({self.thread}, {self.step}){what}"


@dataclass(frozen=True)
class Location:
    """A place in the input document that a finding involves."""

    path: str
    """A JSON path: ``$.tasks[12]``, ``$.tasks[12].before[0]``..."""
    task: Optional[str] = None
    role: Optional[str] = None
    """``writer``, ``reader``, ``stuck``, ``signal``, ``wait``, ``access``, ``invalid``."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "location") -> "Location":
        return cls(path=_req(d, "path", str, where), task=_opt(d, "task", str, where, None),
                   role=_opt(d, "role", str, where, None))

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"path": self.path}
        if self.task is not None:
            out["task"] = self.task
        if self.role is not None:
            out["role"] = self.role
        return out


@dataclass(frozen=True)
class Finding:
    """One reason a document is unsafe, invalid or undecided."""

    code: str
    """A stable code, e.g. ``race.raw``; ``megaproof explain CODE`` documents it."""
    message: str
    path: Optional[str] = None
    """The JSON path of an ``invalid.*`` finding in the input document."""
    tasks: Tuple[str, ...] = ()
    """Names of the tasks involved, primary first."""
    related: Tuple[str, ...] = ()
    """Detail lines: what a stuck thread waits on, who wrote what."""
    fix: Optional[str] = None
    """A suggested edit that removes the finding, when one is evident."""
    witness: Tuple[Event, ...] = ()
    """A trace from the initial state that exhibits the finding (minimised)."""
    witness_length: int = 0
    has_witness: bool = False
    """Whether the finding carries a witness: an empty ``witness`` with
    ``has_witness`` is the empty trace (threads stuck from the start); a
    static finding has none."""
    locations: Tuple[Location, ...] = ()
    """The JSON paths of the tasks and steps involved, in the input's format."""
    patch: Tuple[Dict[str, Any], ...] = ()
    """The fix as RFC 6902 JSON Patch operations on the input document."""

    @property
    def family(self) -> str:
        """The part of the code before its first dot (``race`` for ``race.raw``)."""
        return self.code.split(".", 1)[0]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "finding") -> "Finding":
        witness = _opt(d, "witness", list, where, None)
        locations = _opt(d, "locations", list, where, [])
        patch = _opt(d, "patch", list, where, [])
        for i, op in enumerate(patch):
            if not isinstance(op, dict):
                raise SchemaError(f"{where}.patch[{i}]: want dict, have {type(op).__name__}")
        return cls(
            code=_req(d, "code", str, where),
            message=_req(d, "message", str, where),
            path=_opt(d, "path", str, where, None),
            tasks=_strings(d, "tasks", where),
            related=_strings(d, "related", where),
            fix=_opt(d, "fix", str, where, None),
            witness=tuple(Event.from_dict(e, f"{where}.witness[{i}]") for i, e in enumerate(witness or [])),
            witness_length=_opt(d, "witness_length", int, where, 0),
            has_witness=witness is not None,
            locations=tuple(Location.from_dict(l, f"{where}.locations[{i}]") for i, l in enumerate(locations)),
            patch=tuple(dict(op) for op in patch),
        )

    def __str__(self) -> str:
        at = f" at {self.path}" if self.path else ""
        return f"{self.code}{at}: {self.message}"


@dataclass(frozen=True)
class Stats:
    """What the analysis covered."""

    tasks: int = 0
    threads: int = 0
    """Threads of the normal form: one per static worker, one per dynamic task."""
    steps: int = 0
    accesses: int = 0
    conflict_pairs: int = 0
    engine: str = ""
    """``greedy`` (the confluent analyses) or ``explore`` (the explorer, programs with semaphores)."""
    explored_states: int = 0
    taint_games: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "stats") -> "Stats":
        return cls(
            tasks=_req(d, "tasks", int, where),
            threads=_req(d, "threads", int, where),
            steps=_req(d, "steps", int, where),
            accesses=_req(d, "accesses", int, where),
            conflict_pairs=_req(d, "conflict_pairs", int, where),
            engine=_req(d, "engine", str, where),
            explored_states=_opt(d, "explored_states", int, where, 0),
            taint_games=_opt(d, "taint_games", int, where, 0),
        )


@dataclass(frozen=True)
class Report:
    """The verdict on one document: one object of ``megaproof verify --json``."""

    file: str
    verdict: Verdict
    findings: Tuple[Finding, ...] = ()
    """Empty exactly when the verdict is safe."""
    stats: Stats = field(default_factory=Stats)
    format: Optional[str] = None
    """``megaproof/v1``, ``amk`` or ``mpk``, when the document was recognized."""
    program: Optional[str] = None
    """The program's name, when it has one."""

    @property
    def safe(self) -> bool:
        """Whether the verdict is safe. Anything else must not be launched."""
        return self.verdict is Verdict.SAFE

    @property
    def internal_error(self) -> bool:
        """Whether megaproof failed internally on this document."""
        return any(f.code == "internal" for f in self.findings)

    def codes(self) -> Tuple[str, ...]:
        """The codes of the findings, in order."""
        return tuple(f.code for f in self.findings)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Report":
        """Builds a report from one decoded JSON record, checking its shape."""
        if not isinstance(d, Mapping):
            raise SchemaError(f"report: want an object, have {type(d).__name__}")
        v = _req(d, "verdict", str, "report")
        try:
            verdict = Verdict(v)
        except ValueError:
            raise SchemaError(f"report.verdict: unknown verdict {v!r}") from None
        findings = _req(d, "findings", list, "report")
        return cls(
            file=_req(d, "file", str, "report"),
            verdict=verdict,
            findings=tuple(Finding.from_dict(f, f"report.findings[{i}]") for i, f in enumerate(findings)),
            stats=Stats.from_dict(_req(d, "stats", dict, "report")),
            format=_opt(d, "format", str, "report", None),
            program=_opt(d, "program", str, "report", None),
        )

    def to_dict(self) -> Dict[str, Any]:
        """The record as ``megaproof verify --json`` prints it."""
        def finding(f: Finding) -> Dict[str, Any]:
            out: Dict[str, Any] = {"code": f.code, "message": f.message}
            if f.path:
                out["path"] = f.path
            if f.tasks:
                out["tasks"] = list(f.tasks)
            if f.locations:
                out["locations"] = [l.to_dict() for l in f.locations]
            if f.related:
                out["related"] = list(f.related)
            if f.fix:
                out["fix"] = f.fix
            if f.patch:
                out["patch"] = [dict(op) for op in f.patch]
            if f.witness or f.has_witness:
                out["witness"] = [e.to_dict() for e in f.witness]
                out["witness_length"] = f.witness_length
            return out

        s = self.stats
        stats: Dict[str, Any] = {
            "tasks": s.tasks, "threads": s.threads, "steps": s.steps, "accesses": s.accesses,
            "conflict_pairs": s.conflict_pairs,
        }
        if s.explored_states:
            stats["explored_states"] = s.explored_states
        if s.taint_games:
            stats["taint_games"] = s.taint_games
        stats["engine"] = s.engine
        out: Dict[str, Any] = {"file": self.file}
        if self.format:
            out["format"] = self.format
        if self.program:
            out["program"] = self.program
        out["verdict"] = self.verdict.value
        out["findings"] = [finding(f) for f in self.findings]
        out["stats"] = stats
        return out

    def __str__(self) -> str:
        head = self.file + (f" ({self.program!r})" if self.program and self.program != self.file else "")
        if self.safe:
            return f"{head}: safe: no deadlock, race, uninitialized read or out-of-bounds access is possible"
        n = len(self.findings)
        lines = [f"{head}: {self.verdict}: {n} finding{'' if n == 1 else 's'}"]
        lines += [f"  {f}" for f in self.findings]
        return "\n".join(lines)
