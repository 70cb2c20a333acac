#!/bin/sh
# SPDX-License-Identifier: MIT
# Reference executor vs onnxruntime on one model: seeded random input from npusim-ref, the same
# input through onnxruntime-node, outputs compared by compare.py (extra args passed through).
# usage: run_e2e.sh NPUSIM_REF MODEL WORKDIR [compare args...]
set -eu
ref=$1; model=$2; work=$3; shift 3
here=$(dirname "$0")
rm -rf "$work"; mkdir -p "$work"
"$ref" "$model" --seed 7 --dump-inputs "$work" --output "$work/ours.npy"
node "$here/ort_run.js" "$model" "$work/ort_" "$work/input_0.npy"
/usr/bin/python3 "$here/compare.py" "$work/ours.npy" "$work/ort_0.npy" "$@"
