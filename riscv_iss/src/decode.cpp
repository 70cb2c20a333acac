// SPDX-License-Identifier: MIT
// Builds decode buckets from the generated opcode table and extracts operand fields per format.
#include <algorithm>
#include <bitset>
#include <cstring>

#include "decoder.h"
#include "riscv_iss/hart.h"
#include "riscv_iss_isa_table.inc"

namespace iss {
namespace {

uint32_t bits(uint32_t v, unsigned hi, unsigned lo) { return (v >> lo) & ((1u << (hi - lo + 1)) - 1); }
int32_t sext(uint32_t v, unsigned width) {
    const uint32_t m = 1u << (width - 1);
    return static_cast<int32_t>((v ^ m) - m);
}

bool ext_enabled(Ext e, const IsaConfig& isa) {
    switch (e) {
        case Ext::kM: return isa.m;
        case Ext::kA: return isa.a;
        case Ext::kF: return isa.f;
        case Ext::kC: return isa.c;
        default: return true;
    }
}

// Operand extraction for 32-bit formats (ISA manual Vol. I figure 2.3/2.4).
bool fields32(uint32_t r, Fmt fmt, DecodedInsn& d) {
    d.rd = static_cast<uint8_t>(bits(r, 11, 7));
    d.rs1 = static_cast<uint8_t>(bits(r, 19, 15));
    d.rs2 = static_cast<uint8_t>(bits(r, 24, 20));
    d.rs3 = static_cast<uint8_t>(bits(r, 31, 27));
    d.rm = static_cast<uint8_t>(bits(r, 14, 12));
    d.hz_rs1 = d.rs1;
    d.hz_rs2 = d.rs2;
    switch (fmt) {
        case Fmt::kR: d.imm = 0; break;
        case Fmt::kI:
        case Fmt::kIF:
        case Fmt::kISH:
            d.imm = sext(bits(r, 31, 20), 12);
            d.hz_rs2 = 0;
            break;
        case Fmt::kS:
        case Fmt::kSF:
            d.rd = 0;
            d.imm = sext((bits(r, 31, 25) << 5) | bits(r, 11, 7), 12);
            if (fmt == Fmt::kSF) d.hz_rs2 = 0;
            break;
        case Fmt::kB:
            d.rd = 0;
            d.imm = sext(
                (bits(r, 31, 31) << 12) | (bits(r, 7, 7) << 11) | (bits(r, 30, 25) << 5) | (bits(r, 11, 8) << 1), 13);
            break;
        case Fmt::kU:
            d.imm = static_cast<int32_t>(r & 0xfffff000u);
            d.hz_rs1 = d.hz_rs2 = 0;
            break;
        case Fmt::kJ:
            d.imm = sext(
                (bits(r, 31, 31) << 20) | (bits(r, 19, 12) << 12) | (bits(r, 20, 20) << 11) | (bits(r, 30, 21) << 1),
                21);
            d.hz_rs1 = d.hz_rs2 = 0;
            break;
        case Fmt::kCSR:
            d.imm = static_cast<int32_t>(bits(r, 31, 20));
            d.hz_rs2 = 0;
            if (d.rm & 4) d.hz_rs1 = 0;  // csr*i: rs1 field is an immediate
            break;
        case Fmt::kRF:
        case Fmt::kRF1:
        case Fmt::kR4:
        case Fmt::kRFX:
        case Fmt::kRFXX:
            d.imm = 0;
            d.hz_rs1 = d.hz_rs2 = 0;
            break;
        case Fmt::kRXF:
            d.imm = 0;
            d.hz_rs2 = 0;
            break;
        case Fmt::kNONE:
            d.imm = 0;
            d.hz_rs1 = d.hz_rs2 = 0;
            break;
        default: return false;
    }
    return true;
}

// Operand extraction for compressed formats (ISA manual Vol. I table 16.1 and sections 16.3-16.6).
bool fields16(uint32_t r, Fmt fmt, DecodedInsn& d) {
    const uint8_t rd_full = static_cast<uint8_t>(bits(r, 11, 7));
    const uint8_t rs2_full = static_cast<uint8_t>(bits(r, 6, 2));
    const uint8_t rdp = static_cast<uint8_t>(8 + bits(r, 4, 2));   // rd'/rs2'
    const uint8_t rs1p = static_cast<uint8_t>(8 + bits(r, 9, 7));  // rs1'/rd'
    const int32_t ci_imm = sext((bits(r, 12, 12) << 5) | bits(r, 6, 2), 6);
    const uint32_t cl_off = (bits(r, 12, 10) << 3) | (bits(r, 6, 6) << 2) | (bits(r, 5, 5) << 6);
    const int32_t cj_off =
        sext((bits(r, 12, 12) << 11) | (bits(r, 11, 11) << 4) | (bits(r, 10, 9) << 8) | (bits(r, 8, 8) << 10) |
                 (bits(r, 7, 7) << 6) | (bits(r, 6, 6) << 7) | (bits(r, 5, 3) << 1) | (bits(r, 2, 2) << 5),
             12);
    d.rd = d.rs1 = d.rs2 = d.rs3 = 0;
    d.rm = 0;
    d.imm = 0;
    switch (fmt) {
        case Fmt::kCIW: {
            const uint32_t imm =
                (bits(r, 12, 11) << 4) | (bits(r, 10, 7) << 6) | (bits(r, 6, 6) << 2) | (bits(r, 5, 5) << 3);
            if (imm == 0) return false;  // reserved (and the all-zero word)
            d.rd = rdp;
            d.rs1 = 2;
            d.imm = static_cast<int32_t>(imm);
            break;
        }
        case Fmt::kCL:
        case Fmt::kCLF:
            d.rd = rdp;
            d.rs1 = rs1p;
            d.imm = static_cast<int32_t>(cl_off);
            break;
        case Fmt::kCS:
        case Fmt::kCSF:
            d.rs2 = rdp;
            d.rs1 = rs1p;
            d.imm = static_cast<int32_t>(cl_off);
            break;
        case Fmt::kCI:
            d.rd = d.rs1 = rd_full;
            d.imm = ci_imm;
            break;
        case Fmt::kCLI:
            d.rd = rd_full;
            d.imm = ci_imm;
            break;
        case Fmt::kCJAL:
            d.rd = 1;
            d.imm = cj_off;
            break;
        case Fmt::kCJ: d.imm = cj_off; break;
        case Fmt::kC16SP: {
            const uint32_t imm = (bits(r, 12, 12) << 9) | (bits(r, 6, 6) << 4) | (bits(r, 5, 5) << 6) |
                                 (bits(r, 4, 3) << 7) | (bits(r, 2, 2) << 5);
            if (imm == 0) return false;
            d.rd = d.rs1 = 2;
            d.imm = sext(imm, 10);
            break;
        }
        case Fmt::kCLUI:
            // nzimm = 0 is reserved; rd = x0 with nzimm != 0 is a HINT (ISA manual Vol. I 16.7, table 16.3):
            // it executes as a no-op (the result goes to the x0 sink). rd = x2 is c.addi16sp (more specific).
            if (ci_imm == 0) return false;
            d.rd = rd_full;
            d.imm = static_cast<int32_t>(static_cast<uint32_t>(ci_imm) << 12);
            break;
        case Fmt::kCBSH:
            d.rd = d.rs1 = rs1p;
            d.imm = static_cast<int32_t>(bits(r, 6, 2));
            break;
        case Fmt::kCBI:
            d.rd = d.rs1 = rs1p;
            d.imm = ci_imm;
            break;
        case Fmt::kCA:
            d.rd = d.rs1 = rs1p;
            d.rs2 = rdp;
            break;
        case Fmt::kCB:
            d.rs1 = rs1p;
            d.imm = sext((bits(r, 12, 12) << 8) | (bits(r, 11, 10) << 3) | (bits(r, 6, 5) << 6) | (bits(r, 4, 3) << 1) |
                             (bits(r, 2, 2) << 5),
                         9);
            break;
        case Fmt::kCISH:
            d.rd = d.rs1 = rd_full;
            d.imm = static_cast<int32_t>(bits(r, 6, 2));
            break;
        case Fmt::kCLWSP:
        case Fmt::kCFLWSP:
            if (fmt == Fmt::kCLWSP && rd_full == 0) return false;
            d.rd = rd_full;
            d.rs1 = 2;
            d.imm = static_cast<int32_t>((bits(r, 12, 12) << 5) | (bits(r, 6, 4) << 2) | (bits(r, 3, 2) << 6));
            break;
        case Fmt::kCSWSP:
        case Fmt::kCFSWSP:
            d.rs2 = rs2_full;
            d.rs1 = 2;
            d.imm = static_cast<int32_t>((bits(r, 12, 9) << 2) | (bits(r, 8, 7) << 6));
            break;
        case Fmt::kCJR:
            if (rd_full == 0) return false;
            d.rs1 = rd_full;
            break;
        case Fmt::kCJALR:
            d.rd = 1;
            d.rs1 = rd_full;
            break;
        case Fmt::kCMV:
            d.rd = rd_full;
            d.rs2 = rs2_full;
            break;
        case Fmt::kCADD:
            d.rd = d.rs1 = rd_full;
            d.rs2 = rs2_full;
            break;
        case Fmt::kCNONE: break;
        default: return false;
    }
    const bool f_store = fmt == Fmt::kCSF || fmt == Fmt::kCFSWSP;
    d.hz_rs1 = d.rs1;
    d.hz_rs2 = f_store ? 0 : d.rs2;
    return true;
}

bool writes_x(Fmt f) {
    switch (f) {
        case Fmt::kR:
        case Fmt::kI:
        case Fmt::kISH:
        case Fmt::kU:
        case Fmt::kJ:
        case Fmt::kCSR:
        case Fmt::kRFX:
        case Fmt::kRFXX: return true;
        default: return false;
    }
}

bool is_int_load(Op op) { return op == Op::kLb || op == Op::kLh || op == Op::kLw || op == Op::kLbu || op == Op::kLhu; }

}  // namespace

void ex_illegal(Hart& h, const DecodedInsn& d) { h.raise_illegal(d); }

Decoder::Decoder(const IsaConfig& isa) {
    for (const OpcodeInfo& row : kOpcodes) {
        if (!ext_enabled(row.ext, isa)) continue;
        if (row.ext == Ext::kC &&
            (row.fmt == Fmt::kCLF || row.fmt == Fmt::kCSF || row.fmt == Fmt::kCFLWSP || row.fmt == Fmt::kCFSWSP) &&
            !isa.f)
            continue;
        if ((row.match & 3) != 3) {
            narrow_[(row.match & 3) * 8 + bits(row.match, 15, 13)].push_back(&row);
        } else {
            wide_[bits(row.match, 6, 2)].push_back(&row);
        }
    }
    auto by_specificity = [](const OpcodeInfo* a, const OpcodeInfo* b) {
        return std::bitset<32>(a->mask).count() > std::bitset<32>(b->mask).count();
    };
    for (auto& v : wide_) std::stable_sort(v.begin(), v.end(), by_specificity);
    for (auto& v : narrow_) std::stable_sort(v.begin(), v.end(), by_specificity);
}

bool Decoder::decode(uint32_t raw, DecodedInsn& d) const {
    std::memset(&d, 0, sizeof d);
    const bool wide = (raw & 3) == 3;
    d.raw = wide ? raw : (raw & 0xffffu);
    d.len = wide ? 4 : 2;
    d.fn = &ex_illegal;
    d.op = static_cast<uint16_t>(Op::kCount);
    if (wide && (raw & 0x1c) == 0x1c) return false;  // 48-bit and longer encodings: none supported
    const auto& bucket = wide ? wide_[bits(raw, 6, 2)] : narrow_[(raw & 3) * 8 + bits(raw, 15, 13)];
    for (const OpcodeInfo* row : bucket) {
        if ((d.raw & row->mask) != row->match) continue;
        const bool ok = wide ? fields32(d.raw, row->fmt, d) : fields16(d.raw, row->fmt, d);
        if (!ok) break;
        d.fn = row->fn;
        d.op = static_cast<uint16_t>(row->op);
        d.load_rd = is_int_load(row->exec_op) ? d.rd : 0;
        d.jalr_rs = row->exec_op == Op::kJalr ? d.rs1 : 0;
        if (d.rd == 0 && writes_x(kOpcodes[static_cast<std::size_t>(row->exec_op)].fmt)) d.rd = kXSink;
        return true;
    }
    d.rd = d.rs1 = d.rs2 = d.hz_rs1 = d.hz_rs2 = 0;
    d.fn = &ex_illegal;
    return false;
}

const OpcodeInfo& Decoder::info(uint16_t op) { return kOpcodes[op]; }

std::size_t Decoder::table_size() { return std::size(kOpcodes); }

const OpcodeInfo* Decoder::find(const char* name) {
    for (const OpcodeInfo& row : kOpcodes)
        if (std::strcmp(row.name, name) == 0) return &row;
    return nullptr;
}

}  // namespace iss
