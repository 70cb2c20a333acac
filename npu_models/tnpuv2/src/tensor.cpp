// SPDX-License-Identifier: MIT
// tnpuv2 tensor descriptors and element access.
#include "npu/tnpuv2/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace npu::tnpuv2 {

namespace F = hw::tnpuv2::enums::FORMAT;
namespace T = hw::tnpuv2::TENSOR;

int format_bits(uint32_t format) {
    switch (format) {
        case F::S4:
        case F::U4:
            return 4;
        case F::S8:
        case F::U8:
            return 8;
        case F::S16:
        case F::U16:
            return 16;
        default:
            return 32;
    }
}

const char* format_name(uint32_t format) {
    for (const auto& e : hw::tnpuv2::enums::kFORMAT)
        if (static_cast<uint32_t>(e.value) == format) return e.name;
    return "?";
}

bool TensorDesc::is_float() const { return format == F::F32; }
bool TensorDesc::is_signed() const {
    return format == F::S4 || format == F::S8 || format == F::S16 || format == F::S32;
}
bool TensorDesc::is_4bit() const { return format == F::S4 || format == F::U4; }
int TensorDesc::elem_bits() const { return format_bits(format); }

int64_t TensorDesc::numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

int64_t TensorDesc::grid_lo() const { return is_signed() ? -(int64_t{1} << (bits - 1)) : 0; }
int64_t TensorDesc::grid_hi() const { return is_signed() ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1; }

int64_t TensorDesc::offset_of(const std::array<int64_t, 6>& idx, int* nibble) const {
    int64_t off = 0;
    for (int d = 0; d < 5; ++d) off += idx[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
    if (is_4bit()) {
        off += idx[5] / 2;
        if (nibble) *nibble = static_cast<int>(idx[5] & 1);
    } else {
        off += idx[5] * strides[5];
    }
    return off;
}

std::string TensorDesc::text() const {
    std::string d;
    for (int i = 6 - std::max(1, rank); i < 6; ++i)
        d += fmt::format("{}{}", d.empty() ? "" : "x", dims[static_cast<size_t>(i)]);
    return fmt::format("{}{}[{}]@{:#x}{}", format_name(format),
                       bits != format_bits(format) && !is_float() ? fmt::format("/{}b", bits) : "", d, addr,
                       zp ? fmt::format(" zp {}", zp) : "");
}

TensorDesc decode_tensor(const hw::tnpuv2::Command& c) {
    using hw::tnpuv2::field;
    TensorDesc t;
    t.valid = true;
    t.format = static_cast<uint32_t>(field(c, T::FORMAT));
    t.bits = static_cast<int>(field(c, T::BITS));
    if (t.is_float()) t.bits = 32;
    t.rank = static_cast<int>(field(c, T::RANK));
    t.zp = static_cast<int32_t>(field(c, T::ZERO_POINT));
    t.addr = hw::tnpuv2::field_addr(c, T::ADDR_LO, T::ADDR_HI);
    const hw::tnpuv2::Field dims[6] = {T::DIM0, T::DIM1, T::DIM2, T::DIM3, T::DIM4, T::DIM5};
    const hw::tnpuv2::Field strides[6] = {T::STRIDE0, T::STRIDE1, T::STRIDE2, T::STRIDE3, T::STRIDE4, T::STRIDE5};
    for (size_t i = 0; i < 6; ++i) {
        t.dims[i] = field(c, dims[i]);
        t.strides[i] = field(c, strides[i]);
    }
    return t;
}

int tensor_slot(const hw::tnpuv2::Command& c) { return static_cast<int>(hw::tnpuv2::field(c, T::SLOT)); }

std::string check_tensor(const TensorDesc& t) {
    if (!t.is_float() && t.bits < 2) return fmt::format("BITS {}: integer grids are 2..20 bits", t.bits);
    if (!t.is_float() && t.bits > t.elem_bits() && !(t.format == F::S32 && t.bits <= 20))
        return fmt::format("BITS {} wider than the {}-bit format {}", t.bits, t.elem_bits(), format_name(t.format));
    if (t.format == F::S32 && t.bits > 20) return fmt::format("BITS {}: S32 carries grids of at most 20 bits", t.bits);
    if (t.is_4bit() && t.strides[5] != 0) return "4-bit formats pack DIM5: STRIDE5 must be 0";
    if (!t.is_float() && (t.zp < t.grid_lo() || t.zp > t.grid_hi()))
        return fmt::format("zero point {} outside the {}-bit grid [{}, {}]", t.zp, t.bits, t.grid_lo(), t.grid_hi());
    return {};
}

std::vector<Run> tensor_runs(const TensorDesc& t, bool* overlap) {
    std::vector<Run> runs;
    const int64_t eb = t.elem_bits() / 8;
    // Innermost dim as one run when it is contiguous (packed nibbles always are).
    const bool inner_contig = t.is_4bit() || t.strides[5] == eb;
    const int64_t row_bytes = t.is_4bit() ? (t.dims[5] + 1) / 2 : t.dims[5] * eb;
    std::array<int64_t, 6> outer = t.dims;
    outer[5] = 1;  // the innermost dim: one run, or one run per element below
    for_each_index(outer, [&](int64_t, const std::array<int64_t, 6>& idx) {
        const int64_t base = t.offset_of(idx);
        if (inner_contig) {
            runs.push_back({t.addr + static_cast<uint64_t>(base), static_cast<uint64_t>(row_bytes)});
        } else {
            for (int64_t k = 0; k < t.dims[5]; ++k)
                runs.push_back({t.addr + static_cast<uint64_t>(base + k * t.strides[5]), static_cast<uint64_t>(eb)});
        }
    });
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.addr < b.addr; });
    std::vector<Run> merged;
    bool ov = false;
    for (const Run& r : runs) {
        if (!merged.empty() && r.addr <= merged.back().addr + merged.back().bytes) {
            if (r.addr < merged.back().addr + merged.back().bytes) ov = true;
            merged.back().bytes = std::max(merged.back().bytes, r.addr + r.bytes - merged.back().addr);
        } else {
            merged.push_back(r);
        }
    }
    if (overlap) *overlap = ov;
    return merged;
}

