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
  # Leak checking is opt-in (NPUSIM_LSAN=1): LeakSanitizer stops the world with a ptrace-based
  # tracer, which fails at random in ptrace-restricted containers ("LeakSanitizer has encountered
  # a fatal error ... does not work under ptrace"); on the CI machine that aborted 8 passing
  # tests. Address and undefined-behaviour checks stay on and abort on the first error.
  export ASAN_OPTIONS="detect_leaks=${NPUSIM_LSAN:-0}:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  scripts/build.sh --sanitize
else
  scripts/build.sh
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --parallel "${NPUSIM_JOBS:-2}" --timeout 600
