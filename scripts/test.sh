#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 2: install packages, build everything, run the whole test suite through ctest.
#   scripts/test.sh              Release build in build/
#   scripts/test.sh --sanitize   ASan+UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_DIR=build
if [ "${1:-}" = "--sanitize" ]; then
  BUILD_DIR=build-asan
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  scripts/build.sh --sanitize
else
  scripts/build.sh
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --parallel "${NPUSIM_JOBS:-2}" --timeout 600
