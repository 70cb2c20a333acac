// SPDX-License-Identifier: MIT
// tnpuv2 profile loader: strict (unknown keys and out-of-range values name the JSON path).
#include "hw/tnpuv2/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hw/tnpuv2_cmds.h"

#ifndef NPUSIM_SOURCE_DIR
#define NPUSIM_SOURCE_DIR "."
#endif

namespace hw::tnpuv2 {
namespace {

using nlohmann::json;

struct Ctx {
    std::string file;
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw ProfileError(fmt::format("{}: {}: {}", file, path, what));
    }
};

uint64_t to_u64(const Ctx& c, const std::string& path, const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer()) {
        if (v.get<int64_t>() < 0) c.fail(path, "must not be negative");
        return static_cast<uint64_t>(v.get<int64_t>());
    }
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        char* end = nullptr;
        errno = 0;
        const unsigned long long x = std::strtoull(s.c_str(), &end, 0);
        if (s.empty() || s.find('-') != std::string::npos || *end != '\0' || errno != 0)
            c.fail(path, fmt::format("'{}' is not a non-negative integer", s));
        return x;
    }
    c.fail(path, "must be an integer (number or \"0x...\" string)");
}

template <typename T>
T convert(const Ctx& c, const std::string& path, const json& v) {
    if constexpr (std::is_same_v<T, double>) {
        if (!v.is_number()) c.fail(path, "must be a number");
        return v.get<double>();
    } else {
        const uint64_t x = to_u64(c, path, v);
        if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) c.fail(path, "value too large");
        return static_cast<T>(x);
    }
}

template <typename T>
void check_range(const Ctx& c, T v, const std::string& path, double lo, double hi) {
    const double d = static_cast<double>(v);
    if (!(d >= lo && d <= hi)) c.fail(path, fmt::format("{} outside [{}, {}]", d, lo, hi));
}

/// Every parameter with its section, key and range, in file order (loader, params(), overrides).
template <typename P, typename V>
void visit(P& p, V&& v) {
    auto& n = p.npu;
    v("npu", "core_clock_hz", n.core_clock_hz, 1e6, 5e9);
    v("npu", "mmio_base", n.mmio_base, 0, 1e15);
    v("npu", "dma_address_bits", n.dma_address_bits, 32, 40);
    v("npu", "depthwise_macs_per_cycle", n.depthwise_macs_per_cycle, 1, 65536);
    v("npu", "accumulator_bits", n.accumulator_bits, 32, 63);
    v("npu", "requant_multiplier_bits", n.requant_multiplier_bits, 15, 31);
    v("npu", "conv_sram_bytes", n.conv_sram_bytes, 16384, 64.0 * 1024 * 1024);
    v("npu", "lut_sram_bytes", n.lut_sram_bytes, 1024, 16.0 * 1024 * 1024);
    v("npu", "vector_int_elems_per_cycle", n.vector_int_elems_per_cycle, 1, 4096);
    v("npu", "vector_fp32_elems_per_cycle", n.vector_fp32_elems_per_cycle, 1, 4096);
    v("npu", "vector_transcendental_cycles", n.vector_transcendental_cycles, 1, 1000);
    v("npu", "lut_elems_per_cycle", n.lut_elems_per_cycle, 1, 4096);
    v("npu", "pool_elems_per_cycle", n.pool_elems_per_cycle, 1, 4096);
    v("npu", "move_bytes_per_cycle", n.move_bytes_per_cycle, 1, 4096);
    v("npu", "genbox_cycles_per_value", n.genbox_cycles_per_value, 1, 1000);
    v("npu", "cmd_cycles_per_word", n.cmd_cycles_per_word, 0, 100);
    v("npu", "op_overhead_cycles", n.op_overhead_cycles, 0, 1e7);
    v("npu", "load_compute_overlap", n.load_compute_overlap, 0.0, 1.0);
    v("npu", "dma_segment_bytes", n.dma_segment_bytes, 16, 65536);
    v("npu", "dma_outstanding_bytes", n.dma_outstanding_bytes, 16, 1 << 24);
    auto& m = p.mac;
    v("mac", "a4w4", m.a4w4, 1, 1 << 20);
    v("mac", "a4w8", m.a4w8, 1, 1 << 20);
    v("mac", "a4w16", m.a4w16, 1, 1 << 20);
    v("mac", "a4w20", m.a4w20, 1, 1 << 20);
    v("mac", "a8w4", m.a8w4, 1, 1 << 20);
    v("mac", "a8w8", m.a8w8, 1, 1 << 20);
    v("mac", "a8w16", m.a8w16, 1, 1 << 20);
    v("mac", "a8w20", m.a8w20, 1, 1 << 20);
    v("mac", "a16w4", m.a16w4, 1, 1 << 20);
    v("mac", "a16w8", m.a16w8, 1, 1 << 20);
    v("mac", "a16w16", m.a16w16, 1, 1 << 20);
    v("mac", "a16w20", m.a16w20, 1, 1 << 20);
    auto& e = p.mem;
    v("memory", "ddr_base", e.ddr_base, 0, 1e15);
    v("memory", "ddr_size_bytes", e.ddr_size_bytes, 1 << 20, 1e13);
    v("memory", "ddr_peak_bytes_per_s", e.ddr_peak_bytes_per_s, 1e8, 1e12);
    v("memory", "ddr_efficiency", e.ddr_efficiency, 0.05, 1.0);
    v("memory", "ddr_read_latency_ns", e.ddr_read_latency_ns, 0, 10000);
    v("memory", "ddr_write_latency_ns", e.ddr_write_latency_ns, 0, 10000);
    v("memory", "interconnect_latency_ns", e.interconnect_latency_ns, 0, 10000);
}

