// SPDX-License-Identifier: MIT
// `npusim run --platform tnpuv2 MODEL [--bits 4|8|12|14|16]`, `npusim decode|lint --platform tnpuv2`
// and the tnpuv2 line of `npusim platforms`: the tnpuv2 toolchain (drivers/tnpuv2) and system
// (sim/tnpuv2/platform.h) behind the same report, trace and reference checks as the RKNPU path
// (sim/app/model_run.h, report.h).
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "app/model_run.h"
#include "checker/cli.h"
#include "drv/tnpuv2/model.h"
#include "hw/tnpuv2/profile.h"
#include "numerics/tensor.h"
#include "trace/trace_writer.h"

namespace sim::tnpuv2 {

struct RunOptions {
    std::string model, mode = "full";
    std::vector<std::string> inputs, input_shapes, outputs;
    uint64_t seed = 0;
    std::string report_path, trace_path;
    std::string vcd_path;  ///< --vcd: the trace as a VCD
    bool expect_exact = false, quiet = false, no_check = false;
    std::string profile_file;
    std::vector<std::string> params;
    int bits = 8;                          ///< --bits: data width
    int weight_bits = 0;                   ///< --weight-bits: conv/MatMul weight width (0: the model's)
    std::vector<std::string> calibration;  ///< float models: --calibration
    std::string calibration_method;
    std::string dump_path;    ///< --dump-regcmd: the relocated command stream (32-bit LE words)
    std::string dump_layers;  ///< --dump-layers DIR: every activation as the device left it (.npy)
};

/// Exit codes as cli.md: 0 ok, 1 a problem found by the run (fault, a layer worse than 1 LSB),
/// 2 usage or bad input, 3 the model cannot be loaded, 4 refused by the platform (seed-003 rule).
int run_cli(const RunOptions& o, std::ostream& out, std::ostream& err);

/// Runs a compiled model on a freshly elaborated tnpuv2 system (one SystemC elaboration per process).
/// `outputs` receives the graph outputs, `activations` (when given) every recorded activation.
sim::ModelRunResult run_model(const hw::tnpuv2::Profile& p, drv::tnpuv2::CompiledModel& m,
                              const std::map<std::string, num::Tensor>& inputs, bool full, bool check,
                              trace::TraceWriter* tw, std::map<std::string, num::Tensor>* outputs = nullptr,
                              std::map<std::string, num::Tensor>* activations = nullptr);

/// `npusim decode FILE --platform tnpuv2`: header, then one line per command with its fields.
int decode_cli(const std::string& file, std::ostream& out, std::ostream& err);
/// `npusim lint FILE --platform tnpuv2`: the fetch unit's and engines' checks run statically
/// (field ranges, descriptors, geometry, SRAM), reserved bits; one finding per line; exit 1 on errors.
int lint_cli(const std::string& file, const std::vector<std::string>& params, std::ostream& out, std::ostream& err);

/// The `npusim platforms` line (and -v parameters) of tnpuv2.
void print_platform(bool verbose, std::ostream& out);

/// `npusim check --platform tnpuv2`: the converter view as CheckCliOptions::prepare.
void set_check_prepare(drv::check::CheckCliOptions& co);

}  // namespace sim::tnpuv2
