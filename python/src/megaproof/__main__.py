"""``python -m megaproof ARGS`` runs the megaproof binary with ARGS."""

import os
import subprocess
import sys

from ._binary import BinaryNotFound, find_binary


def main() -> None:
    try:
        binary = find_binary()
    except BinaryNotFound as e:
        print(f"megaproof: {e}", file=sys.stderr)
        sys.exit(2)
    args = [binary, *sys.argv[1:]]
    if sys.platform == "win32":
        sys.exit(subprocess.call(args))
    os.execv(binary, args)


if __name__ == "__main__":
    main()
