// SPDX-License-Identifier: MIT
// Standalone front end for the checker: `npusim-check check ...` and `npusim-check specs ...`,
// the same flags `npusim check` / `npusim specs` take once the lead wires them into sim/.
#include <iostream>

#include <CLI/CLI.hpp>

#include "checker/cli.h"
#ifdef NPUSIM_CHECK_PLACEMENT
#include "compiler/rknpu/check_placement.h"
#endif

int main(int argc, char** argv) {
    CLI::App app{"npusim-check: operator-spec DB and constraint checker (issue 4)"};
    app.require_subcommand(1);
    drv::check::CheckCliOptions co;
    auto* check = app.add_subcommand("check", "per-node verdict NPU / CPU fallback / unsupported");
    check->add_option("models", co.models, "model files (.onnx, .tflite)")->required();
    check->add_option("--platform,-p", co.platform, "platform id (see `specs`)");
    check->add_flag("--all-platforms", co.all_platforms, "model x platform matrix");
    check->add_flag("--json", co.json, "JSON output");
    check->add_option("--input-shape", co.input_shapes, "fix a dynamic input: name=1x3x224x224");
    check->add_option("--bits", co.quant_bits, "quantization bit width the model is built with (tnpuv2: 4..20)");
    check->add_option("--specs-dir", co.specs_dir, "spec DB directory");
    drv::check::SpecsCliOptions so;
    auto* specs = app.add_subcommand("specs", "what the spec DB holds");
    specs->add_option("--platform,-p", so.platform, "one platform in detail");
    specs->add_flag("--coverage", so.coverage, "seed headings not encoded, with reasons");
    specs->add_flag("--json", so.json, "JSON output");
    specs->add_option("--specs-dir", so.specs_dir, "spec DB directory");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : drv::check::kExitUsage;
    }
#ifdef NPUSIM_CHECK_PLACEMENT
    // RKNPU platforms: the model compiler's own per-node decision, as `npusim check` reports it
    // (not with --specs-dir: the compiler reads the bundled DB).
    if (co.specs_dir.empty())
        co.placement = [&co](const std::string& model, const std::string& platform, const drv::check::PlatformSpec& spec) {
            return drv::rknpu::check_placement(model, platform, spec, co.input_shapes);
        };
#endif
    if (check->parsed()) return drv::check::run_check_cli(co, std::cout, std::cerr);
    return drv::check::run_specs_cli(so, std::cout, std::cerr);
}
