// SPDX-License-Identifier: MIT
// SoC profile loader: strict (unknown keys and out-of-range values are errors naming the JSON path).
#include "hw/profile.h"
#include "hw/profile_parse.h"

#include "hw/regdb.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <npusim/datadir.h>
#include <nlohmann/json.hpp>


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
        if (s.find('-') != std::string::npos) c.fail(path, fmt::format("'{}' must not be negative", s));
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
    if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) c.fail(path, "must be a string");
        return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, double>) {
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

template <typename T>
void check_range(const Ctx& c, const T& v, const std::string& path, double lo, double hi) {
    if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
        if (v.size() < lo || v.size() > hi) c.fail(path, fmt::format("needs {}..{} entries", lo, hi));
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (v.empty()) c.fail(path, "must not be empty");
    } else {
        double d = static_cast<double>(v);
        if (!(d >= lo && d <= hi)) c.fail(path, fmt::format("{} outside [{}, {}]", d, lo, hi));
    }
}

/// Every parameter of a profile with its section, key and valid range, in file order: the one
/// table the loader, params() and apply_param_override() share.
template <typename P, typename V>
void visit_params(P& p, V&& v) {
    auto& n = p.npu;
    v("npu", "core_count", n.core_count, 1, 8);
    v("npu", "core_clock_hz", n.core_clock_hz, 1e6, 5e9);
    v("npu", "core_mmio_bases", n.core_mmio_bases, 1, 8);
    v("npu", "core_mmio_window_bytes", n.core_mmio_window_bytes, 0x10000, 0x100000);
    v("npu", "int8_macs_per_cycle", n.int8_macs_per_cycle, 1, 65536);
    v("npu", "fp16_macs_per_cycle", n.fp16_macs_per_cycle, 0, 65536);
    v("npu", "int4_macs_per_cycle", n.int4_macs_per_cycle, 0, 131072);
    v("npu", "cbuf_banks", n.cbuf_banks, 1, 16);
    v("npu", "cbuf_bank_bytes", n.cbuf_bank_bytes, 1024, 1 << 20);
    v("npu", "cbuf_entry_bytes", n.cbuf_entry_bytes, 16, 1024);
    v("npu", "c2_int8", n.c2_int8, 1, 64);
    v("npu", "c2_fp16", n.c2_fp16, 1, 64);
    v("npu", "dma_address_bits", n.dma_address_bits, 32, 48);
    v("npu", "pc_data_amount_scale", n.pc_data_amount_scale, 1, 4);
    v("npu", "regdb_generation", n.regdb_generation, 0, 0);
    v("npu", "pc_task_number_bits", n.pc_task_number_bits, 1, 16);
    v("npu", "pc_task_status_offset", n.pc_task_status_offset, 0, 0xffc);
    v("npu", "pc_cycles_per_regcmd", n.pc_cycles_per_regcmd, 0, 1000);
    v("npu", "task_overhead_cycles", n.task_overhead_cycles, 0, 1e7);
    v("npu", "dma_burst_bytes", n.dma_burst_bytes, 16, 4096);
    v("npu", "int16_macs_per_cycle", n.int16_macs_per_cycle, 0, 65536);
    v("npu", "cout_align_int8", n.cout_align_int8, 1, 256);
    v("npu", "cout_align_fp16", n.cout_align_fp16, 1, 256);
    v("npu", "depthwise_cout_align", n.depthwise_cout_align, 1, 256);
    v("npu", "depthwise_mac_efficiency", n.depthwise_mac_efficiency, 1e-4, 1.0);
    v("npu", "dpu_atoms_per_cycle", n.dpu_atoms_per_cycle, 0.01, 64);
    v("npu", "dpu_lut_atoms_per_cycle", n.dpu_lut_atoms_per_cycle, 0.01, 64);
    v("npu", "ppu_atoms_per_cycle", n.ppu_atoms_per_cycle, 0.01, 64);
    v("npu", "load_compute_overlap", n.load_compute_overlap, 0.0, 1.0);
    v("npu", "weight_kernel_group_int8", n.weight_kernel_group_int8, 1, 256);
    v("npu", "weight_channel_group_int8", n.weight_channel_group_int8, 1, 256);
    v("npu", "weight_kernel_group_fp16", n.weight_kernel_group_fp16, 1, 256);
    v("npu", "weight_channel_group_fp16", n.weight_channel_group_fp16, 1, 256);
    v("npu", "depthwise_channel_group_int8", n.depthwise_channel_group_int8, 1, 256);
    v("npu", "depthwise_channel_group_fp16", n.depthwise_channel_group_fp16, 1, 256);
    v("npu", "stripe_max_pixels", n.stripe_max_pixels, 1, 1024);
    v("npu", "cbuf_read_bytes_per_cycle", n.cbuf_read_bytes_per_cycle, 1, 65536);
    v("npu", "conv_mac_efficiency", n.conv_mac_efficiency, 0.05, 1.0);
    auto& m = p.mem;
    v("memory", "ddr_base", m.ddr_base, 0, 1e15);
    v("memory", "ddr_size_bytes", m.ddr_size_bytes, 1 << 20, 1e13);
    v("memory", "npu_iommu", m.npu_iommu, 0, 1);
    v("memory", "iova_base", m.iova_base, 0, 1e15);
    v("memory", "iova_bytes", m.iova_bytes, 1 << 20, 1e13);
    v("memory", "ddr_peak_bytes_per_s", m.ddr_peak_bytes_per_s, 1e8, 1e12);
    v("memory", "ddr_type", m.ddr_type, 0, 0);
    v("memory", "ddr_efficiency", m.ddr_efficiency, 0.05, 1.0);
    v("memory", "ddr_read_latency_ns", m.ddr_read_latency_ns, 0, 10000);
    v("memory", "ddr_write_latency_ns", m.ddr_write_latency_ns, 0, 10000);
    v("memory", "interconnect_latency_ns", m.interconnect_latency_ns, 0, 10000);
    v("memory", "nbuf_base", m.nbuf_base, 0, 1e15);
    v("memory", "nbuf_bytes", m.nbuf_bytes, 0, 64.0 * 1024 * 1024);
    v("memory", "nbuf_bytes_per_s", m.nbuf_bytes_per_s, 1e8, 1e13);
    v("memory", "nbuf_latency_ns", m.nbuf_latency_ns, 0, 10000);
    auto& h = p.host;
    v("host", "cpu", h.cpu, 0, 0);
    v("host", "cpu_clock_hz", h.cpu_clock_hz, 1e6, 1e10);
    v("host", "int8_macs_per_s", h.int8_macs_per_s, 1e6, 1e13);
    v("host", "float_flops_per_s", h.float_flops_per_s, 1e6, 1e13);
    v("host", "bytes_per_s", h.bytes_per_s, 1e6, 1e12);
    v("host", "op_overhead_ns", h.op_overhead_ns, 0, 1e9);
}

