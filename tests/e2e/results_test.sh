#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Results for CI (issue 17 acceptance 1): --output / --output-dir / --expect --atol --rtol on NPU
# model runs, MCU runs and reference runs, and --dump-layers. The golden comes from the reference
# executor (itself checked against onnxruntime by tests/oracle); every figure the metric line
# prints (max/mean |diff|, cosine, exact and within counts) is recomputed here with numpy from the
# written .npy files, numpy.allclose's rule being the tolerance.
# Usage: results_test.sh NPUSIM ZOO_DIR
set -u
NPUSIM="$1"; ZOO="$2"; PY=/usr/bin/python3
HERE="$(cd "$(dirname "$0")" && pwd)"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }
MNV2="$ZOO/mobilenetv2_qdq.onnx"
# Recomputes the metric line of $1 (text output) for output file $2 against golden $3, tolerance $4 $5.
metrics() {
  $PY - "$@" <<'PY'
import re, sys
import numpy as np
text, got, want, atol, rtol = open(sys.argv[1]).read(), np.load(sys.argv[2]), np.load(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
m = re.search(r"^expect '[^']+' vs \S+: (\d+) values, max \|diff\| (\S+), mean \|diff\| (\S+), cosine (\S+), (\d+) exact, (\d+) within .* -> (pass|FAIL)", text, re.M)
assert m, text
g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
d = np.abs(g - w)
cos = g @ w / np.sqrt((g @ g) * (w @ w))
within = int(np.sum(d <= atol + rtol * np.abs(w)))
assert int(m[1]) == w.size, (m[1], w.size)
assert abs(float(m[2]) - d.max()) <= 1e-5 * max(1, d.max()), (m[2], d.max())
assert abs(float(m[3]) - d.mean()) <= 1e-5 * max(1, d.mean()), (m[3], d.mean())
assert abs(float(m[4]) - cos) <= 2e-6, (m[4], cos)
assert int(m[5]) == int(np.sum(d == 0)), (m[5], np.sum(d == 0))
assert int(m[6]) == within, (m[6], within)
assert (m[7] == "pass") == np.allclose(g, w, rtol=rtol, atol=atol), m[7]
print(f"    numpy: max {d.max():.6g} mean {d.mean():.6g} cosine {cos:.6f} exact {int(np.sum(d == 0))} within {within}")
PY
}

# Reference run: golden written only when asked, and its own --expect is exact.
(cd "$T" && "$NPUSIM" run --reference "$MNV2" >"$T/ref0.txt" 2>&1); rc=$?
check "reference run without --output writes nothing" "[ $rc -eq 0 ] && [ -z \"\$(ls '$T' | grep -v ref0.txt)\" ]"
"$NPUSIM" run --reference "$MNV2" --output "$T/golden.npy" >"$T/ref.txt" 2>&1; rc=$?
check "reference --output: exit 0, golden.npy written" "[ $rc -eq 0 ] && [ -s '$T/golden.npy' ]"
"$NPUSIM" run --reference "$MNV2" --expect "$T/golden.npy" >"$T/ref2.txt" 2>&1; rc=$?
check "reference --expect its own golden: exit 0, every value exact" \
  "[ $rc -eq 0 ] && grep -q \"^expect 'output' vs .*: 1000 values, max |diff| 0, .* 1000 exact, 1000 within .* -> pass\" '$T/ref2.txt'"

# NPU model run: the device's output against the golden, two tolerances.
"$NPUSIM" run -p rk3588 "$MNV2" -q --output "$T/y.npy" --expect "$T/golden.npy" --atol 0.25 >"$T/npu.txt" 2>"$T/npu.err"; rc=$?
check "NPU run --output --expect --atol 0.25: exit 0, pass" "[ $rc -eq 0 ] && grep -q '^expect .* -> pass' '$T/npu.txt' && [ -s '$T/y.npy' ]"
"$NPUSIM" run -p rk3588 "$MNV2" -q --expect "$T/golden.npy" --atol 0.25 --report "$T/npu.json" >/dev/null 2>&1
check "--report carries the expect rows (pass, counts, metrics as printed)" "$PY - '$T/npu.json' '$T/npu.txt' <<'PY'
import json, re, sys
e = json.load(open(sys.argv[1]))['expect']
m = re.search(r'(\\d+) values, max \\|diff\\| (\\S+), mean \\|diff\\| (\\S+), cosine (\\S+), (\\d+) exact, (\\d+) within', open(sys.argv[2]).read())
assert len(e) == 1 and e[0]['pass'] is True and e[0]['atol'] == 0.25, e
assert e[0]['values'] == int(m[1]) and e[0]['exact'] == int(m[5]) and e[0]['within'] == int(m[6]), (e, m.groups())
assert abs(e[0]['max_abs_diff'] - float(m[2])) < 1e-5 and abs(e[0]['cosine'] - float(m[4])) < 1e-6, (e, m.groups())
PY"
check "NPU run metric line = numpy on y.npy vs golden.npy (atol 0.25)" "metrics '$T/npu.txt' '$T/y.npy' '$T/golden.npy' 0.25 1e-5"
"$NPUSIM" run -p rk3588 "$MNV2" -q --expect "$T/golden.npy" --atol 0.05 >"$T/npu2.txt" 2>"$T/npu2.err"; rc=$?
check "NPU run --atol 0.05 (below the 4-LSB propagated difference): exit 1, one error line naming output and file" \
  "[ $rc -eq 1 ] && [ \$(wc -l <'$T/npu2.err') -eq 1 ] && grep -q \"^npusim: error: output 'output' differs from .*golden.npy: [0-9]* of 1000 values outside atol 0.05\" '$T/npu2.err'"
check "NPU run metric line = numpy (atol 0.05)" "metrics '$T/npu2.txt' '$T/y.npy' '$T/golden.npy' 0.05 1e-5"
"$NPUSIM" run -p rk3588 "$MNV2" -q --output-dir "$T/od" >/dev/null 2>&1; rc=$?
check "--output-dir writes DIR/<output name>.npy, equal to --output's file" \
  "[ $rc -eq 0 ] && cmp -s '$T/od/output.npy' '$T/y.npy'"
$PY -c "import numpy as np; np.save('$T/bad.npy', np.zeros((1, 10), np.float32))"
"$NPUSIM" run -p rk3588 "$MNV2" -q --expect "$T/bad.npy" >/dev/null 2>"$T/e"; rc=$?
check "--expect of another shape: exit 2, one line" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q '1x10' '$T/e'"
"$NPUSIM" run -p rk3588 "$MNV2" -q --output "$MNV2" >/dev/null 2>"$T/e"; rc=$?
check "--output equal to the model: exit 2, nothing overwritten" "[ $rc -eq 2 ] && grep -q 'also an input' '$T/e'"
"$NPUSIM" run -p rk3588 "$MNV2" -q --expect "$T/nosuch.npy" >/dev/null 2>"$T/e"; rc=$?
check "--expect of a missing file: exit 2 before the run" "[ $rc -eq 2 ] && grep -q 'nosuch.npy' '$T/e'"

# --dump-layers: every NPU layer's device output beside the reference's, index.csv recomputed.
"$NPUSIM" run -p rk3588 "$MNV2" -q --dump-layers "$T/layers" --report "$T/r.json" >/dev/null 2>&1; rc=$?
check "--dump-layers: one device/reference pair per checked NPU layer output, index.csv figures = numpy" "[ $rc -eq 0 ] && $PY - '$T/layers' '$T/r.json' <<'PY'
import csv, json, sys
import numpy as np
d, r = sys.argv[1], json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(d + '/index.csv')))
npu = [l for l in r['layers'] if l['unit'] == 'NPU']
assert len({x['layer'] for x in rows}) == len(npu), (len(rows), len(npu))
for x in rows:
    a = np.load(f\"{d}/{x['file_stem']}.device.npy\").astype(np.int64).ravel()
    b = np.load(f\"{d}/{x['file_stem']}.reference.npy\").astype(np.int64).ravel()
    diff = np.abs(a - b)
    assert int(x['values']) == a.size and int(x['exact']) == int((diff == 0).sum()), x
    assert int(x['off_by_one']) == int((diff == 1).sum()) and int(x['worse']) == int((diff > 1).sum()), x
    # end to end: the reference executor's value of the tensor from the graph input
    e = np.load(f\"{d}/{x['file_stem']}.end_to_end.npy\").astype(np.int64).ravel()
    de = np.abs(a - e)
    assert int(x['end_to_end_differ']) == int((de != 0).sum()) and float(x['end_to_end_max_abs']) == float(de.max()), x
assert int(rows[0]['end_to_end_differ']) == int(rows[0]['values']) - int(rows[0]['exact']), rows[0]  # first layer: same inputs
print(f'    {len(rows)} tensors of {len(npu)} NPU layers')
PY"

# MCU run (ws63): the firmware's output, written and compared.
$PY "$HERE/../mcu/gen_mcu_models.py" "$T/mcu" >/dev/null 2>&1
KWS="$T/mcu/cnn_kws_int8.onnx"
"$NPUSIM" run -p ws63 "$KWS" --skip-check --output "$T/kws.npy" >"$T/m1.txt" 2>&1; rc=$?
check "MCU run --output: exit 0, written" "[ $rc -eq 0 ] && [ -s '$T/kws.npy' ]"
"$NPUSIM" run --reference "$KWS" --output "$T/kws_ref.npy" >/dev/null 2>&1
"$NPUSIM" run -p ws63 "$KWS" --skip-check --expect "$T/kws_ref.npy" >"$T/m2.txt" 2>&1; rc=$?
check "MCU run --expect the reference's output: exit 0, pass" "[ $rc -eq 0 ] && grep -q '^expect .* -> pass' '$T/m2.txt'"
check "MCU metric line = numpy" "metrics '$T/m2.txt' '$T/kws.npy' '$T/kws_ref.npy' 1e-8 1e-5"
$PY -c "
import numpy as np; a = np.load('$T/kws_ref.npy'); f = a.reshape(-1); f[3] += 1 if a.dtype.kind in 'iu' else 0.5; np.save('$T/kws_bad.npy', a)"
"$NPUSIM" run -p ws63 "$KWS" --skip-check --expect "$T/kws_bad.npy" >"$T/m3.txt" 2>"$T/m3.err"; rc=$?
check "MCU run --expect with one value changed: exit 1, 1 outside" "[ $rc -eq 1 ] && grep -q '1 of [0-9]* values outside' '$T/m3.err'"
check "MCU metric line = numpy (one value changed)" "metrics '$T/m3.txt' '$T/kws.npy' '$T/kws_bad.npy' 1e-8 1e-5"
exit $((fails > 0))
