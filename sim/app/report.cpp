// SPDX-License-Identifier: MIT
#include "app/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sim {

namespace {
std::string si(uint64_t v) {
    if (v >= 1000000000) return fmt::format("{:.2f}G", v / 1e9);
    if (v >= 1000000) return fmt::format("{:.2f}M", v / 1e6);
    if (v >= 1000) return fmt::format("{:.1f}K", v / 1e3);
    return fmt::format("{}", v);
}
std::string bytes(uint64_t v) {
    if (v >= (1u << 20)) return fmt::format("{:.2f} MiB", v / 1048576.0);
    if (v >= 1024) return fmt::format("{:.1f} KiB", v / 1024.0);
    return fmt::format("{} B", v);
}
}  // namespace

std::string report_text(const RunResult& r) {
    std::string o;
    o += fmt::format("platform {} ({}), mode {}, NPU clock {} MHz\n", r.platform, r.platform_name, r.mode,
                     r.clock_hz / 1000000);
    o += fmt::format("model {}\n\n", r.model);
    o += fmt::format("{:<14} {:<28} {:<12} {:<12} {:>8} {:>5} {:>4} {:>7} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9} {:>10} {:>10} {:>6}  {}\n",
                     "layer", "op", "input", "output", "MACs", "core", "task", "fetch", "dma_rd", "compute", "write",
                     "ovh", "cycles", "time_us", "DDR rd", "DDR wr", "util", "bound");
    for (const LayerReport& l : r.layers)
        o += fmt::format("{:<14} {:<28} {:<12} {:<12} {:>8} {:>5} {:>4} {:>7} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9.3f} {:>10} {:>10} {:>5.1f}%  {}\n",
                         l.name, l.op, l.input_shape, l.output_shape, si(l.macs), l.core, l.tasks, l.fetch_cycles,
                         l.dma_read_cycles, l.compute_cycles, l.write_cycles, l.overhead_cycles, l.total_cycles,
                         l.time_us, bytes(l.ddr_read_bytes), bytes(l.ddr_write_bytes), 100.0 * l.mac_utilisation,
                         l.bound);
    const double us = static_cast<double>(r.total_ps) / 1e6;
    o += fmt::format("\ntotal: {} cycles, {:.3f} us ({:.1f} inferences/s); driver hw_elapse {} ns\n",
                     static_cast<uint64_t>(static_cast<double>(r.total_ps) * static_cast<double>(r.clock_hz) / 1e12 + 0.5),
                     us, us > 0 ? 1e6 / us : 0.0, r.hw_elapse_ns);
    o += "cycles: fetch = regcmd fetch + decode; dma_rd = input/weight/bias loads (overlap compute);\n"
         "        compute = MAC array on padded channels; write = DPU write-back tail; ovh = per-task cost\n";
    if (r.checked) {
        const OutputCheck& c = r.check;
        o += fmt::format("output check vs reference (direct conv, QuantizeLinear round-half-even): {} values, {} equal, "
                         "{} differ by 1 LSB, {} worse, max |diff| {} -> {}\n",
                         c.values, c.equal, c.off_by_one, c.worse, c.max_abs_diff,
                         c.worse ? "MISMATCH" : (c.off_by_one ? "within 1 LSB" : "bit-exact"));
        if (c.off_by_one)
            o += "  1-LSB cause: the NPU requantizes with a 15-bit OUT_CVT multiplier and round-half-up; the\n"
                 "  reference uses the exact real scale and round-half-to-even (ties and scale rounding).\n";
    }
    for (const LayerReport& l : r.layers)
        if (l.sram_read_bytes || l.sram_write_bytes)
            o += fmt::format("{} core {}: NBUF traffic {} read, {} written (not counted as DDR)\n", l.name, l.core,
                             bytes(l.sram_read_bytes), bytes(l.sram_write_bytes));
    for (const std::string& n : r.notes) o += "note: " + n + "\n";
    for (const std::string& e : r.errors) o += "error: " + e + "\n";
    return o;
}

std::string report_json(const RunResult& r) {
    nlohmann::ordered_json j;
    j["platform"] = r.platform;
    j["platform_name"] = r.platform_name;
    j["model"] = r.model;
    j["mode"] = r.mode;
    j["npu_clock_hz"] = r.clock_hz;
    j["total_ps"] = r.total_ps;
    j["hw_elapse_ns"] = r.hw_elapse_ns;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const LayerReport& l : r.layers) {
        nlohmann::ordered_json x;
        x["name"] = l.name;
        x["op"] = l.op;
        x["input_shape"] = l.input_shape;
        x["output_shape"] = l.output_shape;
        x["core"] = l.core;
        x["tasks"] = l.tasks;
        x["macs"] = l.macs;
        x["macs_padded"] = l.macs_padded;
        x["regcmd_entries"] = l.regcmd_entries;
        x["cycles"] = {{"fetch", l.fetch_cycles}, {"dma_read", l.dma_read_cycles}, {"compute", l.compute_cycles},
                       {"write", l.write_cycles}, {"overhead", l.overhead_cycles}, {"total", l.total_cycles}};
        x["time_us"] = l.time_us;
        x["ddr_read_bytes"] = l.ddr_read_bytes;
        x["ddr_write_bytes"] = l.ddr_write_bytes;
        x["sram_read_bytes"] = l.sram_read_bytes;
        x["sram_write_bytes"] = l.sram_write_bytes;
        x["mac_utilisation"] = l.mac_utilisation;
        x["bound"] = l.bound;
        layers.push_back(x);
    }
    j["layers"] = layers;
    if (r.checked)
        j["output_check"] = {{"values", r.check.values}, {"equal", r.check.equal}, {"off_by_one", r.check.off_by_one},
                             {"worse", r.check.worse}, {"max_abs_diff", r.check.max_abs_diff}};
    j["errors"] = r.errors;
    j["ok"] = r.ok();
    return j.dump(2) + "\n";
}

}  // namespace sim
