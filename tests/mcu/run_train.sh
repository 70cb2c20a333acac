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
out="$("$npusim" train --platform 3066h "${args[@]}" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "on ws63 only" || { echo "FAIL: 3066H not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform ws63 "$models/float_cnn_f32.onnx" --data "$work/train_x.npy" --labels "$work/train_y.npy" 2>&1)"; rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q "training" || { echo "FAIL: model outside the training tables not refused ($rc): $out"; fail=1; }
out="$("$npusim" train --platform ws63 "$work/train_net.onnx" --data "$work/train_x.npy" --labels "$work/train_x.npy" 2>&1)"; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: float labels accepted ($rc)"; fail=1; }
exit $fail
