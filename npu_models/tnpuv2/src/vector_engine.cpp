// SPDX-License-Identifier: MIT
// The vector engine's integer paths: ELTWISE (add, mul, max, min, per-channel affine, clamp with
// requantization; broadcast through zero strides) and LUT (direct tables indexed by the code).
#include <algorithm>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace EW = hw::tnpuv2::ELTWISE;
namespace LU = hw::tnpuv2::LUT;
namespace OP = E::ELT_OP;

bool binary(uint32_t op) { return op == OP::ADD || op == OP::MUL || op == OP::MAX || op == OP::MIN; }

Fault eltwise_check(const Command& c, const State& s, uint32_t op) {
    for (int slot : {0, 2})
        if (Fault f = need_slot(c, s, slot)) return f;
    if (binary(op))
        if (Fault f = need_slot(c, s, 1)) return f;
    const TensorDesc& y = ofm(s);
    for (int slot : {0, 1, 2}) {
        if (slot == 1 && !binary(op)) continue;
        const TensorDesc& t = s.slot[static_cast<size_t>(slot)];
        if (t.is_float()) return desc_fault(c, slot, "is F32; ELTWISE is the integer path (VECTOR takes F32)");
        if (t.dims != y.dims)
            return desc_fault(c, slot,
                              fmt::format("{} must have the OFM's dims (broadcast with zero strides)", t.text()));
    }
    return {};
}

int lanes_factor(const TensorDesc& t) { return t.bits > 8 ? 2 : 1; }

}  // namespace

OpPlan plan_eltwise(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "vector";
    const uint32_t op = static_cast<uint32_t>(field(c, EW::OP));
    if ((pl.fault = eltwise_check(c, s, op))) return pl;
    static const char* names[6] = {"add", "mul", "max", "min", "affine", "clamp"};
    pl.kind = fmt::format("eltwise {} a{}", names[op], ifm(s).bits);
    const uint64_t n = static_cast<uint64_t>(ofm(s).numel());
    const int f = std::max(lanes_factor(ifm(s)), lanes_factor(ofm(s)));
    pl.compute_cycles =
        ceil_div(n * static_cast<uint64_t>(f), static_cast<uint64_t>(p.npu.vector_int_elems_per_cycle.value));
    add_reads(pl, ifm(s));
    if (binary(op)) add_reads(pl, ifm2(s));
    if (op == OP::AFFINE) {
        const uint64_t entries = static_cast<uint64_t>(field(c, EW::TABLE_ENTRIES));
        if (entries != static_cast<uint64_t>(ofm(s).dims[5])) {
            pl.fault = field_fault(c, EW::TABLE_ENTRIES,
                                   fmt::format("AFFINE needs one record per channel ({})", ofm(s).dims[5]));
            return pl;
        }
        pl.sram_bytes = entries * kQRecordBytes;
        for (const Run& r : blob_runs(field_addr(c, EW::TABLE_ADDR_LO, EW::TABLE_ADDR_HI), entries * kQRecordBytes))
            pl.reads.push_back(r);
    }
    add_writes(pl, ofm(s), c);
    return pl;
}

Fault exec_eltwise(const Command& c, const State& s, MemView& m) {
    const uint32_t op = static_cast<uint32_t>(field(c, EW::OP));
    if (Fault f = eltwise_check(c, s, op)) return f;
    const TensorDesc &a = ifm(s), &b = ifm2(s), &y = ofm(s);
    uint64_t bad = 0;
    std::vector<int64_t> av, bv;
    if (!load_codes(a, m, av, &bad)) return dma_read_fault(c, bad);
    if (binary(op) && !load_codes(b, m, bv, &bad)) return dma_read_fault(c, bad);
    std::vector<uint8_t> table;
    if (op == OP::AFFINE && !read_blob(m, field_addr(c, EW::TABLE_ADDR_LO, EW::TABLE_ADDR_HI),
                                       static_cast<uint64_t>(y.dims[5]) * kQRecordBytes, table, &bad))
        return dma_read_fault(c, bad);
    const int64_t ma = field(c, EW::MULT_A), mb = field(c, EW::MULT_B);
    const int sh = static_cast<int>(field(c, EW::SHIFT));
    const int64_t lo = std::max<int64_t>(field(c, EW::ACT_MIN), y.grid_lo());
    const int64_t hi = std::min<int64_t>(field(c, EW::ACT_MAX), y.grid_hi());
    const auto rs = [&](int64_t v, int64_t mult, int shift) {
        return num::mul_shift_wide(v, mult, shift, num::Rounding::HalfToEven);
    };
    std::vector<int64_t> out(av.size());
    const int64_t cdim = y.dims[5];
    for (size_t i = 0; i < av.size(); ++i) {
        const int64_t xa = av[i] - a.zp;
        const int64_t xb = binary(op) ? bv[i] - b.zp : 0;
        int64_t v = 0;
        switch (op) {
            case OP::ADD:
                v = rs(xa * ma + xb * mb, 1, sh);
                break;
            case OP::MUL:
                v = rs(xa * xb, ma, sh);
                break;
            case OP::MAX:
                v = std::max(rs(xa, ma, sh), rs(xb, mb, sh));
                break;
            case OP::MIN:
                v = std::min(rs(xa, ma, sh), rs(xb, mb, sh));
                break;
            case OP::AFFINE: {
                const QRecord r = qrecord_at(table, static_cast<size_t>(static_cast<int64_t>(i) % cdim));
                v = rs(xa * r.mult + r.bias, 1, r.shift);
                break;
            }
            default:
                v = rs(xa, ma, sh);
                break;  // CLAMP
        }
        v += y.zp;
        out[i] = v < lo ? lo : (v > hi ? hi : v);
    }
    if (!store_codes(y, m, out, &bad)) return dma_write_fault(c, bad);
    return {};
}

