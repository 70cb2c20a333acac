// SPDX-License-Identifier: MIT
// Results of every run kind (NPU model run, MCU run, reference executor) for CI: the graph outputs
// written as .npy (--output FILE.npy... / --output-dir DIR) and compared with golden files
// (--expect FILE.npy... --atol A --rtol R) by npusim's one comparator (numerics/compare.h), with
// the metric report: max and mean |diff|, cosine similarity, exact count, values within tolerance.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "numerics/compare.h"
#include "numerics/tensor.h"

namespace sim::results {

/// numpy.allclose's defaults: |got - expected| <= atol + rtol * |expected|.
constexpr double kDefaultAtol = 1e-8, kDefaultRtol = 1e-5;

struct ResultOptions {
    std::vector<std::string> outputs;  ///< --output: .npy per graph output (more outputs: <base>_k.npy)
    std::string output_dir;            ///< --output-dir: DIR/<output name>.npy
    std::vector<std::string> expect;   ///< --expect: golden .npy per graph output, in graph-output order
    double atol = kDefaultAtol, rtol = kDefaultRtol;
    bool writes() const { return !outputs.empty() || !output_dir.empty(); }
    bool any() const { return writes() || !expect.empty(); }
};

using NamedTensor = std::pair<std::string, num::Tensor>;

/// One --expect comparison.
struct ExpectRow {
    std::string output, file;
    num::Comparison c;
    std::string error;  ///< unreadable file, dtype/shape mismatch
    bool pass() const { return error.empty() && c.all_within(); }
};

/// Checks before a run (so that a CI job fails before the long part): --atol/--rtol not negative,
/// no output path equal to an input or expect file, every --expect file readable. "" when fine.
std::string validate(const ResultOptions& o, const std::vector<std::string>& inputs);

/// `inputs` and the model file: the files an output must not overwrite.
inline std::vector<std::string> with_model(std::vector<std::string> inputs, const std::string& model) {
    inputs.push_back(model);
    return inputs;
}

/// The path graph output k (named `name`) is written to, "" when nothing is asked for it.
std::string output_path(const ResultOptions& o, size_t k, const std::string& name);

/// Compares `outputs` with the --expect files (numerics/compare.h, the tolerance of `o`).
std::vector<ExpectRow> compare_expected(const std::vector<NamedTensor>& outputs, const ResultOptions& o);

/// One line per row: "expect 'y' vs F: N values, max |diff| ..., cosine ..., E exact, W within ... -> pass".
std::string expect_text(const std::vector<ExpectRow>& rows, const ResultOptions& o);

/// Writes the outputs (--output/--output-dir), compares them (--expect) and prints the report lines
/// to `out`, errors (`npusim: error: ...`) to `err`. Returns 0, 1 (a value outside the tolerance,
/// cli.md) or 2 (a file cannot be read or written, more --expect files than outputs).
/// `rows`, when given, receives the comparisons (for the JSON report).
int write_and_check(const std::vector<NamedTensor>& outputs, const ResultOptions& o, std::ostream& out,
                    std::ostream& err, std::vector<ExpectRow>* rows = nullptr);

/// `json` (a report, dump(indent)) with an "expect" array added: per --expect file the output,
/// file, tolerance, counts and metrics and "pass". Unchanged when `json` or `rows` is empty.
std::string add_expect_json(const std::string& json, const std::vector<ExpectRow>& rows, const ResultOptions& o,
                            int indent);

}  // namespace sim::results
