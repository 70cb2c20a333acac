// SPDX-License-Identifier: MIT
// Reference executor: runs imported graphs through num::run_op; seeded random inputs are
// deterministic; mismatched inputs and failing operators are reported with the node named;
// run_reference() maps errors to exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/ref/reference.h"
#include "numerics/npy.h"
#include "onnx_builder.h"

using test_onnx::ModelBuilder;

namespace {

ModelBuilder conv_relu() {
    ModelBuilder b(13);
    b.input("x", 1, {1, 1, 3, 3});
    // 2x2 box filter + bias 1: each output = sum of a 2x2 window + 1.
    b.init_f32("w", {1, 1, 2, 2}, {1, 1, 1, 1});
    b.init_f32("b", {1}, {1});
    b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
    b.node("Relu", {"c"}, {"y"}, "relu");
    b.output("y");
    return b;
}

drv::ir::Graph import(const ModelBuilder& b) {
    std::string s = b.bytes();
    return drv::importer::import_onnx_bytes(s.data(), s.size(), {}, "t.onnx");
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + std::to_string(::getpid()) + "_" + name; }

}  // namespace

TEST(Executor, ConvReluByHand) {
    auto g = import(conv_relu());
    num::Tensor x(num::DType::F32, {1, 1, 3, 3});
    for (int i = 0; i < 9; ++i) x.data<float>()[i] = static_cast<float>(i) - 4.f;  // -4..4
    auto out = drv::ref::execute(g, {{"x", x}});
    const num::Tensor& y = out.at("y");
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
    // windows: (-4-3-1+0)+1=-7 -> 0; (-3-2+0+1)+1=-3 -> 0; (-1+0+2+3)+1=5; (0+1+3+4)+1=9
    EXPECT_EQ(y.data<float>()[0], 0.f);
    EXPECT_EQ(y.data<float>()[1], 0.f);
    EXPECT_EQ(y.data<float>()[2], 5.f);
    EXPECT_EQ(y.data<float>()[3], 9.f);
}

TEST(Executor, InputMismatchNamesTheInput) {
    auto g = import(conv_relu());
    num::Tensor x(num::DType::F32, {1, 1, 4, 4});
    try {
        drv::ref::execute(g, {{"x", x}});
        FAIL();
    } catch (const drv::ir::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(drv::ref::execute(g, {}), drv::ir::GraphError);
}

TEST(Executor, RandomInputsAreSeeded) {
    auto g = import(conv_relu());
    const auto& v = g.value("x");
    num::Tensor a = drv::ref::random_input(v, 5, 0), b = drv::ref::random_input(v, 5, 0), c = drv::ref::random_input(v, 6, 0);
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
    EXPECT_NE(std::memcmp(a.raw(), c.raw(), a.nbytes()), 0);
    for (size_t i = 0; i < a.numel(); ++i) {
        EXPECT_GE(a.data<float>()[i], -1.f);
        EXPECT_LT(a.data<float>()[i], 1.f);
    }
}

TEST(Executor, RunReferenceWritesNpyAndMapsErrors) {
    std::string model = temp_path("exec_conv.onnx");
    {
        std::ofstream f(model, std::ios::binary);
        f << conv_relu().bytes();
    }
    drv::ref::RefRunOptions o;
    o.model = model;
    o.outputs = {temp_path("exec_y.npy")};
    o.seed = 3;
    std::ostringstream log;
    ASSERT_EQ(drv::ref::run_reference(o, log), drv::ref::kRefOk) << log.str();
    num::Tensor y = num::read_npy(o.outputs[0]);
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 2}));

    drv::ref::RefRunOptions bad = o;
    bad.model = temp_path("missing.onnx");
    EXPECT_EQ(drv::ref::run_reference(bad, log), drv::ref::kRefModelError);
    bad = o;
    bad.inputs = {temp_path("missing.npy")};
    EXPECT_EQ(drv::ref::run_reference(bad, log), drv::ref::kRefInputError);
    EXPECT_NE(log.str().find("error: "), std::string::npos);
}
