#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Perfetto-correct traces and the VCD (issue 17): every track of real traces nests at nanosecond
# resolution (tests/e2e/trace_nesting.py, the rule Perfetto's JSON importer applies to complete
# events), counters present and consistent with the report, block slices named by layer with
# register-level args, no empty process; the VCD is read by vcd2fst (GTKWave's converter).
#   trace_test.sh NPUSIM [ZOO_DIR]
# MobileNetV2 comes from ZOO_DIR (the build zoo) or the zoo generator; YOLOv5s on rk3576 with two
# cores (the issue's acceptance trace) runs when the zoo has it (NPUSIM_ZOO_FULL=1 builds).
set -u
NPUSIM="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   - $1"; else echo "FAIL - $1"; fails=$((fails + 1)); fi; }
ZOO="${NPUSIM_ZOO:-${2:-}}"
if [ -z "$ZOO" ] || [ ! -f "$ZOO/mobilenetv2_qdq.onnx" ]; then
  ZOO="$T/zoo"
  $PY "$ROOT/tools/zoo/make_zoo.py" "$ZOO" --models mobilenetv2 >/dev/null || { echo "FAIL - zoo generation"; exit 1; }
fi
NEST="$PY $HERE/trace_nesting.py"
BW='--expect-counter "DDR bandwidth (GB/s)"'
CB='--expect-counter "CBUF occupancy (bytes)"'

# The checker itself must catch a misnested track and an empty process (hand-written traces).
cat >"$T/bad.json" <<'J'
{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}},
{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"empty"}},
{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.000,"dur":2.000},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":2.000,"dur":2.000}]}
J
check "checker: overlapping slices on one track and an empty process are reported" \
  "! $NEST '$T/bad.json' >'$T/bad.txt' && grep -q '1 of 2 slices misnested' '$T/bad.txt' && grep -q \"'empty'\" '$T/bad.txt'"
cat >"$T/good.json" <<'J'
{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.000,"dur":3.000},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":2.000,"dur":2.000},{"ph":"X","name":"c","pid":1,"tid":1,"ts":4.000,"dur":0.001}]}
J
check "checker: nested and following slices pass" "$NEST '$T/good.json' >/dev/null"

# 1. The bundled conv example: trace and VCD.
"$NPUSIM" run --trace "$T/c.json" --vcd "$T/c.vcd" >/dev/null 2>&1
check "conv example: every track nests, counters present" "$NEST '$T/c.json' $BW $CB"
check "conv example: vcd2fst reads the VCD" "vcd2fst '$T/c.vcd' '$T/c.fst' >/dev/null 2>&1 && [ -s '$T/c.fst' ]"

# A replayed regcmd capture (the conv example's): trace and VCD through the same writer.
"$NPUSIM" run --dump-regcmd "$T/c.bin" >/dev/null 2>&1
"$NPUSIM" replay "$T/c.bin" --trace "$T/p.json" --vcd "$T/p.vcd" >/dev/null 2>&1
check "replay: every track nests, the VCD reads in vcd2fst and raises irq" \
  "$NEST '$T/p.json' $BW >/dev/null && vcd2fst '$T/p.vcd' '$T/p.fst' >/dev/null 2>&1 && grep -q ' irq \$end' '$T/p.vcd'"

# 2. MobileNetV2 on rk3576 with two cores, full mode.
M="$ZOO/mobilenetv2_qdq.onnx"
"$NPUSIM" run --platform rk3576 "$M" --core-mask 0_1 --quiet --no-compare --trace "$T/m.json" --vcd "$T/m.vcd" \
  --report "$T/m_r.json" >/dev/null 2>&1
check "mobilenetv2 rk3576 0_1: every track nests, no empty process, counters present" "$NEST '$T/m.json' $BW $CB"
check "mobilenetv2 rk3576 0_1: DMA lanes, layer names and CBUF_CON0 fields on block slices, irq per core" \
  "$PY - '$T/m.json' '$T/m_r.json' <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
