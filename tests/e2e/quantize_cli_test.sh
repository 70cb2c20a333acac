#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The quantizer on the command line (issue 14): `npusim quantize`, `run/check --quantize
# int8|fp16|none`, `--calibration`, `--calibration-method`, their errors (one line, exit codes of
# cli.md), the reports, and that `run --quantize int8` runs exactly the model `quantize` writes.
#   quantize_cli_test.sh NPUSIM
set -u
NPUSIM="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }
one_line() { [ "$(wc -l <"$1")" -eq 1 ] && grep -q "^npusim: error: " "$1"; }

$PY "$HERE/../oracle/gen_quant_nets.py" "$T" || { echo "FAIL - cannot generate the nets"; exit 1; }
M="$T/q_yolo_block.onnx"
R="$T/q_residual.onnx"
$PY -c "
import numpy as np
rng = np.random.RandomState(4)
np.save('$T/cal.npy', rng.uniform(0, 1, (6, 3, 16, 16)).astype(np.float32))
np.save('$T/bad.npy', rng.uniform(0, 1, (1, 3, 15, 16)).astype(np.float32))"

# quantize: writes a loadable model, reports accuracy in text/JSON/CSV, deterministic.
"$NPUSIM" quantize "$M" -o "$T/q1.onnx" --calibration "$T/cal.npy" --accuracy-report "$T/acc.json" --csv "$T/acc.csv" \
  >"$T/o1" 2>"$T/e1"; rc=$?
check "quantize exits 0, quiet on stderr with calibration data" "[ $rc -eq 0 ] && [ ! -s '$T/e1' ]"
check "text report: summary, per-layer table, worst layer" \
  "grep -q '^quantized asymmetric_quantized-8' '$T/o1' && grep -q 'entire cos' '$T/o1' && grep -q '^worst layer: ' '$T/o1'"
check "accuracy JSON and CSV: one row per quantized activation, cosines in (0, 1]" "$PY - '$T/acc.json' '$T/acc.csv' <<'PY'
import csv, json, sys
a = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert a['samples'] == 6 and not a['seeded_calibration'] and 'warning' not in a, a['calibration']
assert len(rows) == len(a['layers']) > 5
assert all(0 < l['entire']['cosine'] <= 1 + 1e-9 for l in a['layers'])
assert a['worst']['tensor'] in [r['tensor'] for r in rows]
assert abs(min(float(r['entire_cosine']) for r in rows) - a['worst']['entire_cosine']) < 1e-8
PY"
mkdir "$T/calib"
$PY -c "
import numpy as np
x = np.load('$T/cal.npy')
np.save('$T/calib/a.npy', x[:4]); np.save('$T/calib/b.npy', x[4:5])"
"$NPUSIM" quantize "$M" -o "$T/q2.onnx" --calibration "$T/calib" >"$T/o2" 2>&1
check "a folder of .npy files (4 samples + 1 + the rest) calibrates like one file of all" \
  "grep -q '5 samples from 2 .npy files' '$T/o2' && $PY -c \"
import numpy as np
x = np.load('$T/cal.npy')
np.save('$T/calib/c.npy', x[5:6])\" && \"$NPUSIM\" quantize '$M' -o '$T/q2.onnx' --calibration '$T/calib' >/dev/null 2>&1 && \
   $PY -c \"import onnx; a, b = (onnx.load(p).graph for p in ('$T/q1.onnx', '$T/q2.onnx')); assert a == b\""
"$NPUSIM" quantize "$M" -o "$T/q3.onnx" >"$T/o3" 2>"$T/e3"
check "no calibration data: seeded default, warning in the report and on stderr" \
  "grep -q 'seeded random data' '$T/o3' && grep -q 'warning: no --calibration data' '$T/o3' && grep -q 'warning' '$T/e3'"
"$NPUSIM" quantize "$M" -o "$T/q4.onnx" >/dev/null 2>&1
check "same inputs, same bytes" "cmp -s '$T/q3.onnx' '$T/q4.onnx'"
for meth in kl mmse; do
  "$NPUSIM" quantize "$R" -o "$T/r_$meth.onnx" --calibration-method $meth --accuracy-report "$T/r_$meth.json" >/dev/null 2>&1; rc=$?
  check "--calibration-method $meth" "[ $rc -eq 0 ] && $PY -c \"import json; assert json.load(open('$T/r_$meth.json'))['calibration_method'] == '$meth'\""