/// Cross-parameter checks, after loading and after every override.
void validate(const Ctx& c, const SocProfile& p) {
    const NpuParams& np = p.npu;
    const MemoryParams& mp = p.mem;
    if (static_cast<int>(np.core_mmio_bases.value.size()) != np.core_count.value)
        c.fail("npu.core_mmio_bases", fmt::format("has {} entries but npu.core_count is {}",
                                                   np.core_mmio_bases.value.size(), np.core_count.value));
    if (np.cbuf_bank_bytes.value % np.cbuf_entry_bytes.value != 0)
        c.fail("npu.cbuf_bank_bytes", "must be a multiple of npu.cbuf_entry_bytes");
    uint64_t ddr_end = mp.ddr_base.value + mp.ddr_size_bytes.value;
    if (mp.nbuf_bytes.value && mp.nbuf_base.value < ddr_end &&
        mp.nbuf_base.value + mp.nbuf_bytes.value > mp.ddr_base.value)
        c.fail("memory.nbuf_base", "NBUF overlaps the DDR window");
    const auto gen = rknpu::generation_by_name(np.regdb_generation.value);
    if (!gen) {
        std::string known;
        for (const char* g : rknpu::kGenerationNames) known += std::string(known.empty() ? "" : ", ") + g;
        c.fail("npu.regdb_generation", fmt::format("'{}' is not a register-map generation ({})", np.regdb_generation.value, known));
    }
    // The PC's task-number width and status offset are the generation's register layout.
    const rknpu::RegInfo* tc = rknpu::find_reg("PC.TASK_CON", *gen);
    const FieldInfo* tn = tc ? rknpu::find_field(*tc, "TASK_NUMBER") : nullptr;
    if (!tn || static_cast<int>(tn->field().width()) != np.pc_task_number_bits.value)
        c.fail("npu.pc_task_number_bits", fmt::format("{} differs from TASK_CON.TASK_NUMBER of regdb generation {}",
                                                      np.pc_task_number_bits.value, np.regdb_generation.value));
    const rknpu::RegInfo* ts = rknpu::find_reg("PC.TASK_STATUS", *gen);
    if (!ts || ts->offset != np.pc_task_status_offset.value)
        c.fail("npu.pc_task_status_offset", fmt::format("0x{:x} differs from PC.TASK_STATUS of regdb generation {}",
                                                        np.pc_task_status_offset.value, np.regdb_generation.value));
    if (mp.npu_iommu.value && mp.iova_base.value + mp.iova_bytes.value > (uint64_t{1} << np.dma_address_bits.value))
        c.fail("memory.iova_bytes", "the IOVA domain exceeds npu.dma_address_bits");
    for (size_t i = 0; i < np.core_mmio_bases.value.size(); ++i) {
        uint64_t b = np.core_mmio_bases.value[i];
        if (b < ddr_end && b + np.core_mmio_window_bytes.value > mp.ddr_base.value)
            c.fail(fmt::format("npu.core_mmio_bases[{}]", i), "overlaps the DDR window");
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
        check_range(c_, p.value, path, lo, hi);
    }
    void finish() const {
        for (auto it = j_->begin(); it != j_->end(); ++it)
            if (!seen_.count(it.key())) c_.fail(name_ + "." + it.key(), "unknown parameter");
    }

   private:
    const Ctx& c_;
    std::string name_;
    const json* j_ = nullptr;
    std::set<std::string> seen_;
};

