#!/bin/bash
# SPDX-License-Identifier: MIT
# npusim-check end to end (issue 4 acceptance 3 and 5): the illegal node is named with its rule,
# exit codes are distinct, errors are clear. Usage: e2e_check.sh NPUSIM_CHECK WORKDIR
set -u
TOOL=$1
W=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W"
fail() { echo "FAIL: $*"; exit 1; }
/usr/bin/python3 "$HERE/make_models.py" "$W" || fail "model generation"

out=$("$TOOL" check --platform RK3588 "$W/legal.onnx"); rc=$?
[ $rc -eq 0 ] || fail "legal model on RK3588: rc=$rc"; echo "$out" | grep -q "relu_1 (Relu): fused" || fail "fusion: $out"

out=$("$TOOL" check --platform RK3588 "$W/conv33.onnx"); rc=$?
[ $rc -eq 10 ] || fail "conv33 on RK3588 should fall back (10), rc=$rc"
echo "$out" | grep -q "conv_12 (Conv): kernel_w = 33 outside \[1, 31\] — RK3588 Convolution, RKNN Compiler V2.3.2 operator spec §3.2.5 Convolution" \
    || fail "conv33 message: $out"

out=$("$TOOL" check --platform tnpuv2 "$W/concat_batch.onnx"); rc=$?
[ $rc -eq 11 ] || fail "batch concat on tnpuv2 should be unsupported (11), rc=$rc"
echo "$out" | grep -q "concat_batch (Concat): 4D feature tensors: concat only along H, W or C.*tnpuv2 Concat, uranus-tnpuv2 operator list §Concat" \
    || fail "concat message: $out"

"$TOOL" check --platform RK2118 "$W/legal.onnx" > /dev/null; rc=$?
[ $rc -eq 12 ] || fail "RK2118 should say not in the seed (12), rc=$rc"

err=$("$TOOL" check --platform NOPE "$W/legal.onnx" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "unknown platform rc=$rc"; echo "$err" | grep -q "unknown platform 'NOPE'" || fail "$err"

printf 'junk' > "$W/junk.onnx"
err=$("$TOOL" check --platform RK3588 "$W/junk.onnx" 2>&1 >/dev/null); rc=$?
[ $rc -eq 3 ] || fail "malformed model rc=$rc"; echo "$err" | grep -q "cannot load model" || fail "$err"

err=$("$TOOL" check --platform RK3588 "$W/dynamic.onnx" 2>&1 >/dev/null); rc=$?
[ $rc -eq 3 ] || fail "dynamic model rc=$rc: $err"
echo "$err" | grep -qi "dynamic\|input-shape" || fail "dynamic message: $err"
"$TOOL" check --platform RK3588 --input-shape x=1x8x64x64 "$W/dynamic.onnx" > /dev/null || fail "--input-shape fixes it"

out=$("$TOOL" check --all-platforms "$W/legal.onnx" "$W/conv33.onnx" "$W/concat_batch.onnx"); rc=$?
[ $rc -eq 11 ] || fail "matrix rc=$rc"
echo "$out" | head -1 | grep -q "RK3588.*tnpuv2.*ws63" || fail "matrix header: $out"
echo "$out" | grep -q "conv33.onnx .*CPU:1" || fail "matrix row: $out"

"$TOOL" check --platform RK3588 --json "$W/conv33.onnx" | /usr/bin/python3 -c \
    'import json,sys; d=json.load(sys.stdin); v=[n for n in d["nodes"] if n["name"]=="conv_12"][0]; assert v["verdict"]=="CPU fallback", v; assert any("kernel_w = 33" in x["text"] for x in v["violations"])' \
    || fail "json"

out=$("$TOOL" specs --coverage) || fail "specs --coverage"
echo "$out" | grep -q "3.4.33 Div" || fail "coverage lists truncated Div"
echo "PASS"
