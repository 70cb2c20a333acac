// SPDX-License-Identifier: MIT
// Whole-model run (sim/app/model_run): a task whose regcmd asks for more CBUF banks than the SoC
// has faults on the simulated core; the run must stop with one error naming the step, the core,
// the layer and the task, and keep the report rows. One SystemC elaboration per process, so this
// binary holds one test.
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "app/model_run.h"
#include "compiler/model_loader.h"
#include "compiler/ref/reference.h"
#include "compiler/rknpu/model.h"
#include "hw/profile.h"

namespace {

TEST(ModelRunFault, CbufOverflowNamesStepLayerAndTask) {
    const std::string path = std::string(NPUSIM_TEST_ZOO_DIR) + "/t_qlinear.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "zoo not generated (" << path << ")";
    const hw::SocProfile soc = hw::load_named_profile("rk3588");
    const drv::ir::Graph g = drv::importer::load_model(path);
    drv::rknpu::CompiledModel m = drv::rknpu::compile_model(g, soc);

    // The first task of the first conv layer: CNA.CBUF_CON0 (target 0x0201, offset 0x1040) set
    // to 9 data + 5 weight banks, two more than RK3588's 12.
    size_t layer = m.layers.size();
    for (size_t i = 0; i < m.layers.size() && layer == m.layers.size(); ++i)
        if (m.layers[i].unit == drv::rknpu::Unit::Npu && m.layers[i].op.find("Conv") != std::string::npos) layer = i;
    ASSERT_LT(layer, m.layers.size()) << "no NPU conv layer in t_qlinear";
    const drv::rknpu::NpuTask& t = m.tasks.at(m.layers[layer].tasks.at(0));
    bool patched = false;
    for (uint32_t e = 0; e < t.regcfg_amount && !patched; ++e) {
        const size_t off = t.regcmd_offset + 8u * e;
        ASSERT_LE(off + 8, m.arena_init.size());
        uint64_t w = 0;
        for (int b = 0; b < 8; ++b) w |= uint64_t{m.arena_init[off + b]} << (8 * b);
        if ((w & 0xffff) != 0x1040 || (w >> 48) != 0x0201) continue;
        w = (w & ~(uint64_t{0xffffffff} << 16)) | (uint64_t{0x59} << 16);
        for (int b = 0; b < 8; ++b) m.arena_init[off + b] = static_cast<uint8_t>(w >> (8 * b));
        patched = true;
    }
    ASSERT_TRUE(patched) << "CNA.CBUF_CON0 not found in the conv task";

    std::map<std::string, num::Tensor> inputs;
    for (size_t k = 0; k < g.inputs().size(); ++k)
        inputs[g.inputs()[k]] = drv::ref::random_input(g.value(g.inputs()[k]), 0, k);
    sim::ModelRunOptions o;
    o.progress = false;
    std::ostringstream progress;
    const sim::ModelRunResult r = sim::run_model(soc, m, inputs, o, nullptr, progress);

    EXPECT_FALSE(r.ok());
    ASSERT_FALSE(r.errors.empty());
    const std::string& e = r.errors.front();
    RecordProperty("error", e);
    EXPECT_NE(e.find("(NPU), core 0: task 0 of the chain"), std::string::npos) << e;
    EXPECT_NE(e.find("of layer '" + m.layers[layer].name + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("exceed the 12 CBUF banks"), std::string::npos) << e;
    EXPECT_EQ(r.layers.size(), m.layers.size());
    EXPECT_FALSE(r.outputs_checked);
    EXPECT_TRUE(progress.str().empty());
}

}  // namespace
