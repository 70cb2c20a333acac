#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quantizer vs onnxruntime (issue 14): float models written by onnx.helper (gen_quant_nets.py and
# the zoo's float nets) are quantized by `npusim quantize`; the written QDQ model must pass
# onnx.checker (full check), load and run in onnxruntime-node, and onnxruntime's outputs must
# match the reference executor's on the same model and input: with uint8 activations onnxruntime
# runs every QDQ unit as an integer kernel, so they agree exactly (1 LSB on <= 0.1% allowed, the
# zoo tests' criterion); with int8 activations onnxruntime on x86 runs some units in float
# (see tools/zoo/make_zoo.py), so differences of 1 LSB are allowed there. MobileNetV2 may differ by
# 2 LSB: single 1-LSB QLinearAdd roundings (onnxruntime's AVX-512 kernel vs the numerics library's
# AVX2-kernel arithmetic, npu_models/numerics/README.md) propagate through 17 more layers. Float
# outputs (after a float Softmax) compare with a relative tolerance of 1e-5.
#   quantize_ort_test.sh NPUSIM ZOO_DIR
set -u
NPUSIM="$1"
ZOO="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=/usr/bin/python3
ORT_RUN="$HERE/../e2e/reference/ort_run.js"
COMPARE="$HERE/../e2e/reference/compare.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }

$PY "$HERE/gen_quant_nets.py" "$T" || { echo "FAIL - cannot generate the nets"; exit 1; }
models="$T/q_yolo_block.onnx $T/q_residual.onnx $T/q_opset11.onnx"
for m in t_conv t_depthwise t_pool t_gemm t_matmul t_elementwise t_activations t_shape mobilenetv2; do
  [ -f "$ZOO/$m.onnx" ] && models="$models $ZOO/$m.onnx"
done
for m in $models; do
  b=$(basename "$m" .onnx)
  $PY -c "
import numpy as np, onnx
m = onnx.load('$m')
shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
np.save('$T/${b}_in.npy', np.random.RandomState(17).uniform(-1, 1, shape).astype(np.float32))"
  for scheme in asymmetric_quantized-u8 asymmetric_quantized-8; do
    q="$T/${b}_${scheme}.onnx"
    "$NPUSIM" quantize "$m" -o "$q" --scheme "$scheme" --seed 3 >"$T/o" 2>"$T/e"; rc=$?
    check "$b $scheme: quantize exits 0" "[ $rc -eq 0 ]"
    check "$b $scheme: onnx.checker full check" "$PY -c \"import onnx; onnx.checker.check_model(onnx.load('$q'), full_check=True)\""
    node "$ORT_RUN" "$q" "$T/${b}_ort_" "$T/${b}_in.npy" 2>"$T/e"; rc=$?
    check "$b $scheme: onnxruntime loads and runs it" "[ $rc -eq 0 ] || { cat '$T/e'; false; }"
    "$NPUSIM" run --reference "$q" --input "$T/${b}_in.npy" --output "$T/${b}_ours.npy" >/dev/null 2>&1
    lsb="--lsb 1 --max-frac 0.001"
    [ "$scheme" = asymmetric_quantized-8 ] && lsb="--lsb 1 --max-frac 1"
    [ "$b" = mobilenetv2 ] && lsb="--lsb 2 --max-frac 1"
    k=0
    while [ -f "$T/${b}_ort_$k.npy" ]; do
      ours="$T/${b}_ours.npy"
      [ $k -gt 0 ] && ours="$T/${b}_ours_$k.npy"
      # An output written by a DequantizeLinear compares in LSB, a float one (Softmax) by tolerance.
      args=$($PY -c "
import onnx
g = onnx.load('$q').graph
out = g.output[$k].name
print('$lsb' if any(n.op_type == 'DequantizeLinear' and out in n.output for n in g.node) else '--rtol 1e-5')")
      res=$($PY "$COMPARE" "$ours" "$T/${b}_ort_$k.npy" $args); rc=$?
      check "$b $scheme output $k: reference executor vs onnxruntime ($res)" "[ $rc -eq 0 ]"
      k=$((k + 1))
    done
    rm -f "$T/${b}_ort_"*.npy
  done
done
echo "$fails failure(s)"
[ $fails -eq 0 ]
