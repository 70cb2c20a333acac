// SPDX-License-Identifier: MIT
// Writes a small valid TFLite model (input -> CONV_2D int8 per-channel -> RELU output) as the seed
// corpus of tflite_loader_fuzz, so mutations start past the file identifier and verifier.
#include <fstream>
#include <iostream>

#include "npusim_tflite_generated.h"

namespace tfl = npusim::tflite;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: tflite_seed_gen OUT.tflite\n";
        return 2;
    }
    flatbuffers::FlatBufferBuilder b;
    std::vector<uint8_t> w(2 * 1 * 1 * 2, 1);
    std::vector<flatbuffers::Offset<tfl::Buffer>> bufs{tfl::CreateBuffer(b), tfl::CreateBuffer(b, b.CreateVector(w))};
    std::vector<float> s1{0.5f}, s2{0.1f, 0.2f};
    std::vector<int64_t> z1{0}, z2{0, 0};
    auto q1 = tfl::CreateQuantizationParameters(b, 0, 0, b.CreateVector(s1), b.CreateVector(z1));
    auto q2 = tfl::CreateQuantizationParameters(b, 0, 0, b.CreateVector(s2), b.CreateVector(z2), tfl::QuantizationDetails::NONE, 0, 0);
    auto q3 = tfl::CreateQuantizationParameters(b, 0, 0, b.CreateVector(s1), b.CreateVector(z1));
    std::vector<int32_t> sx{1, 4, 4, 2}, sw{2, 1, 1, 2};
    std::vector<flatbuffers::Offset<tfl::Tensor>> ts{
        tfl::CreateTensor(b, b.CreateVector(sx), tfl::TensorType::INT8, 0, b.CreateString("x"), q1),
        tfl::CreateTensor(b, b.CreateVector(sw), tfl::TensorType::INT8, 1, b.CreateString("w"), q2),
        tfl::CreateTensor(b, b.CreateVector(sx), tfl::TensorType::INT8, 0, b.CreateString("y"), q3)};
    auto opts = tfl::CreateConv2DOptions(b, tfl::Padding::VALID, 1, 1, tfl::ActivationFunctionType::RELU);
    std::vector<int32_t> in{0, 1, -1}, out{2}, gi{0}, go{2};
    std::vector<flatbuffers::Offset<tfl::Operator>> ops{
        tfl::CreateOperator(b, 0, b.CreateVector(in), b.CreateVector(out), tfl::BuiltinOptions::Conv2DOptions, opts.Union())};
    std::vector<flatbuffers::Offset<tfl::SubGraph>> sgs{
        tfl::CreateSubGraph(b, b.CreateVector(ts), b.CreateVector(gi), b.CreateVector(go), b.CreateVector(ops))};
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes{tfl::CreateOperatorCode(b, 3, 0, 1, 3)};
    tfl::FinishModelBuffer(b, tfl::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(sgs), 0, b.CreateVector(bufs)));
    std::ofstream f(argv[1], std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.GetBufferPointer()), static_cast<std::streamsize>(b.GetSize()));
    return f ? 0 : 1;
}
