// SPDX-License-Identifier: MIT
// SoC profile loader: strict (unknown keys and out-of-range values are errors naming the JSON path).
#include "hw/profile.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#ifndef NPUSIM_SOURCE_DIR
#define NPUSIM_SOURCE_DIR "."
#endif

namespace hw {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Ctx {
    std::string file;
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw ProfileError(fmt::format("{}: {}: {}", file, path, what));
    }
};

Grade parse_grade(const Ctx& c, const std::string& path, const json& j) {
    if (!j.is_string()) c.fail(path + ".grade", "must be a string");
    std::string s = j.get<std::string>();
    if (s == "known") return Grade::Known;
    if (s == "inferred") return Grade::Inferred;
    if (s == "unknown") return Grade::Unknown;
    c.fail(path + ".grade", fmt::format("'{}' is not one of known, inferred, unknown", s));
}

uint64_t to_u64(const Ctx& c, const std::string& path, const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer()) {
        int64_t i = v.get<int64_t>();
        if (i < 0) c.fail(path, "must not be negative");
        return static_cast<uint64_t>(i);
    }
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        char* end = nullptr;
        errno = 0;
        unsigned long long x = std::strtoull(s.c_str(), &end, 0);
        if (s.empty() || *end != '\0' || errno != 0) c.fail(path, fmt::format("'{}' is not an integer", s));
        return x;
    }
    c.fail(path, "must be an integer (number or \"0x...\" string)");
}

template <typename T>
T convert(const Ctx& c, const std::string& path, const json& v) {
    if constexpr (std::is_same_v<T, double>) {
        if (!v.is_number()) c.fail(path, "must be a number");
        return v.get<double>();
    } else if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
        if (!v.is_array()) c.fail(path, "must be an array");
        std::vector<uint64_t> out;
        for (size_t i = 0; i < v.size(); ++i) out.push_back(to_u64(c, fmt::format("{}[{}]", path, i), v[i]));
        return out;
    } else {
        uint64_t x = to_u64(c, path, v);
        if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) c.fail(path, "value too large");
        return static_cast<T>(x);
    }
}

/// Reads the parameter objects of one section, refusing keys it does not know.
class Section {
   public:
    Section(const Ctx& c, const json& root, const std::string& name) : c_(c), name_(name) {
        if (!root.contains(name)) c.fail(name, "missing section");
        j_ = &root.at(name);
        if (!j_->is_object()) c.fail(name, "must be an object");
    }
    template <typename T>
    void read(Param<T>& p, const std::string& key, double lo, double hi) {
        const std::string path = name_ + "." + key;
        seen_.insert(key);
        if (!j_->contains(key)) c_.fail(path, "missing parameter");
        const json& o = j_->at(key);
        if (!o.is_object() || !o.contains("value") || !o.contains("grade"))
            c_.fail(path, "must be an object {\"value\", \"grade\", \"source\"}");
        for (auto it = o.begin(); it != o.end(); ++it)
            if (it.key() != "value" && it.key() != "grade" && it.key() != "source")
                c_.fail(path + "." + it.key(), "unknown key");
        p.value = convert<T>(c_, path + ".value", o.at("value"));
        p.grade = parse_grade(c_, path, o.at("grade"));
        p.source = o.value("source", "");
        p.path = path;
        check_range(p.value, path, lo, hi);
    }
    void finish() const {
        for (auto it = j_->begin(); it != j_->end(); ++it)
            if (!seen_.count(it.key())) c_.fail(name_ + "." + it.key(), "unknown parameter");
    }

   private:
    template <typename T>
    void check_range(const T& v, const std::string& path, double lo, double hi) const {
        if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
            if (v.size() < lo || v.size() > hi) c_.fail(path, fmt::format("needs {}..{} entries", lo, hi));
        } else {
            double d = static_cast<double>(v);
            if (d < lo || d > hi) c_.fail(path, fmt::format("{} outside [{}, {}]", d, lo, hi));
        }
    }
    const Ctx& c_;
    std::string name_;
    const json* j_ = nullptr;
    std::set<std::string> seen_;
};

