#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 21 acceptance 2: a float ONNX CNN quantized for ws63 by the compiler's quantizer (seed 000:
# int8 comes from the toolchain's own full quantization of a float model) runs on the SystemC MCU
# platform; the int8 run equals the reference executor bit for bit and its output is within the
# stated tolerance of the float model (cosine >= 0.99). Usage: run_quantize.sh NPUSIM MODELS_DIR
set -u
npusim="$1"; work="$2"; fail=0
for p in ws63 3066h; do
  out="$("$npusim" run --platform $p "$work/float_cnn_f32.onnx" --quantize int8 --report "$work/q_$p.json" 2>&1)"; rc=$?
  echo "== $p -> $rc"; echo "$out" | grep -E "^(quantized|check|total|output|error|npusim)"
  [ "$rc" = 0 ] || { echo "FAIL: exit $rc"; fail=1; }
  echo "$out" | grep -q "equal to the reference" || { echo "FAIL: not equal to the reference"; fail=1; }
  echo "$out" | grep -q "vs the float model: cosine .* within the tolerance" || { echo "FAIL: outside the float tolerance"; fail=1; }
  grep -q '"float_model_cosine"' "$work/q_$p.json" || { echo "FAIL: no cosine in the report"; fail=1; }
done
# A model quantized outside the toolchain (onnxruntime QDQ) is refused with the seed's words ...
out="$("$npusim" run --platform ws63 "$work/lenet5_int8.onnx" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "not the onnxruntime quantization scenario" || { echo "FAIL: QDQ model not refused ($rc)"; fail=1; }
# ... in check as in run.
out="$("$npusim" check --platform ws63 "$work/lenet5_int8.onnx" 2>&1)"; rc=$?
[ "$rc" = 11 ] && echo "$out" | grep -q "not the onnxruntime quantization scenario" || { echo "FAIL: check does not refuse the QDQ model ($rc)"; fail=1; }
# --quantize on an already quantized model is an error.
"$npusim" run --platform ws63 "$work/lenet5_int8.onnx" --quantize int8 >/dev/null 2>&1; rc=$?
[ "$rc" != 0 ] || { echo "FAIL: --quantize accepted a quantized model"; fail=1; }
exit $fail
