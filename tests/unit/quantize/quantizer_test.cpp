// SPDX-License-Identifier: MIT
// The quantizer on float ONNX models built in memory the way PyTorch's exporter writes them
// (Conv with bias, Relu, Clip with min/max inputs at opset 13, Flatten + Gemm transB=1): the QDQ
// graph follows onnxruntime's QDQ convention (names, per-channel int8 weights, int32 biases with
// scale = x_scale * w_scale, removed Relu/Clip, shared parameters through data movement), the
// importer folds it into the integer ops onnxruntime runs, the writer round-trips, the calibration
// loader reads .npy files as documented and the accuracy analysis measures what it says.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "../compiler/onnx_builder.h"
#include "compiler/onnx/onnx_importer.h"
#include "compiler/quantize/accuracy.h"
#include "compiler/quantize/onnx_writer.h"
#include "compiler/quantize/pipeline.h"
#include "compiler/ref/reference.h"
#include "numerics/npy.h"

using namespace drv;
using test_onnx::ModelBuilder;

namespace {

constexpr int32_t kF = ::onnx::TensorProto::FLOAT;

std::vector<float> randn(std::mt19937& rng, size_t n, float sd) {
    std::normal_distribution<float> d(0.0f, sd);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

/// x -> Conv+Relu -> (Conv, +skip) -> Clip(0,6) -> MaxPool -> [MaxPool out, Conv+Relu] Concat ->
/// GlobalAveragePool -> Flatten -> Gemm -> Softmax; outputs: logits and probabilities.
std::string float_model() {
    std::mt19937 rng(3);
    ModelBuilder b;
    b.input("x", kF, {1, 3, 8, 8});
    b.init_f32("w1", {8, 3, 3, 3}, randn(rng, 8 * 27, 0.3f));
    b.init_f32("b1", {8}, randn(rng, 8, 0.1f));
    b.init_f32("w2", {8, 8, 1, 1}, randn(rng, 64, 0.3f));
    b.init_f32("b2", {8}, randn(rng, 8, 0.1f));
    b.init_f32("w3", {4, 8, 1, 1}, randn(rng, 32, 0.3f));
    b.init_f32("b3", {4}, randn(rng, 4, 0.1f));
    b.init_f32("wg", {5, 12}, randn(rng, 60, 0.3f));
    b.init_f32("bg", {5}, randn(rng, 5, 0.1f));
    b.init_f32("lo", {}, {0.0f});
    b.init_f32("hi", {}, {6.0f});
    auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
    ModelBuilder::attr_ints(c1, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
    b.node("Add", {"c2", "r1"}, {"a1"}, "add");
    b.node("Clip", {"a1", "lo", "hi"}, {"a2"}, "relu6");
    auto& mp = b.node("MaxPool", {"a2"}, {"m1"}, "pool");
    ModelBuilder::attr_ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(mp, "strides", {2, 2});
    b.node("Conv", {"m1", "w3", "b3"}, {"c3"}, "conv3");
    b.node("Relu", {"c3"}, {"r3"}, "relu3");
    ModelBuilder::attr_int(b.node("Concat", {"m1", "r3"}, {"k"}, "cat"), "axis", 1);
    b.node("GlobalAveragePool", {"k"}, {"g1"}, "gap");
    b.node("Flatten", {"g1"}, {"f1"}, "flatten");
    ModelBuilder::attr_int(b.node("Gemm", {"f1", "wg", "bg"}, {"logits"}, "fc"), "transB", 1);
    b.node("Softmax", {"logits"}, {"prob"}, "softmax");
    b.output("logits");
    b.output("prob");
    return b.bytes();
}

ir::Graph import(const std::string& bytes, importer::QdqMode mode) {
    importer::ImportOptions io;
    io.qdq = mode;
    return importer::import_onnx_bytes(bytes.data(), bytes.size(), io, "test");
}

const ir::Node* writer_of(const ir::Graph& g, const std::string& v) {
    const int i = g.producer(v);
    return i < 0 ? nullptr : &g.nodes()[static_cast<size_t>(i)];
}

std::pair<float, int32_t> qparams(const ir::Graph& g, const std::string& t) {
    const ir::Node* q = writer_of(g, t + "_QuantizeLinear_Output");
    EXPECT_NE(q, nullptr) << t;
    if (!q) return {0.f, 0};
    const num::Tensor& s = *g.value(q->input(1)).data;
    const num::Tensor& z = *g.value(q->input(2)).data;
    return {s.data<float>()[0],
            z.dtype() == num::DType::I8 ? int32_t{z.data<int8_t>()[0]} : int32_t{z.data<uint8_t>()[0]}};
}

struct Fixture : ::testing::Test {
    ir::Graph fg = import(float_model(), importer::QdqMode::Keep);
    quant::CalibrationSet cal = quant::seeded_calibration(fg, 11);
};

TEST_F(Fixture, QdqGraphFollowsOnnxruntimeConvention) {
    EXPECT_EQ(quant::quantized_reason(fg), "");
    const quant::QuantizeResult r = quant::quantize_model(fg, cal, {});
    const ir::Graph& q = r.qdq;
    EXPECT_EQ(r.removed_activations, 3u);  // relu1 into conv1, the Clip into the Add, relu3 into conv3
    EXPECT_EQ(r.weights, 4u);
    EXPECT_EQ(r.biases, 4u);
    ASSERT_EQ(r.float_nodes.size(), 1u);
    EXPECT_NE(r.float_nodes[0].find("softmax"), std::string::npos);
    // The producer writes the removed activation's output; QuantizeLinear -> DequantizeLinear follow.
    ASSERT_NE(writer_of(q, "r1"), nullptr);
    EXPECT_EQ(writer_of(q, "r1")->name, "conv1");
    EXPECT_EQ(writer_of(q, "a2")->name, "add");
    EXPECT_EQ(q.find_value("c1"), nullptr);
    EXPECT_EQ(writer_of(q, "r1_DequantizeLinear_Output")->op_type, "DequantizeLinear");
    // Relu outputs start at 0 (zero point = qmin); the Relu6 range stays inside [0, 6].
    EXPECT_EQ(qparams(q, "r1").second, -128);
    const auto [s6, z6] = qparams(q, "a2");
    EXPECT_EQ(z6, -128);
    EXPECT_LE(static_cast<double>(s6) * (127 - z6), 6.0);
    // Data movement shares its input's parameters.
    EXPECT_EQ(qparams(q, "m1"), qparams(q, "a2"));
    EXPECT_EQ(qparams(q, "f1"), qparams(q, "g1"));
    // Weights: int8 per output channel (axis 0), symmetric; bias: int32, scale = x_scale * w_scale.
    const ir::Node* wdq = writer_of(q, "w1_DequantizeLinear_Output");
    ASSERT_NE(wdq, nullptr);
    EXPECT_EQ(wdq->attrs.get_int("axis", -1), 0);
    const num::Tensor& wq = *q.value(wdq->input(0)).data;
    const num::Tensor& ws = *q.value(wdq->input(1)).data;
    ASSERT_EQ(wq.dtype(), num::DType::I8);
    ASSERT_EQ(ws.numel(), 8u);
    for (size_t i = 0; i < wq.numel(); ++i) EXPECT_GE(wq.data<int8_t>()[i], -127);
    const ir::Node* bdq = writer_of(q, "b1_DequantizeLinear_Output");
    ASSERT_NE(bdq, nullptr);
    const num::Tensor& bs = *q.value(bdq->input(1)).data;
    EXPECT_EQ(q.value(bdq->input(0)).dtype, num::DType::I32);
    const float xs = qparams(q, "x").first;
    for (size_t c = 0; c < 8; ++c) EXPECT_EQ(bs.data<float>()[c], xs * ws.data<float>()[c]) << c;
    // A quantized graph output keeps its name on the DequantizeLinear.
    EXPECT_EQ(writer_of(q, "logits")->op_type, "DequantizeLinear");
    EXPECT_EQ(writer_of(q, "logits_QuantizeLinear_Input")->name, "fc");
    EXPECT_EQ(writer_of(q, "prob")->op_type, "Softmax");
}

TEST_F(Fixture, ImporterFoldsTheWrittenModelIntoIntegerOps) {
    quant::PipelineOptions po;
    po.accuracy = false;
    const quant::QuantizedModel m = quant::quantize_graph(fg, "t", po);
    std::map<std::string, int> ops;
    for (const ir::Node& n : m.folded.nodes()) ops[n.op_type]++;
    EXPECT_EQ(ops["QLinearConv"], 3);
    EXPECT_EQ(ops["QLinearAdd"], 1);
    EXPECT_EQ(ops["QLinearConcat"], 1);
    EXPECT_EQ(ops["QLinearGlobalAveragePool"], 1);
    EXPECT_EQ(ops["QGemm"], 1);
    EXPECT_EQ(ops["MaxPool"], 1);
    EXPECT_EQ(ops["Relu"] + ops["Clip"], 0);
    EXPECT_EQ(m.folded.value("m1_QuantizeLinear_Output").dtype, num::DType::I8);
    // The integer model computes what the float model does, to quantization accuracy.
    const auto want = ref::execute(fg, cal.samples[0]);
    const auto got = ref::execute(m.folded, cal.samples[0]);
    quant::Similarity s;
    s.add(want.at("prob").data<float>(), got.at("prob").data<float>(), 5);
    EXPECT_GT(s.cosine(), 0.99);
}

TEST_F(Fixture, ConcatInputsShareTheOutputParametersWhenTheClampsAllowIt) {
    const quant::QuantizeResult r = quant::quantize_model(fg, cal, {});
    for (const char* t : {"m1", "r3"}) {
        const auto [s, z] = qparams(r.qdq, t);
        if (std::make_pair(s, z) == qparams(r.qdq, "k")) continue;
        // Not shared: the concat range would break the exactness of a removed Relu6/Relu.
        const auto [sk, zk] = qparams(r.qdq, "k");
        EXPECT_TRUE(std::string(t) == "m1" ? sk * (127 - zk) > 6.0 : zk != -128) << t;
    }
    quant::QuantizeOptions o;
    o.scheme.share_concat_params = false;
    const quant::QuantizeResult own = quant::quantize_model(fg, cal, o);
    EXPECT_NE(qparams(own.qdq, "r3"), qparams(own.qdq, "k"));
}

TEST_F(Fixture, AlreadyQuantizedModelsAreRefused) {
    quant::PipelineOptions po;
    po.accuracy = false;
    const quant::QuantizedModel m = quant::quantize_graph(fg, "t", po);
    const ir::Graph again = import(m.onnx, importer::QdqMode::Keep);
    EXPECT_NE(quant::quantized_reason(again), "");
    EXPECT_THROW(quant::quantize_model(again, cal, {}), quant::QuantizeError);
}

TEST_F(Fixture, WriterRoundTripsTheFloatGraph) {
    const std::string bytes = quant::onnx_bytes(fg);
    const ir::Graph back = import(bytes, importer::QdqMode::Keep);
    EXPECT_EQ(back.dump(), fg.dump());
    const auto a = ref::execute(fg, cal.samples[1]), b = ref::execute(back, cal.samples[1]);
    for (const auto& [name, t] : a) {
        ASSERT_EQ(t.nbytes(), b.at(name).nbytes());
        EXPECT_EQ(0, std::memcmp(t.raw(), b.at(name).raw(), t.nbytes())) << name;
    }
    EXPECT_EQ(quant::onnx_bytes(fg), bytes);  // deterministic
}

TEST_F(Fixture, AccuracyReportMeasuresEveryQuantizedTensor) {
    quant::PipelineOptions po;
    po.seed = 11;  // the fixture's calibration set
    const quant::QuantizedModel m = quant::quantize_graph(fg, "t", po);
    const quant::AccuracyReport& a = m.accuracy;
    ASSERT_EQ(a.layers.size(), m.result.tensors.size());
    ASSERT_GE(a.worst, 0);
    EXPECT_EQ(a.samples, cal.samples.size());
    // The input's entire error is its own quantize-dequantize error: recompute it by hand.
    const quant::QuantizedTensor& in = m.result.tensors.front();
    ASSERT_EQ(in.name, "x");
    quant::Similarity s;
    for (const auto& smp : cal.samples) {
        const num::Tensor& x = smp.at("x");
        std::vector<float> dq(x.numel());
        for (size_t i = 0; i < dq.size(); ++i)
            dq[i] = static_cast<float>(quant::quantize_value(x.data<float>()[i], in.params, in.grid) -
                                       in.params.zero_point) *
                    in.params.scale;
        s.add(x.data<float>(), dq.data(), dq.size());
    }
    EXPECT_DOUBLE_EQ(a.layers.front().entire.cosine(), s.cosine());
    EXPECT_DOUBLE_EQ(a.layers.front().entire.max_abs, s.max_abs);
    EXPECT_LE(s.max_abs, in.params.scale / 2 * (1 + 1e-6));  // uniform input: within half a step
    for (const auto& L : a.layers) {
        EXPECT_GT(L.entire.cosine(), 0.9) << L.tensor;
        EXPECT_LE(L.entire.cosine(), 1.0 + 1e-12) << L.tensor;
        EXPECT_GT(L.entire.values, 0u) << L.tensor;
    }
    ASSERT_EQ(a.outputs.size(), 2u);
    EXPECT_GT(a.outputs[0].lsb, 0);  // logits are quantized
    EXPECT_EQ(a.outputs[1].lsb, 0);  // probabilities come from the float Softmax
    const std::string text = quant::accuracy_text(a), csv = quant::accuracy_csv(a);
    EXPECT_NE(text.find("worst layer: "), std::string::npos);
    EXPECT_NE(text.find("warning: no --calibration data"), std::string::npos);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(a.layers.size() + 1));
    const auto j = quant::accuracy_json(a);
    EXPECT_EQ(j["layers"].size(), a.layers.size());
    EXPECT_EQ(j["worst"]["tensor"], a.layers[static_cast<size_t>(a.worst)].tensor);
}

TEST(QuantSimilarity, CosineEuclideanAndMax) {
    quant::Similarity s;
    const float a[] = {1, 0, 0}, b[] = {1, 1, 0};
    s.add(a, b, 3);
    EXPECT_NEAR(s.cosine(), 1 / std::sqrt(2.0), 1e-12);
    EXPECT_DOUBLE_EQ(s.euclidean(), 1.0);
    EXPECT_DOUBLE_EQ(s.max_abs, 1.0);
    EXPECT_NEAR(s.mean_abs(), 1.0 / 3, 1e-12);
    quant::Similarity z;
    const float zero[] = {0, 0};
    z.add(zero, zero, 2);
    EXPECT_EQ(z.cosine(), 1.0);
}

struct CalibrationFiles : ::testing::Test {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("npusim_calib_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                 "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ir::Graph g = import(float_model(), importer::QdqMode::Keep);
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
    std::string npy(const std::string& name, num::DType dt, std::vector<int64_t> shape, float first) {
        num::Tensor t(dt, std::move(shape));
        if (dt == num::DType::F32)
            for (size_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = first + static_cast<float>(i);
        const std::string p = (dir / name).string();
        num::write_npy(p, t);
        return p;
    }
};

TEST_F(CalibrationFiles, FilesFoldersAndLeadingSampleAxis) {
    npy("b.npy", num::DType::F32, {1, 3, 8, 8}, 100.f);
    npy("a.npy", num::DType::F32, {4, 3, 8, 8}, 0.f);  // four samples in one file
    const quant::CalibrationSet c = quant::load_calibration(g, {dir.string()});
    ASSERT_EQ(c.samples.size(), 5u);
    EXPECT_EQ(c.samples[0].at("x").shape(), (std::vector<int64_t>{1, 3, 8, 8}));
    EXPECT_EQ(c.samples[1].at("x").data<float>()[0], 192.f);  // a.npy first (sorted), sample 1 starts at 3*8*8
    EXPECT_EQ(c.samples[4].at("x").data<float>()[0], 100.f);  // then b.npy
    EXPECT_EQ(quant::load_calibration(g, {"x=" + (dir / "b.npy").string()}).samples.size(), 1u);
}

TEST_F(CalibrationFiles, BadDataIsACalibrationErrorNamingTheFile) {
    const std::string wrong = npy("w.npy", num::DType::F32, {1, 3, 7, 8}, 0.f);
    const std::string ints = npy("i.npy", num::DType::I32, {1, 3, 8, 8}, 0.f);
    auto message = [&](const std::vector<std::string>& specs) {
        try {
            quant::load_calibration(g, specs);
        } catch (const quant::CalibrationError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({wrong}).find("w.npy' has shape 1x3x7x8, input 'x' is 1x3x8x8"), std::string::npos)
        << message({wrong});
    EXPECT_NE(message({ints}).find("is int32, input 'x' of the model is float32"), std::string::npos)
        << message({ints});
    EXPECT_NE(message({(dir / "none.npy").string()}).find("no such file"), std::string::npos);
    EXPECT_NE(message({"y=" + wrong}).find("no input 'y'"), std::string::npos);
    std::filesystem::create_directories(dir / "empty");
    EXPECT_NE(message({(dir / "empty").string()}).find("holds no .npy"), std::string::npos);
}

}  // namespace

namespace {
/// x -> Conv+Relu -> ConvTranspose 2x2 stride 2 (weights [Cin, Cout, 2, 2], as PyTorch's
/// nn.ConvTranspose2d exports them) -> Relu -> ConvTranspose (group 2) -> y: a DB / U-Net style
/// upsampling head.
std::string deconv_model() {
    std::mt19937 rng(5);
    ModelBuilder b;
    b.input("x", kF, {1, 3, 6, 6});
    b.init_f32("w1", {8, 3, 3, 3}, randn(rng, 8 * 27, 0.3f));
    b.init_f32("b1", {8}, randn(rng, 8, 0.1f));
    b.init_f32("wt", {8, 6, 2, 2}, randn(rng, 8 * 6 * 4, 0.3f));
    b.init_f32("bt", {6}, randn(rng, 6, 0.1f));
    b.init_f32("wg", {6, 2, 2, 2}, randn(rng, 6 * 2 * 4, 0.3f));
    auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
    ModelBuilder::attr_ints(c1, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    auto& t = b.node("ConvTranspose", {"r1", "wt", "bt"}, {"t1"}, "deconv");
    ModelBuilder::attr_ints(t, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(t, "strides", {2, 2});
    b.node("Relu", {"t1"}, {"r2"}, "relu2");
    auto& g = b.node("ConvTranspose", {"r2", "wg"}, {"y"}, "deconv_grouped");
    ModelBuilder::attr_ints(g, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(g, "strides", {2, 2});
    ModelBuilder::attr_int(g, "group", 3);
    b.output("y");
    return b.bytes();
}
}  // namespace

TEST(QuantizerConvTranspose, WeightsPerOutputChannelAlongAxisOne) {
    const ir::Graph fg = import(deconv_model(), importer::QdqMode::Keep);
    const quant::CalibrationSet cal = quant::seeded_calibration(fg, 13);
    const quant::QuantizeResult r = quant::quantize_model(fg, cal, {});
    const ir::Graph& q = r.qdq;
    // The ungrouped ConvTranspose is quantized (its Relu removed into it); the grouped one, whose
    // axis 1 holds Cout / group channels, stays float.
    ASSERT_EQ(r.float_nodes.size(), 1u);
    EXPECT_NE(r.float_nodes[0].find("deconv_grouped"), std::string::npos) << r.float_nodes[0];
    const ir::Node* wdq = writer_of(q, "wt_DequantizeLinear_Output");
    ASSERT_NE(wdq, nullptr);
    EXPECT_EQ(wdq->attrs.get_int("axis", -1), 1);
    const num::Tensor& wq = *q.value(wdq->input(0)).data;
    const num::Tensor& ws = *q.value(wdq->input(1)).data;
    ASSERT_EQ(ws.numel(), 6u);  // one scale per output channel
    // Symmetric per output channel: each channel's largest |w| reaches 127 (w[ci][co][kh][kw]).
    for (int64_t co = 0; co < 6; ++co) {
        int amax = 0;
        for (int64_t ci = 0; ci < 8; ++ci)
            for (int64_t k = 0; k < 4; ++k) amax = std::max(amax, std::abs(int{wq.data<int8_t>()[(ci * 6 + co) * 4 + k]}));
        EXPECT_EQ(amax, 127) << co;
    }
    const ir::Node* bdq = writer_of(q, "bt_DequantizeLinear_Output");
    ASSERT_NE(bdq, nullptr);
    const num::Tensor& bs = *q.value(bdq->input(1)).data;
    const float xs = qparams(q, "r1").first;
    for (size_t c = 0; c < 6; ++c) EXPECT_EQ(bs.data<float>()[c], xs * ws.data<float>()[c]) << c;
    // The QDQ unit the RKNPU compiler takes as its integer ConvTranspose (onnxruntime's form: DQ on
    // the activation and the weights, Q on the output), and the integer model computes what the
    // float one does.
    quant::PipelineOptions po;
    po.accuracy = false;
    const quant::QuantizedModel m = quant::quantize_graph(fg, "t", po);
    int units = 0;
    for (const ir::Node& n : m.folded.nodes()) {
        if (n.op_type != "ConvTranspose" || n.name != "deconv") continue;
        const ir::Node* x = writer_of(m.folded, n.input(0));
        const ir::Node* w = writer_of(m.folded, n.input(1));
        const auto readers = m.folded.consumers(n.outputs.at(0));
        ASSERT_EQ(readers.size(), 1u);
        units += x && x->op_type == "DequantizeLinear" && w && w->op_type == "DequantizeLinear" &&
                 m.folded.nodes()[readers[0]].op_type == "QuantizeLinear";
    }
    EXPECT_EQ(units, 1);
    const auto want = ref::execute(fg, cal.samples[0]);
    const auto got = ref::execute(m.folded, cal.samples[0]);
    quant::Similarity s;
    s.add(want.at("y").data<float>(), got.at("y").data<float>(), static_cast<size_t>(want.at("y").numel()));
    EXPECT_GT(s.cosine(), 0.99);
}

TEST(QuantizerActivations, LutFunctionsAreQuantizedSoTheDataMovementAfterThemIsToo) {
    // MobileNetV3's head as PyTorch exports it: Conv -> HardSwish -> Flatten -> Gemm. The HardSwish
    // gets its own Q -> DQ, so the Flatten (data movement) is quantized with it and nothing is left
    // in float; a HardSigmoid reading a conv (the squeeze-excite gate) alike.
    std::mt19937 rng(9);
    ModelBuilder b;
    b.input("x", kF, {1, 4, 1, 1});
    b.init_f32("w", {6, 4, 1, 1}, randn(rng, 24, 0.5f));
    b.init_f32("wg", {3, 6}, randn(rng, 18, 0.5f));
    b.node("Conv", {"x", "w"}, {"c"}, "conv");
    b.node("HardSwish", {"c"}, {"h"}, "hswish");
    b.node("Flatten", {"h"}, {"f"}, "flatten");
    ModelBuilder::attr_int(b.node("Gemm", {"f", "wg"}, {"g"}, "fc"), "transB", 1);
    auto& hs = b.node("HardSigmoid", {"g"}, {"y"}, "gate");
    ModelBuilder::attr_float(hs, "alpha", 1.0f / 6);
    b.output("y");
    const ir::Graph fg = import(b.bytes(), importer::QdqMode::Keep);
    const quant::CalibrationSet cal = quant::seeded_calibration(fg, 3);
    const quant::QuantizeResult r = quant::quantize_model(fg, cal, {});
    EXPECT_TRUE(r.float_nodes.empty()) << r.float_nodes.front();
    const ir::Graph& q = r.qdq;
    for (const char* t : {"h", "g"}) EXPECT_NE(writer_of(q, std::string(t) + "_QuantizeLinear_Output"), nullptr) << t;
    EXPECT_EQ(qparams(q, "f"), qparams(q, "h"));  // the Flatten shares its input's parameters
}
