// SPDX-License-Identifier: MIT
// TFLite import: models built with the flatbuffers builder of our own schema; int8 per-channel
// quantization, options as attributes, and malformed files (bad identifier, truncation, bad
// offsets, out-of-range tensor/buffer indices, size mismatches) rejected with clear errors.
#include <gtest/gtest.h>

#include "compiler/tflite/tflite_importer.h"
#include "npusim_tflite_generated.h"

namespace tfl = npusim::tflite;
using drv::importer::ImportError;

namespace {

struct Spec {
    int32_t conv_input_index = 0;  // operator input 0 (tensor index)
    uint32_t weight_buffer = 1;
    size_t weight_bytes = 4 * 3 * 3 * 3;
    int32_t builtin = 3;  // CONV_2D
    std::vector<int32_t> input_signature = {1, 8, 8, 3};
};

/// input int8 [1,8,8,3] -> CONV_2D(w int8 [4,3,3,3] per-channel, b int32 [4], SAME, RELU) -> int8 [1,8,8,4]
std::string conv_model(const Spec& s = {}) {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<tfl::Buffer>> bufs;
    bufs.push_back(tfl::CreateBuffer(b));
    std::vector<uint8_t> w(s.weight_bytes, 1);
    bufs.push_back(tfl::CreateBuffer(b, b.CreateVector(w)));
    std::vector<uint8_t> bias(16, 0);
    bufs.push_back(tfl::CreateBuffer(b, b.CreateVector(bias)));
    auto q = [&](std::vector<float> sc, std::vector<int64_t> zp, int dim) {
        return tfl::CreateQuantizationParameters(b, 0, 0, b.CreateVector(sc), b.CreateVector(zp), tfl::QuantizationDetails::NONE, 0, dim);
    };
    auto tensor = [&](std::vector<int32_t> shape, tfl::TensorType t, uint32_t buf, const char* name,
                      flatbuffers::Offset<tfl::QuantizationParameters> qp, std::vector<int32_t> sig = {}) {
        return tfl::CreateTensor(b, b.CreateVector(shape), t, buf, b.CreateString(name), qp, false, 0,
                                 sig.empty() ? 0 : b.CreateVector(sig));
    };
    std::vector<flatbuffers::Offset<tfl::Tensor>> ts{
        tensor({1, 8, 8, 3}, tfl::TensorType::INT8, 0, "input", q({0.5f}, {-3}, 0), s.input_signature),
        tensor({4, 3, 3, 3}, tfl::TensorType::INT8, s.weight_buffer, "weight", q({0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0)),
        tensor({4}, tfl::TensorType::INT32, 2, "bias", q({0.05f, 0.1f, 0.15f, 0.2f}, {0, 0, 0, 0}, 0)),
        tensor({1, 8, 8, 4}, tfl::TensorType::INT8, 0, "output", q({0.25f}, {-128}, 0))};
    auto opts = tfl::CreateConv2DOptions(b, tfl::Padding::SAME, 1, 1, tfl::ActivationFunctionType::RELU);
    std::vector<int32_t> in{s.conv_input_index, 1, 2}, out{3};
    auto op = tfl::CreateOperator(b, 0, b.CreateVector(in), b.CreateVector(out), tfl::BuiltinOptions::Conv2DOptions, opts.Union());
    std::vector<flatbuffers::Offset<tfl::Operator>> ops{op};
    std::vector<int32_t> gi{0}, go{3};
    auto sg = tfl::CreateSubGraph(b, b.CreateVector(ts), b.CreateVector(gi), b.CreateVector(go), b.CreateVector(ops), b.CreateString("main"));
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes{tfl::CreateOperatorCode(b, static_cast<int8_t>(std::min(s.builtin, 127)), 0, 1, s.builtin)};
    std::vector<flatbuffers::Offset<tfl::SubGraph>> sgs{sg};
    auto m = tfl::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(sgs), b.CreateString("test"), b.CreateVector(bufs));
    tfl::FinishModelBuffer(b, m);
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

std::string error_of(const std::string& bytes, const drv::importer::ImportOptions& o = {}) {
    try {
        drv::importer::import_tflite_bytes(bytes.data(), bytes.size(), o, "m.tflite");
    } catch (const ImportError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(TfliteImport, ConvWithPerChannelQuantization) {
    std::string bytes = conv_model();
    ASSERT_TRUE(drv::importer::looks_like_tflite(bytes.data(), bytes.size()));
    auto g = drv::importer::import_tflite_bytes(bytes.data(), bytes.size(), {}, "m.tflite");
    ASSERT_EQ(g.nodes().size(), 1u);
    const auto& n = g.nodes()[0];
    EXPECT_EQ(n.op_type, "CONV_2D");
    EXPECT_EQ(n.domain, "tflite");
    EXPECT_EQ(drv::ir::attr_string(n.attrs, "padding", ""), "SAME");
    EXPECT_EQ(drv::ir::attr_string(n.attrs, "fused_activation_function", ""), "RELU");
    EXPECT_EQ(drv::ir::attr_int(n.attrs, "dilation_w_factor", 0), 1);
    const auto& w = g.value("weight");
    ASSERT_TRUE(w.is_constant());
    EXPECT_EQ(w.dtype, num::DType::I8);
    EXPECT_EQ(w.quant.scale.size(), 4u);
    EXPECT_EQ(w.quant.axis, 0);
    EXPECT_EQ(g.value("input").quant.zero_point, (std::vector<int32_t>{-3}));
    EXPECT_EQ(g.value("output").shape, (std::vector<int64_t>{1, 8, 8, 4}));
    EXPECT_EQ(g.inputs(), (std::vector<std::string>{"input"}));
}

TEST(TfliteImport, DynamicBatchNeedsInputShape) {
    Spec s;
    s.input_signature = {-1, 8, 8, 3};
    EXPECT_NE(error_of(conv_model(s)).find("--input-shape"), std::string::npos);
    drv::importer::ImportOptions o;
    drv::importer::parse_input_shape("input=1x8x8x3", o);
    EXPECT_EQ(error_of(conv_model(s), o), "");
}

TEST(TfliteMalformed, IdentifierTruncationAndOffsets) {
    std::string good = conv_model();
    EXPECT_NE(error_of("hello world").find("TFL3"), std::string::npos);
    EXPECT_NE(error_of(good.substr(0, good.size() / 2)).find("verification"), std::string::npos);
    std::string bad = good;
    // Root offset pointing past the end of the buffer.
    bad[0] = '\xff';
    bad[1] = '\xff';
    bad[2] = '\xff';
    bad[3] = '\x7f';
    EXPECT_NE(error_of(bad).find("verification"), std::string::npos);
}

TEST(TfliteMalformed, IndicesAndSizes) {
    Spec s;
    s.conv_input_index = 17;
    EXPECT_NE(error_of(conv_model(s)).find("refers to tensor 17"), std::string::npos);
    s = Spec();
    s.weight_buffer = 9;
    EXPECT_NE(error_of(conv_model(s)).find("buffer index 9 out of range"), std::string::npos);
    s = Spec();
    s.weight_bytes = 5;
    EXPECT_NE(error_of(conv_model(s)).find("has 5 bytes"), std::string::npos);
    s = Spec();
    s.builtin = 32;
    EXPECT_NE(error_of(conv_model(s)).find("custom operator"), std::string::npos);
    s = Spec();
    s.builtin = 240;
    EXPECT_NE(error_of(conv_model(s)).find("code 240"), std::string::npos);
}

TEST(TfliteMalformed, MutationSweepNeverCrashes) {
    const std::string good = conv_model();
    uint64_t st = 99;
    for (int k = 0; k < 2000; ++k) {
        std::string b = good;
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = static_cast<size_t>(st >> 33) % b.size();
        b[pos] = static_cast<char>(b[pos] ^ static_cast<char>(1 + (st >> 20) % 255));
        if (k % 5 == 0) b.resize(pos + 1);
        try {
            drv::importer::import_tflite_bytes(b.data(), b.size(), {}, "mut.tflite");
        } catch (const ImportError&) {
        }
    }
    SUCCEED();
}
