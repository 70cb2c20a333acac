#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Report files of a model run and `npusim compare` (issue 17): the versioned JSON report, --csv,
# the text report's top-layers and op-type tables, --html in headless Chromium (Debian chromium:
# one bar per layer, one roofline point per NPU layer, the fallback list, a screenshot that is not
# blank), and compare over every RKNPU SoC. Expectations are recomputed here from the JSON report
# (ranking, shares, roll-ups) or from separate `npusim run` reports (compare's rows).
#   report_files_test.sh NPUSIM [ZOO_DIR]    (NPUSIM_REPORT_SCREENSHOT=FILE keeps the screenshot)
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
M="$ZOO/mobilenetv2_qdq.onnx"

"$NPUSIM" run --platform rk3588 "$M" --quiet --report "$T/r.json" --csv "$T/r.csv" --html "$T/r.html" >"$T/r.txt" 2>&1
check "run with --report --csv --html exits 0" "[ $? = 0 ]"
check "report JSON: schema npusim.model_run, schema_version 1, op_types roll-up sums the layers" \
  "$PY - '$T/r.json' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r['schema'] == 'npusim.model_run' and r['schema_version'] == 1, (r.get('schema'), r.get('schema_version'))
ops = {}
for l in r['layers']:
    o = ops.setdefault(l['op'], [0, 0.0, 0])
    o[0] += 1; o[1] += l['time_us']; o[2] += l['macs']
got = {o['op']: [o['layers'], o['time_us'], o['macs']] for o in r['op_types']}
assert got.keys() == ops.keys(), (got.keys(), ops.keys())
for k in ops:
    assert got[k][0] == ops[k][0] and abs(got[k][1] - ops[k][1]) < 1e-6 and got[k][2] == ops[k][2], (k, got[k], ops[k])
times = [o['time_us'] for o in r['op_types']]
assert times == sorted(times, reverse=True), 'op types not ranked by time'
PY"
check "--csv: parses, one row per layer, values equal the JSON report's" \
  "$PY - '$T/r.csv' '$T/r.json' <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
r = json.load(open(sys.argv[2]))
assert len(rows) == len(r['layers']), (len(rows), len(r['layers']))
lat_us = r['totals']['latency_ps'] / 1e6
for c, l in zip(rows, r['layers']):
    assert c['layer'] == l['name'] and c['op'] == l['op'] and c['unit'] == l['unit'], (c, l['name'])
    assert abs(float(c['time_us']) - l['time_us']) < 1e-5 and int(c['ddr_read_bytes']) == l['ddr_read_bytes']
    assert int(c['total_cycles']) == l['cycles']['total'] and c['bound'] == l['bound']
    assert abs(float(c['share_pct']) - 100 * l['time_us'] / lat_us) < 1e-3
PY"
check "text report: the top-10 table lists the 10 slowest layers with their shares, then the op-type table" \
  "$PY - '$T/r.txt' '$T/r.json' <<'PY'
import json, re, sys
txt = open(sys.argv[1]).read(); r = json.load(open(sys.argv[2]))
lat_us = r['totals']['latency_ps'] / 1e6
want = sorted(r['layers'], key=lambda l: -l['time_us'])[:10]
sec = txt.split('top 10 layers by time')[1].split('time by op type:')[0].strip().splitlines()[2:]
assert len(sec) == 10, sec
for line, l in zip(sec, want):
    f = line.split()
    assert f[1] == l['name'], (line, l['name'])
    assert abs(float(f[5].rstrip('%')) - 100 * l['time_us'] / lat_us) < 0.051, (line, l['time_us'])
ops = txt.split('time by op type:')[1].strip().splitlines()[1:1 + len(r['op_types'])]
assert [o.split()[0] for o in ops] == [o['op'] for o in r['op_types']], ops
PY"
check "--html: self-contained (no external script, style or URL)" \
  "! grep -o '<script src\|<link \|https\?://[^\"'\'' ]*' '$T/r.html' | grep -v -x 'http://www.w3.org/2000/svg'"

CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -n "$CHROMIUM" ]; then
  chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
               --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@" 2>>"$T/chrome.err"; }
  chrome --dump-dom "file://$T/r.html" >"$T/dom.html"
  chrome --hide-scrollbars --window-size=1300,1800 --screenshot="$T/shot.png" "file://$T/r.html" >/dev/null
  [ -n "${NPUSIM_REPORT_SCREENSHOT:-}" ] && cp "$T/shot.png" "$NPUSIM_REPORT_SCREENSHOT"
  check "--html in Chromium: one bar per layer, one roofline point per NPU layer, a timeline span per NPU layer and core, fallbacks" \
    "$PY - '$T/dom.html' '$T/r.json' <<'PY'
import json, sys
from html.parser import HTMLParser
r = json.load(open(sys.argv[2]))
class Dom(HTMLParser):
    def __init__(self):
        super().__init__(); self.n = {}; self.rendered = False; self.bars = []; self.pts = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'body' and a.get('data-rendered') == 'yes': self.rendered = True
        k = (tag, a.get('class', ''))
        self.n[k] = self.n.get(k, 0) + 1
        if k == ('rect', 'bar'): self.bars.append(a['data-layer'])
        if k == ('circle', 'roof-pt'): self.pts.append(a['data-layer'])
