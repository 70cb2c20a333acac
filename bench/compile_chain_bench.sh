#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compile time against graph size (issue 23: "compile quadratic in node count"): chain models of
# N ONNX nodes (int8 QDQ 1x1 convolutions on a 1x8x8x8 tensor, written with the onnx package's
# helper) imported, compiled and run in timing mode on an RKNPU profile, and checked on it. Prints CPU
# seconds (user + sys) and peak RSS of the run per size, and the growth factor per 10x nodes (linear = 10, n log n ~ 11.5,
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
printf "%-9s %-10s %-9s %-9s %-9s %s\n" nodes "file MB" "run s" "run MB" "check s" "growth (run)"
for n in "${SIZES[@]}"; do
  /usr/bin/python3 - "$T/chain_$n.onnx" "$n" <<'PY' || exit 1
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
# onnxruntime's QDQ convention: the int8 activations go through DequantizeLinear -> op ->
# QuantizeLinear; one 1x1 Conv per layer with one shared int8 weight, 3 ONNX nodes per layer.
path, n = sys.argv[1], int(sys.argv[2])
c = 8
inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"), numpy_helper.from_array(np.array(0, np.int8), "z"),
         numpy_helper.from_array((np.arange(c * c, dtype=np.int64) % 5 - 2).astype(np.int8).reshape(c, c, 1, 1), "w")]
nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"], name="q_in"),
         helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wd"], name="w_dq")]
layers = max(1, (n - 3) // 3)
for i in range(layers):
    nodes += [helper.make_node("DequantizeLinear", [f"q{i}", "s", "z"], [f"d{i}"], name=f"dq{i}"),
              helper.make_node("Conv", [f"d{i}", "wd"], [f"c{i}"], name=f"conv{i}"),
              helper.make_node("QuantizeLinear", [f"c{i}", "s", "z"], [f"q{i + 1}"], name=f"q{i}")]
nodes.append(helper.make_node("DequantizeLinear", [f"q{layers}", "s", "z"], ["y"], name="dq_out"))
shape = [1, c, 8, 8]
g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, path)
PY
  mb=$(du -m "$T/chain_$n.onnx" | cut -f1)
  /usr/bin/time -f "%U %S %M" -o "$T/time" "$NPUSIM" run -p "$PLATFORM" --mode timing "$T/chain_$n.onnx" -q >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -le 1 ] || { echo "run failed on $n nodes (exit $rc):" >&2; tail -3 "$T/err" >&2; exit 1; }
  run=$(tail -1 "$T/time" | awk '{printf "%.2f", $1 + $2}')
  rss=$(tail -1 "$T/time" | awk '{printf "%.0f", $3 / 1024}')
  /usr/bin/time -f "%U %S" -o "$T/time" "$NPUSIM" check -p "$PLATFORM" "$T/chain_$n.onnx" >"$T/out" 2>"$T/err"
  chk=$(tail -1 "$T/time" | awk '{printf "%.2f", $1 + $2}')
  growth=""
  [ -n "$prev" ] && growth=$(awk -v a="$run" -v b="$prev" 'BEGIN{ if (b > 0) printf "x%.1f", a / b }')
  printf "%-9s %-10s %-9s %-9s %-9s %s\n" "$n" "$mb" "$run" "$rss" "$chk" "$growth"
  prev=$run
  rm -f "$T/chain_$n.onnx"
done
