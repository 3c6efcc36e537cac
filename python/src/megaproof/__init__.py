"""megaproof proves GPU megakernel schedules free of deadlocks and data races
before they are launched.

This package is a thin shell around the ``megaproof`` binary (a Go program):
it keeps one ``megaproof verify --stream`` process per :class:`Verifier` and
parses the records it prints (``megaproof schema result``) into dataclasses.

>>> import megaproof                                       # doctest: +SKIP
>>> r = megaproof.verify("schedule.json")                  # or a dict, bytes, JSON text
>>> r.verdict, [f.code for f in r.findings]
(<Verdict.UNSAFE: 'unsafe'>, ['race.raw', 'uninitialized-read'])

The binary is found from ``MEGAPROOF_BIN``, then ``PATH``, then built with
``go build`` when Go is installed (see :func:`find_binary`).
:mod:`megaproof.amk` offers AutoMegaKernel's ``validate`` report shape.
"""

from ._binary import BinaryNotFound, find_binary
from ._client import MegaproofError, ProgramLike, Replay, Verifier, document_line, replay, verify
from ._results import Event, Finding, Location, Report, SchemaError, Span, Stats, Verdict

__version__ = "0.1.0"

__all__ = [
    "BinaryNotFound",
    "Event",
    "Span",
    "Finding",
    "Location",
    "MegaproofError",
    "ProgramLike",
    "Replay",
    "Report",
    "SchemaError",
    "Stats",
    "Verdict",
    "Verifier",
    "document_line",
    "find_binary",
    "replay",
    "verify",
]
