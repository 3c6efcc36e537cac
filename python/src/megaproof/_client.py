"""Talking to ``megaproof verify --stream``: one long-lived process, one
document per line in, one JSON record per line out."""

from __future__ import annotations

import atexit
import collections
import json
import os
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Deque, Iterable, List, Mapping, Optional, Sequence, Union

from ._binary import find_binary
from ._results import Finding, Report, SchemaError

__all__ = ["Verifier", "MegaproofError", "verify", "replay", "Replay", "document_line", "ProgramLike"]

ProgramLike = Union[Mapping[str, Any], bytes, bytearray, str, os.PathLike]
"""What :func:`verify` accepts: a program as a dict (megaproof JSON or
AutoMegaKernel IR JSON), an object with ``to_dict()`` (AutoMegaKernel's
``MegakernelProgram``), the document as bytes, JSON text as a str starting
with ``{``, or a path (str or ``os.PathLike``)."""


class MegaproofError(RuntimeError):
    """The megaproof process failed: it exited, or answered something that is
    not a record. ``stderr`` holds the end of what it wrote there."""

    def __init__(self, message: str, stderr: str = "", returncode: Optional[int] = None):
        super().__init__(message + (f"\nmegaproof's stderr:\n{stderr}" if stderr else ""))
        self.stderr = stderr
        self.returncode = returncode


