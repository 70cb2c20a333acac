// SPDX-License-Identifier: MIT
// Quantization accuracy analysis (what RKNN-Toolkit2's accuracy_analysis prints): for every
// quantized activation, the cosine similarity, Euclidean distance and largest absolute error of
// the quantized model's value (dequantized) against the float model's, over the calibration
// inputs, both "entire" (the quantized model run end to end, errors accumulated) and "single"
// (the layer's integer node alone, fed with the float model's inputs quantized), plus the graph
// outputs; the worst layer is named. Both models run on the reference executor.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/quantize/calibration.h"
#include "compiler/quantize/quantizer.h"

namespace drv::quant {

/// Float-vs-float similarity accumulated over any number of tensors (the samples of one layer):
/// the comparator of the accuracy report.
struct Similarity {
    uint64_t values = 0;
    double dot = 0, ref_sq = 0, got_sq = 0, err_sq = 0, sum_abs = 0, max_abs = 0;
    void add(const float* ref, const float* got, size_t n);
    /// dot / (|ref| |got|); 1 when both are all zero, 0 when exactly one is.
    double cosine() const;
    double euclidean() const { return std::sqrt(err_sq); }  ///< |ref - got| (RKNN's "euc")
    double mean_abs() const { return values ? sum_abs / static_cast<double>(values) : 0.0; }
};

struct LayerAccuracy {
    std::string layer;   ///< the node writing the tensor ("" for a graph input)
    std::string op;      ///< "Conv+Relu", "input", ...
    std::string tensor;  ///< float tensor name
    float scale = 1;
    int32_t zero_point = 0;
    Similarity entire, single;
    bool has_single = false;  ///< false when the integer node reads a value with no float counterpart
};

struct OutputAccuracy {
    std::string name;
    Similarity sim;
    double lsb = 0;  ///< the output's quantization step, 0 when it is not quantized
};

struct AccuracyReport {
    std::string scheme, method, calibration;
    bool seeded_calibration = false;
    size_t samples = 0;
    std::vector<LayerAccuracy> layers;  ///< graph order
    std::vector<OutputAccuracy> outputs;
    int worst = -1;  ///< index of the layer with the lowest entire cosine (-1: none)
};

/// Runs the float graph `float_g` and `folded` (the QDQ model imported with QdqMode::Rewrite:
/// the integer graph onnxruntime and the NPU compiler execute) on every sample of `cal` and
/// compares each quantized tensor of `qr`. Throws what the reference executor throws.
AccuracyReport analyze_accuracy(const ir::Graph& float_g, const ir::Graph& folded, const QuantizeResult& qr,
                                const CalibrationSet& cal);

/// Text table (one row per layer, then the outputs, the worst layer and the calibration warning).
std::string accuracy_text(const AccuracyReport& r);
/// JSON object: scheme, method, calibration, samples, warning, layers[], outputs[], worst.
nlohmann::ordered_json accuracy_json(const AccuracyReport& r);
/// CSV, one row per layer: layer,op,tensor,scale,zero_point,entire_cosine,... (header first).
std::string accuracy_csv(const AccuracyReport& r);

/// The warning printed when the ranges come from the seeded default input.
std::string seeded_calibration_warning();

}  // namespace drv::quant
