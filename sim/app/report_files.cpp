// SPDX-License-Identifier: MIT
#include "app/report_files.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "app/report_rollup.h"
#include "sweep/html_kit.h"

namespace sim {

namespace {

using ojson = nlohmann::ordered_json;

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

/// Elements of a shape written "1x32x112x112".
uint64_t elements(const std::string& shape) {
    if (shape.empty()) return 0;
    uint64_t n = 1;
    size_t pos = 0;
    while (pos < shape.size()) {
        const size_t next = std::min(shape.find('x', pos), shape.size());
        try {
            n *= std::stoull(shape.substr(pos, next - pos));
        } catch (const std::exception&) {
            return 0;
        }
        pos = next + 1;
    }
    return n;
}

const char* kCss = R"CSS(
.bars,.roof,.timeline{margin-bottom:6px}.note{color:#666;font-size:12px;max-width:900px}
td.num{text-align:right}
)CSS";

// Draws the per-layer bars, the roofline and the NPU timeline from the embedded data (htmlkit's
// helpers: el, fmt, niceTicks, frame).
const char* kScript = R"JS(
(function(){
const D = JSON.parse(document.getElementById('run-data').textContent);
const BOUND = {compute:'#1f77b4', memory:'#ff7f0e', overhead:'#9a9a9a', host:'#2ca02c', '':'#cccccc'};
const colour = l => BOUND[l.bound] !== undefined ? BOUND[l.bound] : '#8c564b';
const legend = (host) => {
  const d = document.createElement('div'); d.className = 'legend';
  for (const [k, c] of Object.entries(BOUND)) if (k) {
    const s = document.createElement('span'); s.innerHTML = '<i class="sw" style="background:' + c + '"></i>' + k;
    d.appendChild(s);
  }
  host.appendChild(d);
};

// Per-layer bars: one rect.bar per layer, in graph order, height = time.
(function bars() {
  const host = document.getElementById('bars');
  const n = D.layers.length, W = Math.max(640, Math.min(1400, 12 * n + 80)), H = 260;
  const f = frame(host, 'bars', 'time per layer (us), graph order', [0, Math.max(1, n - 1)], D.layers.map(l => l.time_us),
                  null, 'layer', 'time (us)', {W: W, H: H, logx: false});
  const bw = Math.max(1, (W - 52 - 24) / Math.max(n, 1) - 1);
  D.layers.forEach((l, i) => {
    const x = 52 + i * (W - 52 - 24) / Math.max(n, 1), y = f.sy(l.time_us);
    const r = el('rect', {class: 'bar', x: x, y: y, width: bw, height: Math.max(0, f.sy(0) - y), fill: colour(l),
                          'data-layer': l.name}, f.svg);
    el('title', {}, r, l.name + ' (' + l.op + ', ' + l.unit + '): ' + l.time_us.toFixed(3) + ' us, ' +
       l.share.toFixed(1) + '% of the latency, ' + (l.bound || 'view'));
  });
  legend(host);
})();

// Roofline: every NPU layer at (ops per DDR byte, achieved ops/s) under the SoC's roofs.
(function roofline() {
  const host = document.getElementById('roofline');
  const pts = D.layers.filter(l => l.unit === 'NPU').map(l => {
    const bytes = l.ddr_bytes > 0 ? l.ddr_bytes : 1;
    const t = Math.max(l.time_us, 1e-6) * 1e-6;
    return {l: l, ai: l.ops / bytes, perf: l.ops / t / 1e9};
  });
  const R = D.roofs;
  const ais = pts.map(p => p.ai).filter(v => v > 0);
  const xlo = Math.pow(10, Math.floor(Math.log10(Math.min(...ais, R.ridge)))),
        xhi = Math.pow(10, Math.ceil(Math.log10(Math.max(...ais, R.ridge))));
  const decades = [];
  for (let v = xlo; v <= xhi * 1.0001; v *= 10) decades.push(v);
  const perfs = pts.map(p => p.perf).filter(v => v > 0);
  const ys = perfs.concat([R.compute_gops, Math.min(R.compute_gops, R.bw_peak_gbs * xlo)]);
  const f = frame(host, 'roof', 'roofline: NPU layers vs ' + D.platform + ' roofs', decades, ys, null,
                  'ops per DDR byte (log)', 'GOP/s (log)', {W: 640, H: 360, logx: true, logy: true});
  const line = (pts2, cls, stroke, dash) => {
    el('polyline', {class: cls, points: pts2.map(([x, y]) => f.sx(x) + ',' + f.sy(y)).join(' '), fill: 'none',
                    stroke: stroke, 'stroke-width': 1.5, 'stroke-dasharray': dash || ''}, f.svg);
  };
  for (const [bw, name, dash] of [[R.bw_peak_gbs, 'DDR peak', ''], [R.bw_sustained_gbs, 'DDR sustained', '4 3']]) {
    const ridge = R.compute_gops / bw;
    line([[xlo, bw * xlo], [Math.min(ridge, xhi), Math.min(R.compute_gops, bw * xhi)]], 'roof-line', '#d62728', dash);
    el('text', {x: f.sx(xlo) + 4, y: f.sy(bw * xlo) - 4}, f.svg, name + ' ' + bw.toFixed(1) + ' GB/s');
  }
  line([[Math.min(R.ridge, xhi), R.compute_gops], [xhi, R.compute_gops]], 'roof-line', '#d62728');
  el('text', {x: f.sx(xhi) - 4, y: f.sy(R.compute_gops) - 4, 'text-anchor': 'end'}, f.svg,
     'compute ' + fmt(R.compute_gops) + ' GOP/s (' + R.cores + ' core' + (R.cores > 1 ? 's' : '') + ')');
  for (const p of pts) {
    const c = el('circle', {class: 'roof-pt', cx: f.sx(Math.min(Math.max(p.ai, xlo), xhi)), cy: f.sy(Math.max(p.perf, 1e-9)),
                            r: 3, fill: colour(p.l), 'fill-opacity': 0.8, 'data-layer': p.l.name}, f.svg);
    el('title', {}, c, p.l.name + ' (' + p.l.op + '): ' + p.ai.toFixed(2) + ' ops/B, ' + p.perf.toFixed(1) + ' GOP/s, ' +
       p.l.bound);
  }
  legend(host);
})();

// NPU utilisation timeline: a lane per core and one for the host CPU, a rect per layer span.
(function timeline() {
  const host = document.getElementById('timeline');
  const lanes = D.cores.map(c => 'core ' + c).concat(['host CPU']);
  const W = 1000, L = 90, Rm = 20, T = 20, lh = 22, H = T + lanes.length * lh + 34;
  const svg = el('svg', {class: 'chart timeline', width: W, height: H, viewBox: `0 0 ${W} ${H}`}, host);
  el('text', {class: 'title', x: L, y: 12}, svg, 'NPU utilisation over the ' + D.latency_ms.toFixed(3) + ' ms latency');
  const end = D.latency_ms * 1000 || 1;
  const sx = us => L + us / end * (W - L - Rm);
  lanes.forEach((n, k) => {
    const busy = k < D.cores.length ? D.busy_pct[k] : null;
    el('text', {x: 4, y: T + k * lh + 14}, svg, n + (busy !== null ? ' ' + busy.toFixed(0) + '%' : ''));
    el('line', {class: 'grid', x1: L, x2: W - Rm, y1: T + (k + 1) * lh, y2: T + (k + 1) * lh}, svg);
  });
  for (const l of D.layers) {
    if (l.end_us <= l.start_us) continue;
    const ks = l.unit === 'CPU' ? [D.cores.length] : l.cores.map(c => D.cores.indexOf(c)).filter(k => k >= 0);
    for (const k of ks) {
      const r = el('rect', {class: 'span', x: sx(l.start_us), y: T + k * lh + 3, width: Math.max(0.5, sx(l.end_us) - sx(l.start_us)),
                            height: lh - 6, fill: colour(l)}, svg);
      el('title', {}, r, l.name + ': ' + l.start_us.toFixed(1) + '-' + l.end_us.toFixed(1) + ' us');
    }
  }
  for (const t of niceTicks(0, end, 8)) {
    if (t > end) continue;
    el('line', {x1: sx(t), x2: sx(t), y1: H - 30, y2: H - 26, stroke: '#999'}, svg);
    el('text', {x: sx(t), y: H - 16, 'text-anchor': 'middle'}, svg, fmt(t) + ' us');
  }
})();
document.body.setAttribute('data-rendered', 'yes');
})();
)JS";

}  // namespace