void validate(const Ctx& c, const Profile& p) {
    const uint64_t ddr_end = p.mem.ddr_base.value + p.mem.ddr_size_bytes.value;
    if (p.npu.mmio_base.value < ddr_end && p.npu.mmio_base.value + kMmioWindowBytes > p.mem.ddr_base.value)
        c.fail("npu.mmio_base", "the MMIO window overlaps the DDR window");
    if (ddr_end > (uint64_t{1} << p.npu.dma_address_bits.value))
        c.fail("memory.ddr_size_bytes", "DDR ends beyond the NPU's DMA address range (npu.dma_address_bits)");
}

template <typename T>
std::string value_text(const T& v) {
    return fmt::format("{}", v);
}

}  // namespace

int Profile::macs_per_cycle(int data_bits, int weight_bits) const {
    const int a = data_bits <= 4 ? 4 : (data_bits <= 8 ? 8 : 16);
    const int w = weight_bits <= 4 ? 4 : (weight_bits <= 8 ? 8 : (weight_bits <= 16 ? 16 : 20));
    const Param<int>* t[3][4] = {{&mac.a4w4, &mac.a4w8, &mac.a4w16, &mac.a4w20},
                                 {&mac.a8w4, &mac.a8w8, &mac.a8w16, &mac.a8w20},
                                 {&mac.a16w4, &mac.a16w8, &mac.a16w16, &mac.a16w20}};
    const int ai = a == 4 ? 0 : (a == 8 ? 1 : 2);
    const int wi = w == 4 ? 0 : (w == 8 ? 1 : (w == 16 ? 2 : 3));
    return t[ai][wi]->value;
}

uint64_t Profile::clock_ps() const {
    return static_cast<uint64_t>(std::llround(1e12 / static_cast<double>(npu.core_clock_hz.value)));
}

hw::MemoryParams Profile::memory_params() const {
    hw::MemoryParams m;
    m.ddr_base = mem.ddr_base;
    m.ddr_size_bytes = mem.ddr_size_bytes;
    m.ddr_peak_bytes_per_s = mem.ddr_peak_bytes_per_s;
    m.ddr_efficiency = mem.ddr_efficiency;
    m.ddr_read_latency_ns = mem.ddr_read_latency_ns;
    m.ddr_write_latency_ns = mem.ddr_write_latency_ns;
    m.interconnect_latency_ns = mem.interconnect_latency_ns;
    m.nbuf_bytes.value = 0;
    return m;
}

std::vector<SocProfile::ParamView> Profile::params() const {
    std::vector<SocProfile::ParamView> out;
    visit(*this, [&](const std::string&, const std::string&, const auto& p, double, double) {
        out.push_back({p.path, p.grade, value_text(p.value), p.source});
    });
    return out;
}

