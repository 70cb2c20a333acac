// SPDX-License-Identifier: MIT
// The sweep's HTML page: one self-contained file (inline CSS, inline JS drawing inline SVG from
// data embedded in the page; no network, no external script). Plots: latency against a chosen
// input per model and SoC (one line per combination of the other inputs), the Pareto front of
// latency against DDR traffic or executed MACs per model, and the layers whose bound (compute,
// memory, overhead, host) changes across the sweep, as a layer x point map.
#include <fmt/format.h>

#include <map>

#include "html_kit.h"
#include "merge.h"

namespace sweep {

namespace {

using ojson = nlohmann::ordered_json;



const char* kScript = R"JS(
(function(){
'use strict';
const D = JSON.parse(document.getElementById('sweep-data').textContent);
const PALETTE = ['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f','#bcbd22','#17becf'];
const BOUND = {c:['compute','#1f77b4'], m:['memory','#ff7f0e'], o:['overhead','#9a9a9a'], h:['host CPU','#2ca02c']};
const cols = D.cols;
const ok = D.points.filter(p => p[3] === 'ok' || p[3] === 'problem');
const val = (p, k) => p[2][k];
const num = v => (v === '' ? NaN : Number(v));
const distinct = k => { const s = []; for (const p of D.points) if (!s.includes(val(p, k))) s.push(val(p, k)); return s; };
const varying = cols.map((c, k) => distinct(k).length > 1);
const numeric = cols.map((c, k) => D.points.every(p => !isNaN(num(val(p, k)))));

const short = m => m.replace(/^.*\//, '').replace(/\.(onnx|tflite)$/, '');
function label(p, ks) { return ks.map(k => cols[k] + '=' + val(p, k)).join(' '); }

function latencyCharts(host, xk) {
  host.textContent = '';
  const groups = new Map();
  for (const p of ok) {
    const g = short(val(p, 0)) + ' on ' + val(p, 1);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(p);
  }
  const others = cols.map((c, k) => k).filter(k => k > 1 && k !== xk && varying[k]);
  const xcat = numeric[xk] ? null : distinct(xk);
  for (const [g, pts] of groups) {
    const div = document.createElement('div');
    host.appendChild(div);
    const xs = pts.map(p => numeric[xk] ? num(val(p, xk)) : 0), ys = pts.map(p => p[4]);
    const f = frame(div, 'latency', g, xs, ys, xcat, cols[xk], 'latency (ms)');
    const series = new Map();
    for (const p of pts) {
      const s = label(p, others) || 'all';
      if (!series.has(s)) series.set(s, []);
      series.get(s).push(p);
    }
    // Colour by the first other input; one line per combination of all the other inputs.
    const ck = others.length ? others[0] : -1;
    const cvals = ck >= 0 ? distinct(ck) : ['all'];
    const colorOf = p => PALETTE[(ck >= 0 ? cvals.indexOf(val(p, ck)) : 0) % PALETTE.length];
    const leg = document.createElement('div');
    leg.className = 'legend';
    for (const [s, sp] of series) {
      const color = colorOf(sp[0]);
      const X = p => f.sx(numeric[xk] ? num(val(p, xk)) : val(p, xk));
      sp.sort((a, b) => X(a) - X(b) || a[0] - b[0]);
      el('polyline', {class: 'series', fill: 'none', stroke: color, 'stroke-width': 1.5,
                      points: sp.map(p => X(p) + ',' + f.sy(p[4])).join(' ')}, f.svg);
      for (const p of sp) {
        const c = el('circle', {class: 'pt', cx: X(p), cy: f.sy(p[4]), r: 2.5, fill: color}, f.svg);
        el('title', {}, c, `${p[1]}: ${label(p, cols.map((c, k) => k))}\nlatency ${p[4]} ms`);
      }
    }
    const present = cvals.filter(v => ck < 0 || pts.some(p => val(p, ck) === v));
    for (const v of present) {
      const sw = document.createElement('span');
      sw.innerHTML = `<i class="sw" style="background:${PALETTE[cvals.indexOf(v) % PALETTE.length]}"></i>`;
      sw.appendChild(document.createTextNode(ck >= 0 ? cols[ck] + '=' + v : 'all points'));
      leg.appendChild(sw);
    }
    if (others.length > 1)
      leg.appendChild(document.createTextNode(`(${series.size} lines: one per ${others.map(k => cols[k]).join(' x ')})`));
    div.appendChild(leg);
  }
}

function paretoCharts(host, metric) {
  host.textContent = '';
  const models = distinct(0);
  const mv = p => metric === 'ddr' ? p[5] / 1048576 : p[6] / 1e6;
  const mname = metric === 'ddr' ? 'DDR traffic, read + write (MiB)' : 'MACs executed, channels padded (M)';
  for (const m of models) {
    const pts = ok.filter(p => val(p, 0) === m);
    if (!pts.length) continue;
    const div = document.createElement('div');
    host.appendChild(div);
    const f = frame(div, 'pareto', short(m) + ': latency vs ' + (metric === 'ddr' ? 'DDR traffic' : 'MACs'),
                    pts.map(mv), pts.map(p => p[4]), null, mname, 'latency (ms)');
    // Pareto front (both minimised): by metric, then latency; keep each point faster than all before.
    const sorted = [...pts].sort((a, b) => mv(a) - mv(b) || a[4] - b[4] || a[0] - b[0]);
    const front = [];
    let best = Infinity;
    for (const p of sorted) if (p[4] < best) { front.push(p); best = p[4]; }
    for (const p of pts) {
      if (front.includes(p)) continue;
      const c = el('circle', {class: 'pt', cx: f.sx(mv(p)), cy: f.sy(p[4]), r: 2.2, fill: '#bbb'}, f.svg);
      el('title', {}, c, `${p[1]}: ${label(p, cols.map((c, k) => k))}`);
    }
    const path = [];
    front.forEach((p, i) => {
      if (i) path.push(f.sx(mv(p)) + ',' + f.sy(front[i - 1][4]));
      path.push(f.sx(mv(p)) + ',' + f.sy(p[4]));
    });
    el('polyline', {class: 'front-line', fill: 'none', stroke: '#d62728', 'stroke-width': 1.5, points: path.join(' ')}, f.svg);
    for (const p of front) {
      const c = el('circle', {class: 'front', cx: f.sx(mv(p)), cy: f.sy(p[4]), r: 3.5, fill: '#d62728'}, f.svg);
      el('title', {}, c, `Pareto: ${p[1]}: ${label(p, cols.map((c, k) => k))}\nlatency ${p[4]} ms, ${fmt(mv(p))}`);
    }
    const leg = document.createElement('div');
    leg.className = 'legend';
    leg.textContent = `${front.length} of ${pts.length} points on the front: ` +
      front.map(p => label(p, cols.map((c, k) => k).filter(k => k > 0 && varying[k]))).join('; ');
    div.appendChild(leg);
  }
}

function boundMaps(host, xk) {
  host.textContent = '';
  for (const m of distinct(0)) {
    const names = D.layers[m] || [];
    const pts = ok.filter(p => val(p, 0) === m && p[8]);
    const xv = p => numeric[xk] ? num(val(p, xk)) : distinct(xk).indexOf(val(p, xk));
    pts.sort((a, b) => distinct(1).indexOf(val(a, 1)) - distinct(1).indexOf(val(b, 1)) || xv(a) - xv(b) || a[0] - b[0]);
    const rows = [];
    names.forEach((n, i) => {
      const seen = new Set(pts.map(p => p[8][i]).filter(b => b in BOUND));
      if (seen.size > 1) rows.push(i);
    });
    const h = document.createElement('h3');
    h.style.fontSize = '13px';
    h.textContent = `${m}: ${rows.length} of ${names.length} layers change their bound across ${pts.length} points`;
    host.appendChild(h);
    if (!rows.length) continue;
    const cw = Math.max(2, Math.min(14, Math.floor(900 / pts.length))), ch = 12, LW = 230;
    const W = LW + cw * pts.length + 10, H = 16 + ch * rows.length + 4;
    const svg = el('svg', {class: 'chart boundmap', width: W, height: H, viewBox: `0 0 ${W} ${H}`}, host);
    // platform boundaries along the columns
    let prev = null;
    pts.forEach((p, j) => {
      if (val(p, 1) !== prev) {
        el('text', {x: LW + j * cw + 1, y: 11}, svg, val(p, 1));
        el('line', {x1: LW + j * cw, x2: LW + j * cw, y1: 2, y2: H, stroke: '#444', 'stroke-width': 0.6}, svg);
        prev = val(p, 1);
      }
    });
    rows.forEach((i, r) => {
      const g = el('g', {class: 'bound-row', 'data-layer': names[i][0]}, svg);
      const y = 16 + r * ch;
      el('text', {x: 2, y: y + 9}, g, (names[i][0] + ' (' + names[i][1] + ')').slice(0, 40));
      pts.forEach((p, j) => {
        const b = p[8][i];
        if (!(b in BOUND)) return;
        const c = el('rect', {class: 'cell b-' + b, x: LW + j * cw, y: y, width: cw, height: ch - 1, fill: BOUND[b][1]}, g);
        el('title', {}, c, `${names[i][0]}: ${BOUND[b][0]}-bound at ${p[1]} (${label(p, cols.map((c, k) => k).filter(k => k > 0))})`);
      });
    });
  }
  const leg = document.createElement('div');
  leg.className = 'legend';
  leg.innerHTML = Object.values(BOUND).map(([n, c]) => `<span><i class="sw" style="background:${c}"></i>${n}</span>`).join('');
  host.appendChild(leg);
}

// Controls: the x input (any varying input but model and platform, which split the charts).
const xsel = document.getElementById('xsel'), msel = document.getElementById('msel');
const cands = cols.map((c, k) => k).filter(k => k > 1 && varying[k]);
if (!cands.length) cands.push(1);
for (const k of cands) { const o = document.createElement('option'); o.value = k; o.textContent = cols[k]; xsel.appendChild(o); }
const firstParam = cands.find(k => k >= 4 && numeric[k]);
xsel.value = String(firstParam !== undefined ? firstParam : cands[0]);
function draw() {
  const xk = Number(xsel.value);
  latencyCharts(document.getElementById('latency'), xk);
  paretoCharts(document.getElementById('pareto'), msel.value);
  boundMaps(document.getElementById('bounds'), xk);
}
xsel.addEventListener('change', draw);
msel.addEventListener('change', draw);
draw();
const bad = D.points.filter(p => p[3] !== 'ok');
const ft = document.getElementById('failed');
if (!bad.length) ft.textContent = 'every point ran.';
else {
  const t = document.createElement('table');
  t.innerHTML = '<tr><th>point</th><th>status</th><th>inputs</th><th>error</th></tr>';
  for (const p of bad) {
    const tr = document.createElement('tr');
    for (const v of [p[1], p[3], label(p, cols.map((c, k) => k)), p[9]]) {
      const td = document.createElement('td'); td.textContent = v; tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  ft.textContent = '';
  ft.appendChild(t);
}
document.body.setAttribute('data-rendered', 'yes');
})();
)JS";

}  // namespace

std::string merged_html(const Merged& m) {
    // Compact data: [index, id, [model, platform, core mask, mode, params...], status, latency ms,
    // DDR bytes, padded MACs, FPS, per-layer bound letters (the model's layer list), error].
    ojson cols = ojson::array({"model", "platform", "core_mask", "mode"});
    for (const std::string& k : m.param_keys) cols.push_back(k);
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> layers;  // model -> (name, op)
    std::map<std::string, std::map<std::string, size_t>> layer_index;
    for (const MergedPoint& r : m.rows)
        if (r.summary)
            for (const LayerSummary& l : r.summary->layers) {
                auto& idx = layer_index[r.point->model];
                if (idx.emplace(l.name, idx.size()).second) layers[r.point->model].emplace_back(l.name, l.op);
            }
    ojson pts = ojson::array();
    for (const MergedPoint& r : m.rows) {
        const Point& p = *r.point;
        ojson in = ojson::array({p.model, p.platform, p.core_mask, p.mode});
        for (const std::string& k : m.param_keys) {
            std::string v;
            for (const auto& [pk, pv] : p.params)
                if (pk == k) v = pv;
            in.push_back(v);
        }
        ojson row = ojson::array({p.index, p.id, in, r.status});
        if (r.summary) {
            const PointSummary& s = *r.summary;
            std::string bounds(layers[p.model].size(), '.');
            const auto& idx = layer_index[p.model];
            for (const LayerSummary& l : s.layers) bounds[idx.at(l.name)] = bound_letter(l.bound);
            for (const ojson& v : {ojson(s.latency_ms), ojson(s.ddr_read_bytes + s.ddr_write_bytes),
                                   ojson(s.macs_padded), ojson(s.fps), ojson(bounds)})
                row.push_back(v);
        } else {
            for (int i = 0; i < 5; ++i) row.push_back(nullptr);
        }
        row.push_back(r.error);
        pts.push_back(row);
    }
    ojson lj = ojson::object();
    for (const auto& [model, ls] : layers) {
        ojson a = ojson::array();
        for (const auto& [n, op] : ls) a.push_back({n, op});
        lj[model] = a;
    }
    ojson data;
    data["name"] = m.name;
    data["cols"] = cols;
    data["points"] = pts;
    data["layers"] = lj;
    const std::string json = htmlkit::embed_json(data.dump());

    std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    o += fmt::format("<title>npusim sweep {}</title>\n<style>{}</style></head>\n<body>\n", htmlkit::escape(m.name),
                     htmlkit::kStyle);
    o += fmt::format(
        "<h1>npusim sweep: {}</h1>\n<div class=\"sub\" id=\"counts\">{} points: {} ok, {} problem, {} failed, "
        "{} missing (npusim {})</div>\n",
        htmlkit::escape(m.name), m.rows.size(), m.ok, m.problem, m.failed, m.missing, htmlkit::escape(m.npusim_version));
    for (const std::string& n : m.notes) o += "<div class=\"sub\">note: " + htmlkit::escape(n) + "</div>\n";
    o += "<p>x axis <select id=\"xsel\"></select> Pareto metric <select id=\"msel\"><option value=\"ddr\">DDR "
         "traffic</option><option value=\"macs\">MACs executed</option></select></p>\n";
    o += "<h2>Latency per model and SoC</h2>\n<div class=\"charts\" id=\"latency\"></div>\n";
    o += "<h2>Pareto front (latency vs DDR traffic or MACs, per model)</h2>\n<div class=\"charts\" "
         "id=\"pareto\"></div>\n";
    o += "<h2>Per-layer bound changes</h2>\n<div id=\"bounds\"></div>\n";
    o += "<h2>Points that did not run cleanly</h2>\n<div id=\"failed\"></div>\n";
    o += "<script type=\"application/json\" id=\"sweep-data\">" + json + "</script>\n";
    o += "<script>" + std::string(htmlkit::kHelpers) + "</script>\n";
    o += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
    return o;
}

}  // namespace sweep
