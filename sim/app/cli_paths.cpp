// SPDX-License-Identifier: MIT
// Shared option-value checks (cli_paths.h): empty values, outputs that are inputs or each other.
#include "app/cli_paths.h"

#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace sim::cli {

namespace {

namespace fs = std::filesystem;

/// Options whose value is a file the subcommand writes (their long names, any subcommand).
/// `--json` takes a path only where it is an option (compare); elsewhere it is a flag and never
/// reaches here. Directories (--output-dir, --dump-layers, sweep -o) are not files and not listed.
constexpr const char* kOutputs[] = {"output", "report", "trace", "vcd", "csv", "html", "json", "dump-regcmd",
                                    "rtl-vcd", "accuracy-report", "func-profile", "signature"};
/// Options whose value names a file the subcommand reads; positionals are inputs too.
constexpr const char* kInputs[] = {"input", "expect", "calibration", "profile", "task-list", "data", "labels",
                                   "core-preset", "interposer"};

bool listed(const CLI::Option& o, const char* const* first, const char* const* last) {
    for (const std::string& l : o.get_lnames())
        for (const char* const* p = first; p != last; ++p)
            if (l == *p) return true;
    return false;
}

std::string label(const CLI::Option& o) {
    if (!o.get_lnames().empty()) return "--" + o.get_lnames().front();
    if (!o.get_snames().empty()) return "-" + o.get_snames().front();
    return o.get_name();  // a positional: its name ("model", "file")
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    const bool xa = fs::exists(a, ea), xb = fs::exists(b, eb);
    if (xa && xb) {
        std::error_code ec;
        return fs::equivalent(a, b, ec);
    }
    if (xa != xb) return false;
    return fs::weakly_canonical(a, ea) == fs::weakly_canonical(b, eb);
}

struct Path {
    std::string option, file;
};

/// The file part of a value: NAME=FILE (--input), FILE@ADDR (--load), ADDR:LEN=FILE (--dump).
std::string file_part(const std::string& option, const std::string& v) {
    std::error_code ec;
    if (option == "--load") return v.substr(0, v.rfind('@'));
    if (option == "--dump") return v.find('=') == std::string::npos ? std::string() : v.substr(v.find('=') + 1);
    if (option == "--input" && !fs::exists(v, ec) && v.find('=') != std::string::npos) return v.substr(v.find('=') + 1);
    return v;
}

}  // namespace

std::string check_option_values(const CLI::App& sub) {
    std::vector<Path> inputs, outputs;
    for (const CLI::Option* o : sub.get_options()) {
        if (o->count() == 0 || o->get_type_size_max() == 0) continue;  // not given, or a flag
        const std::string name = label(*o);
        // `exec -- PROGRAM ARGS...`: the program's own arguments may be anything.
        if (sub.get_name() == "exec" && !o->nonpositional()) continue;
        for (const std::string& v : o->results()) {
            if (v.empty())
                return fmt::format("{} is given an empty value, npusim {} (give a value or leave the option out)", name,
                                   sub.get_name());
            // CLI11 reads "-1" into an unsigned option as 2^64 - 1 (strtoull): a count or seed is >= 0.
            if (o->get_type_name().rfind("UINT", 0) == 0 && v.find('-') != std::string::npos)
                return fmt::format("{} '{}' is not a number >= 0, npusim {}", name, v, sub.get_name());
            const bool in = !o->nonpositional() || listed(*o, std::begin(kInputs), std::end(kInputs)) || name == "--load";
            const bool out = listed(*o, std::begin(kOutputs), std::end(kOutputs)) || name == "--dump" ||
                             (name == "-o" && sub.get_name() == "quantize");
            const std::string f = file_part(name, v);
            if (f.empty() || f == "-") continue;  // "-": stdout (iss --trace, --func-profile)
            if (in) inputs.push_back({name, f});
            if (out) outputs.push_back({name, f});
        }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Path& w = outputs[i];
        for (const Path& r : inputs)
            if (same_file(w.file, r.file))
                return fmt::format("{} '{}' is also an input ({} '{}'), npusim {} (an output path equal to an input is "
                                   "refused: write it elsewhere)",
                                   w.option, w.file, r.option, r.file, sub.get_name());
        for (size_t j = 0; j < i; ++j)
            if (same_file(w.file, outputs[j].file))
                return fmt::format("{} '{}' is also the output of {}, npusim {} (give each output its own file)",
                                   w.option, w.file, outputs[j].option, sub.get_name());
    }
    return {};
}

}  // namespace sim::cli
