#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Whole-model runs on the RKNPU platforms (issue 6): npusim run --platform P MODEL.onnx.
#   model_run_test.sh NPUSIM [ZOO_DIR]
# Small QDQ nets come from tests/e2e/make_model_nets.py, MobileNetV2 from ZOO_DIR (the build zoo)
# or $NPUSIM_ZOO, else from the model zoo generator (about 1 s). ResNet50 v2 and YOLOv5s run only
# when NPUSIM_ZOO_FULL=1. Expectations are independent of the runtime: the
# reference executor (outputs, per-layer isolated check), the SoC's core list, the checker's rule.
set -u
NPUSIM="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }

$PY "$HERE/make_model_nets.py" "$T" || { echo "FAIL - cannot generate the test nets"; exit 1; }
ZOO="${NPUSIM_ZOO:-${2:-}}"
big_missing=0
[ "${NPUSIM_ZOO_FULL:-0}" = 1 ] && [ ! -f "$ZOO/yolov5s_qdq.onnx" ] && big_missing=1
if [ -z "$ZOO" ] || [ ! -f "$ZOO/mobilenetv2_qdq.onnx" ] || [ $big_missing = 1 ]; then
  ZOO="$T/zoo"
  models=mobilenetv2
  [ "${NPUSIM_ZOO_FULL:-0}" = 1 ] && models=mobilenetv2,resnet50v2,yolov5s
  $PY "$ROOT/tools/zoo/make_zoo.py" "$ZOO" --models "$models" >/dev/null || { echo "FAIL - zoo generation"; exit 1; }
fi
MNV2="$ZOO/mobilenetv2_qdq.onnx"

# The report checks every test repeats: valid JSON, one row per layer, isolated check clean.
cat >"$T/report_ok.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
mode = sys.argv[2] if len(sys.argv) > 2 else "full"
tot = r["totals"]
rows = r["layers"]
assert len(rows) == tot["npu_layers"] + tot["cpu_layers"] + tot["view_layers"], (len(rows), tot)
assert len({l["name"] for l in rows}) == len(rows), "layer names repeat"
nodes = [n for l in rows for n in l["nodes"]]
assert all(l["nodes"] for l in rows) and len(nodes) == len(set(nodes)), "every layer covers IR nodes, none twice"
assert r["ok"] and not r["errors"], r["errors"]
assert tot["latency_ps"] > 0 and tot["fps"] > 0
assert tot["latency_ps"] >= tot["npu_ps"] + tot["cpu_ps"] - 1, tot
npu = [l for l in rows if l["unit"] == "NPU"]
assert npu and all(l["tasks"] > 0 and l["cycles"]["total"] > 0 for l in npu), [l["name"] for l in npu if not l["tasks"]]
assert sum(l["tasks"] for l in npu) == tot["tasks"], (sum(l["tasks"] for l in npu), tot["tasks"])
assert all(l["bound"] in ("compute", "memory", "overhead") for l in npu)
assert tot["ddr_read_bytes"] == sum(l["ddr_read_bytes"] for l in rows)
if mode == "full":
    iso = r["isolated_check"]
    assert iso["layers"] == tot["npu_layers"] and iso["layers_worse"] == 0 and iso["worse"] == 0, iso
    assert all("isolated_check" in l for l in npu)
    assert r["outputs"] and all(o["values"] > 0 for o in r["outputs"])
else:
    assert "outputs" not in r and "isolated_check" not in r
print("%s: %d layers (%d NPU, %d CPU), %d tasks, latency %.3f ms" % (
    r["platform"], len(rows), tot["npu_layers"], tot["cpu_layers"], tot["tasks"], tot["latency_ms"]))
PY
rok() { $PY "$T/report_ok.py" "$@"; }

# 1. A small net on rk3588, full mode, tiling verified, trace with layer tracks.
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --verify-tiling --report "$T/tiny.json" --trace "$T/tiny_t.json" \
  >"$T/tiny.txt" 2>"$T/tiny.err"; rc=$?
