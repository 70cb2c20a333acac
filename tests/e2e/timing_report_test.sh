#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The timing figures of a model report (issue 16): the inference figure beside the end-to-end
# latency, the calibration trust in text and JSON, `platforms -v`, the multi-core scaling section.
#   timing_report_test.sh NPUSIM
# The host input/output conversion is identified independently of the simulator from the ONNX
# graph (onnx package): QuantizeLinear nodes reading a graph input, DequantizeLinear nodes writing a
# graph output - the vendor runtime does these outside its run call (rknn_inputs_set quantizes).
set -u
NPUSIM="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }

$PY "$HERE/make_model_nets.py" "$T" >/dev/null || { echo "FAIL - cannot generate the test nets"; exit 1; }
NET="$T/tiny_qdq.onnx"

"$NPUSIM" run --platform rk3588 --mode timing "$NET" --report "$T/r.json" >"$T/r.txt" 2>"$T/e"
check "rk3588 timing run" "[ $? -eq 0 ]"
check "inference = latency - host I/O conversion; host I/O = the graph-boundary Q/DQ layers (from the ONNX graph)" \
  "$PY - '$T/r.json' '$NET' <<'PY'
import json, sys, onnx
r = json.load(open(sys.argv[1])); g = onnx.load(sys.argv[2]).graph
ins = {i.name for i in g.input}; outs = {o.name for o in g.output}
boundary = {n.name for n in g.node if (n.op_type == 'QuantizeLinear' and n.input[0] in ins)
            or (n.op_type == 'DequantizeLinear' and n.output[0] in outs)}
assert boundary, 'the test net has boundary Q/DQ'
io = [l for l in r['layers'] if l.get('host_io')]
assert {n for l in io for n in l['nodes']} == boundary, ([l['nodes'] for l in io], boundary)
assert all(l['unit'] == 'CPU' for l in io)
t = r['totals']
io_ps = sum(l['end_ps'] - l['start_ps'] for l in io)
assert t['host_io_ps'] == io_ps > 0, (t['host_io_ps'], io_ps)
assert t['inference_ps'] == t['latency_ps'] - io_ps, t
assert abs(t['inference_ms'] - t['inference_ps'] / 1e9) < 1e-9 and abs(t['latency_ms'] - t['latency_ps'] / 1e9) < 1e-9
assert t['inference_ps'] >= t['npu_ps'] > 0
PY"
check "text report shows inference and latency with the JSON's values" "$PY - '$T/r.json' '$T/r.txt' <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))['totals']; txt = open(sys.argv[2]).read()
inf = re.search(r'^total: inference ([0-9.]+) ms', txt, re.M); lat = re.search(r'^ +latency ([0-9.]+) ms .*end to end', txt, re.M)
assert inf and lat, txt[-800:]
assert inf.group(1) == '%.3f' % t['inference_ms'] and lat.group(1) == '%.3f' % t['latency_ms'], (inf.group(1), lat.group(1))
PY"
check "JSON calibration of a calibrated SoC: status, fitted parameters, rows with LOO errors" "$PY - '$T/r.json' <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))['calibration']
assert c['status'] == 'calibrated' and 'npu.task_overhead_cycles' in c['fitted'] and len(c['fitted']) <= 2, c
assert len(c['rows']) == 3 and all('loo_error_pct' in x for x in c['rows']), c['rows']
assert c['loo_mae_pct'] is not None and c['grades']['known'] > 0 and c['overridden'] == []
PY"
check "text report: trust section names the calibration and the leave-one-model-out error" \
  "grep -q '^timing trust: calibration calibrated for rk3588 on 3 published rows' '$T/r.txt' && grep -q 'leave-one-model-out mean' '$T/r.txt' && grep -q '^  fitted on this SoC: ' '$T/r.txt'"

"$NPUSIM" run --platform rk3562 --mode timing "$NET" --report "$T/s.json" >"$T/s.txt" 2>&1
check "a SoC without figures says whose values it inherits" "$PY - '$T/s.json' <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))['calibration']
assert c['status'] == 'inherited' and c['inherits_from'] and not c['rows'] and 'npu.task_overhead_cycles' in c['inherited'], c
PY
grep -q '^timing trust: calibration inherited for rk3562 from ' '$T/s.txt'"

"$NPUSIM" run --platform rk3588 --mode timing "$NET" --report "$T/o.json" --param npu.task_overhead_cycles=1234 >"$T/o.txt" 2>&1
check "an override shows in the trust section (text and JSON)" \
  "grep -q 'overridden with --param.*npu.task_overhead_cycles=1234' '$T/o.txt' && $PY -c \"import json,sys; assert json.load(open(sys.argv[1]))['calibration']['overridden'] == ['npu.task_overhead_cycles=1234']\" '$T/o.json'"

"$NPUSIM" platforms -v >"$T/p.txt" 2>&1
check "platforms -v: a calibration line per RKNPU SoC, fitted and inherited parameters" "$PY - '$T/p.txt' <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
socs = [l.split()[0] for l in lines if l[:1].strip() and 'core(s) x' in l]
trust = [l.strip() for l in lines if l.strip().startswith('timing calibration:')]
assert len(socs) >= 10 and len(trust) == len(socs), (socs, len(trust))
assert sum(t.startswith('timing calibration: calibrated') for t in trust) == 4, trust
assert any('fitted on this SoC: npu.conv_mac_efficiency' in l for l in lines)
assert any(l.strip().startswith('inherited: npu.task_overhead_cycles (from ') for l in lines)
PY"
"$NPUSIM" platforms >"$T/p0.txt" 2>&1
check "platforms (no -v) shows the calibration line too" "grep -q 'timing calibration: inherited from rk3576' '$T/p0.txt'"

"$NPUSIM" run --platform rk3588 --core-mask 0_1_2 --mode timing "$NET" --report "$T/m.json" >"$T/m.txt" 2>&1
check "multi-core: split layers explain their scaling; single-core layers carry none" "$PY - '$T/m.json' '$T/r.json' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
multi = [l for l in r['layers'] if l['unit'] == 'NPU' and ',' in l['cores']]
assert multi, 'the 3-core run splits some layer'
for l in multi:
    s = l['scaling']
    assert s['cores'] == len(l['cores'].split(',')), (l['name'], s)
    assert s['span_ps'] == l['end_ps'] - l['start_ps'] and 0 < s['work_ps'] <= s['cores'] * s['span_ps'], s
    assert abs(s['efficiency'] - s['work_ps'] / (s['cores'] * s['span_ps'])) < 1e-9
    worst = max(s['barrier_ps'], s['split_ps'], s['ddr_contention_ps'])
    want = {s['barrier_ps']: 'barrier', s['ddr_contention_ps']: 'DDR contention', s['split_ps']: 'split overhead'}
    assert s['limit'] in ('barrier', 'split overhead', 'DDR contention') and worst == {'barrier': s['barrier_ps'],
        'split overhead': s['split_ps'], 'DDR contention': s['ddr_contention_ps']}[s['limit']], s
single = json.load(open(sys.argv[2]))
assert not any('scaling' in l for l in single['layers'])
PY
grep -q '^multi-core scaling' '$T/m.txt'"

[ $fails -eq 0 ] && echo "all timing report checks passed" || echo "$fails check(s) failed"
exit $((fails > 0))