uint64_t runs_bytes(const std::vector<Run>& runs) {
    uint64_t n = 0;
    for (const Run& r : runs) n += r.bytes;
    return n;
}

namespace {

int64_t decode_elem(const TensorDesc& t, const uint8_t* p, int nibble) {
    switch (t.format) {
        case F::S4: {
            const int v = nibble ? (p[0] >> 4) : (p[0] & 0xf);
            return v >= 8 ? v - 16 : v;
        }
        case F::U4:
            return nibble ? (p[0] >> 4) : (p[0] & 0xf);
        case F::S8:
            return static_cast<int8_t>(p[0]);
        case F::U8:
            return p[0];
        case F::S16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case F::U16: {
            uint16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        default: {
            int32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
    }
}

template <typename Row>
bool walk_rows(const TensorDesc& t, MemView& m, bool write, uint64_t* bad, Row row) {
    const int64_t eb = std::max(1, t.elem_bits() / 8);
    const bool contig = t.is_4bit() || t.strides[5] == eb;
    const int64_t row_bytes = t.is_4bit() ? (t.dims[5] + 1) / 2 : t.dims[5] * eb;
    std::vector<uint8_t> buf(static_cast<size_t>(contig ? row_bytes : eb * t.dims[5]));
    std::array<int64_t, 6> outer = t.dims;
    outer[5] = 1;
    bool ok = true;
    int64_t r = 0;
    for_each_index(outer, [&](int64_t, const std::array<int64_t, 6>& idx) {
        if (!ok) return;
        const uint64_t base = t.addr + static_cast<uint64_t>(t.offset_of(idx));
        auto io = [&](uint64_t a, uint8_t* p, size_t n) {
            const bool good = write ? m.write(a, p, n) : m.read(a, p, n);
            if (!good && ok) {
                ok = false;
                if (bad) *bad = a;
            }
        };
        if (!write) {
            if (contig)
                io(base, buf.data(), buf.size());
            else
                for (int64_t k = 0; k < t.dims[5]; ++k)
                    io(base + static_cast<uint64_t>(k * t.strides[5]), buf.data() + k * eb, static_cast<size_t>(eb));
        }
        row(r++, buf.data());
        if (write) {
            if (contig)
                io(base, buf.data(), buf.size());
            else
                for (int64_t k = 0; k < t.dims[5]; ++k)
                    io(base + static_cast<uint64_t>(k * t.strides[5]), buf.data() + k * eb, static_cast<size_t>(eb));
        }
    });
    return ok;
}

}  // namespace

bool load_codes(const TensorDesc& t, MemView& m, std::vector<int64_t>& out, uint64_t* bad_addr) {
    out.assign(static_cast<size_t>(t.numel()), 0);
    const int64_t eb = std::max(1, t.elem_bits() / 8);
    const int64_t w = t.dims[5];
    return walk_rows(t, m, false, bad_addr, [&](int64_t r, const uint8_t* p) {
        int64_t* o = out.data() + r * w;
        for (int64_t k = 0; k < w; ++k)
            o[k] = t.is_4bit() ? decode_elem(t, p + k / 2, static_cast<int>(k & 1)) : decode_elem(t, p + k * eb, 0);
    });
}

bool load_floats(const TensorDesc& t, MemView& m, std::vector<float>& out, uint64_t* bad_addr) {
    out.assign(static_cast<size_t>(t.numel()), 0.0f);
    const int64_t w = t.dims[5];
    return walk_rows(t, m, false, bad_addr, [&](int64_t r, const uint8_t* p) {
        std::memcpy(out.data() + r * w, p, static_cast<size_t>(w) * 4);
    });
}

bool store_codes(const TensorDesc& t, MemView& m, const std::vector<int64_t>& v, uint64_t* bad_addr) {
    const int64_t eb = std::max(1, t.elem_bits() / 8);
    const int64_t w = t.dims[5];
    const int64_t lo = t.grid_lo(), hi = t.grid_hi();
    return walk_rows(t, m, true, bad_addr, [&](int64_t r, uint8_t* p) {
        const int64_t* s = v.data() + r * w;
        if (t.is_4bit()) std::memset(p, 0, static_cast<size_t>((w + 1) / 2));
        for (int64_t k = 0; k < w; ++k) {
            const int64_t q = std::min(hi, std::max(lo, s[k]));
            if (t.is_4bit()) {
                p[k / 2] = static_cast<uint8_t>(p[k / 2] | ((static_cast<uint8_t>(q) & 0xf) << ((k & 1) * 4)));
            } else if (eb == 1) {
                p[k] = static_cast<uint8_t>(q);
            } else if (eb == 2) {
                const uint16_t x = static_cast<uint16_t>(q);
                std::memcpy(p + k * 2, &x, 2);
            } else {
                const uint32_t x = static_cast<uint32_t>(q);
                std::memcpy(p + k * 4, &x, 4);
            }
        }
    });
}

bool store_floats(const TensorDesc& t, MemView& m, const std::vector<float>& v, uint64_t* bad_addr) {
    const int64_t w = t.dims[5];
    return walk_rows(t, m, true, bad_addr,
                     [&](int64_t r, uint8_t* p) { std::memcpy(p, v.data() + r * w, static_cast<size_t>(w) * 4); });
}

}  // namespace npu::tnpuv2
