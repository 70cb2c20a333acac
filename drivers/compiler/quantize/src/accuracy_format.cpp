// SPDX-License-Identifier: MIT
// Accuracy report formats (accuracy.h): text table, JSON object, CSV.
#include <fmt/format.h>

#include <algorithm>

#include "compiler/quantize/accuracy.h"

namespace drv::quant {

namespace {

std::string layer_name(const LayerAccuracy& L) { return L.layer.empty() ? "(input) " + L.tensor : L.layer; }

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

nlohmann::ordered_json sim_json(const Similarity& s) {
    return {{"cosine", s.cosine()},
            {"euclidean", s.euclidean()},
            {"max_abs_error", s.max_abs},
            {"mean_abs_error", s.mean_abs()},
            {"values", s.values}};
}

}  // namespace

std::string accuracy_text(const AccuracyReport& r) {
    std::string o = fmt::format(
        "quantization accuracy: {} vs the float model, {}, calibration {}\n"
        "  entire = the quantized model end to end; single = the layer's integer node alone on the float model's "
        "inputs; cos = cosine similarity, euc = Euclidean distance, max = largest |error|\n",
        r.scheme, r.method, r.calibration);
    size_t w = 5, wo = 2;
    for (const auto& L : r.layers) w = std::max(w, layer_name(L).size()), wo = std::max(wo, L.op.size());
    w = std::min<size_t>(w, 40);
    o += fmt::format("{:<{}}  {:<{}}  {:>10} {:>10} {:>10}  {:>10} {:>10}  {:>10} {:>4}\n", "layer", w, "op", wo,
                     "entire cos", "euc", "max", "single cos", "max", "scale", "zp");
    for (const auto& L : r.layers) {
        const std::string single = L.has_single
                                       ? fmt::format("{:>10.6f} {:>10.4g}", L.single.cosine(), L.single.max_abs)
                                       : fmt::format("{:>10} {:>10}", "-", "-");
        o += fmt::format("{:<{}}  {:<{}}  {:>10.6f} {:>10.4g} {:>10.4g}  {}  {:>10.4g} {:>4}\n", layer_name(L), w, L.op,
                         wo, L.entire.cosine(), L.entire.euclidean(), L.entire.max_abs, single, L.scale, L.zero_point);
    }
    for (const auto& out : r.outputs) {
        o += fmt::format("output '{}': cosine {:.6f}, max |error| {:.4g}", out.name, out.sim.cosine(), out.sim.max_abs);
        if (out.lsb > 0) o += fmt::format(" ({:.1f} LSB of {:.4g})", out.sim.max_abs / out.lsb, out.lsb);
        o += fmt::format(", mean |error| {:.4g}\n", out.sim.mean_abs());
    }
    if (r.worst >= 0) {
        const LayerAccuracy& L = r.layers[static_cast<size_t>(r.worst)];
        o += fmt::format("worst layer: {} ({}, tensor '{}'): entire cosine {:.6f}", layer_name(L), L.op, L.tensor,
                         L.entire.cosine());
        if (L.has_single) o += fmt::format(", single cosine {:.6f}", L.single.cosine());
        o += "\n";
    }
    if (r.seeded_calibration) o += seeded_calibration_warning() + "\n";
    return o;
}

nlohmann::ordered_json accuracy_json(const AccuracyReport& r) {
    nlohmann::ordered_json j;
    j["scheme"] = r.scheme;
    j["calibration_method"] = r.method;
    j["calibration"] = r.calibration;
    j["samples"] = r.samples;
    j["seeded_calibration"] = r.seeded_calibration;
    if (r.seeded_calibration) j["warning"] = seeded_calibration_warning();
    j["layers"] = nlohmann::ordered_json::array();
    for (const auto& L : r.layers) {
        nlohmann::ordered_json l{{"layer", L.layer},           {"op", L.op},
                                 {"tensor", L.tensor},         {"scale", L.scale},
                                 {"zero_point", L.zero_point}, {"entire", sim_json(L.entire)}};
        l["single"] = L.has_single ? sim_json(L.single) : nlohmann::ordered_json();
        j["layers"].push_back(std::move(l));
    }
    j["outputs"] = nlohmann::ordered_json::array();
    for (const auto& out : r.outputs) {
        nlohmann::ordered_json x{{"name", out.name}};
        x.update(sim_json(out.sim));
        x["lsb"] = out.lsb;
        j["outputs"].push_back(std::move(x));
    }
    if (r.worst >= 0) {
        const LayerAccuracy& L = r.layers[static_cast<size_t>(r.worst)];
        j["worst"] = {{"layer", L.layer}, {"op", L.op}, {"tensor", L.tensor}, {"entire_cosine", L.entire.cosine()}};
    } else {
        j["worst"] = nullptr;
    }
    return j;
}

std::string accuracy_csv(const AccuracyReport& r) {
    std::string o =
        "layer,op,tensor,scale,zero_point,entire_cosine,entire_euclidean,entire_max_abs_error,entire_mean_abs_error,"
        "single_cosine,single_euclidean,single_max_abs_error\n";
    for (const auto& L : r.layers) {
        o += fmt::format("{},{},{},{:.9g},{},{:.9g},{:.9g},{:.9g},{:.9g},", csv_field(L.layer), csv_field(L.op),
                         csv_field(L.tensor), L.scale, L.zero_point, L.entire.cosine(), L.entire.euclidean(),
                         L.entire.max_abs, L.entire.mean_abs());
        o += L.has_single
                 ? fmt::format("{:.9g},{:.9g},{:.9g}\n", L.single.cosine(), L.single.euclidean(), L.single.max_abs)
                 : std::string(",,\n");
    }
    return o;
}

}  // namespace drv::quant