ev = t['traceEvents']
names = {(e['pid'], e['tid']): e['args']['name'] for e in ev if e.get('name') == 'thread_name'}
assert any(n.startswith('DMA read #') for n in names.values()), sorted(set(names.values()))
npu = {l['name'] for l in r['layers'] if l['unit'] == 'NPU'}
core = [e for e in ev if e['ph'] == 'X' and names[(e['pid'], e['tid'])] == 'CORE']
assert core and all(e['args'].get('layer') in npu for e in core), 'CORE slice without its layer'
blocks = [e for e in ev if e['ph'] == 'X' and names[(e['pid'], e['tid'])] in ('CNA', 'CORE', 'DPU')]
assert {e['args'].get('layer') for e in blocks} == npu, 'some NPU layer has no named block slice'
assert all('CNA.CBUF_CON0.DATA_BANK' in e['args'] for e in core if e['name'].split()[2].startswith('conv'))
irq = [e for e in ev if e['ph'] == 'C' and e['name'] == 'irq']
assert len({e['pid'] for e in irq}) == 2, 'an irq line per used core'
PY"
# The DDR bandwidth counters integrate to the NPU traffic the report counts (independent sums:
# the interconnect's transfers vs the task records).
check "mobilenetv2 rk3576 0_1: DDR bandwidth counters integrate to the report's NPU DDR bytes" \
  "$PY - '$T/m.json' '$T/m_r.json' <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
c = [e for e in t['traceEvents'] if e['ph'] == 'C' and e['name'] == 'DDR bandwidth (GB/s)']
tot = {'read': 0.0, 'write': 0.0}
for a, b in zip(c, c[1:]):
    dt = (b['ts'] - a['ts']) * 1000  # ns; GB/s = bytes per ns
    for k, v in a['args'].items():
        if k.startswith('npu_core'): tot[k.split()[-1]] += v * dt
want = {'read': r['totals']['ddr_read_bytes'], 'write': r['totals']['ddr_write_bytes']}
for k in tot:
    assert abs(tot[k] - want[k]) <= 1e-3 * want[k] + 64, (k, tot[k], want[k])
PY"
check "mobilenetv2 rk3576 0_1: vcd2fst reads the VCD, it has irq, busy and in-flight signals" \
  "vcd2fst '$T/m.vcd' '$T/m.fst' >/dev/null 2>&1 && [ -s '$T/m.fst' ] && grep -q ' irq \$end' '$T/m.vcd' && grep -q 'CORE_busy' '$T/m.vcd' && grep -q 'DMA_read_in_flight' '$T/m.vcd'"
# GTKWave itself (under a virtual X server) loads the VCD: every signal of both cores is there.
if command -v gtkwave >/dev/null && command -v xvfb-run >/dev/null; then
  cat >"$T/gw.tcl" <<TCL
set f [open "$T/gw.txt" w]
set n [gtkwave::getNumFacs]
for {set i 0} {\$i < \$n} {incr i} { puts \$f [gtkwave::getFacName \$i] }
close \$f
exit
TCL
  timeout 120 xvfb-run -a gtkwave -S "$T/gw.tcl" "$T/m.vcd" >"$T/gw.log" 2>&1
  check "GTKWave opens the VCD: busy, in-flight and irq signals of both cores" \
    "(for c in 0 1; do for s in CORE_busy DPU_busy DMA_read_in_flight DMA_write_in_flight irq; do grep -qx \"soc.npu_core\$c.\$s\" '$T/gw.txt' || exit 1; done; done)"
else
  echo "skip - gtkwave or xvfb-run not installed"
fi
"$NPUSIM" run --platform rk3576 "$M" --core-mask 0_1 --quiet --no-compare --trace "$T/m2.json" --vcd "$T/m2.vcd" \
  >/dev/null 2>&1
check "determinism: identical trace and VCD" "cmp -s '$T/m.json' '$T/m2.json' && cmp -s '$T/m.vcd' '$T/m2.vcd'"

# 3. Three cores on rk3588 (timing mode): the most transfers in flight.
"$NPUSIM" run --platform rk3588 "$M" --core-mask 0_1_2 --mode timing --quiet --trace "$T/t3.json" >/dev/null 2>&1
check "mobilenetv2 rk3588 0_1_2 timing: every track nests" "$NEST '$T/t3.json' $BW $CB"

# 4. YOLOv5s on rk3576 with two cores (issue 17 acceptance), when the zoo has it.
if [ -f "$ZOO/yolov5s_qdq.onnx" ]; then
  "$NPUSIM" run --platform rk3576 "$ZOO/yolov5s_qdq.onnx" --core-mask 0_1 --quiet --no-compare --trace "$T/y.json" \
    >/dev/null 2>&1
  check "yolov5s rk3576 0_1: every track nests, counters present" "$NEST '$T/y.json' $BW $CB"
else
  echo "skip - yolov5s_qdq.onnx not in the zoo (NPUSIM_ZOO_FULL=1)"
fi

[ $fails = 0 ] && echo "all trace checks passed" || echo "$fails trace check(s) failed"
exit $((fails > 0))