done

# quantize: errors.
"$NPUSIM" quantize "$M" -o "$M" >"$T/o" 2>"$T/e"; rc=$?
check "output path = input: exit 2, one line" "[ $rc -eq 2 ] && one_line '$T/e' && grep -q 'is also an input (model' '$T/e'"
"$NPUSIM" quantize "$T/q1.onnx" -o "$T/qq.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "already quantized: exit 2, one line naming why" "[ $rc -eq 2 ] && one_line '$T/e' && grep -q 'already quantized' '$T/e'"
"$NPUSIM" quantize "$M" -o "$T/x.onnx" --calibration "$T/bad.npy" >"$T/o" 2>"$T/e"; rc=$?
check "calibration data of the wrong shape: exit 2 naming the file and the input" \
  "[ $rc -eq 2 ] && one_line '$T/e' && grep -q \"bad.npy' has shape 1x3x15x16, input 'x' is 1x3x16x16\" '$T/e'"
"$NPUSIM" quantize "$M" -o "$T/x.onnx" --calibration-method entropy >"$T/o" 2>"$T/e"; rc=$?
check "unknown calibration method: exit 2" "[ $rc -eq 2 ] && one_line '$T/e' && grep -q 'minmax, kl or mmse' '$T/e'"
"$NPUSIM" quantize "$M" -o "$T/x.onnx" --quantize fp16 >"$T/o" 2>"$T/e"; rc=$?
check "quantize --quantize fp16 does not apply: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" quantize "$T/none.onnx" -o "$T/x.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "missing model: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
check "nothing written on error" "[ ! -e '$T/x.onnx' ]"

# run: int8 in memory runs exactly the written model; none on the CPU; float refused without.
"$NPUSIM" run -p rk3588 "$M" --quantize int8 --calibration "$T/cal.npy" --report "$T/ri.json" -q >"$T/ri.txt" 2>"$T/e"; rc=$?
"$NPUSIM" run -p rk3588 "$T/q1.onnx" --report "$T/rf.json" -q >"$T/rf.txt" 2>&1
check "run --quantize int8: exit 0, NPU layers, isolated check clean" "[ $rc -eq 0 ] && $PY - '$T/ri.json' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r['ok'] and r['totals']['npu_layers'] >= 5, r['totals']
assert r['isolated_check']['layers_worse'] == 0
npu = sum(l['macs'] for l in r['layers'] if l['unit'] == 'NPU')
assert npu == sum(l['macs'] for l in r['layers']), 'every MAC on the NPU'
q = r['quantization']
assert q['accuracy']['layers'] and q['accuracy']['worst']['tensor']
assert any('--quantize int8' in n for n in r['notes'])
PY"
check "run --quantize int8 = run of the model quantize wrote (same layers and cycles)" "$PY - '$T/ri.json' '$T/rf.json' <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: [(l['name'], l['unit'], l['tasks'], l['cycles']) for l in r['layers']]
assert key(a) == key(b) and a['totals']['latency_ps'] == b['totals']['latency_ps']
PY"
check "run --quantize int8: accuracy section in the text report" "grep -q '^quantization accuracy' '$T/ri.txt' && grep -q '^worst layer' '$T/ri.txt'"
"$NPUSIM" run -p rk3588 "$R" --quantize none --report "$T/rn.json" -q >"$T/rn.txt" 2>&1; rc=$?
check "run --quantize none: every layer on the host CPU, the report says so" "[ $rc -eq 0 ] && grep -q 'note: --quantize none' '$T/rn.txt' && $PY -c \"
import json; r = json.load(open('$T/rn.json')); assert r['totals']['npu_layers'] == 0 and r['totals']['cpu_layers'] > 0\""
"$NPUSIM" run -p rk3588 "$R" --report "$T/rf.json" -q >"$T/rf.txt" 2>&1; rc=$?
check "float model without --quantize: runs in fp16 on the NPU (RKNN's default), the report says so, layers checked" \
  "[ $rc -eq 0 ] && grep -q 'note: the float model runs in fp16 on the NPU' '$T/rf.txt' && $PY -c \"
