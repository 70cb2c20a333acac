// SPDX-License-Identifier: MIT
// Calibration: the input samples (`--calibration FILE.npy|DIR`, or a documented seeded default),
// activation statistics gathered by running the float graph on them with the reference executor,
// and the range each calibration method picks from those statistics.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/quantize/scheme.h"

namespace drv::quant {

/// Bad calibration input (unreadable file, wrong dtype or shape, empty folder): the message names
/// the file and what the model expects. Mapped to exit code 2 by the CLI.
class CalibrationError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// `--calibration-method`: minmax (RKNN 'normal', onnxruntime MinMax), kl (RKNN 'kl_divergence',
/// onnxruntime/TensorRT entropy calibration), mmse (RKNN 'mmse': minimum quantization MSE).
enum class CalibrationMethod { MinMax, Kl, Mmse };
const char* method_name(CalibrationMethod m);
/// "minmax" | "kl" | "mmse"; false for anything else.
bool parse_method(const std::string& s, CalibrationMethod& out);

/// The calibration inputs: one map (graph input name -> tensor) per sample.
struct CalibrationSet {
    std::vector<std::map<std::string, num::Tensor>> samples;
    bool seeded_default = false;  ///< no data given: kDefaultSamples seeded random inputs
    uint64_t seed = 0;
    std::vector<std::string> files;  ///< the .npy files read, in order
    std::string describe() const;    ///< "8 samples from 8 .npy files" / "4 seeded random samples ..."
};

/// Samples used when no calibration data is given.
constexpr size_t kDefaultSamples = 4;

/// Reads `specs` (each FILE.npy, DIR (every *.npy in it, sorted by name), or NAME=FILE.npy|DIR for
/// one input of a multi-input model). A file whose shape is the input's shape is one sample; a
/// file with one extra leading dimension N (or, for a batch-1 input, N in place of the batch)
/// holds N samples. Inputs of multi-input models are paired by position and must have the same
/// number of samples. Throws CalibrationError.
CalibrationSet load_calibration(const ir::Graph& g, const std::vector<std::string>& specs);

/// The documented default: kDefaultSamples samples, sample k drawn by ref::random_input(input,
/// seed + k, position) (float inputs uniform in [-1, 1), integer inputs over their range).
CalibrationSet seeded_calibration(const ir::Graph& g, uint64_t seed, size_t count = kDefaultSamples);

/// Histogram resolution of the kl and mmse methods (TensorRT's entropy calibration uses 2048).
constexpr int kHistogramBins = 2048;

/// Statistics of one float tensor over every calibration sample.
struct TensorStats {
    double min = 0, max = 0;  ///< observed over all samples
    uint64_t count = 0;       ///< values seen
    /// kl/mmse: kHistogramBins counts over [hist_lo, hist_hi]: [0, max] when min >= 0, else
    /// [-t, t] with t = max(|min|, |max|) (onnxruntime's collect_value layout), whose halves fold into
    /// a histogram of |x|.
    std::vector<uint64_t> hist;
    double hist_lo = 0, hist_hi = 0;
};

/// Runs `g` on every sample with the reference executor and gathers min/max (and, with
/// `histograms`, a second pass for the histograms) of the float values named in `tensors`
/// (graph inputs and node outputs). Deterministic. Throws what ref::execute throws.
std::map<std::string, TensorStats> collect_stats(const ir::Graph& g, const CalibrationSet& cal,
                                                 const std::set<std::string>& tensors, bool histograms);

/// The real range [lo, hi] the method picks for a tensor quantized on `grid`:
/// - minmax: [min, max] observed.
/// - kl: TensorRT's entropy calibration (NVIDIA pytorch-quantization _compute_amax_entropy) on a
///   histogram of |x|: the zero bin flattened to its neighbour, candidate windows [0, t) from bin
///   128 on, P the window with the counts beyond folded into its last bin, Q the window merged into
///   2^bits levels (non-negative tensors) or 2^(bits-1) levels per side (signed ones) and spread over
///   the non-empty bins; the t of the smallest KL(P || Q); signed tensors get [-t, t]; both clamped
///   to the observed min/max.
/// - mmse: the range minimising the expected squared quantize-dequantize error over the
///   histogram (bin centres weighted by counts): a grid search shrinking [min, max] by factors
///   1, 0.995, ... 0.2, then per-side refinement (signed tensors).
void choose_range(const TensorStats& s, CalibrationMethod m, const IntGrid& grid, double& lo, double& hi);

/// Expected squared error of quantizing the histogram's values with range [lo, hi] on `grid`
/// (used by mmse; exposed for tests).
double histogram_mse(const TensorStats& s, double lo, double hi, const IntGrid& grid);

}  // namespace drv::quant
