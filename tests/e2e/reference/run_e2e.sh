#!/bin/sh
# SPDX-License-Identifier: MIT
# Reference executor vs onnxruntime on one model: seeded random input from npusim-ref, the same
# input through onnxruntime-node, every output compared by compare.py (extra args passed through).
# usage: run_e2e.sh NPUSIM_REF MODEL WORKDIR [compare args...]
set -eu
ref=$1; model=$2; work=$3; shift 3
here=$(dirname "$0")
rm -rf "$work"; mkdir -p "$work"
"$ref" "$model" --seed 7 --dump-inputs "$work" --output "$work/ours.npy"
node "$here/ort_run.js" "$model" "$work/ort_" "$work/input_0.npy"
k=0
while [ -f "$work/ort_$k.npy" ]; do
  if [ "$k" -eq 0 ]; then ours="$work/ours.npy"; else ours="$work/ours_$k.npy"; fi
  printf 'output %s: ' "$k"
  /usr/bin/python3 "$here/compare.py" "$ours" "$work/ort_$k.npy" "$@"
  k=$((k + 1))
done
