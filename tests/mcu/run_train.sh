#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 21 acceptance 4: npusim train on ws63 reduces the loss of a small conv net on a synthetic task
# over 5 epochs, on the SystemC MCU platform, bit-identical to the host build of the trainer; 3066H
# and models outside the training tables are refused. Usage: run_train.sh NPUSIM GEN WORKDIR ONNX_MODELS
set -u
npusim="$1"; gen="$2"; work="$3"; models="$4"; fail=0
/usr/bin/python3 "$gen" "$work" || { echo "FAIL: generator"; exit 1; }
args=("$work/train_net.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy")
out="$("$npusim" train --platform ws63 "${args[@]}" --epochs 5 --lr 0.01 2>&1)"; rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; fail=1; }
first=$(echo "$out" | awk '$1 == "1" && NF >= 6 {print $2}')
last=$(echo "$out" | awk '$1 == "5" && NF >= 6 {print $2}')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a != "" && b != "" && b < a / 2) }' || { echo "FAIL: loss $first -> $last did not halve"; fail=1; }
echo "$out" | grep -q "bit-identical to the ISS run" || { echo "FAIL: host and ISS trainers differ"; fail=1; }
# The residual variant (Add, Pad, Concat, two convolutions: a DAG).
out="$("$npusim" train --platform ws63 "$work/train_resnet.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" --epochs 5 --lr 0.01 2>&1)"; rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: residual exit $rc"; fail=1; }
first=$(echo "$out" | awk '$1 == "1" && NF >= 6 {print $2}')
last=$(echo "$out" | awk '$1 == "5" && NF >= 6 {print $2}')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a != "" && b != "" && b < a / 2) }' || { echo "FAIL: residual loss $first -> $last did not halve"; fail=1; }
echo "$out" | grep -q "bit-identical to the ISS run" || { echo "FAIL: residual host and ISS trainers differ"; fail=1; }
# The other FP32 rows (Slice, Transpose, broadcast Div, ReduceMean/ReduceSum, MatMul + bias) and QAS INT8
# (the toolchain's quantization of a 3x3 conv / MaxPool / FC net, --quantize int8): loss falls over 5
# epochs, host == ISS.
for job in "train_ops.onnx --lr 0.05" "train_qas.onnx --lr 0.01 --quantize int8"; do
  set -- $job
  out="$("$npusim" train --platform ws63 "$work/$1" --data "$work/train_x.npy" --labels "$work/train_y.npy" --epochs 5 "${@:2}" 2>&1)"; rc=$?
  echo "$out"
  [ "$rc" = 0 ] || { echo "FAIL: $job exit $rc"; fail=1; }
  first=$(echo "$out" | awk '$1 == "1" && NF >= 6 {print $2}')
  last=$(echo "$out" | awk '$1 == "5" && NF >= 6 {print $2}')
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(a != "" && b != "" && b < a / 2) }' || { echo "FAIL: $job loss $first -> $last did not halve"; fail=1; }
  echo "$out" | grep -q "bit-identical to the ISS run" || { echo "FAIL: $job host and ISS trainers differ"; fail=1; }
done
set -- "$npusim" "$gen" "$work" "$models"
echo "$out" | grep -q "QAS INT8" || { echo "FAIL: --quantize int8 did not train QAS INT8"; fail=1; }
# A QDQ model (onnxruntime's quantization scenario) is refused; --quantize fp16 does not apply.
out="$("$npusim" train --platform ws63 "$models/lenet5_int8.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "onnxruntime quantization scenario" || { echo "FAIL: QDQ model not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform ws63 "$work/train_qas.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" --quantize fp16 2>&1)"; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --quantize fp16 accepted ($rc)"; fail=1; }
# QAS INT8 rows are 3x3 group-1 convolutions: the depthwise net quantized is refused naming the rule.
out="$("$npusim" train --platform ws63 "$work/train_net.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" --quantize int8 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "3x3 group-1" || { echo "FAIL: depthwise QAS not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform 3066h "${args[@]}" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "on ws63 only" || { echo "FAIL: 3066H not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform ws63 "$models/float_cnn_f32.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "training" || { echo "FAIL: model outside the training tables not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform ws63 "$work/train_net.onnx" --data "$work/train_x.npy" --labels "$work/train_x.npy" 2>&1)"; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: float labels accepted ($rc)"; fail=1; }
exit $fail
