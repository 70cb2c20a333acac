#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Whole-model simulation speed (issue 6, acceptance 4): ResNet50 v2 int8 (QDQ zoo model) on a
# RKNPU profile with `npusim run` in full and timing mode, against the reference executor
# (`npusim run --reference`) on the same model, all as whole commands (import included).
# CPU seconds (user + sys, the least of N runs: wall time is meaningless on a shared machine).
#   bench/model_run_bench.sh NPUSIM [MODEL.onnx] [PLATFORM] [RUNS]
# Without MODEL the zoo generator writes resnet50v2_qdq.onnx into a temporary directory.
# Budgets (issue 6): full mode <= 3x the reference executor, timing mode <= 0.3 s.
set -u
NPUSIM="${1:?usage: model_run_bench.sh NPUSIM [MODEL.onnx] [PLATFORM] [RUNS]}"
MODEL="${2:-}"
PLATFORM="${3:-rk3588}"
RUNS="${4:-3}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ -z "$MODEL" ]; then
  ROOT="$(cd "$(dirname "$0")/.." && pwd)"
  /usr/bin/python3 "$ROOT/tools/zoo/make_zoo.py" "$T" --models resnet50v2 >/dev/null || exit 1
  MODEL="$T/resnet50v2_qdq.onnx"
fi

# cpu_seconds CMD... : least user+sys over RUNS runs.
cpu_seconds() {
  local best="" s
  for _ in $(seq "$RUNS"); do
    # exit 1 (a numerics mismatch found by the run) still times the run; 2 and up is a failure
    /usr/bin/time -f "%U %S" -o "$T/time" "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    [ $rc -le 1 ] || { echo "command failed (exit $rc): $*" >&2; tail -3 "$T/err" >&2; return 1; }
    [ $rc -eq 0 ] || echo "note: exit $rc from: $*" >&2
    s=$(tail -1 "$T/time" | awk '{printf "%.2f", $1 + $2}')
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$s; fi
  done
  echo "$best"
}

ref=$(cpu_seconds "$NPUSIM" run --reference "$MODEL" --output "$T/ref.npy") || exit 1
full=$(cpu_seconds "$NPUSIM" run --platform "$PLATFORM" "$MODEL" --quiet --no-compare) || exit 1
latency=$(grep -o 'latency [0-9.]* ms' "$T/out")
checked=$(cpu_seconds "$NPUSIM" run --platform "$PLATFORM" "$MODEL" --quiet) || exit 1
timing=$(cpu_seconds "$NPUSIM" run --platform "$PLATFORM" "$MODEL" --mode timing) || exit 1
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}'; }
echo "model $(basename "$MODEL") on $PLATFORM ($latency simulated), CPU seconds, least of $RUNS run(s):"
printf "  %-46s %6s s\n" "reference executor (npusim run --reference)" "$ref"
printf "  %-46s %6s s  %sx reference (budget 3x)\n" "full mode (--no-compare)" "$full" "$(ratio "$full" "$ref")"
printf "  %-46s %6s s  %sx reference\n" "full mode + reference and per-layer checks" "$checked" "$(ratio "$checked" "$ref")"
printf "  %-46s %6s s  (budget 0.3 s)\n" "timing mode" "$timing"
# Where the time goes (one more run each; NPUSIM_PHASE_TIMES: process CPU seconds per phase).
phases() {
  NPUSIM_PHASE_TIMES=1 "$@" 2>&1 >/dev/null | awk '/^npusim: phase/ {printf " %s %s", $3, $4}'
}
echo "  phases, CPU s (one run):"
echo "    full mode:  $(phases "$NPUSIM" run --platform "$PLATFORM" "$MODEL" --quiet --no-compare)"
echo "    timing:     $(phases "$NPUSIM" run --platform "$PLATFORM" "$MODEL" --mode timing)"
