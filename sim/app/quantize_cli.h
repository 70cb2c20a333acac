// SPDX-License-Identifier: MIT
// The quantizer on the command line (issue 14): `npusim quantize MODEL -o OUT_qdq.onnx`, and the
// `--quantize int8|fp16|none` / `--calibration` / `--calibration-method` options of `run` and
// `check` (cli.md): int8 quantizes in memory and continues with the QDQ model, none keeps a float
// model on the host CPU, fp16 (and a float model without --quantize) is the fp16 NPU path.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "checker/cli.h"
#include "compiler/ir/graph.h"
#include "compiler/quantize/pipeline.h"
#include "hw/profile.h"

namespace sim {

/// `--quantize` and its companions as given on run / check ("" = not given).
struct QuantizeArgs {
    std::string mode;                      ///< "", "int8", "fp16", "none"
    std::vector<std::string> calibration;  ///< --calibration FILE.npy|DIR|NAME=...
    std::string method;                    ///< --calibration-method, "" = minmax
};

/// `npusim quantize MODEL -o OUT_qdq.onnx [...]`.
struct QuantizeCliOptions {
    std::string model, output;
    QuantizeArgs q;
    std::string scheme = "asymmetric_quantized-8";
    uint64_t seed = 0;
    std::vector<std::string> input_shapes;
    std::string accuracy_report, csv;  ///< --accuracy-report FILE.json, --csv FILE.csv
    bool json = false;                 ///< the result (summary + accuracy) as JSON on stdout
};

/// Exit codes: 0 written, 2 bad input or usage (already quantized, bad calibration data, output
/// path = input), 3 the model cannot be loaded.
int run_quantize_cli(const QuantizeCliOptions& o, std::ostream& out, std::ostream& err);

/// Checks the options that need `--quantize int8` and the value itself. Returns "" or the error.
std::string validate_quantize_args(const QuantizeArgs& q);

/// `run` on an RKNPU platform: applies --quantize to the imported graph `g` (QdqMode::Rewrite).
/// int8: `g` becomes the folded QDQ model and `qm` holds the quantization (for the report);
/// none: `g` stays float (its nodes run on the host CPU), a note says so; a float model with
/// fp16 or no --quantize runs on the fp16 path (`fp16` set: CompileOptions::fp16, a note says so;
/// a SoC without an fp16 path is refused, asking for --quantize int8); --quantize on a quantized
/// model is an error. Returns -1 to go on, else the exit code (the message written to `err`).
/// `timing`: `g` was imported without weight contents, so the model is imported again before
/// quantizing.
int apply_run_quantize(const QuantizeArgs& q, const hw::SocProfile& soc, const std::string& model, uint64_t seed,
                       const std::vector<std::string>& input_shapes, bool timing, drv::ir::Graph& g,
                       std::optional<drv::quant::QuantizedModel>& qm, std::vector<std::string>& notes, bool& fp16,
                       std::ostream& err);

/// Adds the quantization section to a run report: text after `text`, a "quantization" object in
/// the JSON `json`.
void add_quantization_report(const drv::quant::QuantizedModel& qm, std::string& text, std::string& json);

/// `npusim check ... --quantize int8|fp16|none`: int8 checks each float model as the QDQ model it
/// quantizes to; fp16 checks the float model as it is (its dtype rules admit float16) and refuses
/// a platform whose profile has no fp16 path; none does not apply to check.
int run_check_quantized(drv::check::CheckCliOptions co, const QuantizeArgs& q, uint64_t seed, std::ostream& out,
                        std::ostream& err);

}  // namespace sim
