// SPDX-License-Identifier: MIT
// Loads a core preset JSON (riscv_iss/presets/*.json): every key is known, every number range-checked,
// and errors name the file and the JSON path (SG-8.3.4).
#include "riscv_iss/core_preset.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace iss {
namespace {
using nlohmann::json;

// Limits of what a preset may ask for (checked before anything is allocated).
constexpr uint64_t kMinClockHz = 1000, kMaxClockHz = 10000000000ull;  // 1 kHz .. 10 GHz
constexpr uint64_t kMaxRegionBytes = 512ull << 20, kMaxMemoryBytes = 1ull << 30;
constexpr std::size_t kMaxRegions = 16;

std::string fmt_range(const char* what, uint64_t v, uint64_t lo, uint64_t hi) {
    return std::string(what) + " " + std::to_string(v) + " is outside " + std::to_string(lo) + " .. " +
           std::to_string(hi);
}

struct Ctx {
    std::string file;
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw std::runtime_error(file + ": " + path + ": " + what);
    }
};

uint64_t to_u64(const Ctx& c, const std::string& path, const json& v, uint64_t max) {
    uint64_t n = 0;
    if (v.is_number_unsigned()) {
        n = v.get<uint64_t>();
    } else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        char* end = nullptr;
        n = std::strtoull(s.c_str(), &end, 0);
        if (s.empty() || *end != '\0') c.fail(path, "'" + s + "' is not a number");
    } else {
        c.fail(path, "expected an unsigned number or a \"0x...\" string");
    }
    if (n > max) c.fail(path, "value " + std::to_string(n) + " exceeds " + std::to_string(max));
    return n;
}

template <typename T>
void read_num(const Ctx& c, const std::string& path, const json& v, T& out) {
    out = static_cast<T>(to_u64(c, path, v, std::numeric_limits<T>::max()));
}

/// Calls handler(key, value) for each key; unknown keys are errors.
void for_keys(const Ctx& c, const std::string& path, const json& obj,
              const std::map<std::string, std::function<void(const std::string&, const json&)>>& handlers) {
    if (!obj.is_object()) c.fail(path, "expected an object");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        auto h = handlers.find(it.key());
        if (h == handlers.end()) c.fail(path + "." + it.key(), "unknown key");
        h->second(path + "." + it.key(), it.value());
    }
}

void read_isa(const Ctx& c, const json& j, IsaConfig& isa) {
    for_keys(c, "isa", j,
             {
                 {"extensions",
                  [&](const std::string& p, const json& v) {
                      if (!v.is_string()) c.fail(p, "expected a string like \"imafc\"");
                      const std::string e = v.get<std::string>();
                      for (char ch : e)
                          if (std::string("imafc").find(ch) == std::string::npos)
                              c.fail(p, std::string("unsupported extension '") + ch + "'");
                      if (e.find('i') == std::string::npos) c.fail(p, "'i' is required");
                      isa.m = e.find('m') != std::string::npos;
                      isa.a = e.find('a') != std::string::npos;
                      isa.f = e.find('f') != std::string::npos;
                      isa.c = e.find('c') != std::string::npos;
                  }},
                 {"u_mode",
                  [&](const std::string& p, const json& v) {
                      if (!v.is_boolean()) c.fail(p, "expected true/false");
                      isa.u_mode = v.get<bool>();
                  }},
                 {"misaligned",
                  [&](const std::string& p, const json& v) {
                      if (v != "trap" && v != "emulate") c.fail(p, "expected \"trap\" or \"emulate\"");
                      isa.misaligned_trap = v == "trap";
                  }},
                 {"triggers",
                  [&](const std::string& p, const json& v) {
                      for_keys(c, p, v,
                               {
                                   {"count",
                                    [&](const std::string& q, const json& x) {
                                        isa.triggers.count = static_cast<uint32_t>(to_u64(c, q, x, 8));
                                    }},
                                   {"match",
                                    [&](const std::string& q, const json& x) {
                                        if (!x.is_array())
                                            c.fail(q, "expected a list of \"execute\", \"load\", \"store\"");
                                        isa.triggers.execute = isa.triggers.load = isa.triggers.store = false;
                                        for (const json& k : x) {
                                            if (k == "execute")
                                                isa.triggers.execute = true;
                                            else if (k == "load")
                                                isa.triggers.load = true;
                                            else if (k == "store")
                                                isa.triggers.store = true;
                                            else
                                                c.fail(q,
                                                       "unknown access kind " + k.dump() + " (execute, load, store)");
                                        }
                                    }},
                                   {"debugger_only",
                                    [&](const std::string& q, const json& x) {
                                        if (!x.is_boolean()) c.fail(q, "expected true/false");
                                        isa.triggers.debugger_only = x.get<bool>();
                                    }},
                               });
                  }},
                 {"reset_pc", [&](const std::string& p, const json& v) { read_num(c, p, v, isa.reset_pc); }},
                 {"mvendorid", [&](const std::string& p, const json& v) { read_num(c, p, v, isa.mvendorid); }},
                 {"marchid", [&](const std::string& p, const json& v) { read_num(c, p, v, isa.marchid); }},
                 {"mimpid", [&](const std::string& p, const json& v) { read_num(c, p, v, isa.mimpid); }},
             });
}

