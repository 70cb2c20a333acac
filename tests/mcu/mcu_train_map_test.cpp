// SPDX-License-Identifier: MIT
// `npusim train` maps the model onto the training firmware correctly: with a learning rate too small to
// move any parameter, the mean loss of the first epoch on the ISS equals the softmax cross-entropy of the
// logits the reference executor computes for every sample from the ONNX model itself (FP32 models), or
// from the integer graph of the toolchain's quantization of it (QAS INT8, `--quantize int8`). Models
// from gen_train_task.py (MCU_TRAIN_DIR).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "compiler/model_loader.h"
#include "compiler/quantize/pipeline.h"
#include "compiler/ref/reference.h"
#include "mcu/mcu_train.h"
#include "numerics/npy.h"

namespace {

std::string dir() {
    const char* d = std::getenv("MCU_TRAIN_DIR");
    return d ? d : "";
}

/// Mean cross-entropy of the reference logits (the input of the final Softmax) over the samples.
double reference_loss(const drv::ir::Graph& g, const num::Tensor& x, const num::Tensor& y) {
    const std::string logits = g.nodes().back().input(0);
    const int64_t N = x.dim(0), per = int64_t(x.numel()) / N;
    double sum = 0;
    for (int64_t s = 0; s < N; ++s) {
        num::Tensor xi(num::DType::F32, {1, x.dim(1), x.dim(2), x.dim(3)});
        std::copy(x.data<float>() + s * per, x.data<float>() + (s + 1) * per, xi.data<float>());
        num::Tensor z;
        drv::ref::execute(g, {{g.inputs()[0], xi}}, [&](const std::string& name, const num::Tensor& v) {
            if (name == logits) z = v;
        });
        double mx = -1e30, tot = 0;
        for (size_t k = 0; k < z.numel(); ++k) mx = std::max(mx, double(z.data<float>()[k]));
        for (size_t k = 0; k < z.numel(); ++k) tot += std::exp(double(z.data<float>()[k]) - mx);
        const int64_t label = y.data<int64_t>()[s];
        sum += -(double(z.data<float>()[label]) - mx - std::log(tot));
    }
    return sum / double(N);
}

double first_epoch_loss(const std::string& out) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        int ep = 0;
        double loss = 0;
        std::string acc;
        if ((ls >> ep >> loss >> acc) && ep == 1 && acc.back() == '%') return loss;
    }
    return NAN;
}

void check(const std::string& model, bool qas) {
    ASSERT_FALSE(dir().empty()) << "MCU_TRAIN_DIR not set";
    mcu::TrainOptions o;
    o.model = dir() + "/" + model, o.data = dir() + "/train_x.npy", o.labels = dir() + "/train_y.npy";
    o.epochs = 1, o.lr = 1e-30f;
    if (qas) o.quantize = "int8";
    std::ostringstream out, err;
    ASSERT_EQ(mcu::train_cli(o, out, err), 0) << out.str() << err.str();
    drv::ir::Graph g = drv::importer::load_model(o.model);
    if (qas) {
        drv::quant::PipelineOptions po;
        po.calibration = {o.data};
        po.accuracy = false;
        g = drv::quant::quantize_file(o.model, po).folded;
    }
    const double want = reference_loss(g, num::read_npy(o.data), num::read_npy(o.labels));
    const double got = first_epoch_loss(out.str());
    EXPECT_NEAR(got, want, 2e-5) << model << (qas ? " (QAS INT8)" : " (FP32)") << "\n" << out.str();
    std::printf("%s%s: loss at the initial parameters %.6f, reference %.6f\n", model.c_str(), qas ? " QAS" : "", got, want);
}

TEST(TrainMapping, Fp32DepthwiseNet) { check("train_net.onnx", false); }
TEST(TrainMapping, Fp32ResidualDag) { check("train_resnet.onnx", false); }
TEST(TrainMapping, Fp32SliceTransposeDivReduce) { check("train_ops.onnx", false); }
TEST(TrainMapping, QasInt8ConvPoolFc) { check("train_qas.onnx", true); }

}  // namespace
