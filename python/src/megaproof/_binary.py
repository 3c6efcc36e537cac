"""Finding the megaproof binary."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Optional

__all__ = ["BinaryNotFound", "find_binary", "ENV_BINARY", "MODULE"]

ENV_BINARY = "MEGAPROOF_BIN"
"""The environment variable naming the megaproof binary to use."""

MODULE = "github.com/megaproof/megaproof"
PACKAGE = MODULE + "/cmd/megaproof"

_HOW = (
    "megaproof needs its command-line binary. Either\n"
    f"  - install it: go install {PACKAGE}@latest (Go 1.26 or later; it lands in $(go env GOPATH)/bin),\n"
    "  - put a megaproof binary on PATH, or\n"
    f"  - set {ENV_BINARY} to the path of one."
)


class BinaryNotFound(RuntimeError):
    """No megaproof binary was found or could be built; the message says how to get one."""


_lock = threading.Lock()
_found: Optional[str] = None


def _cache_dir() -> Path:
    base = os.environ.get("MEGAPROOF_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "megaproof"


def _exe(name: str) -> str:
    return name + (".exe" if sys.platform == "win32" else "")


def _source_root() -> Optional[Path]:
    """The megaproof checkout this package was installed from, if it is still there."""
    try:
        from . import _build_info  # written by the build backend
        root = getattr(_build_info, "SOURCE_ROOT", None)
    except ImportError:
        root = None
    candidates = [Path(root)] if root else []
    # Running from a checkout (python/src/megaproof): the module root is three levels up.
    candidates.append(Path(__file__).resolve().parents[3])
    for c in candidates:
        gomod = c / "go.mod"
        try:
            if gomod.is_file() and gomod.read_text(encoding="utf-8").splitlines()[0].strip() == "module " + MODULE:
                return c
        except (OSError, IndexError):
            continue
    return None


def _build(go: str) -> str:
    """Builds megaproof with Go into the cache: from the source checkout when
    there is one, else with go install of the module's latest version."""
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    root = _source_root()
    if root is not None:
        out = cache / _exe("megaproof-source")
        cmd = [go, "build", "-o", str(out), "./cmd/megaproof"]
        cwd: Optional[Path] = root
    else:
        out = cache / "bin" / _exe("megaproof")
        if out.is_file():
            return str(out)
        cmd = [go, "install", PACKAGE + "@latest"]
        cwd = None
    env = dict(os.environ)
    if root is None:
        env["GOBIN"] = str(out.parent)
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BinaryNotFound(f"building megaproof failed ({' '.join(cmd)}: {e}).\n{_HOW}") from e
    if r.returncode != 0 or not out.is_file():
        where = f" in {cwd}" if cwd else ""
        raise BinaryNotFound(f"building megaproof failed ({' '.join(cmd)}{where}):\n{r.stderr.strip()}\n{_HOW}")
    return str(out)


def find_binary(binary: Optional[str] = None) -> str:
    """Returns the path of the megaproof binary to run.

    In order: ``binary`` if given; the ``MEGAPROOF_BIN`` environment
    variable; ``megaproof`` on PATH; a binary built with ``go build`` from the
    megaproof checkout this package was installed from, or with ``go
    install`` of the latest release, when Go is on PATH (built once per
    process, into ``$MEGAPROOF_CACHE`` or ``~/.cache/megaproof``). Raises
    BinaryNotFound, saying how to get one, when none of these works.
    """
    global _found
    if binary:
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise BinaryNotFound(f"{binary} is not an executable file.\n{_HOW}")
        return binary
    env = os.environ.get(ENV_BINARY)
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise BinaryNotFound(f"{ENV_BINARY}={env} is not an executable file.\n{_HOW}")
        return env
    with _lock:
        if _found is not None:
            return _found
        path = shutil.which("megaproof")
        if path is None:
            go = shutil.which("go")
            if go is None:
                raise BinaryNotFound(f"no megaproof binary on PATH, {ENV_BINARY} is not set, and Go is not installed to build one.\n{_HOW}")
            path = _build(go)
        _found = path
        return path
