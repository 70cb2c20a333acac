// SPDX-License-Identifier: MIT
#include "npu/rknpu/cube.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "numerics/half.h"
#include "numerics/requant.h"

namespace npu::rknpu {

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::Int8: return "int8";
        case Precision::Int16: return "int16";
        case Precision::Fp16: return "fp16";
        case Precision::Int4: return "int4";
        case Precision::Int32: return "int32";
        case Precision::Fp32: return "fp32";
    }
    return "?";
}

uint16_t fp32_to_fp16(float f) { return num::fp32_to_fp16(f); }
float fp16_to_fp32(uint16_t h) { return num::fp16_to_fp32(h); }

Cube Cube::make(uint32_t w_, uint32_t h_, uint32_t c_, bool is_float_) {
    Cube r;
    r.w = w_, r.h = h_, r.c = c_, r.is_float = is_float_;
    if (is_float_) r.f.assign(r.size(), 0.0f);
    else r.i.assign(r.size(), 0);
    return r;
}

uint64_t cube_bytes(uint32_t w, uint32_t h, uint32_t c, Precision p, uint32_t atom) {
    const uint64_t c2 = c2_of(p, atom);
    return (c + c2 - 1) / c2 * surface_bytes(w, h, atom);
}

namespace {
uint64_t elem_offset(const Cube& q, uint32_t ch, uint32_t y, uint32_t x, Precision p, uint32_t atom) {
    const uint32_t c2 = c2_of(p, atom);
    const uint64_t in_atom = p == Precision::Int4 ? (ch % c2) / 2 : (ch % c2) * elem_bytes(p);  // int4: nibble ch & 1
    return (ch / c2) * surface_bytes(q.w, q.h, atom) + (static_cast<uint64_t>(y) * q.w + x) * atom + in_atom;
}
}  // namespace

Cube unpack_cube(const std::vector<uint8_t>& img, uint32_t w, uint32_t h, uint32_t c, Precision p, uint32_t atom) {
    Cube q = Cube::make(w, h, c, is_float(p));
    if (img.size() < cube_bytes(w, h, c, p, atom)) throw std::logic_error("unpack_cube: image smaller than the cube");
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                const uint8_t* b = img.data() + elem_offset(q, ch, y, x, p, atom);
                const size_t k = q.idx(ch, y, x);
                switch (p) {
                    case Precision::Int8: q.i[k] = static_cast<int8_t>(b[0]); break;
                    case Precision::Int16: q.i[k] = static_cast<int16_t>(static_cast<uint16_t>(b[0] | (b[1] << 8))); break;
                    case Precision::Fp16: q.f[k] = fp16_to_fp32(static_cast<uint16_t>(b[0] | (b[1] << 8))); break;
                    case Precision::Int4:
                        q.i[k] = (ch & 1) ? static_cast<int8_t>(b[0]) >> 4 : static_cast<int8_t>(static_cast<uint8_t>(b[0] << 4)) >> 4;
                        break;
                    case Precision::Int32: {
                        int32_t v = 0;
                        std::memcpy(&v, b, 4);
                        q.i[k] = v;
                        break;
                    }
                    case Precision::Fp32: std::memcpy(&q.f[k], b, 4); break;
                }
            }
    return q;
}

std::vector<uint8_t> pack_cube(const Cube& q, Precision p, uint32_t atom) {
    std::vector<uint8_t> img(cube_bytes(q.w, q.h, q.c, p, atom), 0);
    for (uint32_t ch = 0; ch < q.c; ++ch)
        for (uint32_t y = 0; y < q.h; ++y)
            for (uint32_t x = 0; x < q.w; ++x) {
                uint8_t* b = img.data() + elem_offset(q, ch, y, x, p, atom);
                const size_t k = q.idx(ch, y, x);
                uint16_t v16 = 0;
                switch (p) {
                    case Precision::Int8:
                        b[0] = static_cast<uint8_t>(num::saturate_i8(q.is_float ? std::llround(q.f[k]) : q.i[k]));
                        continue;
                    case Precision::Int16:
                        v16 = static_cast<uint16_t>(
                            num::saturate(q.is_float ? std::llround(q.f[k]) : q.i[k], INT16_MIN, INT16_MAX));
                        break;
                    case Precision::Fp16:
                        v16 = fp32_to_fp16(q.is_float ? q.f[k] : static_cast<float>(q.i[k]));
                        break;
                    case Precision::Int4: {
                        const auto n = static_cast<uint8_t>(num::saturate(q.is_float ? std::llround(q.f[k]) : q.i[k], -8, 7) & 0xf);
                        b[0] = (ch & 1) ? static_cast<uint8_t>((b[0] & 0x0f) | (n << 4)) : static_cast<uint8_t>((b[0] & 0xf0) | n);
                        continue;
                    }
                    case Precision::Int32: {
                        const auto v = static_cast<int32_t>(
                            num::saturate(q.is_float ? std::llround(q.f[k]) : q.i[k], INT32_MIN, INT32_MAX));
                        std::memcpy(b, &v, 4);
                        continue;
                    }
                    case Precision::Fp32: {
                        const float v = q.is_float ? q.f[k] : static_cast<float>(q.i[k]);
                        std::memcpy(b, &v, 4);
                        continue;
                    }
                }
                b[0] = static_cast<uint8_t>(v16 & 0xff);
                b[1] = static_cast<uint8_t>(v16 >> 8);
            }
    return img;
}

}  // namespace npu::rknpu
