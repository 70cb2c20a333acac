// SPDX-License-Identifier: MIT
// Host boundary of tnpuv2 tensors: IR (NCHW / row-major, int8/int16/float containers) to the
// device image (NHWC for 4-D feature maps, 4-bit data packed two per byte along the innermost
// memory dim, low nibble first) and back.
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "compiler_internal.h"

namespace drv::tnpuv2 {

namespace {

namespace F = hw::tnpuv2::enums::FORMAT;

bool is4(uint32_t f) { return f == F::S4 || f == F::U4; }

int64_t get(const num::Tensor& x, size_t i) {
    switch (x.dtype()) {
        case num::DType::I8:
            return x.data<int8_t>()[i];
        case num::DType::U8:
            return x.data<uint8_t>()[i];
        case num::DType::I16:
            return x.data<int16_t>()[i];
        case num::DType::U16:
            return x.data<uint16_t>()[i];
        case num::DType::I32:
            return x.data<int32_t>()[i];
        case num::DType::I64:
            return x.data<int64_t>()[i];
        case num::DType::Bool:
            return x.data<uint8_t>()[i];
        default:
            return 0;
    }
}

void put(num::Tensor& x, size_t i, int64_t v) {
    switch (x.dtype()) {
        case num::DType::I8:
            x.data<int8_t>()[i] = static_cast<int8_t>(v);
            break;
        case num::DType::U8:
            x.data<uint8_t>()[i] = static_cast<uint8_t>(v);
            break;
        case num::DType::I16:
            x.data<int16_t>()[i] = static_cast<int16_t>(v);
            break;
        case num::DType::U16:
            x.data<uint16_t>()[i] = static_cast<uint16_t>(v);
            break;
        case num::DType::I32:
            x.data<int32_t>()[i] = static_cast<int32_t>(v);
            break;
        case num::DType::I64:
            x.data<int64_t>()[i] = v;
            break;
        default:
            break;
    }
}

/// Calls f(linear IR index, byte offset, nibble) for every element.
template <typename Fn>
void walk(const DeviceTensor& t, Fn f) {
    const size_t r = t.shape.size();
    std::vector<int64_t> idx(r, 0);
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    // The packed (4-bit) dim is the one with stride 0.
    int packed = -1;
    if (is4(t.format))
        for (size_t d = 0; d < r; ++d)
            if (t.strides[d] == 0) packed = static_cast<int>(d);
    for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        int nib = 0;
        for (size_t d = 0; d < r; ++d) {
            if (static_cast<int>(d) == packed) {
                off += idx[d] / 2;
                nib = static_cast<int>(idx[d] & 1);
            } else {
                off += idx[d] * t.strides[d];
            }
        }
        f(static_cast<size_t>(i), off, nib);
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < t.shape[d]) break;
            idx[d] = 0;
        }
    }
}

}  // namespace

std::vector<uint8_t> to_device(const DeviceTensor& t, const num::Tensor& x) {
    if (x.numel() != static_cast<size_t>([&] {
            int64_t n = 1;
            for (int64_t d : t.shape) n *= d;
            return n;
        }()))
        throw std::invalid_argument(
            fmt::format("tensor '{}': {} values for shape {}", t.name, x.numel(), ir::shape_to_string(t.shape)));
    std::vector<uint8_t> img(t.bytes, 0);
    const bool sgn = t.format == F::S4 || t.format == F::S8 || t.format == F::S16 || t.format == F::S32;
    const int64_t lo = t.format == F::F32 ? 0 : (sgn ? -(int64_t{1} << (t.bits - 1)) : 0);
    const int64_t hi = t.format == F::F32 ? 0 : (sgn ? (int64_t{1} << (t.bits - 1)) - 1 : (int64_t{1} << t.bits) - 1);
    walk(t, [&](size_t i, int64_t off, int nib) {
        uint8_t* p = img.data() + off;
        if (t.format == F::F32) {
            std::memcpy(p, x.data<float>() + i, 4);
            return;
        }
        const int64_t v = std::min(hi, std::max(lo, get(x, i)));
        if (is4(t.format)) {
            p[0] = static_cast<uint8_t>(p[0] | ((static_cast<uint8_t>(v) & 0xf) << (nib * 4)));
        } else if (t.format == F::S8 || t.format == F::U8) {
            p[0] = static_cast<uint8_t>(v);
        } else if (t.format == F::S16 || t.format == F::U16) {
            const uint16_t u = static_cast<uint16_t>(v);
            std::memcpy(p, &u, 2);
        } else {
            const uint32_t u = static_cast<uint32_t>(v);
            std::memcpy(p, &u, 4);
        }
    });
    return img;
}

num::Tensor from_device(const DeviceTensor& t, const std::vector<uint8_t>& img) {
    num::Tensor x(t.dtype, t.shape);
    walk(t, [&](size_t i, int64_t off, int nib) {
        const uint8_t* p = img.data() + off;
        switch (t.format) {
            case F::F32:
                std::memcpy(x.data<float>() + i, p, 4);
                break;
            case F::S4: {
                const int v = (p[0] >> (nib * 4)) & 0xf;
                put(x, i, v >= 8 ? v - 16 : v);
                break;
            }
            case F::U4:
                put(x, i, (p[0] >> (nib * 4)) & 0xf);
                break;
            case F::S8:
                put(x, i, static_cast<int8_t>(p[0]));
                break;
            case F::U8:
                put(x, i, p[0]);
                break;
            case F::S16: {
                int16_t v;
                std::memcpy(&v, p, 2);
                put(x, i, v);
                break;
            }
            case F::U16: {
                uint16_t v;
                std::memcpy(&v, p, 2);
                put(x, i, v);
                break;
            }
            default: {
                int32_t v;
                std::memcpy(&v, p, 4);
                put(x, i, v);
                break;
            }
        }
    });
    return x;
}

}  // namespace drv::tnpuv2