def document_line(data: bytes) -> Optional[bytes]:
    """Returns the document as one line for the stream, or None when that
    cannot be done exactly.

    A JSON document may hold line breaks only as whitespace between tokens
    (inside strings they must be escaped), so replacing each of them by a
    space changes nothing about the document. A raw line break inside a
    string makes the document invalid, and a byte order mark, a UTF-16
    encoding or a NUL byte makes it something else; replacing bytes there
    could turn it into a valid document, so those return None and are sent
    as files instead.
    """
    if data.startswith((b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe")) or b"\x00" in data:
        return None
    if b"\n" not in data and b"\r" not in data:
        return bytes(data)
    out = bytearray(data)
    in_string = escaped = False
    for i, c in enumerate(out):
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:  # quote
                in_string = False
            elif c in (0x0A, 0x0D):
                return None
        elif c == 0x22:
            in_string = True
        elif c in (0x0A, 0x0D):
            out[i] = 0x20
    return bytes(out)


def _load(program: ProgramLike) -> "tuple[Optional[bytes], Optional[str]]":
    """Returns (document bytes, path): the bytes of an in-memory document,
    or the path of a file."""
    if isinstance(program, (bytes, bytearray, memoryview)):
        return bytes(program), None
    if isinstance(program, Mapping):
        return json.dumps(dict(program), separators=(",", ":")).encode("utf-8"), None
    if isinstance(program, str) and program.lstrip().startswith("{"):
        return program.encode("utf-8"), None
    if isinstance(program, (str, os.PathLike)):
        return None, os.fspath(program)
    to_dict = getattr(program, "to_dict", None)
    if callable(to_dict):
        return json.dumps(to_dict(), separators=(",", ":")).encode("utf-8"), None
    raise TypeError(f"cannot verify a {type(program).__name__}: want a dict, bytes, JSON text, a path, or an object with to_dict()")


def _flags(max_states: Optional[int], max_bytes: Optional[int]) -> List[str]:
    out = []
    if max_states is not None:
        out += ["--max-states", str(int(max_states))]
    if max_bytes is not None:
        out += ["--max-bytes", str(int(max_bytes))]
    return out


class Verifier:
    """One long-lived ``megaproof verify --stream`` process.

    It is safe to share between threads (requests are serialized by a lock)
    and is a context manager; :meth:`close` ends the process. If the process
    dies, the next request starts a new one.

    >>> with Verifier() as v:                              # doctest: +SKIP
    ...     report = v.verify({"format": "megaproof/v1", ...})
    """

    def __init__(self, binary: Optional[str] = None, *, max_states: Optional[int] = None,
                 max_bytes: Optional[int] = None, args: Sequence[str] = ()):
        self.binary = find_binary(binary)
        self._flags = _flags(max_states, max_bytes) + list(args)
        self._lock = threading.Lock()
        self._proc: Optional[subprocess.Popen] = None
        self._stderr: Deque[str] = collections.deque(maxlen=200)

    def _start(self) -> subprocess.Popen:
        proc = subprocess.Popen(
            [self.binary, "verify", "--stream", *self._flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self._stderr.clear()

        def drain(stream, sink=self._stderr):
            for line in iter(stream.readline, b""):
                sink.append(line.decode("utf-8", "replace"))
            stream.close()

        threading.Thread(target=drain, args=(proc.stderr,), daemon=True).start()
        return proc

    def _stderr_tail(self) -> str:
        return "".join(self._stderr).strip()

    def verify(self, program: ProgramLike) -> Report:
        """Verifies one program (see :data:`ProgramLike`) and returns its report.

        For a path, the report's ``file`` is that path. Raises
        :class:`MegaproofError` if megaproof itself fails, never for an
        invalid document: that is a report with verdict invalid.
        """
        data, path = _load(program)
        if path is not None:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                return self._one_shot(path)  # megaproof reports it as invalid.io
        line = document_line(data)
        if line is None:
            if path is None:
                return self._one_shot_bytes(data)
            return self._one_shot(path)
        r = self._request(line)
        if path is not None:
            r = _with_file(r, path)
        return r

    def verify_many(self, programs: Iterable[ProgramLike]) -> List[Report]:
        """Verifies programs in order on this process."""
        return [self.verify(p) for p in programs]

    def _request(self, line: bytes) -> Report:
        with self._lock:
            for attempt in (0, 1):
                if self._proc is not None and self._proc.poll() is not None:
                    _close_pipes(self._proc)
                    self._proc = None
                if self._proc is None:
                    self._proc = self._start()
                proc = self._proc
                try:
                    proc.stdin.write(line + b"\n")
                    proc.stdin.flush()
                    out = proc.stdout.readline()
                except (BrokenPipeError, OSError):
                    out = b""
                if out:
                    return _parse(out, self._stderr_tail())
                code = proc.wait()
                _close_pipes(proc)
                if attempt == 1 or code == 2:
                    # Exit status 2 at once is a usage error (an old binary
                    # without --stream, a bad flag): retrying cannot help.
                    raise MegaproofError(f"{self.binary} verify --stream exited with status {code} without answering",
                                         self._stderr_tail(), code)
                self._proc = None
        raise AssertionError("unreachable")

    def _one_shot(self, path: str) -> Report:
        return self._run(["--", path])

    def _one_shot_bytes(self, data: bytes) -> Report:
        return self._run(["-"], data)

    def _run(self, args: List[str], stdin: Optional[bytes] = None) -> Report:
        r = subprocess.run([self.binary, "verify", "--json", *self._flags, *args], input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = r.stdout.splitlines()
        if not out:
            raise MegaproofError(f"{self.binary} verify exited with status {r.returncode} without a record",
                                 r.stderr.decode("utf-8", "replace").strip(), r.returncode)
        return _parse(out[0], r.stderr.decode("utf-8", "replace").strip())

    def close(self) -> None:
        """Ends the process (it exits when its standard input closes)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            _close_pipes(proc)

    def __enter__(self) -> "Verifier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _close_pipes(proc: subprocess.Popen) -> None:
    for f in (proc.stdin, proc.stdout):
        try:
            f.close()
        except OSError:
            pass


def _parse(line: bytes, stderr: str) -> Report:
    try:
        return Report.from_dict(json.loads(line))
    except (ValueError, SchemaError) as e:
        raise MegaproofError(f"megaproof answered a line that is not a record ({e}): {line[:200]!r}", stderr) from e


def _with_file(r: Report, path: str) -> Report:
    import dataclasses
    return dataclasses.replace(r, file=path)


_default: Optional[Verifier] = None
_default_lock = threading.Lock()


def _shared() -> Verifier:
    global _default
    with _default_lock:
        if _default is None:
            _default = Verifier()
            atexit.register(_default.close)
        return _default


def verify(program: ProgramLike, *, binary: Optional[str] = None, max_states: Optional[int] = None,
           max_bytes: Optional[int] = None) -> Report:
    """Verifies one program and returns its typed :class:`Report`.

    ``program`` is a dict (megaproof JSON or AutoMegaKernel IR JSON), an
    object with ``to_dict()``, the document as bytes or as JSON text, or a
    path. With no options, every call goes to one shared long-lived
    ``megaproof verify --stream`` process, so a loop over candidates pays no
    process start per call; with options, a process is started for the
    call (use :class:`Verifier` to keep one with options).
    """
    if binary is None and max_states is None and max_bytes is None:
        return _shared().verify(program)
    with Verifier(binary, max_states=max_states, max_bytes=max_bytes) as v:
        return v.verify(program)


@dataclass(frozen=True)
class Replay:
    """What ``megaproof replay --json`` says of one finding's witness."""

    file: str
    index: int
    """The finding's place in verify's report, from 1."""
    finding: Finding
    """The finding, its witness annotated step by step."""
    confirmed: bool
    """Whether ``schedule.CheckWitness`` accepts the witness."""
    error: Optional[str] = None
    """Why it is not confirmed."""
    format: Optional[str] = None


def replay(program: ProgramLike, finding: Optional[int] = None, *, binary: Optional[str] = None) -> Replay:
    """Replays one finding's witness with ``megaproof replay --json`` and
    returns what it printed: the finding (``finding``-th, from 1; by default
    the first with a witness) with its events annotated, and whether the
    judge confirms it. ``program`` is what :func:`verify` takes. Raises
    :class:`MegaproofError` when there is nothing to replay (a safe or
    invalid program, no such finding)."""
    exe = find_binary(binary)
    args = [exe, "replay", "--json"]
    if finding is not None:
        args += ["--finding", str(finding)]
    if isinstance(program, (str, os.PathLike)) and not (isinstance(program, str) and program.lstrip().startswith("{")):
        r = subprocess.run([*args, "--", os.fspath(program)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    else:
        if isinstance(program, (bytes, bytearray)):
            data = bytes(program)
        elif isinstance(program, str):
            data = program.encode("utf-8")
        else:
            d = program.to_dict() if hasattr(program, "to_dict") else program
            data = json.dumps(d).encode("utf-8")
        r = subprocess.run([*args, "-"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode("utf-8", "replace").strip()
    out = r.stdout.splitlines()
    if not out:
        raise MegaproofError(f"{exe} replay exited with status {r.returncode} without a record", err, r.returncode)
    try:
        d = json.loads(out[0])
        return Replay(file=d["file"], index=d["index"], finding=Finding.from_dict(d["finding"], "replay.finding"),
                      confirmed=d["confirmed"], error=d.get("error"), format=d.get("format"))
    except (ValueError, KeyError, TypeError, SchemaError) as e:
        raise MegaproofError(f"megaproof replay answered a line that is not a record ({e}): {out[0][:200]!r}", err) from e
