// SPDX-License-Identifier: MIT
#include "store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sweep {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

void write_atomic(const std::string& path, const std::string& text) {
    const std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(getpid()));
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.flush();
        if (!f) throw SweepError(fmt::format("cannot write '{}'", tmp));
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) throw SweepError(fmt::format("cannot rename '{}' to '{}' ({})", tmp, path, ec.message()));
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw SweepError(fmt::format("cannot read '{}'", path));
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

ojson point_to_json(const Point& p) {
    ojson j;
    j["index"] = p.index;
    j["id"] = p.id;
    j["model"] = p.model;
    j["model_path"] = p.model_path;
    j["platform"] = p.platform;
    j["profile_file"] = p.profile_file;
    j["core_mask"] = p.core_mask;
    j["mode"] = p.mode;
    ojson params = ojson::array();
    for (const auto& [k, v] : p.params) params.push_back({k, v});
    j["params"] = params;
    j["key"] = p.key;
    return j;
}

Point point_from_json(const nlohmann::ordered_json& j) {
    Point p;
    p.index = j.at("index").get<size_t>();
    p.id = j.at("id").get<std::string>();
    p.model = j.at("model").get<std::string>();
    p.model_path = j.at("model_path").get<std::string>();
    p.platform = j.at("platform").get<std::string>();
    p.profile_file = j.at("profile_file").get<std::string>();
    p.core_mask = j.at("core_mask").get<std::string>();
    p.mode = j.at("mode").get<std::string>();
    for (const auto& kv : j.at("params"))
        p.params.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    // Keep the key's member order as written: ids hash its dump.
    p.key = j.at("key");
    const auto& o = j.at("key").at("options");
    p.options.seed = o.at("seed").get<uint64_t>();
    p.options.cpu_nodes = o.at("cpu_nodes").get<std::vector<std::string>>();
    p.options.input_shapes = o.at("input_shapes").get<std::vector<std::string>>();
    p.options.no_compare = o.at("no_compare").get<bool>();
    p.options.expect_exact = o.at("expect_exact").get<bool>();
    p.options.verify_tiling = o.at("verify_tiling").get<bool>();
    return p;
}

void Store::init() const {
    for (const char* sub : {"", "/points", "/work", "/slurm"}) {
        std::error_code ec;
        fs::create_directories(dir_ + sub, ec);
        if (ec) throw SweepError(fmt::format("cannot create results folder '{}{}' ({})", dir_, sub, ec.message()));
    }
}

void Store::write_manifest(const Manifest& m) const {
    ojson j;
    j["format"] = "npusim-sweep-manifest";
    j["version"] = 1;
    j["name"] = m.name;
    j["npusim"] = m.npusim_version;
    j["param_keys"] = m.param_keys;
    j["notes"] = m.notes;
    ojson pts = ojson::array();
    for (const Point& p : m.points) pts.push_back(point_to_json(p));
    j["points"] = pts;
    write_atomic(path("manifest.json"), j.dump(1) + "\n");
}

Manifest Store::read_manifest() const {
    const std::string file = path("manifest.json");
    std::error_code ec;
    if (!fs::exists(file, ec))
        throw SweepError(fmt::format("no sweep in '{}' (no manifest.json; run `npusim sweep SPEC` first)", dir_));
    try {
        const ojson j = ojson::parse(read_file(file));
        if (j.at("format") != "npusim-sweep-manifest" || j.at("version") != 1)
            throw SweepError(fmt::format("'{}' is not a version-1 sweep manifest", file));
        Manifest m;
        m.name = j.at("name").get<std::string>();
        m.npusim_version = j.at("npusim").get<std::string>();
        m.param_keys = j.at("param_keys").get<std::vector<std::string>>();
        m.notes = j.at("notes").get<std::vector<std::string>>();
        for (const auto& p : j.at("points")) m.points.push_back(point_from_json(p));
        return m;
    } catch (const nlohmann::json::exception& e) {
        throw SweepError(fmt::format("malformed sweep manifest '{}' ({})", file, e.what()));
    }
}

std::optional<PointResult> Store::load(const Point& p) const {
    std::ifstream f(result_path(p.id), std::ios::binary);
    if (!f) return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    try {
        const nlohmann::json j = nlohmann::json::parse(ss.str());
        if (j.at("id") != p.id || j.at("key").dump() != nlohmann::json(p.key).dump()) return std::nullopt;
        PointResult r;
        r.id = p.id;
        r.status = j.at("status").get<std::string>();
        r.exit_code = j.at("exit_code").get<int>();
        r.error = j.at("error").get<std::string>();
        r.report = j.at("report");
        if (r.status != "ok" && r.status != "problem" && r.status != "failed") return std::nullopt;
        return r;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // torn or foreign: the point runs again
    }
}

void Store::save(const Point& p, const PointResult& r) const {
    ojson j;
    j["id"] = p.id;
    j["key"] = p.key;
    j["inputs"] = p.inputs_json();
    j["status"] = r.status;
    j["exit_code"] = r.exit_code;
    j["error"] = r.error;
    j["report"] = r.report;
    write_atomic(result_path(p.id), j.dump(1) + "\n");
}

std::vector<std::string> Store::stale(const Manifest& m) const {
    std::set<std::string> ids;
    for (const Point& p : m.points) ids.insert(p.id);
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(path("points"), ec)) {
        const fs::path f = e.path();
        if (f.extension() == ".json" && !ids.count(f.stem().string())) out.push_back(f.filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace sweep
