// SPDX-License-Identifier: MIT
// Host boundary conversion between an IR tensor (NCHW, batch 1, int8 or uint8) and its device
// image (NC1HWC2 with the DeviceTensor's strides, int8; uint8 shifted by -128; a float32 tensor
// of the fp16 path as fp16 elements, little-endian). The image covers
// [offset, offset + bytes) of the arena: C1 surfaces of surf_stride bytes each (a channel slice
// of a concat buffer is a contiguous run of the parent's surfaces).
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "compiler/rknpu/model.h"
#include "numerics/half.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace drv::rknpu {

namespace {

void check(const DeviceTensor& t, size_t numel, const char* what) {
    const size_t want = static_cast<size_t>(t.c) * t.h * t.w;
    if (numel != want)
        throw std::invalid_argument(fmt::format("{} '{}': {} values, the device tensor holds {} ({}x{}x{})", what,
                                                t.name, numel, want, t.c, t.h, t.w));
    if (t.c2 <= 0 || t.line_stride < static_cast<uint32_t>(t.w * t.c2 * t.elem_bytes()) ||
        t.surf_stride < t.line_stride * static_cast<uint32_t>(t.h))
        throw std::invalid_argument(fmt::format("{} '{}': inconsistent strides", what, t.name));
}

#if defined(__x86_64__) && defined(__GNUC__)
/// One row of an image input with C <= 7 channels into 16-byte atoms (the network input of a vision
/// model: 3 channels): 16 pixels per step, each channel's 16 bytes and 16 padding bytes in two
/// registers, and one VPERMT2B per 4 atoms. Returns the pixels written (a multiple of 16).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int row_small_c_avx512(uint8_t* row, const uint8_t* src,
                                                                             size_t hw, int c, int w, uint8_t flip,
                                                                             uint8_t pad) {
    alignas(64) uint8_t idx[4][64];
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 4; ++j)
            for (int ch = 0; ch < 16; ++ch)
                idx[k][16 * j + ch] = static_cast<uint8_t>(ch < c ? ch * 16 + 4 * k + j : 112 + ch);
    const __m512i i0 = _mm512_load_si512(idx[0]), i1 = _mm512_load_si512(idx[1]), i2 = _mm512_load_si512(idx[2]),
                  i3 = _mm512_load_si512(idx[3]);
    const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
    int x = 0;
    for (; x + 16 <= w; x += 16) {
        alignas(64) uint8_t lanes[128];
        std::memset(lanes, pad, sizeof lanes);  // lanes of absent channels are never picked; defined anyway
        for (int ch = 0; ch < c; ++ch)
            _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 16 * ch),
                            _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + ch * hw + x)), f));
        const __m512i a = _mm512_load_si512(lanes), b = _mm512_load_si512(lanes + 64);
        uint8_t* o = row + static_cast<size_t>(x) * 16;
        _mm512_storeu_si512(o, _mm512_permutex2var_epi8(a, i0, b));
        _mm512_storeu_si512(o + 64, _mm512_permutex2var_epi8(a, i1, b));
        _mm512_storeu_si512(o + 128, _mm512_permutex2var_epi8(a, i2, b));
        _mm512_storeu_si512(o + 192, _mm512_permutex2var_epi8(a, i3, b));
    }
    return x;
}
#endif

/// fp16 device image of a float32 tensor: padding channels 0 (+0.0).
std::vector<uint8_t> to_device_fp16(const DeviceTensor& t, const num::Tensor& x) {
    if (x.dtype() != num::DType::F32)
        throw std::invalid_argument(
            fmt::format("to_device '{}': {} tensor, the model has float32 (fp16 on the NPU)", t.name,
                        num::dtype_name(x.dtype())));
    check(t, x.numel(), "to_device");
    std::vector<uint8_t> img(t.bytes, 0);
    const float* src = x.data<float>();
    const size_t hw = static_cast<size_t>(t.h) * t.w;
    for (int c = 0; c < t.c; ++c) {
        const size_t base = static_cast<size_t>(c / t.c2) * t.surf_stride + 2 * static_cast<size_t>(c % t.c2);
        for (int y = 0; y < t.h; ++y) {
            uint8_t* row = img.data() + base + static_cast<size_t>(y) * t.line_stride;
            const float* in = src + static_cast<size_t>(c) * hw + static_cast<size_t>(y) * t.w;
            for (int x0 = 0; x0 < t.w; ++x0) {
                const uint16_t h = num::fp32_to_fp16(in[x0]);
                row[static_cast<size_t>(x0) * t.c2 * 2] = static_cast<uint8_t>(h & 0xff);
                row[static_cast<size_t>(x0) * t.c2 * 2 + 1] = static_cast<uint8_t>(h >> 8);
            }
        }
    }
    return img;
}

num::Tensor from_device_fp16(const DeviceTensor& t, const std::vector<uint8_t>& image, std::vector<int64_t> shape) {
    num::Tensor out = num::Tensor::uninitialized(num::DType::F32, std::move(shape));
    float* dst = out.data<float>();
    const size_t hw = static_cast<size_t>(t.h) * t.w;
    for (int c = 0; c < t.c; ++c) {
        const size_t base = static_cast<size_t>(c / t.c2) * t.surf_stride + 2 * static_cast<size_t>(c % t.c2);
        for (int y = 0; y < t.h; ++y) {
            const uint8_t* row = image.data() + base + static_cast<size_t>(y) * t.line_stride;
            float* o = dst + static_cast<size_t>(c) * hw + static_cast<size_t>(y) * t.w;
            for (int x0 = 0; x0 < t.w; ++x0) {
                const uint8_t* e = row + static_cast<size_t>(x0) * t.c2 * 2;
                o[x0] = num::fp16_to_fp32(static_cast<uint16_t>(e[0] | (e[1] << 8)));
            }
        }
    }
    return out;
}