std::string report_csv(const ModelRunResult& r) {
    std::string o =
        "layer,op,unit,cores,tasks,input_shape,output_shape,macs,macs_padded,fetch_cycles,dma_read_cycles,"
        "compute_cycles,write_cycles,overhead_cycles,total_cycles,start_us,end_us,time_us,share_pct,ddr_read_bytes,"
        "ddr_write_bytes,sram_read_bytes,sram_write_bytes,mac_utilisation,bound,cpu_reason,check\n";
    for (const ModelLayerRow& l : r.layers) {
        const std::string check = !l.checked ? "" : l.check.worse ? "worse" : l.check.off_by_one ? "1 LSB" : "exact";
        o += fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.4f},{},{},{},{},{:.6f},{},{},{}\n",
            csv_field(l.name), csv_field(l.op), l.unit, csv_field(l.cores), l.tasks, l.input_shape, l.output_shape,
            l.macs, l.macs_padded, l.fetch_cycles, l.dma_read_cycles, l.compute_cycles, l.write_cycles,
            l.overhead_cycles, l.total_cycles, static_cast<double>(l.start_ps) / 1e6,
            static_cast<double>(l.end_ps) / 1e6, l.time_us, latency_share(r, l), l.ddr_read_bytes, l.ddr_write_bytes,
            l.sram_read_bytes, l.sram_write_bytes, l.mac_utilisation, l.bound, csv_field(l.cpu_reason), check);
    }
    return o;
}

