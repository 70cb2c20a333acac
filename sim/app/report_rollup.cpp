// SPDX-License-Identifier: MIT
#include "app/report_rollup.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace sim {

double latency_share(const ModelRunResult& r, const ModelLayerRow& l) {
    return r.total_ps ? 100.0 * (l.time_us * 1e6) / static_cast<double>(r.total_ps) : 0.0;
}

std::vector<size_t> top_layers(const ModelRunResult& r, size_t n) {
    std::vector<size_t> idx(r.layers.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return r.layers[a].time_us > r.layers[b].time_us; });
    idx.resize(std::min(n, idx.size()));
    return idx;
}

std::vector<OpRollup> op_rollup(const ModelRunResult& r) {
    std::vector<OpRollup> v;
    for (const ModelLayerRow& l : r.layers) {
        auto it = std::find_if(v.begin(), v.end(), [&](const OpRollup& o) { return o.op == l.op; });
        if (it == v.end()) it = v.insert(v.end(), OpRollup{l.op, l.unit});
        if (it->unit != l.unit && it->unit.find(l.unit) == std::string::npos) it->unit += "+" + l.unit;
        ++it->layers;
        it->time_us += l.time_us;
        it->macs += l.macs;
        it->ddr_bytes += l.ddr_read_bytes + l.ddr_write_bytes;
    }
    for (OpRollup& o : v) o.share_pct = r.total_ps ? 100.0 * o.time_us * 1e6 / static_cast<double>(r.total_ps) : 0.0;
    std::stable_sort(v.begin(), v.end(), [](const OpRollup& a, const OpRollup& b) { return a.time_us > b.time_us; });
    return v;
}

namespace {
std::string mib(uint64_t b) { return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1024.0 * 1024.0)); }
}  // namespace

std::string rollup_text(const ModelRunResult& r, size_t top_n) {
    if (r.layers.empty()) return {};
    std::string o;
    const std::vector<size_t> top = top_layers(r, top_n);
    size_t wn = 5, wo = 2;
    for (size_t i : top) {
        wn = std::max(wn, std::min<size_t>(r.layers[i].name.size(), 40));
        wo = std::max(wo, std::min<size_t>(r.layers[i].op.size(), 24));
    }
    double cum = 0;
    o += fmt::format("\ntop {} layers by time (share of the {:.3f} ms latency):\n", top.size(),
                     static_cast<double>(r.total_ps) / 1e9);
    o += fmt::format("  {:>3} {:<{}} {:<{}} {:<4} {:>10} {:>6} {:>6}  {:<8}\n", "#", "layer", wn, "op", wo, "unit",
                     "time_us", "share", "cum", "bound");
    for (size_t k = 0; k < top.size(); ++k) {
        const ModelLayerRow& l = r.layers[top[k]];
        const double s = latency_share(r, l);
        cum += s;
        o += fmt::format("  {:>3} {:<{}} {:<{}} {:<4} {:>10.3f} {:>5.1f}% {:>5.1f}%  {:<8}\n", k + 1, l.name, wn, l.op,
                         wo, l.unit, l.time_us, s, cum, l.bound);
    }
    const std::vector<OpRollup> ops = op_rollup(r);
    size_t wop = 7;
    for (const OpRollup& x : ops) wop = std::max(wop, std::min<size_t>(x.op.size(), 24));
    o += "time by op type:\n";
    o += fmt::format("  {:<{}} {:<7} {:>6} {:>10} {:>6} {:>9} {:>11}\n", "op type", wop, "unit", "layers", "time_us",
                     "share", "MACs", "DDR");
    for (const OpRollup& x : ops)
        o += fmt::format("  {:<{}} {:<7} {:>6} {:>10.3f} {:>5.1f}% {:>8.2f}M {:>11}\n", x.op, wop, x.unit, x.layers,
                         x.time_us, x.share_pct, static_cast<double>(x.macs) / 1e6, mib(x.ddr_bytes));
    return o;
}

}  // namespace sim