check "tiny net rk3588: exit 0" "[ $rc -eq 0 ] || { cat '$T/tiny.err'; false; }"
check "tiny net rk3588: tiling verified" "grep -Eq '^tiling verified: [0-9]+ layers, [0-9]+ tasks' '$T/tiny.txt'"
check "tiny net rk3588: report rows, isolated check, outputs" "rok '$T/tiny.json'"
check "tiny net rk3588: text report has totals and numerics" \
  "grep -q '^total: inference' '$T/tiny.txt' && grep -q '^ *latency .* end to end' '$T/tiny.txt' && grep -q '^isolated per-layer check' '$T/tiny.txt' && grep -q \"^output 'output' vs reference executor: 10 values\" '$T/tiny.txt'"
check "trace: a layers track per used core with one slice per NPU layer, host CPU track" "$PY - '$T/tiny_t.json' '$T/tiny.json' <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
ev = t['traceEvents']
names = {(e['pid'], e['tid']): e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
layer_slices = [e['name'] for e in ev if e['ph'] == 'X' and names.get((e['pid'], e['tid'])) == 'layers']
npu = [l['name'] for l in r['layers'] if l['unit'] == 'NPU']
assert sorted(set(layer_slices)) == sorted(npu), (layer_slices, npu)
cpu = [l['name'] for l in r['layers'] if l['unit'] == 'CPU']
host = [e['name'] for e in ev if e['ph'] == 'X' and names.get((e['pid'], e['tid'])) == 'host CPU']
assert host == cpu, (host, cpu)
PY"

# 2. Determinism: same inputs, byte-identical report and trace.
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --report "$T/tiny2.json" --trace "$T/tiny2_t.json" >/dev/null 2>&1
check "determinism: identical report and trace" "cmp -s '$T/tiny.json' '$T/tiny2.json' && cmp -s '$T/tiny_t.json' '$T/tiny2_t.json'"

# 3. Inputs from .npy: the reference executor's random input written out gives the same run.
"$NPUSIM" run --reference "$T/tiny_qdq.onnx" --output "$T/ref_out.npy" >/dev/null 2>&1
$PY -c "
import numpy as np
import sys
sys.path.insert(0, '$ROOT/tools/zoo')
np.save('$T/x_bad.npy', np.zeros((1, 3, 16, 16), np.float32))
np.save('$T/x_int.npy', np.zeros((1, 3, 32, 32), np.int8))
np.save('$T/x.npy', (np.arange(3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32) % 17) / 8.0 - 1.0)
"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --input "$T/x.npy" --report "$T/tx.json" >/dev/null 2>&1; rc=$?
check "--input x.npy: runs and matches the reference" "[ $rc -eq 0 ] && rok '$T/tx.json' >/dev/null"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --input "$T/x_bad.npy" >"$T/o" 2>"$T/e"; rc=$?
check "--input with the wrong shape: exit 2, one line naming the file and both shapes" \
  "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q 'x_bad.npy.*1x3x16x16.*1x3x32x32' '$T/e'"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --input "$T/x_int.npy" >"$T/o" 2>"$T/e"; rc=$?
check "--input with the wrong dtype: exit 2, one line" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q 'int8' '$T/e'"

# 3b. --expect-exact fails exactly when the checks saw any difference; --no-compare skips them.
"$NPUSIM" run --platform rk3588 "$MNV2" --quiet --expect-exact --report "$T/exact.json" >/dev/null 2>&1; rc=$?
check "--expect-exact: exit 1 iff some value differs (end to end or per layer)" "$PY - '$T/exact.json' $rc <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
diff = r['isolated_check']['off_by_one'] + r['isolated_check']['worse'] + sum(o['off_by_one'] + o['worse'] for o in r['outputs'])
print('differing values', diff, 'exit', rc)
assert rc == (1 if diff else 0) and r['ok'] == (diff == 0)
PY"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --no-compare --report "$T/nc.json" >"$T/o" 2>&1; rc=$?
check "--no-compare: exit 0, no comparison in the report" \
  "[ $rc -eq 0 ] && $PY -c \"import json; r = json.load(open('$T/nc.json')); assert 'outputs' not in r and 'isolated_check' not in r and r['ok']\""

# 4. Timing mode: no data, same simulated latency as full mode (timing does not depend on data).
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --mode timing --report "$T/tiny_tm.json" >"$T/o" 2>&1; rc=$?
check "timing mode: exit 0, rows, no comparison" "[ $rc -eq 0 ] && rok '$T/tiny_tm.json' timing >/dev/null"
check "timing mode: same latency as full mode" "$PY - '$T/tiny.json' '$T/tiny_tm.json' <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))['totals']['latency_ps']; t = json.load(open(sys.argv[2]))['totals']['latency_ps']
print('full', f, 'timing', t)
assert f == t, (f, t)
PY"

# Timing mode imports without the large weights' contents and compiles timing-only (weights laid
# out, not packed): MobileNetV2's every layer has the same tasks, cycles and DDR bytes as the full
# import and compile run in full mode.
"$NPUSIM" run --platform rk3588 "$MNV2" --quiet --no-compare --report "$T/mf.json" >/dev/null 2>&1
"$NPUSIM" run --platform rk3588 "$MNV2" --mode timing --report "$T/mt.json" >/dev/null 2>&1
check "MobileNetV2 timing mode (timing-only compile): per-layer cycles as in full mode" "$PY - '$T/mf.json' '$T/mt.json' <<'PY'
import json, sys
f, t = (json.load(open(p)) for p in sys.argv[1:3])
assert f['totals']['latency_ps'] == t['totals']['latency_ps'], (f['totals'], t['totals'])
keys = ('name', 'unit', 'tasks', 'regcmd_entries', 'cycles', 'start_ps', 'end_ps', 'ddr_read_bytes', 'ddr_write_bytes')
rows = lambda r: [tuple(json.dumps(l.get(k)) for k in keys) for l in r['layers']]
assert rows(f) == rows(t)
assert sum(l['cycles']['total'] for l in f['layers'] if l['unit'] == 'NPU') > 0
print('layers', len(f['layers']), 'latency_ps', t['totals']['latency_ps'])
PY"

# 5. Other SoCs: RK3566 (C2 = 8) and RV1106, full mode, outputs checked.
for soc in rk3566 rv1106 rk3562 rk3576; do
  "$NPUSIM" run --platform $soc "$T/tiny_qdq.onnx" --verify-tiling --report "$T/tiny_$soc.json" >"$T/o" 2>"$T/e"; rc=$?
  check "tiny net $soc: exit 0, tiling verified, isolated check clean" \
    "[ $rc -eq 0 ] && grep -q '^tiling verified' '$T/o' && rok '$T/tiny_$soc.json' >/dev/null || { cat '$T/e'; false; }"
done

# RK3566 (8-byte atoms): MobileNetV2's 7x7 residual Adds have odd surfaces (7*7*8 = 392 B in
# 400-byte strides) that the MRDMA notch (16-byte units) cannot skip; the lowering reads each
# surface whole as a 50-atom row instead of one task per C1 surface. Numerics against the reference.
"$NPUSIM" run --platform rk3566 "$MNV2" --verify-tiling --report "$T/mn66.json" >"$T/o" 2>"$T/e"; rc=$?
check "MobileNetV2 rk3566: 7x7 Adds one task each, tiling verified, isolated check clean" \
  "[ $rc -eq 0 ] && grep -q '^tiling verified' '$T/o' && rok '$T/mn66.json' >/dev/null && $PY - '$T/mn66.json' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
adds = [l for l in r['layers'] if l['op'] == 'Add' and l['output_shape'].endswith('x7x7')]
assert adds and all(l['tasks'] == 1 for l in adds), [(l['name'], l['tasks']) for l in adds]
PY"

# 6. CPU fallback forced on one node: reported as CPU with its host time, run still correct.
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --cpu-node conv_n11 --report "$T/cpu.json" >"$T/cpu.txt" 2>"$T/e"; rc=$?
check "--cpu-node: exit 0 and the node's layer runs on the host" "[ $rc -eq 0 ] && $PY - '$T/cpu.json' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu = [l for l in r['layers'] if l['unit'] == 'CPU' and l['name'] == 'conv_n11']
assert len(cpu) == 1 and cpu[0]['time_us'] > 0 and cpu[0]['cores'] == 'host', cpu
assert r['ok'] and r['totals']['cpu_ps'] > 0
PY"
check "--cpu-node: the text report names the fallback" "grep -q '^CPU fallback: conv_n11' '$T/cpu.txt'"

# 7. The checker's verdicts: a 33x33 kernel (outside RKNN's [1, 31]) falls back to the CPU with
#    the checker's rule in the report; a model it cannot take at all fails with its message and code.
"$NPUSIM" run --platform rk3588 "$T/bigk_qdq.onnx" --quiet --report "$T/bigk.json" >"$T/bigk.txt" 2>"$T/e"; rc=$?
check "33x33 conv: runs, the conv on the CPU with the checker's rule, the rest on the NPU" \
  "[ $rc -eq 0 ] && rok '$T/bigk.json' >/dev/null && grep -q '^CPU fallback: conv_n11 (QLinearConv): vendor rule sends it to the CPU (RK3588 Convolution): kernel_h = 33 outside \[1, 31\] \[RKNN Compiler V2.3.2 operator spec §3.2.5 Convolution\]' '$T/bigk.txt'"
$PY "$ROOT/tests/unit/checker/e2e/make_models.py" "$T" 2>/dev/null
"$NPUSIM" check --platform rk3588 "$T/dynamic.onnx" >"$T/o" 2>"$T/ce"; crc=$?
"$NPUSIM" run --platform rk3588 "$T/dynamic.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "model the checker cannot take (dynamic batch): same exit code and message as npusim check, one line" \
  "[ $rc -eq $crc ] && [ $rc -ne 0 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q \"graph input 'x' dimension 0 is dynamic\" '$T/e' && grep -q \"graph input 'x' dimension 0 is dynamic\" '$T/ce'"

# 8. Core masks.
"$NPUSIM" run --platform rk3566 "$T/tiny_qdq.onnx" --core-mask 0_1_2 >"$T/o" 2>"$T/e"; rc=$?
check "core mask 0_1_2 on single-core rk3566: exit 2, one line" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q 'core-mask' '$T/e'"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --core-mask 7 >"$T/o" 2>"$T/e"; rc=$?
check "core mask 7 on rk3588: exit 2" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ]"
"$NPUSIM" run --platform nosuch "$T/tiny_qdq.onnx" >"$T/o" 2>"$T/e"; rc=$?
check "unknown platform with a model: exit 2" "[ $rc -eq 2 ] && grep -q \"unknown platform 'nosuch'\" '$T/e'"

"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --cores 0,1 >"$T/o" 2>"$T/e"; rc=$?
check "--cores with a model: exit 2 pointing to --core-mask" "[ $rc -eq 2 ] && [ \$(wc -l <'$T/e') -eq 1 ] && grep -q -- '--core-mask' '$T/e'"

# 9. MobileNetV2 (QDQ) on rk3588: single core, three cores, progress line.
"$NPUSIM" run --platform rk3588 "$MNV2" --verify-tiling --report "$T/mnv2.json" >"$T/mnv2.txt" 2>"$T/mnv2.err"; rc=$?
check "MobileNetV2 rk3588: exit 0, tiling verified" "[ $rc -eq 0 ] && grep -q '^tiling verified' '$T/mnv2.txt' || { tail -3 '$T/mnv2.err'; false; }"
check "MobileNetV2 rk3588: rows, isolated check clean" "rok '$T/mnv2.json'"
check "MobileNetV2: progress lines on a non-terminal stderr" "grep -Eq '^layer [0-9]+/[0-9]+ .* [0-9]+%$' '$T/mnv2.err'"
"$NPUSIM" run --platform rk3588 "$MNV2" --core-mask 0_1_2 --quiet --report "$T/mnv2_3.json" >"$T/o" 2>"$T/e"; rc=$?
check "MobileNetV2 rk3588 core mask 0_1_2: exit 0, all three cores used, quiet" "[ $rc -eq 0 ] && [ ! -s '$T/e' ] && rok '$T/mnv2_3.json' && $PY - '$T/mnv2.json' '$T/mnv2_3.json' <<'PY'
import json, sys
one = json.load(open(sys.argv[1])); three = json.load(open(sys.argv[2]))
assert three['cores'] == [0, 1, 2], three['cores']
used = set()
for l in three['layers']:
    if l['unit'] == 'NPU':
        used |= set(l['cores'].split(','))
assert used == {'0', '1', '2'}, used
print('speed-up 0_1_2 vs single core: %.2fx' % (one['totals']['latency_ps'] / three['totals']['latency_ps']))
PY"

for soc in rk3566 rv1106; do
  "$NPUSIM" run --platform $soc "$MNV2" --quiet --verify-tiling --report "$T/mnv2_$soc.json" >"$T/o" 2>"$T/e"; rc=$?
  check "MobileNetV2 $soc: exit 0, tiling verified, isolated check clean" \
    "[ $rc -eq 0 ] && grep -q '^tiling verified' '$T/o' && rok '$T/mnv2_$soc.json' || { tail -3 '$T/e'; false; }"
done
"$NPUSIM" run --platform rk3588 "$MNV2" --core-mask 0_1_2 --mode timing --report "$T/d1.json" --trace "$T/d1t.json" >/dev/null 2>&1
"$NPUSIM" run --platform rk3588 "$MNV2" --core-mask 0_1_2 --mode timing --report "$T/d2.json" --trace "$T/d2t.json" >/dev/null 2>&1
check "determinism with three concurrent cores: identical report and trace" \
  "[ -s '$T/d1t.json' ] && cmp -s '$T/d1.json' '$T/d2.json' && cmp -s '$T/d1t.json' '$T/d2t.json'"

# 9b. --repeat N (issue 25): the inference N times on one simulated SoC; the outputs are those of a
# single run (byte for byte), the report is valid and carries the per-inference CPU cost; the
# option does not apply to timing mode or to other run kinds (exit 2).
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --quiet --output "$T/once.npy" >/dev/null 2>&1
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --quiet --repeat 3 --output "$T/rep.npy" --report "$T/rep.json" \
  >"$T/rep.txt" 2>"$T/rep.err"; rc=$?
check "--repeat 3: exit 0, outputs byte-identical to one run" "[ $rc -eq 0 ] && [ -s '$T/once.npy' ] && cmp -s '$T/once.npy' '$T/rep.npy' || { cat '$T/rep.err'; false; }"
check "--repeat 3: report valid, isolated check clean" "rok '$T/rep.json' >/dev/null"
check "--repeat 3: per-inference simulation CPU cost in text and JSON" \
  "grep -Eq '^per-inference simulation: [0-9.]+ ms CPU \\(best of 3 repetitions' '$T/rep.txt' && $PY -c 'import json,sys; t=json.load(open(sys.argv[1]))[\"totals\"]; assert t[\"repeat\"] == 3 and 0 < t[\"sim_cpu_ms_per_inference\"] <= t[\"sim_cpu_ms_mean\"], t' '$T/rep.json'"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --quiet --report "$T/norep.json" >/dev/null 2>&1
check "no --repeat: no CPU figure in the report (it stays deterministic)" \
  "$PY -c 'import json,sys; t=json.load(open(sys.argv[1]))[\"totals\"]; assert \"sim_cpu_ms_per_inference\" not in t' '$T/norep.json'"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --mode timing --repeat 2 >/dev/null 2>"$T/e"; rc=$?
check "--repeat with --mode timing: exit 2, one line" "[ $rc -eq 2 ] && grep -q '^npusim: error: --repeat does not apply to --mode timing' '$T/e'"
"$NPUSIM" run --reference "$T/tiny_qdq.onnx" --repeat 2 >/dev/null 2>"$T/e"; rc=$?
check "--repeat on a reference run: exit 2" "[ $rc -eq 2 ] && grep -q '^npusim: error: --repeat does not apply to reference runs' '$T/e'"
"$NPUSIM" run --platform rk3588 "$T/tiny_qdq.onnx" --repeat 0 >/dev/null 2>"$T/e"; rc=$?
check "--repeat 0: exit 2" "[ $rc -eq 2 ]"

# 10. The big zoo models on the issue's five SoCs (opt-in: about 30 s of CPU).
if [ "${NPUSIM_ZOO_FULL:-0}" = 1 ]; then
  for soc in rk3588 rk3566 rk3562 rk3576 rv1106; do
    for m in resnet50v2 yolov5s; do
      "$NPUSIM" run --platform $soc "$ZOO/${m}_qdq.onnx" --quiet --verify-tiling --report "$T/$m.json" >"$T/o" 2>"$T/e"; rc=$?
      check "$m $soc: exit 0, tiling verified, isolated check clean" \
        "[ $rc -eq 0 ] && grep -q '^tiling verified' '$T/o' && rok '$T/$m.json' || { tail -3 '$T/e'; false; }"
    done
  done
fi

[ $fails -eq 0 ]
