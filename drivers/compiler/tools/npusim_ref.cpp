// SPDX-License-Identifier: MIT
// npusim-ref: standalone front end of drv::ref::run_reference (what `npusim run --reference` calls),
// for end-to-end tests of the importer and executor without the simulator.
#include <CLI/CLI.hpp>
#include <iostream>

#include "compiler/ref/reference.h"

int main(int argc, char** argv) {
    CLI::App app{"npusim-ref: run a model with the reference executor"};
    drv::ref::RefRunOptions o;
    app.add_option("model", o.model, "model file (.onnx)")->required();
    app.add_option("--input,-i", o.inputs, ".npy input per graph input (random seeded input when omitted)");
    app.add_option("--output,-o", o.outputs, ".npy output per graph output");
    app.add_option("--input-shape", o.input_shapes, "fix dynamic dims: name=1x3x224x224");
    app.add_option("--seed", o.seed, "seed for random inputs");
    app.add_flag("--keep-qdq", o.keep_qdq, "run QuantizeLinear/DequantizeLinear as written (float semantics)");
    app.add_option("--dump-inputs", o.dump_inputs_dir, "write the random inputs as input_<k>.npy into this folder");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : drv::ref::kRefUsage;
    }
    return drv::ref::run_reference(o, std::cerr);
}
