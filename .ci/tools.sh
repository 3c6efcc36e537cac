#!/usr/bin/env bash
# Installs the programs the browser and Graphviz tests drive, when absent:
# Debian's chromium (cmd/megaproof's HTML report test) and graphviz (the
# dot --focus layout test). Quiet, and a no-op where both are present.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo ".ci/tools.sh: cannot install ${need[*]} (not root, or no apt-get)" >&2
	exit 0
fi
echo ".ci/tools.sh: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${need[@]}" >/dev/null
