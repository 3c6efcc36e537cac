"""A PEP 517 build backend for the megaproof Python package, in the standard
library only, so that ``pip install ./python`` works offline: pip needs to
fetch no build requirement (``requires = []`` in pyproject.toml).

It builds a pure wheel of ``src/megaproof`` (plus ``_build_info.py``, which
records the megaproof checkout the package was built from, so that the
package can ``go build`` the binary from it), an sdist, and PEP 660 editable
wheels. Metadata comes from the [project] table of pyproject.toml.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent  # python/
SRC = ROOT / "src" / "megaproof"
MODULE_LINE = "module github.com/megaproof/megaproof"


def _project() -> Dict[str, object]:
    """The [project] table of pyproject.toml, read with tomllib when there
    is one (Python 3.11+), else with a reader of the plain subset it uses."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # type: ignore[import-not-found]

        return tomllib.loads(text)["project"]
    except ImportError:
        pass
    import ast

    table: Dict[str, object] = {}
    section = None
    key = None
    buf = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith(("\"", "'")) else raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("[") and key is None:
            section = line.strip("[] ")
            continue
        if section != "project":
            continue
        if key is None:
            key, _, val = line.partition("=")
            key, buf = key.strip(), val.strip()
        else:
            buf += " " + line.strip()
        if buf.count("[") == buf.count("]") and buf.count("{") == buf.count("}"):
            val = buf.replace("true", "True").replace("false", "False")
            if val.startswith("{"):
                # inline table: {text = "..."} / {file = "..."}
                inner = {}
                for part in val.strip("{} ").split(","):
                    k, _, v = part.partition("=")
                    inner[k.strip()] = ast.literal_eval(v.strip())
                table[key] = inner
            else:
                table[key] = ast.literal_eval(val)
            key = None
    return table


def _name_version() -> Tuple[str, str]:
    p = _project()
    return str(p["name"]), str(p["version"])


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    for c in p.get("classifiers", []) or []:
        lines.append(f"Classifier: {c}")
    for label, url in (p.get("urls") or {}).items():  # type: ignore[union-attr]
        lines.append(f"Project-URL: {label}, {url}")
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _source_root() -> Optional[str]:
    root = ROOT.parent
    try:
        first = (root / "go.mod").read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError):
        return None
    return str(root) if first == MODULE_LINE else None


def _build_info() -> bytes:
    return (
        '"""Written by the build backend: where this package was built from."""\n\n'
        f"SOURCE_ROOT = {_source_root()!r}\n"
    ).encode("utf-8")


def _dist_info(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}.dist-info"


def _wheel_name(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


class _Wheel:
    def __init__(self, path: Path):
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: List[str] = []

    def add(self, arcname: str, data: bytes) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        record = f"{dist_info}/RECORD"
        self.records.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        self.zf.writestr(info, "\n".join(self.records) + "\n")
        self.zf.close()


def _write_metadata(add, name: str, version: str) -> str:
    di = _dist_info(name, version)
    add(f"{di}/METADATA", _metadata().encode("utf-8"))
    add(f"{di}/WHEEL", b"Wheel-Version: 1.0\nGenerator: megaproof_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    add(f"{di}/top_level.txt", b"megaproof\n")
    return di


def _package_files() -> List[Path]:
    return sorted(p for p in SRC.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.name != "_build_info.py")


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _name_version()
    di = _dist_info(name, version)
    out = Path(metadata_directory)

    def add(arcname: str, data: bytes) -> None:
        p = out / arcname
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    _write_metadata(add, name, version)
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _name_version()
    filename = _wheel_name(name, version)
    w = _Wheel(Path(wheel_directory) / filename)
    for p in _package_files():
        w.add("megaproof/" + p.relative_to(SRC).as_posix(), p.read_bytes())
    w.add("megaproof/_build_info.py", _build_info())
    di = _write_metadata(w.add, name, version)
    w.close(di)
    return filename


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A PEP 660 editable wheel: a .pth file puts src/ on sys.path."""
    name, version = _name_version()
    filename = _wheel_name(name, version)
    w = _Wheel(Path(wheel_directory) / filename)
    w.add(f"_{name.replace('-', '_')}_editable.pth", (str(ROOT / "src") + "\n").encode("utf-8"))
    di = _write_metadata(w.add, name, version)
    w.close(di)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    name, version = _name_version()
    base = f"{name.replace('-', '_')}-{version}"
    filename = base + ".tar.gz"
    files = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve()] + _package_files()
    files += sorted(p for p in (ROOT / "tests").rglob("*.py"))
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for p in files:
            if p.is_file():
                tf.add(str(p), arcname=f"{base}/{p.relative_to(ROOT).as_posix()}")
        meta = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(meta)
        tf.addfile(info, io.BytesIO(meta))
    return filename