std::string report_html(const ModelRunResult& r, const hw::SocProfile& soc) {
    ojson d;
    d["platform"] = r.platform;
    d["model"] = r.model;
    d["latency_ms"] = static_cast<double>(r.total_ps) / 1e9;
    d["inference_ms"] = static_cast<double>(r.inference_ps) / 1e9;
    d["cores"] = r.cores;
    ojson busy = ojson::array();
    for (int c : r.cores) {
        const auto it = r.core_busy_ps.find(c);
        busy.push_back(it == r.core_busy_ps.end() || !r.total_ps
                           ? 0.0
                           : 100.0 * static_cast<double>(it->second) / static_cast<double>(r.total_ps));
    }
    d["busy_pct"] = busy;
    // Roofs of the cores the run used: int8 MACs per cycle x 2 ops x clock; the DDR's peak and
    // sustained (x efficiency) bandwidth.
    const double cores = static_cast<double>(std::max<size_t>(1, r.cores.size()));
    const double gops =
        cores * soc.npu.int8_macs_per_cycle.value * 2.0 * static_cast<double>(soc.npu.core_clock_hz.value) / 1e9;
    const double peak = soc.mem.ddr_peak_bytes_per_s.value / 1e9;
    d["roofs"] = {{"compute_gops", gops},
                  {"cores", r.cores.size()},
                  {"bw_peak_gbs", peak},
                  {"bw_sustained_gbs", peak * soc.mem.ddr_efficiency.value},
                  {"ridge", gops / peak}};
    ojson layers = ojson::array();
    for (const ModelLayerRow& l : r.layers) {
        ojson x;
        x["name"] = l.name;
        x["op"] = l.op;
        x["unit"] = l.unit;
        x["time_us"] = l.time_us;
        x["share"] = latency_share(r, l);
        x["start_us"] = static_cast<double>(l.start_ps) / 1e6;
        x["end_us"] = static_cast<double>(l.end_ps) / 1e6;
        ojson cs = ojson::array();
        for (int c : r.cores)
            if (("," + l.cores + ",").find("," + std::to_string(c) + ",") != std::string::npos) cs.push_back(c);
        x["cores"] = cs;
        // Work for the roofline: 2 ops per MAC; layers without MACs (elementwise, pooling on the
        // DPU/PPU) count one op per output element.
        x["ops"] = l.macs ? 2.0 * static_cast<double>(l.macs) : static_cast<double>(elements(l.output_shape));
        x["ddr_bytes"] = l.ddr_read_bytes + l.ddr_write_bytes;
        x["bound"] = l.bound;
        layers.push_back(x);
    }
    d["layers"] = layers;

    std::string body = fmt::format(
        "<h1>npusim run: {} on {}</h1>\n<div class=\"sub\">{} ({}), mode {}, core mask {}: latency {:.3f} ms "
        "({:.1f} FPS), inference {:.3f} ms; {} layers ({} NPU, {} CPU, {} view), {} NPU tasks; "
        "DDR {:.2f} MiB read, {:.2f} MiB written</div>\n",
        htmlkit::escape(r.model), htmlkit::escape(r.platform), htmlkit::escape(r.platform_name),
        htmlkit::escape(r.platform), r.mode, htmlkit::escape(r.core_mask.empty() ? "auto" : r.core_mask),
        static_cast<double>(r.total_ps) / 1e9, r.total_ps ? 1e12 / static_cast<double>(r.total_ps) : 0.0,
        static_cast<double>(r.inference_ps) / 1e9, r.layers.size(), r.npu_layers, r.cpu_layers, r.view_layers, r.tasks,
        static_cast<double>(r.ddr_read_bytes) / 1048576.0, static_cast<double>(r.ddr_write_bytes) / 1048576.0);
    body += "<div class=\"sub\">timing trust: " + htmlkit::escape(r.calibration.status) + " - " +
            htmlkit::escape(r.calibration.summary) + "</div>\n";
    body += "<h2>Time per layer</h2>\n<div id=\"bars\"></div>\n";
    body +=
        "<h2>Roofline</h2>\n<div id=\"roofline\"></div>\n<div class=\"note\">x: operations per byte of DDR "
        "traffic (2 per MAC; one per output element for layers without MACs), y: operations per second the "
        "layer achieved; roofs: the cores' int8 MAC rate and the DDR bandwidth, peak and sustained.</div>\n";
    body += "<h2>NPU utilisation timeline</h2>\n<div id=\"timeline\"></div>\n";
    // The tables are plain HTML (readable without JS).
    body +=
        "<h2>Top layers by time</h2>\n<table id=\"top\"><tr><th>#</th><th>layer</th><th>op</th><th>unit</th>"
        "<th>time (us)</th><th>share</th><th>bound</th></tr>\n";
    size_t k = 0;
    for (size_t i : top_layers(r, 10)) {
        const ModelLayerRow& l = r.layers[i];
        body += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.3f}</td><td "
            "class=\"num\">{:.1f}%</td><td>{}</td></tr>\n",
            ++k, htmlkit::escape(l.name), htmlkit::escape(l.op), l.unit, l.time_us, latency_share(r, l),
            htmlkit::escape(l.bound));
    }
    body +=
        "</table>\n<h2>Time by op type</h2>\n<table id=\"ops\"><tr><th>op type</th><th>unit</th><th>layers</th>"
        "<th>time (us)</th><th>share</th><th>MACs</th></tr>\n";
    for (const OpRollup& x : op_rollup(r))
        body += fmt::format(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3f}</td><td "
            "class=\"num\">{:.1f}%</td><td class=\"num\">{}</td></tr>\n",
            htmlkit::escape(x.op), x.unit, x.layers, x.time_us, x.share_pct, x.macs);
    body +=
        "</table>\n<h2>CPU fallbacks</h2>\n<table id=\"fallbacks\"><tr><th>layer</th><th>op</th><th>reason</th>"
        "<th>time (us)</th><th>why</th></tr>\n";
    size_t fallbacks = 0;
    for (const ModelLayerRow& l : r.layers)
        if (l.unit == "CPU") {
            ++fallbacks;
            body += fmt::format(
                "<tr class=\"fallback\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.3f}</td>"
                "<td>{}</td></tr>\n",
                htmlkit::escape(l.name), htmlkit::escape(l.op), htmlkit::escape(l.cpu_reason), l.time_us,
                htmlkit::escape(l.note));
        }
    body += "</table>\n";
    if (!fallbacks) body += "<p>every layer runs on the NPU.</p>\n";

    std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    o += fmt::format("<title>npusim {} on {}</title>\n<style>{}{}</style></head>\n<body>\n", htmlkit::escape(r.model),
                     htmlkit::escape(r.platform), htmlkit::kStyle, kCss);
    o += body;
    o += "<script type=\"application/json\" id=\"run-data\">" + htmlkit::embed_json(d.dump()) + "</script>\n";
    o += "<script>" + std::string(htmlkit::kHelpers) + "</script>\n";
    o += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
    return o;
}

std::string write_report_files(const ModelRunResult& r, const hw::SocProfile& soc, const trace::TraceWriter& tw,
                               const std::string& vcd_path, const std::string& csv_path, const std::string& html_path) {
    if (!vcd_path.empty() && !tw.write_vcd(vcd_path)) return fmt::format("cannot write VCD '{}'", vcd_path);
    if (!csv_path.empty() && !write_text(csv_path, report_csv(r)))
        return fmt::format("cannot write CSV '{}'", csv_path);
    if (!html_path.empty() && !write_text(html_path, report_html(r, soc)))
        return fmt::format("cannot write HTML report '{}'", html_path);
    return {};
}

}  // namespace sim
