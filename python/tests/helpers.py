"""Shared test helpers: the checkout's example programs and the binary."""

import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # the package under test, uninstalled

import megaproof  # noqa: E402

REPO = HERE.parent.parent
README_EXAMPLE = REPO / "cmd" / "megaproof" / "testdata" / "default.json"
AMK_TESTDATA = REPO / "schedule" / "amk" / "testdata"


def readme_example() -> dict:
    """The README's two-layer MLP (safe)."""
    return json.loads(README_EXAMPLE.read_text(encoding="utf-8"))


def racy_twin() -> dict:
    """The README's example with down.1's wait dropped."""
    p = copy.deepcopy(readme_example())
    p["name"] = "tiny-mlp-racy"
    for t in p["tasks"]:
        if t["name"] == "down.1":
            del t["before"]
    return p


def binary() -> str:
    return megaproof.find_binary()
