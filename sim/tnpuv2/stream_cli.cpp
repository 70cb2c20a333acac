// SPDX-License-Identifier: MIT
// `npusim decode|lint FILE --platform tnpuv2`: the stream as the fetch unit sees it (decode), and
// the core's own checks run statically (lint): header, command framing, field ranges and enums,
// reserved bits, descriptors, each engine command's plan (geometry, tables, SRAM fit) against the
// slots the preceding TENSOR commands set, weight reuse, reads overlapping writes.
#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "hw/tnpuv2/codec.h"
#include "npu/tnpuv2/engine.h"
#include "tnpuv2/run.h"
#include "numerics/limits.h"

namespace sim::tnpuv2 {

namespace {

std::vector<uint32_t> read_words(const std::string& file) {
    const std::vector<char> bytes = num::read_input_file(file);  // regular file within the budget
    if (bytes.size() % 4)
        throw std::runtime_error(
            fmt::format("'{}': {} bytes is not a whole number of 32-bit words", file, bytes.size()));
    std::vector<uint32_t> w(bytes.size() / 4);
    std::memcpy(w.data(), bytes.data(), bytes.size());
    return w;
}

std::string slot_name(int s) {
    static const char* n[4] = {"IFM", "IFM2", "OFM", "AUX"};
    return n[s & 3];
}

}  // namespace

int decode_cli(const std::string& file, std::ostream& out, std::ostream& err) {
    std::vector<uint32_t> words;
    try {
        words = read_words(file);
    } catch (const std::exception& e) {
        err << "npusim: error: " << e.what() << "\n";
        return 2;
    }
    const hw::tnpuv2::DecodedStream d = hw::tnpuv2::decode_stream(words);
    size_t engine = 0;
    for (const auto& c : d.commands) engine += c.def && std::string(c.def->engine) != "fetch";
    out << fmt::format("{}: {} words, tnpuv2 command stream {}.{}, {} command(s) ({} engine)\n", file, words.size(),
                       d.version >> 16, d.version & 0xffff, d.commands.size(), engine);
    for (const auto& c : d.commands) {
        out << hw::tnpuv2::disasm_command(c);
        if (c.opcode == hw::tnpuv2::op::TENSOR)
            out << "  ; " << slot_name(npu::tnpuv2::tensor_slot(c)) << " " << npu::tnpuv2::decode_tensor(c).text();
        out << "\n";
    }
    if (d.error) {
        out << fmt::format("decode stopped at word {}: {} ({})\n", d.error_pc, d.error.message,
                           hw::tnpuv2::fault::name(d.error.code));
        return 1;
    }
    return 0;
}

int lint_cli(const std::string& file, const std::vector<std::string>& params, std::ostream& out, std::ostream& err) {
    std::vector<uint32_t> words;
    hw::tnpuv2::Profile p;
    try {
        words = read_words(file);
        p = hw::tnpuv2::load_default_profile();
        hw::tnpuv2::apply_param_overrides(p, params);
    } catch (const std::exception& e) {
        err << "npusim: error: " << e.what() << "\n";
        return 2;
    }
    int errors = 0, warnings = 0;
    auto finding = [&](bool error, const std::string& rule, uint32_t pc, const std::string& what,
                       const std::string& hint) {
        out << fmt::format("{}: {} word {}: {}{}\n", error ? "error" : "warning", rule, pc, what,
                           hint.empty() ? "" : " (hint: " + hint + ")");
        (error ? errors : warnings)++;
    };
    const hw::tnpuv2::DecodedStream d = hw::tnpuv2::decode_stream(words);
    npu::tnpuv2::State s;
    uint64_t weight_addr = 0, weight_bytes = 0;
    bool weights_valid = false;
    for (const auto& c : d.commands) {
        const std::vector<uint32_t> rsv = hw::tnpuv2::reserved_bits(c);
        for (size_t w = 0; w < rsv.size(); ++w)
            if (rsv[w])
                finding(false, "W-reserved", c.pc,
                        fmt::format("{} payload word {} = {:#010x} sets reserved bits {:#x}", c.def->name, w,
                                    c.payload[w], rsv[w]),
                        "clear the bits no field defines");
        bool field_ok = true;
        for (uint16_t i = 0; i < c.def->n_fields; ++i)
            if (const std::string why = hw::tnpuv2::check_field(c, c.def->fields[i]); !why.empty()) {
                finding(true, "E-field", c.pc, fmt::format("{}.{}: {}", c.def->name, c.def->fields[i].name, why),
                        "use a value of the format's range (docs/tnpuv2-command-stream.md)");
                field_ok = false;
            }
        if (!field_ok) continue;
        if (c.opcode == hw::tnpuv2::op::TENSOR) {
            if (npu::tnpuv2::Fault f = npu::tnpuv2::apply_tensor(c, s))
                finding(true, "E-descriptor", c.pc, f.message, "");
            continue;
        }
        if (std::string(c.def->engine) == "fetch") continue;
        npu::tnpuv2::OpPlan pl = npu::tnpuv2::plan_command(c, s, p);
        if (pl.fault) {
            finding(true, fmt::format("E-{}", hw::tnpuv2::fault::name(pl.fault.code)), c.pc, pl.fault.message,
                    pl.fault.code == hw::tnpuv2::fault::SRAM_OVERFLOW
                        ? "split the command into output bands or channel chunks"
                        : "the core faults on this command");
            continue;
        }
        if (pl.weight_bytes) {
            if (pl.weight_reuse && !(weights_valid && weight_addr == pl.weight_addr && weight_bytes == pl.weight_bytes))
                finding(
                    true, "E-weight-reuse", c.pc,
                    fmt::format("CONV.WEIGHT_REUSE set but the previous CONV loaded other weights ({} bytes at {:#x})",
                                weight_bytes, weight_addr),
                    "clear WEIGHT_REUSE on the first command of a weight chunk");
            weights_valid = true;
            weight_addr = pl.weight_addr;
            weight_bytes = pl.weight_bytes;
        }
        for (const npu::tnpuv2::Run& w : pl.writes)
            for (const npu::tnpuv2::Run& r : pl.reads)
                if (w.addr < r.addr + r.bytes && r.addr < w.addr + w.bytes) {
                    finding(false, "W-in-place", c.pc,
                            fmt::format("{} writes [{:#x}, +{}) which it also reads", c.def->name, w.addr, w.bytes),
                            "in-place results depend on the engine's order; use another output buffer");
                    goto next;
                }
    next:;
    }
    if (d.error)
        finding(true, fmt::format("E-{}", hw::tnpuv2::fault::name(d.error.code)), d.error_pc, d.error.message,
                d.error.code == hw::tnpuv2::fault::NO_END ? "end the stream with END" : "");
    out << fmt::format("{}: {} error(s), {} warning(s)\n", file, errors, warnings);
    return errors ? 1 : 0;
}

}  // namespace sim::tnpuv2
