// SPDX-License-Identifier: MIT
// tnpuv2 command encoding/decoding through the generated field tables.
#include "hw/tnpuv2/codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hw::tnpuv2 {

uint32_t header_word(uint8_t opcode, uint16_t payload_words) {
    return static_cast<uint32_t>(opcode) | (static_cast<uint32_t>(payload_words) << 16);
}

uint32_t field_bits(const Command& c, const Field& f) {
    if (f.word >= c.payload.size()) return 0;
    return (c.payload[f.word] & f.mask()) >> f.lo;
}

int64_t field(const Command& c, const Field& f) {
    const uint32_t b = field_bits(c, f);
    const int width = f.hi - f.lo + 1;
    if (!f.is_signed || width == 0) return b;
    if (width == 32) return static_cast<int32_t>(b);
    const uint32_t sign = 1u << (width - 1);
    return static_cast<int64_t>(b ^ sign) - static_cast<int64_t>(sign);
}

float field_f32(const Command& c, const Field& f) {
    const uint32_t b = field_bits(c, f);
    float v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

int64_t field_value(const Command& c, const FieldDef& d) { return field(c, Field{d.word, d.lo, d.hi, d.is_signed, 0}); }

uint64_t field_addr(const Command& c, const Field& lo, const Field& hi) {
    return static_cast<uint64_t>(field_bits(c, lo)) | (static_cast<uint64_t>(field_bits(c, hi)) << 32);
}

const FieldDef& field_def(const Command& c, const Field& f) { return c.def->fields[f.index]; }

std::string check_field(const Command& c, const FieldDef& d) {
    if (d.is_float) return {};
    const int64_t v = field_value(c, d);
    if (d.n_enums) {
        for (uint8_t i = 0; i < d.n_enums; ++i)
            if (d.enums[i].value == v) return {};
        std::string names;
        for (uint8_t i = 0; i < d.n_enums; ++i)
            names += fmt::format("{}{}={}", i ? ", " : "", d.enums[i].name, d.enums[i].value);
        return fmt::format("{} is not a {} value ({})", v, d.enum_name, names);
    }
    if (v < d.min || v > d.max) return fmt::format("{} outside [{}, {}]", v, d.min, d.max);
    return {};
}

std::vector<uint32_t> reserved_bits(const Command& c) {
    std::vector<uint32_t> used(c.payload.size(), 0);
    for (uint16_t i = 0; c.def && i < c.def->n_fields; ++i) {
        const FieldDef& d = c.def->fields[i];
        if (d.word < used.size()) used[d.word] |= Field{d.word, d.lo, d.hi, d.is_signed, i}.mask();
    }
    std::vector<uint32_t> out(c.payload.size());
    for (size_t w = 0; w < c.payload.size(); ++w) out[w] = c.payload[w] & ~used[w];
    return out;
}

Command make_command(uint8_t opcode) {
    Command c;
    c.def = find_cmd(opcode);
    if (!c.def) throw std::invalid_argument(fmt::format("tnpuv2: unknown opcode {:#04x}", opcode));
    c.opcode = opcode;
    c.header = header_word(opcode, c.def->words);
    c.payload.assign(c.def->words, 0);
    return c;
}

void set_field(Command& c, const Field& f, int64_t value) {
    const FieldDef& d = field_def(c, f);
    const int width = f.hi - f.lo + 1;
    const int64_t lo = f.is_signed ? -(int64_t{1} << (width - 1)) : 0;
    const int64_t hi = f.is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
    if (value < lo || value > hi)
        throw std::invalid_argument(fmt::format("tnpuv2 {}.{} = {} does not fit its {} bits [{}, {}]", c.def->name,
                                                d.name, value, width, lo, hi));
    const uint32_t bits =
        static_cast<uint32_t>(static_cast<uint64_t>(value) & (width == 32 ? 0xffffffffu : ((1u << width) - 1u)));
    c.payload.at(f.word) = (c.payload[f.word] & ~f.mask()) | (bits << f.lo);
}

void set_field_f32(Command& c, const Field& f, float value) {
    uint32_t b;
    std::memcpy(&b, &value, sizeof b);
    c.payload.at(f.word) = b;
}

void set_addr(Command& c, const Field& lo, const Field& hi, uint64_t addr) {
    if (addr >> 40)
        throw std::invalid_argument(fmt::format("tnpuv2 {}: address {:#x} beyond 40 bits", c.def->name, addr));
    set_field(c, lo, static_cast<int64_t>(addr & 0xffffffffu));
    set_field(c, hi, static_cast<int64_t>(addr >> 32));
}

void append(std::vector<uint32_t>& words, const Command& c) {
    words.push_back(c.header);
    words.insert(words.end(), c.payload.begin(), c.payload.end());
}

std::vector<uint32_t> stream_header(uint32_t total_words) { return {kMagic, kVersion, total_words, 0}; }

uint32_t check_header(const std::vector<uint32_t>& words, DecodeError& err) {
    if (words.size() < kHeaderWords) {
        err = {fault::TRUNCATED,
               fmt::format("{} words: shorter than the {}-word stream header", words.size(), kHeaderWords)};
        return 0;
    }
    if (words[0] != kMagic) {
        err = {fault::BAD_MAGIC,
               fmt::format("header word 0 = {:#010x}, expected the magic {:#010x} ('TNP2')", words[0], kMagic)};
        return 0;
    }
    if ((words[1] >> 16) != kVersionMajor) {
        err = {fault::BAD_VERSION,
               fmt::format("stream format {}.{}, this core executes {}.{} (major versions must match)", words[1] >> 16,
                           words[1] & 0xffff, kVersionMajor, kVersionMinor)};
        return 0;
    }
    return words[2];
}

Command decode_command(const std::vector<uint32_t>& words, uint32_t pc, DecodeError& err) {
    Command c;
    c.pc = pc;
    if (pc >= words.size()) {
        err = {fault::TRUNCATED, fmt::format("word {}: the stream ends before the next command (no END)", pc)};
        return c;
    }
    c.header = words[pc];
    c.opcode = static_cast<uint8_t>(c.header & 0xff);
    c.def = find_cmd(c.opcode);
    const uint32_t len = c.header >> 16;
    if (!c.def) {
        err = {fault::UNKNOWN_OPCODE,
               fmt::format("word {}: unknown opcode {:#04x} (header {:#010x})", pc, c.opcode, c.header)};
        return c;
    }
    if (len != c.def->words) {
        err = {fault::BAD_LENGTH, fmt::format("word {}: {} with {} payload words, the format defines {}", pc,
                                              c.def->name, len, c.def->words)};
        return c;
    }
    if (static_cast<uint64_t>(pc) + 1 + len > words.size()) {
        err = {fault::TRUNCATED, fmt::format("word {}: {} needs {} payload words, the stream has {} left", pc,
                                             c.def->name, len, words.size() - pc - 1)};
        return c;
    }
    c.payload.assign(words.begin() + pc + 1, words.begin() + pc + 1 + len);
    return c;
}

DecodedStream decode_stream(const std::vector<uint32_t>& words) {
    DecodedStream d;
    d.declared_words = check_header(words, d.error);
    if (d.error) return d;
    d.version = words[1];
    const std::vector<uint32_t> body(
        words.begin(),
        words.begin() + std::min<size_t>(words.size(), std::max<uint32_t>(d.declared_words, kHeaderWords)));
    if (d.declared_words > words.size()) {
        d.error = {fault::TRUNCATED,
                   fmt::format("header declares {} words, the buffer has {}", d.declared_words, words.size())};
        return d;
    }
    uint32_t pc = kHeaderWords;
    while (pc < body.size()) {
        DecodeError e;
        Command c = decode_command(body, pc, e);
        if (e) {
            d.error = e;
            d.error_pc = pc;
            return d;
        }
        pc += 1 + static_cast<uint32_t>(c.payload.size());
        const bool end = c.opcode == op::END;
        d.commands.push_back(std::move(c));
        if (end) {
            d.ended = true;
            return d;
        }
    }
    d.error = {fault::NO_END, fmt::format("word {}: the stream ends without an END command", pc)};
    d.error_pc = pc;
    return d;
}

std::string disasm_command(const Command& c) {
    std::string s = fmt::format("[{:5}] {:<8}", c.pc, c.def ? c.def->name : "?");
    for (uint16_t i = 0; c.def && i < c.def->n_fields; ++i) {
        const FieldDef& d = c.def->fields[i];
        const int64_t v = field_value(c, d);
        if (d.is_float) {
            float f;
            const uint32_t b = static_cast<uint32_t>(v);
            std::memcpy(&f, &b, sizeof f);
            s += fmt::format(" {}={}", d.name, f);
            continue;
        }
        std::string text = std::to_string(v);
        for (uint8_t k = 0; k < d.n_enums; ++k)
            if (d.enums[k].value == v) text = d.enums[k].name;
        if (std::strstr(d.unit, "address")) text = fmt::format("{:#x}", static_cast<uint64_t>(v));
        s += fmt::format(" {}={}", d.name, text);
    }
    return s;
}

}  // namespace hw::tnpuv2
