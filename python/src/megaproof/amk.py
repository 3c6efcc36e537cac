"""A drop-in for AutoMegaKernel's ``schedule.ir.validate``.

Swap one import::

    # from schedule.ir import validate
    from megaproof.amk import validate

    result = validate(prog)        # prog: a MegakernelProgram, its to_dict(), or a path
    if not result:                 # result.ok is False: do not launch
        print(result.report())

:func:`validate` returns AutoMegaKernel's report shape, a
:class:`ValidationResult` with ``ok``, ``errors``, ``warnings`` and
``stats``, but decides with megaproof: exactly, at every program size, with
a replayable witness behind every error. Like AutoMegaKernel's validator it
never raises on a malformed program; it raises :class:`megaproof.BinaryNotFound`
or :class:`megaproof.MegaproofError` only when megaproof itself cannot run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ._client import ProgramLike, Verifier, _shared
from ._results import Finding, Report, Verdict

__all__ = ["ValidationResult", "validate", "from_report"]


@dataclass
class ValidationResult:
    """AutoMegaKernel's ``ValidationResult``: falsy when the program must not be launched."""

    ok: bool
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    stats: Dict[str, Any] = field(default_factory=dict)
    megaproof: Optional[Report] = None
    """The full megaproof report behind the result, with witnesses."""

    def __bool__(self) -> bool:
        return self.ok

    def report(self) -> str:
        head = "VALID" if self.ok else "REJECTED"
        lines = [f"[{head}] {self.stats}"]
        lines += [f"  ERROR: {e}" for e in self.errors]
        lines += [f"  warn:  {w}" for w in self.warnings]
        return "\n".join(lines)


_TASK = re.compile(r"^t(-?[0-9]+)(?:\.[A-Z_0-9]+)?$")


def _labels(doc: Optional[Mapping[str, Any]]) -> Dict[int, str]:
    """Task id -> label, from the AMK document when we have it."""
    out: Dict[int, str] = {}
    if not isinstance(doc, Mapping):
        return out
    tasks = doc.get("tasks")
    if not isinstance(tasks, list):
        return out
    for t in tasks:
        if isinstance(t, Mapping) and isinstance(t.get("id"), int) and not isinstance(t.get("id"), bool):
            label = t.get("label")
            out[t["id"]] = label if isinstance(label, str) else ""
    return out


def _message(f: Finding, labels: Dict[int, str]) -> str:
    """One finding in AutoMegaKernel's style: ``task 12 (label) ...``."""
    text = f"{f.code}: {f.message}"
    if f.path:
        text = f"{f.code} at {f.path}: {f.message}"
    if f.tasks:
        m = _TASK.match(f.tasks[0])
        if m:
            tid = int(m.group(1))
            text = f"task {tid} ({labels.get(tid, '')}) {text}"
        else:
            text = f"task {f.tasks[0]} {text}"
    if f.fix:
        text += f"; fix: {f.fix}"
    return text


def from_report(report: Report, doc: Optional[Mapping[str, Any]] = None) -> ValidationResult:
    """Renders a megaproof report in AutoMegaKernel's shape. ``doc`` (the AMK
    document) supplies task labels for the messages."""
    labels = _labels(doc)
    s = report.stats
    stats: Dict[str, Any] = {
        "verdict": report.verdict.value,
        "tasks": s.tasks,
        "threads": s.threads,
        "steps": s.steps,
        "accesses": s.accesses,
        "conflict_pairs": s.conflict_pairs,
        "engine": s.engine,
    }
    if s.explored_states:
        stats["explored_states"] = s.explored_states
    errors = [_message(f, labels) for f in report.findings]
    warnings: List[str] = []
    if report.verdict is not Verdict.SAFE and not errors:
        errors.append(f"megaproof: {report.verdict.value}")
    if report.format not in (None, "amk"):
        warnings.append(f"the document was read as {report.format}, not as AutoMegaKernel IR")
    return ValidationResult(ok=report.verdict is Verdict.SAFE, errors=errors, warnings=warnings, stats=stats, megaproof=report)


def validate(prog: ProgramLike, *, verifier: Optional[Verifier] = None) -> ValidationResult:
    """Statically proves an AutoMegaKernel program safe to load, with megaproof.

    ``prog`` is a ``MegakernelProgram`` (anything with ``to_dict()``), its
    dict, the IR JSON as bytes or text, or a path to an IR JSON file. A
    ``REJECTED`` (falsy) result must prevent launch: it is returned for
    unsafe, invalid and inconclusive programs alike, each finding one
    ``errors`` line.
    """
    doc: Optional[Mapping[str, Any]] = None
    to_dict = getattr(prog, "to_dict", None)
    if callable(to_dict) and not isinstance(prog, Mapping):
        doc = to_dict()
        prog = doc
    elif isinstance(prog, Mapping):
        doc = prog
    elif isinstance(prog, (str, os.PathLike)) and not (isinstance(prog, str) and prog.lstrip().startswith("{")):
        try:
            with open(os.fspath(prog), "rb") as f:
                doc = json.loads(f.read())
        except (OSError, ValueError):
            doc = None
    v = verifier if verifier is not None else _shared()
    return from_report(v.verify(prog), doc)
