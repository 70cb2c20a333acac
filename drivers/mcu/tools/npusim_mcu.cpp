// SPDX-License-Identifier: MIT
// npusim-mcu: standalone front end of mcu::run_cli / mcu::bench_cli (what `npusim run --platform ws63`
// calls once sim/ wires it in).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "mcu/mcu_run.h"
#include "results/results.h"

int main(int argc, char** argv) {
    CLI::App app{"npusim-mcu: run an int8/fp32 ONNX model on a HiSpark MCU (ws63, 3066h) on the RISC-V ISS"};
    mcu::McuRunOptions o;
    bool bench = false;
    app.add_option("model", o.model, "ONNX model");
    app.add_option("--platform", o.platform, "ws63 or 3066h");
    app.add_option("--input,-i", o.inputs, ".npy per graph input (seeded random input when omitted)");
    app.add_option("--input-shape", o.input_shapes, "fix dynamic dims: name=1x1x28x28");
    sim::results::ResultOptions res;
    app.add_option("--expect", res.expect, ".npy per graph output to compare with as well (sim/results)");
    app.add_option("--atol", res.atol, "--expect: absolute tolerance");
    app.add_option("--rtol", res.rtol, "--expect: relative tolerance");
    app.add_option("--output", res.outputs, ".npy per graph output to write");
    app.add_option("--seed", o.seed, "seed for random inputs");
    app.add_option("--requant", o.requant, "float (bit-exact with the reference) or fixed (Q31 multiplier/shift)");
    app.add_option("--write-blob", o.write_blob, "also write the model blob to this file");
    app.add_flag("--skip-check", o.skip_check, "run even if the seed-000 check reports unsupported nodes");
    app.add_flag("--bench", bench, "run the int8 Conv2D/DepthwiseConv2D cycles-per-MAC benchmark instead");
    CLI11_PARSE(app, argc, argv);
    if (bench) return mcu::bench_cli(o.platform, std::cout, std::cerr);
    if (o.model.empty()) {
        std::cerr << "error: a model is required\n";
        return mcu::kMcuUsage;
    }
    mcu::McuRunReport rep;
    o.report = &rep;
    o.expected = res.expect;
    int rc = mcu::run_cli(o, std::cout, std::cerr);
    if (rep.ran && (rc == 0 || rc == 1)) {
        std::vector<sim::results::NamedTensor> outs;
        for (const auto& row : rep.outputs) outs.emplace_back(row.name, row.tensor);
        rc = std::max(rc, sim::results::write_and_check(outs, res, std::cout, std::cerr));
    }
    return rc;
}
