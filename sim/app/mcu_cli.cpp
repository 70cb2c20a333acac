// SPDX-License-Identifier: MIT
// MCU runs in the CLI (see mcu_cli.h).
#include "app/mcu_cli.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "riscv_iss/core_preset.h"
#include "riscv_iss_tlm/mcu_platform.h"
#include "trace/trace_writer.h"

namespace sim {
namespace {

}  // namespace

mcu::FirmwareRun run_on_mcu_platform(const mcu::McuTarget& t, const std::string& elf, const std::vector<uint8_t>& blob,
                                     uint64_t max_insns) {
    mcu::FirmwareRun r;
    const std::clock_t c0 = std::clock();
    iss::McuPlatformRun p;
    try {
        p = iss::run_mcu_platform(iss::load_preset(t.iss_preset, iss::default_preset_dir()), iss::mcu_devices_of(t), elf, {{t.blob_base, blob}}, max_insns);
    } catch (const std::exception& e) {
        r.error = std::string("SystemC platform: ") + e.what();
        return r;
    }
    r.host_cpu_seconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
    r.console = p.console;
    r.total_cycles = p.cycles;
    r.total_instret = p.instret;
    r.exit_code = p.exit_code;
    r.error = p.error;
    mcu::parse_firmware_console(r);
    if (r.error.empty() && r.exit_code != 0) r.error = "firmware exit code " + std::to_string(r.exit_code);
    return r;
}

namespace {

/// Layers back to back from the schedule's start, at the MCU clock (the firmware's printing between
/// layers is not part of any layer and is left out).
trace::TraceWriter mcu_trace(const mcu::McuRunReport& r) {
    trace::TraceWriter w;
    const int core = w.track(r.platform, "core0 (RV32IMFC)");
    const int layers = w.track(r.platform, "layers");
    const double ps_per_cycle = 1e12 / double(r.clock_hz);
    uint64_t at = 0;
    for (const auto& l : r.layers) {
        const uint64_t dur = uint64_t(double(l.cycles) * ps_per_cycle + 0.5);
        std::vector<trace::Arg> args{trace::arg("node", l.node), trace::arg("op", l.op_type), trace::arg("cycles", l.cycles),
                                     trace::arg("instret", l.instret), trace::arg("macs", l.macs)};
        w.complete(layers, l.node, at, dur, args, "mcu");
        w.complete(core, l.symbol, at, dur, {trace::arg("layer", l.node), trace::arg("kernel", l.kernel)}, "mcu");
        at += dur;
    }
    return w;
}

}  // namespace

std::string mcu_report_json(const mcu::McuRunReport& r) {
    nlohmann::ordered_json j;
    j["schema"] = "npusim.mcu_run/1";
    j["platform"] = r.platform;
    j["model"] = r.model;
    j["executor"] = r.executor;
    j["arithmetic"] = r.arithmetic;
    j["clock_hz"] = r.clock_hz;
    if (!r.quantization.empty()) j["quantization"] = r.quantization;
    j["memory"] = {{"flash_used_bytes", r.fit.flash_used}, {"flash_bytes", r.fit.flash_total},
                   {"firmware_flash_bytes", r.fit.fw_flash}, {"blob_bytes", r.fit.blob_bytes},
                   {"sram_used_bytes", r.fit.sram_used}, {"sram_bytes", r.fit.sram_total},
                   {"firmware_sram_bytes", r.fit.fw_sram}, {"arena_bytes", r.fit.arena_bytes}, {"fits", r.fit.fits}};
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const auto& l : r.layers) {
        nlohmann::ordered_json x;
        x["name"] = l.node;
        x["op"] = l.op_type;
        x["kernel"] = l.kernel;
        x["symbol"] = l.symbol;
        x["macs"] = l.macs;
        x["cycles"] = l.cycles;
        x["instret"] = l.instret;
        x["time_us"] = double(l.cycles) * 1e6 / double(r.clock_hz);
        layers.push_back(x);
    }
    j["layers"] = layers;
    j["totals"] = {{"cycles", r.schedule_cycles}, {"instret", r.schedule_instret},
                   {"latency_ms", double(r.schedule_cycles) * 1e3 / double(r.clock_hz)},
                   {"run_cycles", r.total_cycles}, {"run_instret", r.total_instret}};
    nlohmann::ordered_json outs = nlohmann::ordered_json::array();
    for (const auto& o : r.outputs) {
        nlohmann::ordered_json x{{"name", o.name}, {"dtype", o.dtype}, {"shape", o.shape}, {"vs_reference", o.verdict}, {"max_diff", o.max_diff}};
        if (o.float_cosine >= 0) x["float_model_cosine"] = o.float_cosine;
        outs.push_back(x);
    }
    j["outputs"] = outs;
    return j.dump(1) + "\n";
}

int run_mcu_cli(mcu::McuRunOptions o, const std::string& report_path, const std::string& trace_path,
                const results::ResultOptions& res, const std::string& vcd_path) {
    mcu::McuRunReport rep;
    o.report = &rep;
    o.executor = run_on_mcu_platform;
    o.executor_name = "SystemC platform (riscv_iss_tlm: RiscvCore, memory map with wait states, UART, CLINT, interrupt lines)";
    o.expected = res.expect;
    if (const std::string e = results::validate(res, results::with_model(o.inputs, o.model)); !e.empty()) {
        std::cerr << "npusim: error: " << e << "\n";
        return 2;
    }
    std::ostringstream err;
    int rc = mcu::run_cli(o, std::cout, err);
    // One error prefix for every subcommand (cli.md): the MCU library writes "error: ...".
    std::istringstream lines(err.str());
    for (std::string line; std::getline(lines, line);)
        std::cerr << (line.rfind("error: ", 0) == 0 ? "npusim: " + line : line) << "\n";
    std::vector<results::ExpectRow> expect_rows;
    if (rep.ran && (rc == 0 || rc == 1)) {
        std::vector<results::NamedTensor> outs;
        for (const auto& row : rep.outputs) outs.emplace_back(row.name, row.tensor);
        rc = std::max(rc, results::write_and_check(outs, res, std::cout, std::cerr, &expect_rows));
    } else if (!rep.ran && res.any() && rc == 0) {
        // Only when nothing said why (one error line per failure: a refusal already named it).
        std::cerr << "npusim: error: no outputs to write or compare (the firmware did not run)\n";
        rc = 1;
    }
    auto write = [](const std::string& path, const std::string& text) {
        std::ofstream f(path, std::ios::binary);
        f << text;
        return bool(f);
    };
    if (!report_path.empty() && rep.ran &&
        !write(report_path, results::add_expect_json(mcu_report_json(rep), expect_rows, res, 1))) {
        std::cerr << "npusim: error: cannot write the report, " << report_path << "\n";
        return 2;
    }
    if (!trace_path.empty() && rep.ran && !write(trace_path, mcu_trace(rep).to_json())) {
        std::cerr << "npusim: error: cannot write the trace, " << trace_path << "\n";
        return 2;
    }
    if (!vcd_path.empty() && rep.ran && !mcu_trace(rep).write_vcd(vcd_path)) {
        std::cerr << "npusim: error: cannot write the VCD, " << vcd_path << "\n";
        return 2;
    }
    return rc;
}

}  // namespace sim