namespace {

int lut_entry_bytes(uint32_t f) {
    return f == E::LUT_FORMAT::F32 ? 4 : (f == E::LUT_FORMAT::S16 || f == E::LUT_FORMAT::U16 ? 2 : 1);
}

Fault lut_check(const Command& c, const State& s, const hw::tnpuv2::Profile* p) {
    for (int slot : {0, 2})
        if (Fault f = need_slot(c, s, slot)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    if (x.is_float()) return desc_fault(c, 0, "is F32: a table is indexed by integer codes");
    if (x.dims != y.dims) return desc_fault(c, 2, fmt::format("{} must have the IFM's dims {}", y.text(), x.text()));
    const uint32_t ef = static_cast<uint32_t>(field(c, LU::ENTRY_FORMAT));
    if ((ef == E::LUT_FORMAT::F32) != y.is_float() || (!y.is_float() && ef != y.format))
        return field_fault(c, LU::ENTRY_FORMAT, fmt::format("the OFM is {}", format_name(y.format)));
    const uint64_t want = uint64_t{1} << x.bits;
    if (static_cast<uint64_t>(field(c, LU::TABLE_ENTRIES)) != want)
        return field_fault(c, LU::TABLE_ENTRIES, fmt::format("a {}-bit IFM indexes {} entries", x.bits, want));
    if (p && want * static_cast<uint64_t>(lut_entry_bytes(ef)) > p->npu.lut_sram_bytes.value)
        return make_fault(
            fault::SRAM_OVERFLOW, static_cast<uint32_t>(want * static_cast<uint64_t>(lut_entry_bytes(ef))),
            fmt::format("LUT of {} entries x {} bytes exceeds the {}-byte table SRAM (npu.lut_sram_bytes)", want,
                        lut_entry_bytes(ef), p->npu.lut_sram_bytes.value));
    return {};
}

}  // namespace

OpPlan plan_lut(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "vector";
    if ((pl.fault = lut_check(c, s, &p))) return pl;
    const uint32_t ef = static_cast<uint32_t>(field(c, LU::ENTRY_FORMAT));
    const uint64_t bytes = (uint64_t{1} << ifm(s).bits) * static_cast<uint64_t>(lut_entry_bytes(ef));
    pl.kind = fmt::format("lut a{} ({} entries)", ifm(s).bits, uint64_t{1} << ifm(s).bits);
    pl.sram_bytes = bytes;
    pl.compute_cycles =
        ceil_div(static_cast<uint64_t>(ofm(s).numel()), static_cast<uint64_t>(p.npu.lut_elems_per_cycle.value));
    add_reads(pl, ifm(s));
    for (const Run& r : blob_runs(field_addr(c, LU::TABLE_ADDR_LO, LU::TABLE_ADDR_HI), bytes)) pl.reads.push_back(r);
    add_writes(pl, ofm(s), c);
    return pl;
}

Fault exec_lut(const Command& c, const State& s, MemView& m) {
    if (Fault f = lut_check(c, s, nullptr)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    const uint32_t ef = static_cast<uint32_t>(field(c, LU::ENTRY_FORMAT));
    const int eb = lut_entry_bytes(ef);
    const uint64_t entries = uint64_t{1} << x.bits;
    uint64_t bad = 0;
    std::vector<uint8_t> table;
    if (!read_blob(m, field_addr(c, LU::TABLE_ADDR_LO, LU::TABLE_ADDR_HI), entries * static_cast<uint64_t>(eb), table,
                   &bad))
        return dma_read_fault(c, bad);
    std::vector<int64_t> xv;
    if (!load_codes(x, m, xv, &bad)) return dma_read_fault(c, bad);
    const bool sgn = ef == E::LUT_FORMAT::S8 || ef == E::LUT_FORMAT::S16;
    std::vector<int64_t> q(y.is_float() ? 0 : xv.size());
    std::vector<float> f(y.is_float() ? xv.size() : 0);
    for (size_t i = 0; i < xv.size(); ++i) {
        // A code outside the IFM grid (the descriptor's BITS narrower than stored data) is clamped.
        const int64_t k =
            std::min<int64_t>(static_cast<int64_t>(entries) - 1, std::max<int64_t>(0, xv[i] - x.grid_lo()));
        const uint8_t* e = table.data() + k * eb;
        if (y.is_float()) {
            std::memcpy(&f[i], e, 4);
        } else if (eb == 1) {
            q[i] = sgn ? int64_t{static_cast<int8_t>(e[0])} : int64_t{e[0]};
        } else {
            uint16_t u;
            std::memcpy(&u, e, 2);
            q[i] = sgn ? int64_t{static_cast<int16_t>(u)} : int64_t{u};
        }
    }
    const bool ok = y.is_float() ? store_floats(y, m, f, &bad) : store_codes(y, m, q, &bad);
    if (!ok) return dma_write_fault(c, bad);
    return {};
}

}  // namespace npu::tnpuv2::detail
