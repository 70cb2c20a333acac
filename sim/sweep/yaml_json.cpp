// SPDX-License-Identifier: MIT
#include "yaml_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "spec.h"

#ifdef NPUSIM_HAVE_YAML_CPP
#include <yaml-cpp/yaml.h>
#endif

namespace sweep {

#ifdef NPUSIM_HAVE_YAML_CPP
namespace {

using ojson = nlohmann::ordered_json;

ojson scalar(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return s;  // quoted: a string whatever it looks like
    // YAML 1.2 core schema resolution of plain scalars.
    static const std::regex null_re("~|null|Null|NULL|"), true_re("true|True|TRUE"), false_re("false|False|FALSE"),
        int_re("[-+]?[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+"),
        float_re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
    if (std::regex_match(s, null_re)) return nullptr;
    if (std::regex_match(s, true_re)) return true;
    if (std::regex_match(s, false_re)) return false;
    if (std::regex_match(s, int_re)) {
        errno = 0;
        const bool neg = s[0] == '-';
        const int base = s.rfind("0x", 0) == 0 ? 16 : s.rfind("0o", 0) == 0 ? 8 : 10;
        const std::string digits = base == 10 ? s : s.substr(2);
        if (!neg) {
            const unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
            if (errno == 0) return static_cast<uint64_t>(v);
        } else {
            const long long v = std::strtoll(digits.c_str(), nullptr, base);
            if (errno == 0) return static_cast<int64_t>(v);
        }
        return std::strtod(s.c_str(), nullptr);
    }
    if (std::regex_match(s, float_re)) {
        const double d = std::strtod(s.c_str(), nullptr);
        if (std::isfinite(d)) return d;
    }
    return s;
}

ojson convert(const YAML::Node& n, const std::string& file) {
    switch (n.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
            return scalar(n);
        case YAML::NodeType::Sequence: {
            ojson a = ojson::array();
            for (const auto& x : n) a.push_back(convert(x, file));
            return a;
        }
        case YAML::NodeType::Map: {
            ojson o = ojson::object();
            for (const auto& kv : n) {
                if (!kv.first.IsScalar())
                    throw SweepError(
                        fmt::format("'{}' line {}: map keys must be plain strings", file, kv.first.Mark().line + 1));
                o[kv.first.Scalar()] = convert(kv.second, file);
            }
            return o;
        }
    }
    return nullptr;
}

}  // namespace

nlohmann::ordered_json yaml_to_json(const std::string& text, const std::string& file) {
    try {
        return convert(YAML::Load(text), file);
    } catch (const YAML::Exception& e) {
        throw SweepError(fmt::format("sweep spec '{}' is not valid YAML (line {}: {})", file, e.mark.line + 1, e.msg));
    }
}
#else
nlohmann::ordered_json yaml_to_json(const std::string&, const std::string& file) {
    throw SweepError(
        fmt::format("sweep spec '{}': this npusim was built without yaml-cpp (apt-get install "
                    "libyaml-cpp-dev and rebuild), use a .json spec",
                    file));
}
#endif

}  // namespace sweep
