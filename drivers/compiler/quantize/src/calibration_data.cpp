// SPDX-License-Identifier: MIT
// Calibration samples: .npy files or folders of them per graph input, or the seeded default.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "compiler/quantize/calibration.h"
#include "compiler/ref/reference.h"
#include "numerics/npy.h"

namespace drv::quant {

namespace fs = std::filesystem;

namespace {

/// Every *.npy in `dir`, sorted by file name (deterministic, independent of directory order).
std::vector<std::string> npy_files_in(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw CalibrationError("--calibration '" + dir + "': the folder holds no .npy file");
    return files;
}

/// Splits one file's tensor into samples of the input's shape (see load_calibration).
std::vector<num::Tensor> split_samples(const num::Tensor& t, const ir::Value& in, const std::string& file) {
    if (t.dtype() != in.dtype)
        throw CalibrationError("--calibration '" + file + "' is " + num::dtype_name(t.dtype()) + ", input '" + in.name +
                               "' of the model is " + num::dtype_name(in.dtype));
    if (t.shape() == in.shape) return {t};
    const std::vector<int64_t>& s = in.shape;
    std::vector<int64_t> rest;  // the shape of one sample inside the file
    if (t.rank() == static_cast<int>(s.size()) + 1 && std::equal(s.begin(), s.end(), t.shape().begin() + 1))
        rest = s;  // [N, ...input shape]
    else if (!s.empty() && s[0] == 1 && t.rank() == static_cast<int>(s.size()) &&
             std::equal(s.begin() + 1, s.end(), t.shape().begin() + 1))
        rest = s;  // [N, ...] for a batch-1 input
    else
        throw CalibrationError("--calibration '" + file + "' has shape " + ir::shape_to_string(t.shape()) +
                               ", input '" + in.name + "' is " + in.shape_str() +
                               " (one sample, or N samples along a leading axis)");
    const int64_t n = t.dim(0);
    if (n <= 0) throw CalibrationError("--calibration '" + file + "' holds no sample");
    const size_t bytes = t.nbytes() / static_cast<size_t>(n);
    std::vector<num::Tensor> out;
    for (int64_t k = 0; k < n; ++k) {
        num::Tensor x = num::Tensor::uninitialized(in.dtype, rest);
        std::memcpy(x.raw(), t.raw() + static_cast<size_t>(k) * bytes, bytes);
        out.push_back(std::move(x));
    }
    return out;
}

}  // namespace

const char* method_name(CalibrationMethod m) {
    switch (m) {
        case CalibrationMethod::MinMax:
            return "minmax";
        case CalibrationMethod::Kl:
            return "kl";
        case CalibrationMethod::Mmse:
            return "mmse";
    }
    return "?";
}

bool parse_method(const std::string& s, CalibrationMethod& out) {
    if (s == "minmax")
        out = CalibrationMethod::MinMax;
    else if (s == "kl")
        out = CalibrationMethod::Kl;
    else if (s == "mmse")
        out = CalibrationMethod::Mmse;
    else
        return false;
    return true;
}

std::string CalibrationSet::describe() const {
    const std::string n = std::to_string(samples.size()) + (samples.size() == 1 ? " sample" : " samples");
    if (seeded_default)
        return n + " of seeded random data (uniform [-1, 1), seed " + std::to_string(seed) +
               ": no --calibration given)";
    return n + " from " + std::to_string(files.size()) + (files.size() == 1 ? " .npy file" : " .npy files");
}

CalibrationSet load_calibration(const ir::Graph& g, const std::vector<std::string>& specs) {
    if (g.inputs().empty()) throw CalibrationError("--calibration: the model has no graph input");
    std::map<std::string, std::vector<std::string>> per_input;  // input name -> files
    for (const std::string& spec : specs) {
        std::string name, path = spec;
        const size_t eq = spec.find('=');
        if (eq != std::string::npos && !fs::exists(spec)) {
            name = spec.substr(0, eq);
            path = spec.substr(eq + 1);
            if (std::find(g.inputs().begin(), g.inputs().end(), name) == g.inputs().end())
                throw CalibrationError("--calibration '" + spec + "': the model has no input '" + name + "'");
        } else if (g.inputs().size() == 1) {
            name = g.inputs()[0];
        } else {
            throw CalibrationError("--calibration '" + spec + "': the model has " + std::to_string(g.inputs().size()) +
                                   " inputs; name one per option (--calibration INPUT=FILE.npy|DIR)");
        }
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
            for (auto& f : npy_files_in(path)) per_input[name].push_back(f);
        } else if (fs::is_regular_file(path, ec)) {
            per_input[name].push_back(path);
        } else {
            throw CalibrationError("--calibration '" + path + "': no such file or folder");
        }
    }
    CalibrationSet cal;
    size_t count = 0;
    std::map<std::string, std::vector<num::Tensor>> samples;
    for (const std::string& name : g.inputs()) {
        auto it = per_input.find(name);
        if (it == per_input.end())
            throw CalibrationError("--calibration: no data for input '" + name + "' (--calibration " + name +
                                   "=FILE.npy|DIR)");
        for (const std::string& f : it->second) {
            num::Tensor t;
            try {
                t = num::read_npy(f);
            } catch (const std::exception& e) {
                throw CalibrationError(std::string("--calibration: ") + e.what());
            }
            for (auto& x : split_samples(t, g.value(name), f)) samples[name].push_back(std::move(x));
            cal.files.push_back(f);
        }
        if (name != g.inputs()[0] && samples[name].size() != count)
            throw CalibrationError("--calibration: input '" + name + "' has " + std::to_string(samples[name].size()) +
                                   " samples, input '" + g.inputs()[0] + "' " + std::to_string(count));
        count = samples[name].size();
    }
    cal.samples.resize(count);
    for (auto& [name, v] : samples)
        for (size_t k = 0; k < v.size(); ++k) cal.samples[k][name] = std::move(v[k]);
    return cal;
}

CalibrationSet seeded_calibration(const ir::Graph& g, uint64_t seed, size_t count) {
    CalibrationSet cal;
    cal.seeded_default = true;
    cal.seed = seed;
    for (size_t k = 0; k < count; ++k) {
        std::map<std::string, num::Tensor> s;
        for (size_t i = 0; i < g.inputs().size(); ++i) {
            const ir::Value& v = g.value(g.inputs()[i]);
            s[v.name] = ref::random_input(v, seed + k, i);
        }
        cal.samples.push_back(std::move(s));
    }
    return cal;
}

}  // namespace drv::quant
