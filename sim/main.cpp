// SPDX-License-Identifier: MIT
// npusim command-line front end (CLI11): parse, load the profile, build, run, report.
// Exit codes: 0 success, 1 simulation found a problem (fault, mismatch), 2 bad input or usage.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <systemc>

#include "app/conv_example.h"
#include "app/report.h"
#include "hw/profile.h"

namespace {

constexpr int kExitProblem = 1;
constexpr int kExitBadInput = 2;

struct RunArgs {
    std::string model;
    std::string platform = "rk3588";
    std::string mode = "full";
    std::string trace_path, report_path;
    int core = 0;
};

int fail(const std::string& msg) {
    std::cerr << "npusim: error: " << msg << "\n";
    return kExitBadInput;
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return static_cast<bool>(f);
}

int cmd_platforms(bool verbose) {
    for (const std::string& n : hw::list_profiles()) {
        try {
            const hw::SocProfile p = hw::load_named_profile(n);
            fmt::print("{:<10} {:<34} {} core(s) x {} int8 MAC/cycle @ {} MHz, CBUF {} x {} KiB, DDR {:.1f} GB/s peak\n",
                       p.name, p.display_name, p.npu.core_count.value, p.npu.int8_macs_per_cycle.value,
                       p.npu.core_clock_hz.value / 1000000, p.npu.cbuf_banks.value, p.npu.cbuf_bank_bytes.value / 1024,
                       p.mem.ddr_peak_bytes_per_s.value / 1e9);
            if (verbose)
                for (const auto& pv : p.params())
                    fmt::print("    {:<32} {:<9} {:<40} {}\n", pv.path, hw::grade_name(pv.grade), pv.value, pv.source);
        } catch (const hw::ProfileError& e) {
            fmt::print("{:<10} INVALID: {}\n", n, e.what());
        }
    }
    return 0;
}

int cmd_run(const RunArgs& a) {
    hw::SocProfile soc;
    try {
        soc = hw::load_named_profile(a.platform);
    } catch (const hw::ProfileError& e) {
        return fail(e.what());
    }
    sim::ConvExampleSpec spec;
    if (!a.model.empty()) {
        namespace fs = std::filesystem;
        if (!fs::exists(a.model)) return fail(fmt::format("model file '{}' not found", a.model));
        const std::string ext = fs::path(a.model).extension().string();
        if (ext == ".json") {
            try {
                spec = sim::ConvExampleSpec::from_file(a.model);
            } catch (const std::exception& e) {
                return fail(e.what());
            }
        } else if (ext == ".onnx" || ext == ".tflite") {
            return fail(fmt::format("'{}': lowering {} models to the NPU is not available yet; "
                                    "a layer description (.json, see examples/) runs end to end",
                                    a.model, ext));
        } else {
            return fail(fmt::format("'{}': unknown model format '{}' (expected .json, .onnx or .tflite)", a.model, ext));
        }
    }
    if (a.core < 0 || a.core >= soc.npu.core_count.value)
        return fail(fmt::format("--core {}: {} has cores 0..{}", a.core, soc.name, soc.npu.core_count.value - 1));
    const auto mode = a.mode == "timing" ? npu::tlm_models::SimMode::Timing : npu::tlm_models::SimMode::Full;
    trace::TraceWriter tw;
    sim::RunResult r;
    try {
        r = sim::run_conv_example(soc, spec, a.core, mode, a.trace_path.empty() ? nullptr : &tw);
    } catch (const std::invalid_argument& e) {
        return fail(e.what());
    }
    std::cout << sim::report_text(r);
    if (!a.trace_path.empty() && !tw.write_file(a.trace_path))
        return fail(fmt::format("cannot write trace '{}'", a.trace_path));
    if (!a.report_path.empty() && !write_text(a.report_path, sim::report_json(r)))
        return fail(fmt::format("cannot write report '{}'", a.report_path));
    return r.ok() ? 0 : kExitProblem;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    CLI::App app{"npusim - virtual platform for RKNPU/tnpuv2 NPUs and HiSpark RISC-V MCUs"};
    app.set_version_flag("--version", std::string("npusim ") + NPUSIM_VERSION);
    app.require_subcommand(1);

    bool verbose = false;
    CLI::App* plat = app.add_subcommand("platforms", "List the SoC profiles (-v: every parameter with its grade)");
    plat->add_flag("-v,--verbose", verbose, "Show every profile parameter, its trust grade and source");

    RunArgs ra;
    CLI::App* run = app.add_subcommand("run", "Run a model on a simulated SoC (no MODEL: the bundled conv example)");
    run->add_option("model", ra.model, "Layer description (.json); omit for the bundled example");
    run->add_option("-p,--platform", ra.platform, "SoC profile (see `npusim platforms`)")->capture_default_str();
    run->add_option("--core", ra.core, "NPU core to run on")->capture_default_str();
    run->add_option("--mode", ra.mode, "full (bytes + timing) or timing (no data)")
        ->check(CLI::IsMember({"full", "timing"}))
        ->capture_default_str();
    run->add_option("--trace", ra.trace_path, "Write a Chrome/Perfetto trace-event JSON file");
    run->add_option("--report", ra.report_path, "Write the per-layer report as JSON");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : kExitBadInput;
    }
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    if (*plat) return cmd_platforms(verbose);
    if (*run) return cmd_run(ra);
    return kExitBadInput;
}

// Our own entry point: SystemC prints its banner in sc_elab_and_sim() unless this variable is set.
int main(int argc, char* argv[]) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}
