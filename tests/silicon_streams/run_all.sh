#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generate the silicon-producer streams (tools/streams) and run npusim decode / lint / replay on
# each, printing one row per stream: unknown registers, lint errors, tasks completed, output match.
#   tests/silicon_streams/run_all.sh BUILD_DIR        (uses BUILD_DIR/sim/npusim)
# Exit 0 when every stream passes, 1 otherwise, 2 on bad usage.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
npusim="$build/sim/npusim"
if [ ! -x "$npusim" ]; then
  echo "run_all.sh: error: $npusim not found (build the npusim target first)" >&2
  exit 2
fi
py=/usr/bin/python3
if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "run_all.sh: error: $py lacks numpy (apt install python3-numpy)" >&2
  exit 2
fi
out="$build/tests/silicon_streams/streams"
rm -rf "$out"
mkdir -p "$out"
"$py" "$root/tools/streams/make_streams.py" "$out" >/dev/null
"$py" "$here/run_stream.py" --npusim "$npusim" --streams-root "$out" --table
