#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 24 acceptance 1/2: a ~1,000-point timing-mode sweep, 3 zoo models (MobileNetV2,
# ResNet50 v2, YOLOv5s, int8 QDQ) x the 10 RKNPU SoCs x every core mask a SoC has (auto and the
# multi-core ones) x 3 DDR bandwidths x 3 DDR efficiencies x 3 task overheads, run locally
# with the worker pool; prints wall time and points/s. With --slurm it runs the same sweep
# through Slurm (sbatch job array; needs a reachable cluster, e.g. scripts/slurm-local.sh) and
# checks that the merged CSV and JSON are byte-identical to the local run.
#   bench/sweep_bench.sh build/sim/npusim [--slurm] [-j N] [--array-chunk K]
set -euo pipefail
NPUSIM="$(realpath "${1:?usage: bench/sweep_bench.sh NPUSIM [--slurm] [-j N] [--array-chunk K]}")"; shift
SLURM=0; JOBS=(); CHUNK=25
while [ $# -gt 0 ]; do
  case "$1" in
    --slurm) SLURM=1 ;;
    -j) JOBS=(-j "$2"); shift ;;
    --array-chunk) CHUNK="$2"; shift ;;
    *) echo "sweep_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
W="${NPUSIM_BENCH_DIR:-$(mktemp -d /tmp/npusim-sweep-bench.XXXXXX)}"
mkdir -p "$W"
[ -f "$W/zoo/yolov5s_qdq.onnx" ] || /usr/bin/python3 "$ROOT/tools/zoo/make_zoo.py" "$W/zoo" \
  --models mobilenetv2,resnet50v2,yolov5s >/dev/null
cat >"$W/bench1000.json" <<'SPEC'
{
  "name": "bench1000",
  "models": ["zoo/mobilenetv2_qdq.onnx", "zoo/resnet50v2_qdq.onnx", "zoo/yolov5s_qdq.onnx"],
  "platforms": "all",
  "core_masks": ["auto", "0_1", "0_1_2"],
  "modes": ["timing"],
  "params": {
    "memory.ddr_peak_bytes_per_s": [8e9, 16e9, 32e9],
    "memory.ddr_efficiency": [0.6, 0.7, 0.8],
    "npu.task_overhead_cycles": [500, 1000, 2000]
  }
}
SPEC
n=$("$NPUSIM" sweep "$W/bench1000.json" --list | grep -c '^ *[0-9]')
echo "sweep_bench: $n points in $W (npusim $("$NPUSIM" --version), $(nproc) CPUs)"
rm -rf "$W/local"
s=$(date +%s.%N)
"$NPUSIM" sweep "$W/bench1000.json" -o "$W/local" "${JOBS[@]}" | tail -2
e=$(date +%s.%N)
awk -v n="$n" -v s="$s" -v e="$e" 'BEGIN { printf "local: %d points, wall %.1f s, %.2f points/s\n", n, e - s, n / (e - s) }'
if [ "$SLURM" = 1 ]; then
  rm -rf "$W/slurm"
  s=$(date +%s.%N)
  "$NPUSIM" sweep "$W/bench1000.json" -o "$W/slurm" --slurm --wait --array-chunk "$CHUNK" | tail -2
  e=$(date +%s.%N)
  awk -v n="$n" -v s="$s" -v e="$e" 'BEGIN { printf "slurm: %d points, wall %.1f s, %.2f points/s\n", n, e - s, n / (e - s) }'
  cmp "$W/local/sweep.csv" "$W/slurm/sweep.csv" && cmp "$W/local/sweep.json" "$W/slurm/sweep.json" \
    && echo "slurm: merged sweep.csv and sweep.json byte-identical to the local run"
fi
echo "results: $W/local/sweep.html"
