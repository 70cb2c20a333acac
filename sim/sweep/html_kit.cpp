// SPDX-License-Identifier: MIT
#include "html_kit.h"

namespace htmlkit {

const char* const kStyle = R"CSS(
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:16px 24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ddd}
.sub{color:#666}.charts{display:flex;flex-wrap:wrap;gap:10px}
svg.chart{background:#fafafa;border:1px solid #e3e3e3}
svg text{font-size:10px;fill:#333}svg .title{font-size:11px;font-weight:600}
.axis line,.axis path{stroke:#999;stroke-width:1}.grid{stroke:#eee}
.legend{font-size:10px;color:#444;max-width:360px}.legend span{display:inline-block;margin-right:8px}
.sw{display:inline-block;width:9px;height:9px;margin-right:3px;vertical-align:middle}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
select{font:inherit;margin:0 12px 0 4px}
)CSS";

const char* const kHelpers = R"JS(
'use strict';
const NS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const [a, v] of Object.entries(attrs || {})) e.setAttribute(a, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v) {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e9) return (v / 1e9).toPrecision(3) + 'G';
  if (a >= 1e6) return (v / 1e6).toPrecision(3) + 'M';
  if (a >= 1e4) return (v / 1e3).toPrecision(3) + 'k';
  return Number(v.toPrecision(3)).toString();
}
function niceTicks(lo, hi, n) {
  if (hi <= lo) hi = lo + 1;
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(t);
  return out;
}
// A chart frame: scales for x (numeric: linear or log; categorical: positions) and y (linear from 0).
function frame(parent, cls, title, xs, ys, xcat, xname, yname, opts) {
  opts = opts || {};
  const W = opts.W || 360, H = opts.H || 230, L = 52, R = 24, T = 18, B = 36;
  const svg = el('svg', {class: 'chart ' + cls, width: W, height: H, viewBox: `0 0 ${W} ${H}`}, parent);
  el('text', {class: 'title', x: L, y: 12}, svg, title);
  let sx, xticks;
  if (xcat) {
    const n = xcat.length;
    sx = v => L + (n === 1 ? 0.5 : xcat.indexOf(v) / (n - 1)) * (W - L - R);
    xticks = xcat.map(v => [sx(v), v]);
  } else {
    let lo = Math.min(...xs), hi = Math.max(...xs);
    const log = opts.logx !== undefined ? opts.logx : lo > 0 && hi / lo >= 8;
    if (hi === lo) { lo = lo - 1; hi = hi + 1; }
    const f = log ? Math.log : (v => v);
    sx = v => L + (f(v) - f(lo)) / (f(hi) - f(lo)) * (W - L - R);
    const d = [...new Set(xs)].sort((a, b) => a - b);
    xticks = (d.length <= 7 ? d : (log ? d.filter((v, i) => i % Math.ceil(d.length / 6) === 0) : niceTicks(lo, hi, 5)))
      .map(v => [sx(v), fmt(v)]);
  }
  const ax = el('g', {class: 'axis'}, svg);
  let sy, yticks;
  if (opts.logy) {
    // Log y: decades between the smallest and largest value.
    const ylo = Math.pow(10, Math.floor(Math.log10(Math.min(...ys)))), yhi = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys))));
    sy = v => H - B - (Math.log(Math.max(v, ylo)) - Math.log(ylo)) / (Math.log(yhi) - Math.log(ylo) || 1) * (H - B - T);
    yticks = [];
    for (let t = ylo; t <= yhi * 1.0001; t *= 10) yticks.push(t);
  } else {
    const yhi = Math.max(...ys) * 1.06 || 1;
    sy = v => H - B - v / yhi * (H - B - T);
    yticks = niceTicks(0, yhi, 4).filter(t => t <= yhi);
  }
  for (const t of yticks) {
    el('line', {class: 'grid', x1: L, x2: W - R, y1: sy(t), y2: sy(t)}, ax);
    el('text', {x: L - 4, y: sy(t) + 3, 'text-anchor': 'end'}, ax, fmt(t));
  }
  el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B}, ax);
  el('line', {x1: L, x2: L, y1: T, y2: H - B}, ax);
  for (const [x, t] of xticks) {
    el('line', {x1: x, x2: x, y1: H - B, y2: H - B + 3}, ax);
    el('text', {x: x, y: H - B + 13, 'text-anchor': 'middle'}, ax, String(t).slice(0, 10));
  }
  el('text', {x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle'}, ax, xname);
  el('text', {x: 10, y: (T + H - B) / 2, transform: `rotate(-90 10 ${(T + H - B) / 2})`, 'text-anchor': 'middle'}, ax, yname);
  return {svg, sx, sy};
}
)JS";

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else if (c == '&')
            o += "&amp;";
        else if (c == '"')
            o += "&quot;";
        else
            o += c;
    }
    return o;
}

std::string embed_json(std::string json) {
    for (size_t pos = 0; (pos = json.find("</", pos)) != std::string::npos; pos += 3) json.replace(pos, 2, "<\\/");
    return json;
}

}  // namespace htmlkit
