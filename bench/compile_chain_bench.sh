#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compile time against graph size (issue 23: "compile quadratic in node count"): chain models of
# N nodes (Relu / Sigmoid alternating on a 1x8x8x8 float tensor, written with the onnx package's
# helper) compiled and run in timing mode on an RKNPU profile, and checked on it. Prints CPU
# seconds (user + sys) per size and the growth factor per 10x nodes (linear = 10, n log n ~ 11.5,
# quadratic = 100). Budget: 10^6 nodes <= 60 s CPU.
#   bench/compile_chain_bench.sh NPUSIM [PLATFORM] [SIZES...]     (default sizes: 10000 100000 1000000)
set -u
NPUSIM="${1:?usage: compile_chain_bench.sh NPUSIM [PLATFORM] [SIZES...]}"
PLATFORM="${2:-rk3588}"
shift $(( $# >= 2 ? 2 : 1 ))
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000 1000000)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
prev=""
printf "%-9s %-10s %-9s %-9s %s\n" nodes "file MB" "run s" "check s" "growth (run)"
for n in "${SIZES[@]}"; do
  /usr/bin/python3 - "$T/chain_$n.onnx" "$n" <<'PY' || exit 1
import sys
import onnx
from onnx import TensorProto, helper
path, n = sys.argv[1], int(sys.argv[2])
nodes = [helper.make_node("Relu" if i % 2 == 0 else "Sigmoid", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(n)]
shape = [1, 8, 8, 8]
g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, shape)],
                      [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, shape)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, path)
PY
  mb=$(du -m "$T/chain_$n.onnx" | cut -f1)
  /usr/bin/time -f "%U %S" -o "$T/time" "$NPUSIM" run -p "$PLATFORM" --mode timing "$T/chain_$n.onnx" -q >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -le 1 ] || { echo "run failed on $n nodes (exit $rc):" >&2; tail -3 "$T/err" >&2; exit 1; }
  run=$(tail -1 "$T/time" | awk '{printf "%.2f", $1 + $2}')
  /usr/bin/time -f "%U %S" -o "$T/time" "$NPUSIM" check -p "$PLATFORM" "$T/chain_$n.onnx" >"$T/out" 2>"$T/err"
  chk=$(tail -1 "$T/time" | awk '{printf "%.2f", $1 + $2}')
  growth=""
  [ -n "$prev" ] && growth=$(awk -v a="$run" -v b="$prev" 'BEGIN{ if (b > 0) printf "x%.1f", a / b }')
  printf "%-9s %-10s %-9s %-9s %s\n" "$n" "$mb" "$run" "$chk" "$growth"
  prev=$run
  rm -f "$T/chain_$n.onnx"
done