d = Dom(); d.feed(open(sys.argv[1]).read())
assert d.rendered, 'the page script did not finish'
assert d.bars == [l['name'] for l in r['layers']], (len(d.bars), len(r['layers']))
npu = [l['name'] for l in r['layers'] if l['unit'] == 'NPU']
assert sorted(d.pts) == sorted(npu), (len(d.pts), len(npu))
spans = sum(len(l['cores'].split(',')) for l in r['layers'] if l['unit'] == 'NPU' and l['end_ps'] > l['start_ps']) + \
        sum(1 for l in r['layers'] if l['unit'] == 'CPU' and l['end_ps'] > l['start_ps'])
assert d.n.get(('rect', 'span'), 0) == spans, (d.n.get(('rect', 'span')), spans)
assert d.n.get(('tr', 'fallback'), 0) == sum(l['unit'] == 'CPU' for l in r['layers'])
assert d.n.get(('polyline', 'roof-line'), 0) == 3, 'two bandwidth roofs and the compute roof'
PY"
  check "--html screenshot is not blank" "$PY '$HERE/png_stats.py' '$T/shot.png'"
else
  echo "skip - chromium not installed (HTML checks)"
fi

# compare over every RKNPU SoC: one row per profile, each row what `npusim run` reports.
"$NPUSIM" compare "$M" --platform all -j 2 -q --csv "$T/c.csv" --json "$T/c.json" --html "$T/c.html" >"$T/c.txt" 2>&1
check "compare --platform all exits 0" "[ $? = 0 ]"
for p in rk3566 rv1106; do
  "$NPUSIM" run --platform $p "$M" --mode timing --quiet --report "$T/$p.json" >/dev/null 2>&1
done
check "compare: a row per RKNPU profile; rows equal separate npusim run reports; CSV parses" \
  "$PY - '$T/c.json' '$T/c.csv' '$T/rk3566.json' '$T/rv1106.json' <<'PY'
import csv, json, os, sys
c = json.load(open(sys.argv[1]))
assert c['schema'] == 'npusim.compare' and c['schema_version'] == 1
prof = sorted(f[:-5] for f in os.listdir('$ROOT/hwdesc/profiles') if f.endswith('.json'))
assert [r['platform'] for r in c['rows']] == prof, [r['platform'] for r in c['rows']]
assert all(r['status'] == 'ok' for r in c['rows'])
for path in sys.argv[3:]:
    rep = json.load(open(path)); row = next(r for r in c['rows'] if r['platform'] == rep['platform'])
    t = rep['totals']
    assert row['latency_ms'] == t['latency_ms'] and row['inference_ms'] == t['inference_ms'], (row, t)
    assert row['ddr_read_bytes'] == t['ddr_read_bytes'] and row['calibration'] == rep['calibration']['status']
    assert abs(row['npu_share_pct'] - 100 * t['npu_ps'] / t['latency_ps']) < 1e-9
rows = list(csv.DictReader(open(sys.argv[2], newline='')))
assert [r['platform'] for r in rows] == prof and all(float(r['latency_ms']) > 0 for r in rows)
PY"
check "compare: core masks that do not fit a SoC are left out with a note" \
  "'$NPUSIM' compare '$M' --platform rk3566,rk3588 --core-mask 0,0_1_2 -q >'$T/c2.txt' 2>&1 && [ \$(grep -c ' ok\$' '$T/c2.txt') = 3 ] && grep -q 'note: core mask 0_1_2 left out on rk3566' '$T/c2.txt'"
"$NPUSIM" compare "$M" --platform rk3588,nosuch -q >"$T/c3.txt" 2>&1
rc=$?
check "compare: an unknown platform is one error line, exit 2" \
  "[ $rc = 2 ] && [ \$(wc -l <'$T/c3.txt') = 1 ] && grep -q \"^npusim: error: --platform nosuch: unknown platform 'nosuch'\" '$T/c3.txt'"
if [ -n "$CHROMIUM" ]; then
  chrome --dump-dom "file://$T/c.html" >"$T/cdom.html"
  check "compare --html in Chromium: three bar charts with a bar per SoC" \
    "[ \$(grep -o 'class=\"cmp-bar\"' '$T/cdom.html' | wc -l) = \$((3 * \$(ls '$ROOT/hwdesc/profiles' | grep -c '\.json\$'))) ] && grep -q 'data-rendered=\"yes\"' '$T/cdom.html'"
fi
"$NPUSIM" run --csv "$T/x.csv" >"$T/x.txt" 2>&1
rc=$?
check "--csv on a layer description is an error naming the option, exit 2" "[ $rc = 2 ] && grep -q -- '--csv does not apply to layer runs' '$T/x.txt'"

[ $fails = 0 ] && echo "all report-file checks passed" || echo "$fails report-file check(s) failed"
exit $((fails > 0))
