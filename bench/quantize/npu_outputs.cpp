// SPDX-License-Identifier: MIT
// The NPU's end-to-end outputs of a QDQ model, for comparison with onnxruntime (issue 14
// acceptance: int8 outputs within 4 LSB of onnxruntime running the written QDQ model). The model is
// compiled for the platform and run by the direct executor, which replays the same regcmd through
// the same NPU block engines as `npusim run` (without SystemC timing), so its output bytes are the
// simulated NPU's; it prints the comparison with the reference executor that `npusim run` reports,
// as a cross-check.
//   npu_outputs MODEL_qdq.onnx PLATFORM INPUT.npy OUT_PREFIX   -> OUT_PREFIX<k>.npy per graph output
#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "direct/direct_exec.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"
#include "numerics/npy.h"

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: npu_outputs MODEL_qdq.onnx PLATFORM INPUT.npy OUT_PREFIX\n");
        return 2;
    }
    try {
        drv::importer::ImportOptions io;
        io.qdq = drv::importer::QdqMode::Rewrite;  // the graph `npusim run` compiles
        drv::ir::Graph g = drv::importer::load_model(argv[1], io);
        const hw::SocProfile soc = hw::load_named_profile(argv[2]);
        std::map<std::string, num::Tensor> in{{g.inputs().at(0), num::read_npy(argv[3])}};
        const auto ref = drv::ref::execute(g, in);
        drv::rknpu::CompiledModel m = drv::rknpu::compile_model(g, soc, {});
        const sim::DirectResult r = sim::run_direct(m, soc, in);
        for (size_t k = 0; k < g.outputs().size(); ++k) {
            const std::string& name = g.outputs()[k];
            num::write_npy(std::string(argv[4]) + std::to_string(k) + ".npy", r.outputs.at(name));
            const num::Tensor &a = r.outputs.at(name), &b = ref.at(name);
            size_t equal = 0;
            for (size_t i = 0; i < a.numel(); ++i) equal += a.data<float>()[i] == b.data<float>()[i];
            fmt::print("output '{}': {} of {} values equal to the reference executor's\n", name, equal, a.numel());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "npu_outputs: %s\n", e.what());
        return 1;
    }
    return 0;
}