/// Row-major int8 image (DeviceTensor::row_major): the elements in IR order, uint8 shifted.
std::vector<uint8_t> to_device_row_major(const DeviceTensor& t, const num::Tensor& x) {
    if (x.numel() != static_cast<size_t>(t.w) || t.bytes < x.numel())
        throw std::invalid_argument(fmt::format("to_device '{}': {} values, the device tensor holds {}", t.name,
                                                x.numel(), t.w));
    std::vector<uint8_t> img(t.bytes, static_cast<uint8_t>(static_cast<int8_t>(t.zp)));
    const uint8_t shift = t.graph_uint8 ? 128 : 0;
    for (size_t k = 0; k < x.numel(); ++k) img[k] = static_cast<uint8_t>(x.raw()[k] - shift);
    return img;
}

}  // namespace

std::vector<uint8_t> to_device(const DeviceTensor& t, const num::Tensor& x) {
    if (t.fp16) return to_device_fp16(t, x);
    const bool u8 = x.dtype() == num::DType::U8;
    if (!u8 && x.dtype() != num::DType::I8)
        throw std::invalid_argument(
            fmt::format("to_device '{}': {} tensor, expected int8 or uint8", t.name, num::dtype_name(x.dtype())));
    if (u8 != t.graph_uint8)
        throw std::invalid_argument(fmt::format("to_device '{}': {} tensor, the model has {}", t.name,
                                                num::dtype_name(x.dtype()), t.graph_uint8 ? "uint8" : "int8"));
    if (t.row_major) return to_device_row_major(t, x);
    check(t, x.numel(), "to_device");
    // Padding channels of the last atom hold the zero point (a real 0).
    std::vector<uint8_t> img(t.bytes, static_cast<uint8_t>(static_cast<int8_t>(t.zp)));
    const uint8_t* src = x.raw();
    const uint8_t shift = u8 ? 128 : 0;
    const size_t hw = static_cast<size_t>(t.h) * t.w;
    int done = 0;  // leading pixels of every row the vector path wrote (all channels)
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
    if (vbmi && t.c2 == 16 && t.c <= 7 && t.w >= 16) {
        for (int y = 0; y < t.h; ++y)
            done = row_small_c_avx512(img.data() + static_cast<size_t>(y) * t.line_stride, src + static_cast<size_t>(y) * t.w,
                                      hw, t.c, t.w, shift, static_cast<uint8_t>(static_cast<int8_t>(t.zp)));
    }
#endif
    for (int c = 0; c < t.c; ++c) {
        const size_t base = static_cast<size_t>(c / t.c2) * t.surf_stride + static_cast<size_t>(c % t.c2);
        const uint8_t* plane = src + static_cast<size_t>(c) * hw;
        for (int y = 0; y < t.h; ++y) {
            uint8_t* row = img.data() + base + static_cast<size_t>(y) * t.line_stride;
            const uint8_t* in = plane + static_cast<size_t>(y) * t.w;
            for (int x0 = done; x0 < t.w; ++x0) row[static_cast<size_t>(x0) * t.c2] = static_cast<uint8_t>(in[x0] - shift);
        }
    }
    return img;
}

num::Tensor from_device(const DeviceTensor& t, const std::vector<uint8_t>& image) {
    if (!t.row_major) check(t, static_cast<size_t>(t.c) * t.h * t.w, "from_device");
    if (image.size() < t.bytes)
        throw std::invalid_argument(
            fmt::format("from_device '{}': image has {} bytes, expected {}", t.name, image.size(), t.bytes));
    std::vector<int64_t> shape = t.ir_shape.empty() ? std::vector<int64_t>{1, t.c, t.h, t.w} : t.ir_shape;
    num::Tensor out = num::Tensor::uninitialized(t.graph_uint8 ? num::DType::U8 : num::DType::I8, shape);
    if (out.numel() != static_cast<size_t>(t.c) * t.h * t.w)
        throw std::invalid_argument(
            fmt::format("from_device '{}': IR shape does not match {}x{}x{}", t.name, t.c, t.h, t.w));
    if (t.fp16) return from_device_fp16(t, image, shape);
    const uint8_t shift = t.graph_uint8 ? 128 : 0;
    uint8_t* dst = out.raw();
    if (t.row_major) {
        for (size_t k = 0; k < out.numel(); ++k) dst[k] = static_cast<uint8_t>(image[k] + shift);
        out.quant.scale = {t.scale};
        out.quant.zero_point = {t.zp + (t.graph_uint8 ? 128 : 0)};
        return out;
    }
    const size_t hw = static_cast<size_t>(t.h) * t.w;
    for (int c = 0; c < t.c; ++c) {
        const size_t base = static_cast<size_t>(c / t.c2) * t.surf_stride + static_cast<size_t>(c % t.c2);
        uint8_t* plane = dst + static_cast<size_t>(c) * hw;
        for (int y = 0; y < t.h; ++y) {
            const uint8_t* row = image.data() + base + static_cast<size_t>(y) * t.line_stride;
            uint8_t* o = plane + static_cast<size_t>(y) * t.w;
            for (int x0 = 0; x0 < t.w; ++x0) o[x0] = static_cast<uint8_t>(row[static_cast<size_t>(x0) * t.c2] + shift);
        }
    }
    out.quant.scale = {t.scale};
    out.quant.zero_point = {t.zp + (t.graph_uint8 ? 128 : 0)};
    return out;
}

}  // namespace drv::rknpu
