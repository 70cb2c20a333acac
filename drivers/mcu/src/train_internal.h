// SPDX-License-Identifier: MIT
// Internal to drivers/mcu: the ws63 trainer's model mappers (train.cpp: FP32 rows; train_qas.cpp: QAS
// INT8 rows of seed 000's training tables) and the training-blob writers they share.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "mk_train_blob.h"
#include "numerics/tensor.h"

namespace mcu::detail {

/// A model outside the training configurations (exit 4, the message names the node and the rule).
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The QAS INT8 training graph: layers, float master codes (weights OHWI / [N][K], int32 biases as
/// floats), per-output-channel weight scales, the sizes of the int8 / int32 code areas.
struct QasBuilt {
    std::vector<mk_train_qlayer> layers;
    std::vector<float> params, qscales;
    uint32_t wq_bytes = 0, bq_words = 0, act_floats = 0, in_floats = 0, classes = 0;
    std::vector<int64_t> in_shape;  // ONNX NCHW
};

/// Maps the integer graph of a quantized model (QdqMode::Rewrite: QLinearConv, QGemm, ...) onto the
/// QAS INT8 trainer; throws Refusal.
QasBuilt map_qas(const drv::ir::Graph& g);
std::vector<uint8_t> build_qas_blob(const QasBuilt& b, const num::Tensor& x, const std::vector<int32_t>& y, uint32_t epochs, float lr);

/// Samples NCHW float32 [N, C, H, W] -> NHWC floats at `off` (in_floats per sample).
inline void write_samples_nhwc(std::vector<uint8_t>& blob, uint32_t off, const num::Tensor& x, uint32_t in_floats) {
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    for (int64_t s = 0; s < N; ++s)
        for (int64_t yy = 0; yy < H; ++yy)
            for (int64_t xx = 0; xx < W; ++xx)
                for (int64_t c = 0; c < C; ++c) {
                    const float v = x.data<float>()[((s * C + c) * H + yy) * W + xx];
                    std::memcpy(&blob[off + 4u * uint32_t(s * int64_t(in_floats) + (yy * W + xx) * C + c)], &v, 4);
                }
}

}  // namespace mcu::detail