template <typename T>
std::string value_text(const T& v) {
    if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:#x}", i ? ", " : "", v[i]);
        return s + "]";
    } else {
        return fmt::format("{}", v);
    }
}

}  // namespace

const char* grade_name(Grade g) {
    switch (g) {
        case Grade::Known: return "known";
        case Grade::Inferred: return "inferred";
        case Grade::Unknown: return "unknown";
    }
    return "?";
}

SocProfile load_profile(const std::string& path) {
    Ctx c{path};
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
                                              "notes", "npu", "memory"};
    for (auto it = root.begin(); it != root.end(); ++it)
        if (!top.count(it.key())) c.fail(it.key(), "unknown key");
    SocProfile p;
    p.file = path;
    if (!root.contains("schema_version") || !root["schema_version"].is_number_integer() ||
        root["schema_version"].get<int>() != 1)
        c.fail("schema_version", "must be 1");
    p.schema_version = 1;
    for (const char* k : {"name", "display_name", "family"})
        if (!root.contains(k) || !root[k].is_string()) c.fail(k, "missing or not a string");
    p.name = root["name"].get<std::string>();
    p.display_name = root["display_name"].get<std::string>();
    p.family = root["family"].get<std::string>();
    p.notes = root.value("notes", "");

    Section n(c, root, "npu");
    NpuParams& np = p.npu;
    n.read(np.core_count, "core_count", 1, 8);
    n.read(np.core_clock_hz, "core_clock_hz", 1e6, 5e9);
    n.read(np.core_mmio_bases, "core_mmio_bases", 1, 8);
    n.read(np.core_mmio_window_bytes, "core_mmio_window_bytes", 0x10000, 0x100000);
    n.read(np.int8_macs_per_cycle, "int8_macs_per_cycle", 1, 65536);
    n.read(np.fp16_macs_per_cycle, "fp16_macs_per_cycle", 0, 65536);
    n.read(np.int4_macs_per_cycle, "int4_macs_per_cycle", 0, 131072);
    n.read(np.cbuf_banks, "cbuf_banks", 1, 16);
    n.read(np.cbuf_bank_bytes, "cbuf_bank_bytes", 1024, 1 << 20);
    n.read(np.cbuf_entry_bytes, "cbuf_entry_bytes", 16, 1024);
    n.read(np.c2_int8, "c2_int8", 1, 64);
    n.read(np.c2_fp16, "c2_fp16", 1, 64);
    n.read(np.dma_address_bits, "dma_address_bits", 32, 48);
    n.read(np.pc_data_amount_scale, "pc_data_amount_scale", 1, 4);
    n.read(np.pc_task_number_bits, "pc_task_number_bits", 1, 16);
    n.read(np.pc_task_status_offset, "pc_task_status_offset", 0, 0xffc);
    n.read(np.pc_cycles_per_regcmd, "pc_cycles_per_regcmd", 0, 1000);
    n.read(np.task_overhead_cycles, "task_overhead_cycles", 0, 1e7);
    n.read(np.dma_burst_bytes, "dma_burst_bytes", 16, 4096);
    n.finish();
    if (static_cast<int>(np.core_mmio_bases.value.size()) != np.core_count.value)
        c.fail("npu.core_mmio_bases", fmt::format("has {} entries but npu.core_count is {}",
                                                   np.core_mmio_bases.value.size(), np.core_count.value));
    if (np.cbuf_bank_bytes.value % np.cbuf_entry_bytes.value != 0)
        c.fail("npu.cbuf_bank_bytes", "must be a multiple of npu.cbuf_entry_bytes");

    Section m(c, root, "memory");
    MemoryParams& mp = p.mem;
    m.read(mp.ddr_base, "ddr_base", 0, 1e15);
    m.read(mp.ddr_size_bytes, "ddr_size_bytes", 1 << 20, 1e13);
    m.read(mp.ddr_peak_bytes_per_s, "ddr_peak_bytes_per_s", 1e8, 1e12);
    m.read(mp.ddr_efficiency, "ddr_efficiency", 0.05, 1.0);
    m.read(mp.ddr_read_latency_ns, "ddr_read_latency_ns", 0, 10000);
    m.read(mp.ddr_write_latency_ns, "ddr_write_latency_ns", 0, 10000);
    m.read(mp.interconnect_latency_ns, "interconnect_latency_ns", 0, 10000);
    m.read(mp.nbuf_base, "nbuf_base", 0, 1e15);
    m.read(mp.nbuf_bytes, "nbuf_bytes", 0, 64.0 * 1024 * 1024);
    m.read(mp.nbuf_bytes_per_s, "nbuf_bytes_per_s", 1e8, 1e13);
    m.read(mp.nbuf_latency_ns, "nbuf_latency_ns", 0, 10000);
    m.finish();
    uint64_t ddr_end = mp.ddr_base.value + mp.ddr_size_bytes.value;
    if (mp.nbuf_bytes.value && mp.nbuf_base.value < ddr_end && mp.nbuf_base.value + mp.nbuf_bytes.value > mp.ddr_base.value)
        c.fail("memory.nbuf_base", "NBUF overlaps the DDR window");
    for (size_t i = 0; i < np.core_mmio_bases.value.size(); ++i) {
        uint64_t b = np.core_mmio_bases.value[i];
        if (b < ddr_end && b + np.core_mmio_window_bytes.value > mp.ddr_base.value)
            c.fail(fmt::format("npu.core_mmio_bases[{}]", i), "overlaps the DDR window");
    }
    return p;
}