Profile load_profile(const std::string& path) {
    const Ctx c{path};
    std::ifstream in(path);
    if (!in) throw ProfileError(fmt::format("{}: cannot open profile", path));
    json root;
    try {
        root = json::parse(in);
    } catch (const json::exception& e) {
        throw ProfileError(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    if (!root.is_object()) c.fail("$", "top level must be an object");
    static const std::set<std::string> top = {"schema_version", "name", "display_name", "family",
                                              "notes",          "npu",  "mac",          "memory"};
    for (auto it = root.begin(); it != root.end(); ++it)
        if (!top.count(it.key())) c.fail(it.key(), "unknown key");
    if (!root.contains("schema_version") || root["schema_version"] != 1) c.fail("schema_version", "must be 1");
    Profile p;
    p.schema_version = 1;
    p.file = path;
    for (const char* k : {"name", "display_name", "family"})
        if (!root.contains(k) || !root[k].is_string()) c.fail(k, "missing or not a string");
    p.name = root["name"].get<std::string>();
    p.display_name = root["display_name"].get<std::string>();
    p.family = root["family"].get<std::string>();
    if (p.family != "tnpuv2") c.fail("family", "must be \"tnpuv2\" for this loader");
    p.notes = root.value("notes", "");
    std::map<std::string, std::set<std::string>> seen;
    visit(p, [&](const std::string& sec, const std::string& key, auto& param, double lo, double hi) {
        const std::string ppath = sec + "." + key;
        if (!root.contains(sec) || !root[sec].is_object()) c.fail(sec, "missing section");
        const json& s = root[sec];
        seen[sec].insert(key);
        if (!s.contains(key)) c.fail(ppath, "missing parameter");
        const json& o = s[key];
        if (!o.is_object() || !o.contains("value") || !o.contains("grade"))
            c.fail(ppath, "must be an object {\"value\", \"grade\", \"source\"}");
        for (auto it = o.begin(); it != o.end(); ++it)
            if (it.key() != "value" && it.key() != "grade" && it.key() != "source")
                c.fail(ppath + "." + it.key(), "unknown key");
        using T = std::decay_t<decltype(param.value)>;
        param.value = convert<T>(c, ppath + ".value", o["value"]);
        const std::string g = o["grade"].is_string() ? o["grade"].get<std::string>() : "";
        if (g == "known")
            param.grade = Grade::Known;
        else if (g == "inferred")
            param.grade = Grade::Inferred;
        else if (g == "unknown")
            param.grade = Grade::Unknown;
        else
            c.fail(ppath + ".grade", "must be one of known, inferred, unknown");
        param.source = o.value("source", "");
        param.path = ppath;
        check_range(c, param.value, ppath, lo, hi);
    });
    for (const auto& [sec, keys] : seen)
        for (auto it = root[sec].begin(); it != root[sec].end(); ++it)
            if (!keys.count(it.key())) c.fail(sec + "." + it.key(), "unknown parameter");
    validate(c, p);
    return p;
}

std::string default_profile_path() {
    namespace fs = std::filesystem;
    if (const char* d = std::getenv("NPUSIM_DATA_DIR"); d && *d)
        return (fs::path(d) / "hwdesc" / "tnpuv2" / "profile.json").string();
    return (fs::path(NPUSIM_SOURCE_DIR) / "hwdesc" / "tnpuv2" / "profile.json").string();
}

Profile load_default_profile() { return load_profile(default_profile_path()); }

void apply_param_overrides(Profile& p, const std::vector<std::string>& assignments) {
    Profile q = p;
    const Ctx c{"parameter override"};
    for (const std::string& a : assignments) {
        const size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0)
            throw ProfileError(fmt::format("parameter override '{}': expected section.key=value", a));
        const std::string path = a.substr(0, eq), text = a.substr(eq + 1);
        bool found = false;
        visit(q, [&](const std::string& sec, const std::string& key, auto& param, double lo, double hi) {
            if (found || sec + "." + key != path) return;
            found = true;
            using T = std::decay_t<decltype(param.value)>;
            T v{};
            if constexpr (std::is_same_v<T, double>) {
                char* end = nullptr;
                errno = 0;
                v = std::strtod(text.c_str(), &end);
                if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v))
                    c.fail(path, fmt::format("'{}' is not a number", text));
            } else {
                v = convert<T>(c, path, json(text));
            }
            check_range(c, v, path, lo, hi);
            param.source = fmt::format("override {} (was {}; {})", text, value_text(param.value), param.source);
            param.value = v;
        });
        if (!found) c.fail(path, "unknown parameter (sections: npu, mac, memory; see `npusim platforms -v`)");
    }
    validate(c, q);
    p = std::move(q);
}

bool is_platform_name(const std::string& name) {
    std::string n;
    for (char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return n == "tnpuv2" || n == "uranus-tnpuv2" || n == "uranus_tnpuv2";
}

}  // namespace hw::tnpuv2