void read_cycles(const Ctx& c, const json& j, CycleModel& m) {
    std::map<std::string, uint32_t*> u32 = {{"alu", &m.alu},
                                            {"mul", &m.mul},
                                            {"mulh", &m.mulh},
                                            {"div_min", &m.div_min},
                                            {"div_max", &m.div_max},
                                            {"div_by_zero", &m.div_by_zero},
                                            {"load", &m.load},
                                            {"store", &m.store},
                                            {"misaligned_penalty", &m.misaligned_penalty},
                                            {"jal", &m.jal},
                                            {"jalr", &m.jalr},
                                            {"branch_not_taken", &m.branch_not_taken},
                                            {"branch_taken", &m.branch_taken},
                                            {"csr", &m.csr},
                                            {"csr_slow", &m.csr_slow},
                                            {"fence", &m.fence},
                                            {"fence_i", &m.fence_i},
                                            {"system", &m.system},
                                            {"wfi", &m.wfi},
                                            {"amo", &m.amo},
                                            {"fp_add", &m.fp_add},
                                            {"fp_mul", &m.fp_mul},
                                            {"fp_fma", &m.fp_fma},
                                            {"fp_div", &m.fp_div},
                                            {"fp_sqrt", &m.fp_sqrt},
                                            {"fp_cvt", &m.fp_cvt},
                                            {"fp_cmp", &m.fp_cmp},
                                            {"fp_mv", &m.fp_mv},
                                            {"load_use_penalty", &m.load_use_penalty},
                                            {"jalr_use_penalty", &m.jalr_use_penalty}};
    std::map<std::string, std::function<void(const std::string&, const json&)>> h;
    for (auto& [k, ptr] : u32) {
        uint32_t* p = ptr;
        h[k] = [&c, p](const std::string& path, const json& v) { *p = static_cast<uint32_t>(to_u64(c, path, v, 255)); };
    }
    h["clock_hz"] = [&](const std::string& p, const json& v) {
        m.clock_hz = to_u64(c, p, v, kMaxClockHz);
        // The SystemC wrapper turns cycles into time with it; the semihosting clock divides by it.
        if (m.clock_hz < kMinClockHz) c.fail(p, fmt_range("clock_hz", m.clock_hz, kMinClockHz, kMaxClockHz));
    };
    h["mtime_divider"] = [&](const std::string& p, const json& v) {
        m.mtime_divider = static_cast<uint32_t>(to_u64(c, p, v, 1000000));
        if (m.mtime_divider == 0) c.fail(p, "must be 1 .. 1000000 core cycles per mtime tick");
    };
    for_keys(c, "cycles", j, h);
    if (m.branch_taken < m.branch_not_taken) c.fail("cycles.branch_taken", "must be >= branch_not_taken");
    if (m.div_max < m.div_min || m.div_by_zero < m.div_min) c.fail("cycles.div_max", "div_max/div_by_zero < div_min");
}

/// Device windows (CLINT 64 KiB, console 256 B, test finisher 4 KiB) must not overlap memory or each other.
void check_devices(const Ctx& c, const CorePreset& p) {
    struct Win {
        const char* name;
        uint32_t base;
        uint64_t size;
    } wins[] = {{"clint_base", p.devices.clint_base, 0x10000},
                {"console_base", p.devices.console_base, 0x100},
                {"test_finisher_base", p.devices.test_finisher_base, 0x1000}};
    for (const Win& w : wins) {
        if (w.base == 0) continue;
        if (w.base % 4 != 0) c.fail(std::string("devices.") + w.name, "must be 4-byte aligned");
        if (w.base + w.size > (1ull << 32)) c.fail(std::string("devices.") + w.name, "window exceeds the 32-bit space");
        for (const RegionConfig& r : p.memory)
            if (w.base < uint64_t{r.base} + r.size_bytes && r.base < w.base + w.size)
                c.fail(std::string("devices.") + w.name, "overlaps memory region " + r.name);
        for (const Win& o : wins)
            if (&o != &w && o.base != 0 && w.base < o.base + o.size && o.base < w.base + w.size)
                c.fail(std::string("devices.") + w.name, std::string("overlaps devices.") + o.name);
    }
}

