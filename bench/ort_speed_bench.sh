#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Full functional simulation against onnxruntime (issue 25): ResNet50 v2, MobileNetV2 and YOLOv5s
# (QDQ int8 zoo models, tools/zoo/make_zoo.py) in `npusim run` full mode next to onnxruntime-node
# on one thread (bench/time_ort.js), as CPU time (user + sys; the least of RUNS runs, wall time is
# meaningless on a shared machine). Prints two ratios per model:
#   per inference: npusim's per-inference simulation cost (`--repeat N`, the report's
#     totals.sim_cpu_ms_per_inference, best of N) / onnxruntime's per-run process CPU time (best of N);
#   whole command: `npusim run --no-compare` (import + compile + simulate + report) / a whole
#     node process that loads onnxruntime, creates the session and runs once; cold (no compile
#     cache) and warm (`--compile-cache DIR` filled by an earlier run: import and compile skipped).
# Targets (issue 25): per inference <= 1.5x on all three; whole command ResNet50 v2 <= 1x.
#   bench/ort_speed_bench.sh NPUSIM [ZOO_DIR] [PLATFORM] [RUNS] [REPEAT]
# Without ZOO_DIR the zoo generator writes the models into a temporary directory. Needs node and
# tests/oracle/node_modules (onnxruntime-node).
set -u
NPUSIM="${1:?usage: ort_speed_bench.sh NPUSIM [ZOO_DIR] [PLATFORM] [RUNS] [REPEAT]}"
ZOO="${2:-}"
PLATFORM="${3:-rk3588}"
RUNS="${4:-3}"
REPEAT="${5:-5}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ -z "$ZOO" ]; then
  /usr/bin/python3 "$ROOT/tools/zoo/make_zoo.py" "$T" --models resnet50v2,mobilenetv2,yolov5s >/dev/null || exit 1
  ZOO="$T"
fi
command -v node >/dev/null || { echo "ort_speed_bench: node not found" >&2; exit 2; }
[ -d "$ROOT/tests/oracle/node_modules/onnxruntime-node" ] ||
  { echo "ort_speed_bench: tests/oracle/node_modules/onnxruntime-node missing (see tests/oracle)" >&2; exit 2; }

# least CMD... : least user+sys seconds over RUNS runs (exit 0 required).
least() {
  local best="" s
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%U %S" -o "$T/time" "$@" >"$T/out" 2>"$T/err" ||
      { echo "command failed: $*" >&2; tail -3 "$T/err" >&2; return 1; }
    s=$(tail -1 "$T/time" | awk '{printf "%.3f", $1 + $2}')
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$s; fi
  done
  echo "$best"
}
# least_field CMD... : the least totals.sim_cpu_ms_per_inference of RUNS reports.
least_sim() {
  local best="" s
  for _ in $(seq "$RUNS"); do
    "$@" --report "$T/r.json" >"$T/out" 2>"$T/err" || { echo "command failed: $*" >&2; tail -3 "$T/err" >&2; return 1; }
    s=$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["totals"]["sim_cpu_ms_per_inference"])' "$T/r.json")
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$s; fi
  done
  echo "$best"
}
least_ort() {
  local best="" s
  for _ in $(seq "$RUNS"); do
    node "$ROOT/bench/time_ort.js" "$@" >"$T/out" 2>"$T/err" || { echo "node failed: $*" >&2; tail -3 "$T/err" >&2; return 1; }
    s=$(grep -o '[0-9.]* ms cpu' "$T/out" | awk '{print $1}')
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$s; fi
  done
  echo "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}'; }

echo "npusim full mode ($PLATFORM) vs onnxruntime-node $(node -p "require('$ROOT/tests/oracle/node_modules/onnxruntime-node/package.json').version") (1 thread), CPU time, least of $RUNS run(s); --repeat $REPEAT"
printf "  %-12s %10s %10s %7s   %10s %10s %10s %7s %7s\n" model "sim ms/inf" "ort ms/inf" ratio "cold s" "warm s" "ort s" \
  "cold" "warm"
for m in resnet50v2 mobilenetv2 yolov5s; do
  model="$ZOO/${m}_qdq.onnx"
  shape=1x3x224x224
  [ "$m" = yolov5s ] && shape=1x3x640x640
  sim=$(least_sim "$NPUSIM" run --platform "$PLATFORM" "$model" --quiet --no-compare --repeat "$REPEAT") || exit 1
  ort=$(least_ort "$model" 10 --shape "$shape" --dtype float32) || exit 1
  whole=$(least "$NPUSIM" run --platform "$PLATFORM" "$model" --quiet --no-compare) || exit 1
  "$NPUSIM" run --platform "$PLATFORM" "$model" --quiet --no-compare --compile-cache "$T/cache" >/dev/null 2>&1 ||
    { echo "command failed: filling the compile cache for $m" >&2; exit 1; }
  warm=$(least "$NPUSIM" run --platform "$PLATFORM" "$model" --quiet --no-compare --compile-cache "$T/cache") || exit 1
  orw=$(least node "$ROOT/bench/time_ort.js" "$model" --shape "$shape" --dtype float32 --once) || exit 1
  printf "  %-12s %10s %10s %6sx   %10s %10s %10s %6sx %6sx\n" "$m" "$sim" "$ort" "$(ratio "$sim" "$ort")" "$whole" "$warm" \
    "$orw" "$(ratio "$whole" "$orw")" "$(ratio "$warm" "$orw")"
done
echo "targets (issue 25): per inference <= 1.50x on every model; whole command resnet50v2 <= 1.00x (cold)"