std::vector<SocProfile::ParamView> SocProfile::params() const {
    std::vector<ParamView> out;
    auto add = [&](const auto& p) { out.push_back({p.path, p.grade, value_text(p.value), p.source}); };
    const NpuParams& n = npu;
    add(n.core_count); add(n.core_clock_hz); add(n.core_mmio_bases); add(n.core_mmio_window_bytes);
    add(n.int8_macs_per_cycle); add(n.fp16_macs_per_cycle); add(n.int4_macs_per_cycle);
    add(n.cbuf_banks); add(n.cbuf_bank_bytes); add(n.cbuf_entry_bytes); add(n.c2_int8); add(n.c2_fp16);
    add(n.dma_address_bits); add(n.pc_data_amount_scale); add(n.pc_task_number_bits);
    add(n.pc_task_status_offset); add(n.pc_cycles_per_regcmd);
    add(n.task_overhead_cycles); add(n.dma_burst_bytes);
    const MemoryParams& m = mem;
    add(m.ddr_base); add(m.ddr_size_bytes); add(m.ddr_peak_bytes_per_s); add(m.ddr_efficiency);
    add(m.ddr_read_latency_ns); add(m.ddr_write_latency_ns); add(m.interconnect_latency_ns);
    add(m.nbuf_base); add(m.nbuf_bytes); add(m.nbuf_bytes_per_s); add(m.nbuf_latency_ns);
    return out;
}

std::string profile_dir() {
    if (const char* d = std::getenv("NPUSIM_DATA_DIR"); d && *d)
        return (fs::path(d) / "npu_models" / "hwdesc" / "profiles").string();
    return (fs::path(NPUSIM_SOURCE_DIR) / "npu_models" / "hwdesc" / "profiles").string();
}

std::vector<std::string> list_profiles() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(profile_dir(), ec))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

SocProfile load_named_profile(const std::string& name) {
    std::vector<std::string> names = list_profiles();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw ProfileError(fmt::format("unknown platform '{}' (known: {})", name, known.empty() ? "none found in " + profile_dir() : known));
    }
    return load_profile((fs::path(profile_dir()) / (name + ".json")).string());
}

}  // namespace hw