void read_memory(const Ctx& c, const json& j, std::vector<RegionConfig>& out) {
    if (!j.is_array()) c.fail("memory", "expected an array of regions");
    uint64_t total = 0;
    for (std::size_t i = 0; i < j.size(); ++i) {
        RegionConfig r;
        const std::string base = "memory[" + std::to_string(i) + "]";
        for_keys(c, base, j[i],
                 {
                     {"name",
                      [&](const std::string& p, const json& v) {
                          if (!v.is_string()) c.fail(p, "expected a string");
                          r.name = v.get<std::string>();
                      }},
                     {"base", [&](const std::string& p, const json& v) { read_num(c, p, v, r.base); }},
                     {"size_bytes", [&](const std::string& p, const json& v) { read_num(c, p, v, r.size_bytes); }},
                     {"writable",
                      [&](const std::string& p, const json& v) {
                          if (!v.is_boolean()) c.fail(p, "expected true/false");
                          r.writable = v.get<bool>();
                      }},
                     {"read_wait_cycles",
                      [&](const std::string& p, const json& v) { read_num(c, p, v, r.read_wait_cycles); }},
                     {"write_wait_cycles",
                      [&](const std::string& p, const json& v) { read_num(c, p, v, r.write_wait_cycles); }},
                     {"fetch_wait_cycles",
                      [&](const std::string& p, const json& v) { read_num(c, p, v, r.fetch_wait_cycles); }},
                 });
        if (r.size_bytes == 0 || r.size_bytes % 4096 != 0)
            c.fail(base + ".size_bytes", "must be a non-zero multiple of 4096");
        if (r.base % 4096 != 0) c.fail(base + ".base", "must be 4 KiB aligned");
        if (static_cast<uint64_t>(r.base) + r.size_bytes > (1ull << 32))
            c.fail(base, "region exceeds the 32-bit space");
        if (r.size_bytes > kMaxRegionBytes) c.fail(base + ".size_bytes", "at most 512 MiB per region");
        total += r.size_bytes;
        if (total > kMaxMemoryBytes) c.fail(base, "all regions together may hold at most 1 GiB");
        if (out.size() >= kMaxRegions) c.fail(base, "at most 16 memory regions");
        for (const RegionConfig& o : out)
            if (r.base < o.base + o.size_bytes && o.base < r.base + r.size_bytes)
                c.fail(base, "overlaps region " + o.name);
        out.push_back(r);
    }
}
}  // namespace

std::string default_preset_dir() {
    if (const char* env = std::getenv("RVISS_PRESET_DIR")) return env;
    return RISCV_ISS_PRESET_DIR;
}

CorePreset load_preset(const std::string& name_or_path, const std::string& preset_dir) {
    const bool is_path = name_or_path.find('/') != std::string::npos ||
                         (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
    const std::string file = is_path ? name_or_path : preset_dir + "/" + name_or_path + ".json";
    std::ifstream in(file);
    if (!in) throw std::runtime_error("unknown core preset '" + name_or_path + "' (cannot open " + file + ")");
    Ctx c{file};
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        c.fail("$", e.what());
    }
    CorePreset p;
    for_keys(c, "$", j,
             {
                 {"schema_version",
                  [&](const std::string& path, const json& v) {
                      if (v != 1) c.fail(path, "only schema_version 1 is supported");
                  }},
                 {"name",
                  [&](const std::string& path, const json& v) {
                      if (!v.is_string()) c.fail(path, "expected a string");
                      p.name = v.get<std::string>();
                  }},
                 {"description",
                  [&](const std::string& path, const json& v) {
                      if (!v.is_string()) c.fail(path, "expected a string");
                      p.description = v.get<std::string>();
                  }},
                 {"unverified",
                  [&](const std::string& path, const json& v) {
                      if (!v.is_array()) c.fail(path, "expected a list of strings naming guessed figures");
                      for (const json& e : v)
                          if (!e.is_string()) c.fail(path, "expected a list of strings naming guessed figures");
                  }},
                 {"isa", [&](const std::string&, const json& v) { read_isa(c, v, p.isa); }},
                 {"cycles", [&](const std::string&, const json& v) { read_cycles(c, v, p.cycles); }},
                 {"devices",
                  [&](const std::string& path, const json& v) {
                      for_keys(c, path, v,
                               {
                                   {"clint_base", [&](const std::string& q,
                                                      const json& x) { read_num(c, q, x, p.devices.clint_base); }},
                                   {"console_base", [&](const std::string& q,
                                                        const json& x) { read_num(c, q, x, p.devices.console_base); }},
                                   {"test_finisher_base",
                                    [&](const std::string& q, const json& x) {
                                        read_num(c, q, x, p.devices.test_finisher_base);
                                    }},
                               });
                  }},
                 {"memory", [&](const std::string&, const json& v) { read_memory(c, v, p.memory); }},
             });
    if (p.memory.empty()) c.fail("memory", "at least one region is required");
    check_devices(c, p);
    const uint32_t align = p.isa.c ? 2 : 4;
    if (p.isa.reset_pc % align != 0) c.fail("isa.reset_pc", "must be " + std::to_string(align) + "-byte aligned");
    return p;
}

}  // namespace iss
