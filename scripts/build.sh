#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build npusim (Release, ccache, warnings as errors). Incremental on a second run.
#   scripts/build.sh [--sanitize] [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build
EXTRA=()
if [ "${1:-}" = "--sanitize" ]; then
  shift; BUILD_DIR=build-asan
  # -g1 (line tables: enough for sanitizer stack traces) compiles ~30% faster than -g; CI builds
  # the whole tree twice on 2 cores.
  EXTRA=(-DNPUSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
         "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
fi
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DNPUSIM_WERROR=ON "${EXTRA[@]}"
fi
cmake --build "$BUILD_DIR" --parallel "${NPUSIM_JOBS:-2}" ${1:+--target "$@"}
