// SPDX-License-Identifier: MIT
#include "yaml_json.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "spec.h"

#ifdef NPUSIM_HAVE_YAML_CPP
#include <yaml-cpp/yaml.h>
#endif

namespace sweep {

#ifdef NPUSIM_HAVE_YAML_CPP
namespace {

using ojson = nlohmann::ordered_json;

bool all_of(const std::string& s, size_t from, const char* chars) {
    return from < s.size() && s.find_first_not_of(chars, from) == std::string::npos;
}

ojson scalar(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return s;  // quoted: a string whatever it looks like
    // YAML 1.2 core schema resolution of plain scalars (infinities and NaN stay strings: no
    // sweep value can be one).
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    const size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
    errno = 0;
    if (s.rfind("0x", 0) == 0 && all_of(s, 2, "0123456789abcdefABCDEF")) {
        const unsigned long long v = std::strtoull(s.c_str() + 2, nullptr, 16);
        if (errno == 0) return static_cast<uint64_t>(v);
    }
    if (s.rfind("0o", 0) == 0 && all_of(s, 2, "01234567")) {
        const unsigned long long v = std::strtoull(s.c_str() + 2, nullptr, 8);
        if (errno == 0) return static_cast<uint64_t>(v);
    }
    if (all_of(s, sign, "0123456789")) {
        if (s[0] == '-') {
            const long long v = std::strtoll(s.c_str(), nullptr, 10);
            if (errno == 0) return static_cast<int64_t>(v);
        } else {
            const unsigned long long v = std::strtoull(s.c_str() + sign, nullptr, 10);
            if (errno == 0) return static_cast<uint64_t>(v);
        }
    }
    // [-+]?(.digits|digits(.digits?)?)([eE][-+]?digits)?: strtod on the characters it may hold.
    if (all_of(s, sign, "0123456789.eE+-") && s.find_first_of("0123456789") != std::string::npos &&
        std::isdigit(static_cast<unsigned char>(s[sign])) + (s[sign] == '.') > 0) {
        char* end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (*end == '\0' && std::isfinite(d)) return d;
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