import json; r = json.load(open('$T/rf.json')); t = r['totals']
assert t['npu_layers'] > 0, t
assert all(l.get('cpu_reason') == 'vendor rule' for l in r['layers'] if l['unit'] == 'CPU'), r['layers']
assert all('fp16' in l['note'] and l['fp16_check']['ok'] for l in r['layers'] if l['unit'] == 'NPU'), r['layers']\""
"$NPUSIM" run -p rk3588 "$R" --quantize fp16 -q >"$T/o" 2>&1; rc=$?
check "--quantize fp16: the same fp16 run, exit 0" "[ $rc -eq 0 ] && grep -q 'note: --quantize fp16: the float model runs in fp16' '$T/o'"
"$NPUSIM" run -p rk3588 "$R" --mode timing -q >"$T/o" 2>&1; rc=$?
check "float model in timing mode: fp16 on the NPU" "[ $rc -eq 0 ] && grep -q 'runs in fp16 on the NPU' '$T/o'"
"$NPUSIM" run -p rv1106 "$R" >"$T/o" 2>"$T/e"; rc=$?
check "SoC without an fp16 path: exit 4 asking for --quantize int8" \
  "[ $rc -eq 4 ] && one_line '$T/e' && grep -q 'no fp16 path' '$T/e' && grep -q -- '--quantize int8' '$T/e'"
"$NPUSIM" run -p rk3588 "$T/q1.onnx" --quantize int8 >"$T/o" 2>"$T/e"; rc=$?
check "run --quantize on a quantized model: exit 2" "[ $rc -eq 2 ] && one_line '$T/e' && grep -q 'already quantized' '$T/e'"
"$NPUSIM" run -p rk3588 "$R" --calibration "$T/cal.npy" >"$T/o" 2>"$T/e"; rc=$?
check "--calibration without --quantize int8: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" run -p rk3588 "$R" --quantize int4 >"$T/o" 2>"$T/e"; rc=$?
check "--quantize int4: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" run --reference "$R" --quantize int8 >"$T/o" 2>"$T/e"; rc=$?
check "--quantize with --reference does not apply: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" run -p rk3588 "$R" --quantize int8 --mode timing -q >"$T/rt.txt" 2>&1; rc=$?
check "run --quantize int8 --mode timing" "[ $rc -eq 0 ] && grep -q 'timing mode' '$T/rt.txt'"

# check: int8 checks the QDQ model it quantizes to; fp16 refused where the SoC has no fp16 path.
"$NPUSIM" check -p rk3588 "$M" --quantize int8 >"$T/c.txt" 2>"$T/ce"; rc=$?
check "check --quantize int8: every node on the NPU or fused, note on stderr" \
  "[ $rc -eq 0 ] && grep -q 'checked as the int8 QDQ model' '$T/ce' && grep -q ' 0 CPU fallback, 0 unsupported' '$T/c.txt'"
"$NPUSIM" check -p rk3588 "$M" --quantize int8 --json >"$T/c.json" 2>/dev/null
check "check --quantize int8 --json: stdout is JSON" "$PY -c \"import json; json.load(open('$T/c.json'))\""
"$NPUSIM" check -p rv1106 "$M" --quantize fp16 >"$T/o" 2>"$T/e"; rc=$?
check "check --quantize fp16 on rv1106: exit 4" "[ $rc -eq 4 ] && one_line '$T/e' && grep -q 'no fp16 path' '$T/e' && grep -q 'quantize it with --quantize int8' '$T/e'"
"$NPUSIM" check -p rk3588 "$M" --quantize none >"$T/o" 2>"$T/e"; rc=$?
check "check --quantize none: does not apply, exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" check -p rk3588 "$T/q1.onnx" --quantize int8 >"$T/o" 2>"$T/e"; rc=$?
check "check --quantize on a quantized model: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"
"$NPUSIM" check -p rk3588 "$M" --quantize int8 --calibration "$T/bad.npy" >"$T/o" 2>"$T/e"; rc=$?
check "check with bad calibration data: exit 2" "[ $rc -eq 2 ] && one_line '$T/e'"

echo "$fails failure(s)"
[ $fails -eq 0 ]