template <typename T>
std::string value_text(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
        return v;
    } else if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:#x}", i ? ", " : "", v[i]);
        return s + "]";
    } else {
        return fmt::format("{}", v);
    }
}

/// Does `path` name a parameter of the profile ("npu.task_overhead_cycles")?
bool has_param(const SocProfile& p, const std::string& path) {
    bool found = false;
    visit_params(p, [&](const std::string& sec, const std::string& key, const auto&, double, double) {
        found = found || sec + "." + key == path;
    });
    return found;
}

/// The optional "calibration" object (Calibration in profile.h): known keys only, parameter paths
/// that exist, numbers where numbers belong.
Calibration read_calibration(const Ctx& c, const json& j, const SocProfile& p) {
    if (!j.is_object()) c.fail("calibration", "must be an object");
    static const std::set<std::string> keys = {"status", "summary", "data", "fit", "inherits_from", "fitted",
                                               "joint", "inherited", "rows", "fit_mae_pct", "fit_max_pct",
                                               "loo_mae_pct", "loo_max_pct"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!keys.count(it.key())) c.fail("calibration." + it.key(), "unknown key");
    Calibration k;
    auto str = [&](const char* key, std::string& out) {
        if (!j.contains(key)) return;
        if (!j[key].is_string()) c.fail(std::string("calibration.") + key, "must be a string");
        out = j[key].get<std::string>();
    };
    auto num = [&](const json& o, const std::string& path, double& out) {
        if (!o.is_number()) c.fail(path, "must be a number");
        out = o.get<double>();
    };
    str("status", k.status);
    if (k.status != "calibrated" && k.status != "inherited" && k.status != "none")
        c.fail("calibration.status", fmt::format("'{}' is not one of calibrated, inherited, none", k.status));
    str("summary", k.summary);
    str("data", k.data);
    str("fit", k.fit);
    str("inherits_from", k.inherits_from);
    auto check_path = [&](const std::string& where, const std::string& path) {
        if (!has_param(p, path)) c.fail(where, fmt::format("'{}' is not a parameter of the profile", path));
    };
    if (j.contains("fitted")) {
        if (!j["fitted"].is_array()) c.fail("calibration.fitted", "must be an array of parameter paths");
        for (const json& e : j["fitted"]) {
            if (!e.is_string()) c.fail("calibration.fitted", "must be an array of parameter paths");
            check_path("calibration.fitted", e.get<std::string>());
            k.fitted.push_back(e.get<std::string>());
        }
    }
    for (const char* key : {"joint", "inherited"}) {
        if (!j.contains(key)) continue;
        const std::string where = std::string("calibration.") + key;
        if (!j[key].is_object()) c.fail(where, "must be an object {parameter path: text}");
        auto& out = std::string(key) == "joint" ? k.joint : k.inherited;
        for (auto it = j[key].begin(); it != j[key].end(); ++it) {
            check_path(where, it.key());
            if (!it.value().is_string()) c.fail(where + "." + it.key(), "must be a string");
            out.emplace_back(it.key(), it.value().get<std::string>());
        }
    }
    if (j.contains("rows")) {
        if (!j["rows"].is_array()) c.fail("calibration.rows", "must be an array");
        for (size_t i = 0; i < j["rows"].size(); ++i) {
            const json& r = j["rows"][i];
            const std::string where = fmt::format("calibration.rows[{}]", i);
            if (!r.is_object() || !r.contains("model") || !r["model"].is_string())
                c.fail(where, "must be an object with a model name");
            CalibrationRow row;
            row.model = r["model"].get<std::string>();
            for (auto [key, out] : {std::pair<const char*, double*>{"published_ms", &row.published_ms},
                                    {"estimate_ms", &row.estimate_ms},
                                    {"error_pct", &row.error_pct},
                                    {"loo_error_pct", &row.loo_error_pct}}) {
                if (!r.contains(key)) c.fail(where + "." + key, "missing");
                num(r[key], where + "." + key, *out);
            }
            for (auto it = r.begin(); it != r.end(); ++it)
                if (it.key() != "model" && it.key() != "published_ms" && it.key() != "estimate_ms" &&
                    it.key() != "error_pct" && it.key() != "loo_error_pct")
                    c.fail(where + "." + it.key(), "unknown key");
            k.rows.push_back(row);
        }
    }
    for (auto [key, out] : {std::pair<const char*, double*>{"fit_mae_pct", &k.fit_mae_pct},
                            {"fit_max_pct", &k.fit_max_pct},
                            {"loo_mae_pct", &k.loo_mae_pct},
                            {"loo_max_pct", &k.loo_max_pct}})
        if (j.contains(key)) num(j[key], std::string("calibration.") + key, *out);
    if (k.status == "calibrated" && k.rows.empty()) c.fail("calibration.rows", "a calibrated profile lists its rows");
    if (k.status == "inherited" && k.inherits_from.empty())
        c.fail("calibration.inherits_from", "an inherited calibration names the SoC it inherits from");
    return k;
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
    // A profile is a small regular file: a directory or a device (/dev/zero) is an error, not a
    // libstdc++ read failure or a read that never ends (issue 23).
    constexpr std::uintmax_t kMaxProfileBytes = 16u << 20;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw ProfileError(fmt::format("{}: is a directory, not a profile file", path));
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        throw ProfileError(fmt::format("{}: not a regular file", path));
    if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > kMaxProfileBytes)
        throw ProfileError(fmt::format("{}: larger than a profile can be ({} MiB)", path, kMaxProfileBytes >> 20));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ProfileError(fmt::format("{}: cannot open profile", path));
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ProfileError(fmt::format("{}: cannot read profile", path));
    return parse_profile(text.str(), path);
}

