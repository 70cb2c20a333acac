#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sweep's HTML page in headless Chromium (Debian chromium): the DOM after the page's script
# ran holds one latency chart per model x SoC with one marker per point, one Pareto chart per
# model whose front markers are exactly the non-dominated points (computed here from sweep.json),
# and one bound-map row per layer whose bound changes across the sweep (also computed here); the
# screenshot is not blank. Skipped (exit 77) when chromium is not installed.
source "$(dirname "$0")/common.sh"
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$CHROMIUM" ] || skip "chromium not installed (apt-get install chromium; scripts/deps.sh --ci)"
write_spec "$T/s.json"
"$NPUSIM" sweep "$T/s.json" -j 2 -q -o "$T/r" >/dev/null || fail "sweep failed"
grep -o "<script src\|<link \|https\?://[^\"' ]*" "$T/r/sweep.html" | grep -v -x "http://www.w3.org/2000/svg" && fail "the page must not load anything from outside"
chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
             --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@" 2>"$T/chrome.err"; }
chrome --dump-dom "file://$T/r/sweep.html" >"$T/dom.html" || { cat "$T/chrome.err"; fail "chromium --dump-dom failed"; }
chrome --hide-scrollbars --window-size=1280,1600 --screenshot="$T/shot.png" "file://$T/r/sweep.html" \
  || { cat "$T/chrome.err"; fail "chromium --screenshot failed"; }
[ -n "${NPUSIM_SWEEP_SCREENSHOT:-}" ] && cp "$T/shot.png" "$NPUSIM_SWEEP_SCREENSHOT"
"$PY" - "$T/r/sweep.json" "$T/dom.html" <<'PY'
import json, re, sys
from html.parser import HTMLParser

res = json.load(open(sys.argv[1]))
pts = [p for p in res["points"] if p["status"] in ("ok", "problem")]
assert len(pts) == 30, len(pts)

class Dom(HTMLParser):
    """Counts markers per chart: svg class -> list of (title, {class: count})."""
    def __init__(self):
        super().__init__()
        self.charts, self.cur, self.rendered = [], None, False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and a.get("data-rendered") == "yes": self.rendered = True
        if tag == "svg" and "chart" in a.get("class", ""):
            self.cur = {"kind": a["class"].split()[1], "title": None, "n": {}}
            self.charts.append(self.cur)
        elif self.cur is not None and tag in ("circle", "g", "rect"):
            c = a.get("class", "")
            self.cur["n"][(tag, c)] = self.cur["n"].get((tag, c), 0) + 1
        self.in_title = tag == "text" and a.get("class") == "title"
    def handle_data(self, d):
        if getattr(self, "in_title", False) and self.cur is not None and self.cur["title"] is None: self.cur["title"] = d
    def handle_endtag(self, tag):
        if tag == "svg": self.cur = None
        self.in_title = False

dom = Dom()
dom.feed(open(sys.argv[2]).read())
assert dom.rendered, "the page's script did not finish"
by = lambda k: [c for c in dom.charts if c["kind"] == k]
stem = lambda m: re.sub(r"\.(onnx|tflite)$", "", m.rsplit("/", 1)[-1])

# Latency: one chart per model x platform, one marker per point of it.
groups = {}
for p in pts: groups.setdefault(f'{stem(p["model"])} on {p["platform"]}', []).append(p)
lat = {c["title"]: c["n"].get(("circle", "pt"), 0) for c in by("latency")}
assert lat == {g: len(v) for g, v in groups.items()}, (lat, {g: len(v) for g, v in groups.items()})

# Pareto per model: front = points not dominated in (DDR bytes, latency), ties resolved as the page.
for model in sorted({p["model"] for p in pts}):
    mp = [p for p in pts if p["model"] == model]
    key = lambda p: (p["totals"]["ddr_read_bytes"] + p["totals"]["ddr_write_bytes"], p["totals"]["latency_ms"], p["index"])
    front, best = [], float("inf")
    for p in sorted(mp, key=key):
        if p["totals"]["latency_ms"] < best: front.append(p); best = p["totals"]["latency_ms"]
    charts = [c for c in by("pareto") if c["title"].startswith(stem(model) + ":")]
    assert len(charts) == 1, (model, [c["title"] for c in by("pareto")])
    n = charts[0]["n"]
    assert n.get(("circle", "front"), 0) == len(front), (model, n, len(front))
    assert n.get(("circle", "front"), 0) + n.get(("circle", "pt"), 0) == len(mp), (model, n)

# Bound map: rows = layers with more than one bound among the model's points.
maps = by("boundmap")
want_rows = []
for model in sorted({p["model"] for p in pts}, key=lambda m: [p["model"] for p in res["points"]].index(m)):
    bounds = {}
    for p in pts:
        if p["model"] != model: continue
        for l in p["layers"]:
            if l["bound"] in ("compute", "memory", "overhead", "host"): bounds.setdefault(l["name"], set()).add(l["bound"])
    rows = sum(1 for b in bounds.values() if len(b) > 1)
    if rows: want_rows.append(rows)
assert [c["n"].get(("g", "bound-row"), 0) for c in maps] == want_rows, ([c["n"] for c in maps], want_rows)
assert sum(want_rows) > 0, "the sweep should change some layer's bound"

print(f"DOM: {len(by('latency'))} latency charts, {len(by('pareto'))} Pareto charts, bound rows {want_rows}")
PY
# Screenshot: real content, not a blank page (tests/e2e/png_stats.py decodes the PNG).
"$PY" "$(dirname "$0")/../e2e/png_stats.py" "$T/shot.png" || fail "screenshot nearly blank"
echo "PASS"
