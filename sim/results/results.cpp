// SPDX-License-Identifier: MIT
// --output / --output-dir / --expect for every run kind (results.h).
#include "results/results.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "numerics/npy.h"

namespace sim::results {

namespace fs = std::filesystem;

namespace {

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

/// A graph output name as a file name: path separators and odd characters become '_'.
std::string file_stem(const std::string& name) {
    std::string s = name.empty() ? std::string("output") : name;
    for (char& ch : s)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
    if (s == "." || s == "..") s = "output";
    return s;
}

std::string tolerance_text(const ResultOptions& o) {
    return fmt::format("atol {:g} + rtol {:g} x |expected|", o.atol, o.rtol);
}

}  // namespace

std::string validate(const ResultOptions& o, const std::vector<std::string>& inputs) {
    if (o.atol < 0 || o.rtol < 0) return fmt::format("--atol {:g} / --rtol {:g}: tolerances are >= 0", o.atol, o.rtol);
    if (!o.outputs.empty() && !o.output_dir.empty())
        return "--output and --output-dir are exclusive (give one .npy per output, or a directory)";
    for (const std::string& e : o.expect) {
        std::ifstream f(e, std::ios::binary);
        if (!f) return fmt::format("--expect '{}': cannot read the file (a .npy per graph output)", e);
    }
    for (const std::string& out : o.outputs) {
        for (const std::string& in : inputs)
            if (same_file(out, in)) return fmt::format("--output '{}' is also an input (an output path equal to an input is refused)", out);
        for (const std::string& e : o.expect)
            if (same_file(out, e)) return fmt::format("--output '{}' is also an --expect file (it would overwrite the golden)", out);
    }
    return {};
}

std::string output_path(const ResultOptions& o, size_t k, const std::string& name) {
    if (!o.output_dir.empty()) return (fs::path(o.output_dir) / (file_stem(name) + ".npy")).string();
    if (o.outputs.empty()) return {};
    if (k < o.outputs.size()) return o.outputs[k];
    std::string base = o.outputs[0];
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".npy") == 0) base.resize(base.size() - 4);
    return base + "_" + std::to_string(k) + ".npy";
}

std::vector<ExpectRow> compare_expected(const std::vector<NamedTensor>& outputs, const ResultOptions& o) {
    std::vector<ExpectRow> rows;
    num::Tolerance tol;
    tol.atol = o.atol;
    tol.rtol = o.rtol;
    for (size_t k = 0; k < o.expect.size() && k < outputs.size(); ++k) {
        ExpectRow r;
        r.output = outputs[k].first;
        r.file = o.expect[k];
        try {
            const num::Tensor want = num::read_npy(r.file);
            r.error = num::compare(outputs[k].second, want, tol, r.c);
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string expect_text(const std::vector<ExpectRow>& rows, const ResultOptions& o) {
    std::string s;
    for (const ExpectRow& r : rows) {
        if (!r.error.empty()) {
            s += fmt::format("expect '{}' vs {}: {} -> FAIL\n", r.output, r.file, r.error);
            continue;
        }
        const num::Comparison& c = r.c;
        s += fmt::format("expect '{}' vs {}: {} values, max |diff| {:.6g}, mean |diff| {:.6g}, cosine {:.6f}, {} exact, {} within {} -> {}\n",
                         r.output, r.file, c.values, c.max_abs, c.mean_abs(), c.cosine(), c.equal, c.within,
                         tolerance_text(o), r.pass() ? "pass" : fmt::format("FAIL ({} outside)", c.values - c.within));
    }
    return s;
}

std::string add_expect_json(const std::string& json, const std::vector<ExpectRow>& rows, const ResultOptions& o,
                            int indent) {
    if (json.empty() || rows.empty()) return json;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(json);
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const ExpectRow& r : rows) {
        nlohmann::ordered_json x{{"output", r.output}, {"file", r.file}, {"atol", o.atol}, {"rtol", o.rtol}};
        if (!r.error.empty()) {
            x["error"] = r.error;
        } else {
            x["values"] = r.c.values;
            x["exact"] = r.c.equal;
            x["within"] = r.c.within;
            x["max_abs_diff"] = r.c.max_abs;
            x["mean_abs_diff"] = r.c.mean_abs();
            x["cosine"] = r.c.cosine();
        }
        x["pass"] = r.pass();
        a.push_back(x);
    }
    j["expect"] = a;
    return j.dump(indent) + "\n";
}

int write_and_check(const std::vector<NamedTensor>& outputs, const ResultOptions& o, std::ostream& out,
                    std::ostream& err, std::vector<ExpectRow>* rows_out) {
    if (o.expect.size() > outputs.size()) {
        err << fmt::format("npusim: error: {} --expect file(s) given, the model has {} output(s)\n", o.expect.size(),
                           outputs.size());
        return 2;
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
        const std::string path = output_path(o, k, outputs[k].first);
        if (path.empty()) continue;
        try {
            if (!o.output_dir.empty()) fs::create_directories(o.output_dir);
            num::write_npy(path, outputs[k].second);
        } catch (const std::exception& e) {
            err << fmt::format("npusim: error: cannot write output '{}', {} ({})\n", outputs[k].first, path, e.what());
            return 2;
        }
        out << fmt::format("output '{}': {} {} -> {}\n", outputs[k].first, num::dtype_name(outputs[k].second.dtype()),
                           outputs[k].second.shape_str(), path);
    }
    const std::vector<ExpectRow> rows = compare_expected(outputs, o);
    if (rows_out) *rows_out = rows;
    out << expect_text(rows, o);
    int rc = 0;
    for (const ExpectRow& r : rows) {
        if (r.pass()) continue;
        if (!r.error.empty()) {
            err << fmt::format("npusim: error: --expect '{}': {}, output '{}'\n", r.file, r.error, r.output);
            rc = std::max(rc, 2);
        } else {
            err << fmt::format("npusim: error: output '{}' differs from {}: {} of {} values outside {} (max |diff| {:.6g})\n",
                               r.output, r.file, r.c.values - r.c.within, r.c.values, tolerance_text(o), r.c.max_abs);
            rc = std::max(rc, 1);
        }
    }
    return rc;
}

}  // namespace sim::results