SocProfile parse_profile(const std::string& text, const std::string& path) {
    Ctx c{path};
    json root;
    try {
        root = json::parse(text);
    } catch (const std::exception& e) {
        throw ProfileError(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    if (!root.is_object()) c.fail("$", "top level must be an object");
    static const std::set<std::string> top = {"schema_version", "name", "display_name", "family",
                                              "notes", "npu", "memory", "host", "calibration"};
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

    Section n(c, root, "npu"), m(c, root, "memory"), h(c, root, "host");
    visit_params(p, [&](const std::string& sec, const std::string& key, auto& param, double lo, double hi) {
        (sec == "npu" ? n : sec == "memory" ? m : h).read(param, key, lo, hi);
    });
    n.finish();
    m.finish();
    h.finish();
    validate(c, p);
    if (root.contains("calibration")) p.calibration = read_calibration(c, root.at("calibration"), p);
    return p;
}

std::vector<SocProfile::ParamView> SocProfile::params() const {
    std::vector<ParamView> out;
    visit_params(*this, [&](const std::string&, const std::string&, const auto& p, double, double) {
        out.push_back({p.path, p.grade, value_text(p.value), p.source});
    });
    return out;
}

std::string profile_dir() {
    // $NPUSIM_DATA_DIR pointing at a source checkout (its old meaning) still works.
    if (const char* d = std::getenv("NPUSIM_DATA_DIR"); d && *d && !std::getenv("NPUSIM_PROFILE_DIR"))
        if (fs::is_directory(fs::path(d) / "hwdesc" / "profiles")) return (fs::path(d) / "hwdesc" / "profiles").string();
    return npusim::data_path("profiles", "NPUSIM_PROFILE_DIR");
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

SocProfile load_profile_arg(const std::string& name_or_file) {
    const bool is_file = name_or_file.find('/') != std::string::npos ||
                         (name_or_file.size() > 5 && name_or_file.compare(name_or_file.size() - 5, 5, ".json") == 0);
    return is_file ? load_profile(name_or_file) : load_named_profile(name_or_file);
}

namespace {

/// Parse the text of an override value as the loader parses the JSON value.
template <typename T>
T parse_text(const Ctx& c, const std::string& path, const std::string& text) {
    if constexpr (std::is_same_v<T, std::string>) {
        return text;
    } else if constexpr (std::is_same_v<T, double>) {
        char* end = nullptr;
        errno = 0;
        const double d = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(d))
            c.fail(path, fmt::format("'{}' is not a number", text));
        return d;
    } else if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
        std::string t = text;
        if (t.size() >= 2 && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
        json arr = json::array();
        std::stringstream ss(t);
        for (std::string item; std::getline(ss, item, ',');) {
            const size_t a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
            arr.push_back(a == std::string::npos ? std::string() : item.substr(a, b - a + 1));
        }
        return convert<T>(c, path, arr);
    } else {
        return convert<T>(c, path, json(text));
    }
}

}  // namespace

namespace {
void set_param(SocProfile& q, const std::string& assignment) {
    const Ctx c{"parameter override"};
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ProfileError(fmt::format("parameter override '{}': expected section.key=value", assignment));
    const std::string path = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    bool found = false;
    visit_params(q, [&](const std::string& sec, const std::string& key, auto& param, double lo, double hi) {
        if (found || sec + "." + key != path) return;
        found = true;
        using T = std::decay_t<decltype(param.value)>;
        const T v = parse_text<T>(c, path, text);
        check_range(c, v, path, lo, hi);
        param.source = fmt::format("override {} (was {}; {})", text, value_text(param.value), param.source);
        param.value = v;
    });
    if (!found) {
        std::string known;
        visit_params(q, [&](const std::string& sec, const std::string& key, const auto&, double, double) {
            if (path.find('.') == std::string::npos ? key == path : path.rfind(sec + ".", 0) == 0)
                known += (known.empty() ? "" : ", ") + sec + "." + key;
        });
        c.fail(path, known.empty() ? std::string("unknown parameter (sections: npu, memory, host)")
                                   : "unknown parameter (known here: " + known + ")");
    }
}
}  // namespace

void apply_param_override(SocProfile& p, const std::string& assignment) { apply_param_overrides(p, {assignment}); }

void apply_param_overrides(SocProfile& p, const std::vector<std::string>& assignments) {
    SocProfile q = p;
    for (const std::string& a : assignments) set_param(q, a);
    validate(Ctx{"parameter override"}, q);
    p = std::move(q);
}

double host_op_seconds(const HostParams& h, uint64_t macs, uint64_t flops, uint64_t bytes) {
    return h.op_overhead_ns.value * 1e-9 + static_cast<double>(macs) / h.int8_macs_per_s.value +
           static_cast<double>(flops) / h.float_flops_per_s.value + static_cast<double>(bytes) / h.bytes_per_s.value;
}

}  // namespace hw
