// SPDX-License-Identifier: MIT
// Library entry point of `npusim run --platform ws63|3066h MODEL` (issue 8), wired into the CLI by sim/:
// import -> seed-000 rule check for the MCU -> model blob -> memory fit (rejected with the figures
// before running) -> firmware on the RISC-V ISS -> outputs compared with the reference executor ->
// per-layer cycles, time at the MCU clock, flash/SRAM use, ISS speed.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "mcu/firmware_runner.h"

namespace mcu {

/// What a run measured, for reports and traces (filled by run_cli when McuRunOptions::report is set).
struct McuLayerRow {
    std::string node, op_type, kernel, symbol;  ///< symbol: the kernel function the layer calls
    uint64_t macs = 0, cycles = 0, instret = 0;
};
struct McuOutputRow {
    std::string name, dtype, shape, verdict;  ///< verdict: "equal", "N of M differ", "unverified"
    double max_diff = 0.0;                    ///< in LSB (int8/dequantized) or x 1e-5 relative (fp32)
    double float_cosine = -1.0;               ///< --quantize int8: against the float model, else -1
};
struct McuRunReport {
    std::string platform, model, arithmetic, executor;
    uint64_t clock_hz = 0, schedule_cycles = 0, schedule_instret = 0, total_cycles = 0, total_instret = 0;
    FitReport fit;
    std::vector<McuLayerRow> layers;
    std::vector<McuOutputRow> outputs;
    std::string quantization;  ///< the quantizer's summary when --quantize int8
    bool ran = false;          ///< the firmware executed (false: refused before)
};

struct McuRunOptions {
    std::string model;                   ///< .onnx (QDQ int8 or fp32)
    std::string platform = "ws63";       ///< "ws63" or "3066h" (alias "3066m")
    std::vector<std::string> inputs;     ///< .npy per graph input; empty = seeded random input
    std::vector<std::string> expected;   ///< .npy per graph output: compared too (fp32 1e-5 / int8 exact)
    std::vector<std::string> input_shapes; ///< "name=1x1x28x28" overrides for dynamic dims
    uint64_t seed = 0;
    std::string requant = "float";       ///< "float" (bit-exact with the reference) or "fixed" (Q31 multiplier/shift)
    bool skip_check = false;             ///< run even when the seed-000 check reports unsupported nodes
    uint64_t max_insns = 20000000000ull; ///< ISS instruction budget (runaway guard)
    std::string write_blob;              ///< when set, the model blob is also written to this file
    FirmwareExecutor executor;           ///< empty = run_firmware (ISS core); sim/ may run it in SystemC
    /// "int8": the float model is quantized by the compiler's quantizer (drivers/compiler/quantize,
    /// the toolchain's FULL_QUANT of seed 000) on `calibration` (.npy files/dirs; empty = seeded) and
    /// the integer graph runs on the MCU kernels; the output is also compared with the float model.
    std::string quantize;
    std::vector<std::string> calibration;
    std::string calibration_method;      ///< minmax (default), kl, mmse
    McuRunReport* report = nullptr;      ///< when set, filled with the run's figures
    std::string executor_name = "ISS (standalone bus)";
};

/// The kernel function a blob opcode runs (the per-layer span name of `--trace`).
const char* kernel_symbol(uint32_t op);

/// Exit codes of run_cli(), the CLI's table (docs/cli.md): 1 the run found a problem, 2 usage,
/// 3 the model cannot be imported, 4 refused by the platform (rule, kernel or memory).
enum McuExit : int {
    kMcuOk = 0,
    kMcuUsage = 2,         ///< unknown platform, bad option
    kMcuModelError = 3,    ///< import failed
    kMcuUnsupported = 4,   ///< seed-000 rules reject a node, or a node has no MCU kernel yet
    kMcuDoesNotFit = 4,    ///< flash or SRAM too small (figures printed)
    kMcuRunError = 1,      ///< firmware missing, ISS fault, runtime error, outputs unverifiable
    kMcuMismatch = 1,      ///< outputs differ from the reference executor
};

/// Per node (or "" for the whole model) why the MCU path refuses what the seed-000 tables accept:
/// a node without an MCU kernel ("no MCU kernel yet ...") or an ONNX model quantized outside the
/// toolchain (seed 000 preface). `npusim check` on ws63/3066H reports these next to the rule
/// verdicts, so check and run give one verdict.
std::vector<std::pair<std::string, std::string>> engine_refusals(const std::string& model_path, const drv::ir::Graph& g);

/// Runs the whole MCU path; report to `out`, errors ("error: ...") to `err`. Never throws or exits.
int run_cli(const McuRunOptions& opts, std::ostream& out, std::ostream& err);

/// Issue 8 acceptance 4: runs the kernel benchmark firmware on `platform` and prints cycles per MAC
/// of the int8 Conv2D / DepthwiseConv2D kernels and the ISS's instructions per second.
int bench_cli(const std::string& platform, std::ostream& out, std::ostream& err);

}  // namespace mcu
