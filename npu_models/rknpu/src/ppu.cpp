// SPDX-License-Identifier: MIT
// PPU / PPU_RDMA: decode, validation and the functional pooling model.
#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "hw/rknpu_regs.h"
#include "npu/rknpu/dpu_engine.h"
#include "npu/rknpu/ppu_config.h"
#include "npu/rknpu/buffer_pool.h"
#include "numerics/requant.h"

namespace npu::rknpu {

using namespace hw::rknpu;

PpuConfig decode_ppu(const RegFile& rf, bool from_dpu, uint32_t atom) {
    PpuConfig c;
    c.from_dpu = from_dpu;
    c.atom = atom;
    auto f = [&](uint16_t off, hw::Field fld) { return rf.field(off, fld); };
    c.in_w = f(PPU_DATA_CUBE_IN_WIDTH::kOffset, PPU_DATA_CUBE_IN_WIDTH::CUBE_IN_WIDTH) + 1;
    c.in_h = f(PPU_DATA_CUBE_IN_HEIGHT::kOffset, PPU_DATA_CUBE_IN_HEIGHT::CUBE_IN_HEIGHT) + 1;
    c.in_c = f(PPU_DATA_CUBE_IN_CHANNEL::kOffset, PPU_DATA_CUBE_IN_CHANNEL::CUBE_IN_CHANNEL) + 1;
    c.out_w = f(PPU_DATA_CUBE_OUT_WIDTH::kOffset, PPU_DATA_CUBE_OUT_WIDTH::CUBE_OUT_WIDTH) + 1;
    c.out_h = f(PPU_DATA_CUBE_OUT_HEIGHT::kOffset, PPU_DATA_CUBE_OUT_HEIGHT::CUBE_OUT_HEIGHT) + 1;
    c.out_c = f(PPU_DATA_CUBE_OUT_CHANNEL::kOffset, PPU_DATA_CUBE_OUT_CHANNEL::CUBE_OUT_CHANNEL) + 1;
    c.method_raw = f(PPU_OPERATION_MODE_CFG::kOffset, PPU_OPERATION_MODE_CFG::POOLING_METHOD);
    c.method = static_cast<PoolMethod>(c.method_raw);
    const uint32_t k = rf.read(PPU_POOLING_KERNEL_CFG::kOffset);
    c.kernel_w = PPU_POOLING_KERNEL_CFG::KERNEL_WIDTH.get(k) + 1;
    c.kernel_h = PPU_POOLING_KERNEL_CFG::KERNEL_HEIGHT.get(k) + 1;
    c.stride_x = PPU_POOLING_KERNEL_CFG::KERNEL_STRIDE_WIDTH.get(k) + 1;
    c.stride_y = PPU_POOLING_KERNEL_CFG::KERNEL_STRIDE_HEIGHT.get(k) + 1;
    const uint32_t pad = rf.read(PPU_POOLING_PADDING_CFG::kOffset);
    c.pad_left = PPU_POOLING_PADDING_CFG::PAD_LEFT.get(pad);
    c.pad_top = PPU_POOLING_PADDING_CFG::PAD_TOP.get(pad);
    c.pad_right = PPU_POOLING_PADDING_CFG::PAD_RIGHT.get(pad);
    c.pad_bottom = PPU_POOLING_PADDING_CFG::PAD_BOTTOM.get(pad);
    c.pad_value = rf.read(PPU_PADDING_VALUE_1_CFG::kOffset);
    c.recip_w = f(PPU_RECIP_KERNEL_WIDTH::kOffset, PPU_RECIP_KERNEL_WIDTH::RECIP_KERNEL_WIDTH);
    c.recip_h = f(PPU_RECIP_KERNEL_HEIGHT::kOffset, PPU_RECIP_KERNEL_HEIGHT::RECIP_KERNEL_HEIGHT);
    c.prec = static_cast<Precision>(f(PPU_DATA_FORMAT::kOffset, PPU_DATA_FORMAT::PROC_PRECISION));
    c.dpu_flyin = f(PPU_DATA_FORMAT::kOffset, PPU_DATA_FORMAT::DPU_FLYIN) != 0;
    c.dst_addr = f(PPU_DST_BASE_ADDR::kOffset, PPU_DST_BASE_ADDR::DST_BASE_ADDR) << 4;
    c.dst_surf_stride_bytes = static_cast<uint64_t>(f(PPU_DST_SURF_STRIDE::kOffset, PPU_DST_SURF_STRIDE::DST_SURF_STRIDE)) << 4;
    c.rdma_w = f(PPU_RDMA_RDMA_CUBE_IN_WIDTH::kOffset, PPU_RDMA_RDMA_CUBE_IN_WIDTH::CUBE_IN_WIDTH) + 1;
    c.rdma_h = f(PPU_RDMA_RDMA_CUBE_IN_HEIGHT::kOffset, PPU_RDMA_RDMA_CUBE_IN_HEIGHT::CUBE_IN_HEIGHT) + 1;
    c.rdma_c = f(PPU_RDMA_RDMA_CUBE_IN_CHANNEL::kOffset, PPU_RDMA_RDMA_CUBE_IN_CHANNEL::CUBE_IN_CHANNEL) + 1;
    c.src_width_code = f(PPU_RDMA_RDMA_DATA_FORMAT::kOffset, PPU_RDMA_RDMA_DATA_FORMAT::IN_PRECISION);
    c.src_addr = rf.read(PPU_RDMA_RDMA_SRC_BASE_ADDR::kOffset);
    c.src_line_stride_bytes =
        static_cast<uint64_t>(f(PPU_RDMA_RDMA_SRC_LINE_STRIDE::kOffset, PPU_RDMA_RDMA_SRC_LINE_STRIDE::SRC_LINE_STRIDE)) << 4;
    c.src_surf_stride_bytes =
        static_cast<uint64_t>(f(PPU_RDMA_RDMA_SRC_SURF_STRIDE::kOffset, PPU_RDMA_RDMA_SRC_SURF_STRIDE::SRC_SURF_STRIDE)) << 4;
    return c;
}

std::vector<Fault> validate_ppu(const PpuConfig& c, const hw::SocProfile& /*p*/, Precision dpu_out) {
    std::vector<Fault> out;
    auto fault = [&](const char* block, const char* reg, const char* field, uint64_t v, std::string msg) {
        out.push_back(Fault{block, reg, field, v, std::move(msg)});
    };
    if (c.method_raw > 2)
        fault("PPU", "OPERATION_MODE_CFG", "POOLING_METHOD", c.method_raw, "pooling method must be 0 (average), 1 (max) or 2 (min)");
    if (c.prec != Precision::Int8 && c.prec != Precision::Int16 && c.prec != Precision::Fp16)
        fault("PPU", "DATA_FORMAT", "PROC_PRECISION", static_cast<uint32_t>(c.prec), "precision must be 0, 1 or 2");
    if (c.dpu_flyin != c.from_dpu)
        fault("PPU", "DATA_FORMAT", "DPU_FLYIN", c.dpu_flyin,
              c.from_dpu ? "PPU fed by the DPU on the fly (DPU enabled, PPU_RDMA not) needs DPU_FLYIN = 1"
                         : "PPU reading memory through PPU_RDMA needs DPU_FLYIN = 0");
    if (c.from_dpu) {
        if (dpu_out != c.prec)
            fault("PPU", "DATA_FORMAT", "PROC_PRECISION", static_cast<uint32_t>(c.prec),
                  fmt::format("PPU precision {} differs from the DPU output precision {}", precision_name(c.prec),
                              precision_name(dpu_out)));
    } else {
        if (c.rdma_w != c.in_w || c.rdma_h != c.in_h || c.rdma_c != c.in_c)
            fault("PPU_RDMA", "RDMA_CUBE_IN_WIDTH/HEIGHT/CHANNEL", "CUBE_IN_WIDTH/HEIGHT/CHANNEL",
                  c.rdma_w * 65536ull + c.rdma_h,
                  fmt::format("PPU_RDMA cube {}x{}x{} differs from the PPU input cube {}x{}x{}", c.rdma_w, c.rdma_h,
                              c.rdma_c, c.in_w, c.in_h, c.in_c));
        // TRM: IN_PRECISION is the element width (0 4-bit, 1 8-bit, 2 16-bit, 3 32-bit).
        const uint32_t want = elem_bytes(c.prec) == 1 ? 1u : 2u;
        if (c.src_width_code != want)
            fault("PPU_RDMA", "RDMA_DATA_FORMAT", "IN_PRECISION", c.src_width_code,
                  fmt::format("PPU_RDMA input width code {} ({}-bit) differs from the PPU precision {} (needs {}, {}-bit)",
                              c.src_width_code, c.src_width_code < 4 ? (4u << c.src_width_code) : 0u,
                              precision_name(c.prec), want, 4u << want));
        if (c.src_line_stride_bytes < static_cast<uint64_t>(c.in_w) * c.atom)
            fault("PPU_RDMA", "RDMA_SRC_LINE_STRIDE", "SRC_LINE_STRIDE", c.src_line_stride_bytes,
                  fmt::format("line stride below width*{} = {} bytes", c.atom, c.in_w * c.atom));
        if (c.in_c > c2_of(c.prec, c.atom) && c.src_surf_stride_bytes < c.src_line_stride_bytes * c.in_h)
            fault("PPU_RDMA", "RDMA_SRC_SURF_STRIDE", "SRC_SURF_STRIDE", c.src_surf_stride_bytes,
                  "surface stride below line_stride*height");
    }
    if (c.out_c != c.in_c)
        fault("PPU", "DATA_CUBE_OUT_CHANNEL", "CUBE_OUT_CHANNEL", c.out_c - 1,
              fmt::format("pooling keeps the channels: output {} != input {}", c.out_c, c.in_c));
    if (c.pad_left >= c.kernel_w || c.pad_right >= c.kernel_w || c.pad_top >= c.kernel_h || c.pad_bottom >= c.kernel_h)
        fault("PPU", "POOLING_PADDING_CFG", "PAD_LEFT/TOP/RIGHT/BOTTOM", c.pad_left,
              "padding must be smaller than the kernel (a window would hold only padding)");
    const int64_t max_w = (static_cast<int64_t>(c.in_w) + c.pad_left + c.pad_right - c.kernel_w) / c.stride_x + 1;
    const int64_t max_h = (static_cast<int64_t>(c.in_h) + c.pad_top + c.pad_bottom - c.kernel_h) / c.stride_y + 1;
    if (max_w < 1 || max_h < 1 || c.out_w > max_w || c.out_h > max_h)
        fault("PPU", "DATA_CUBE_OUT_WIDTH/HEIGHT", "CUBE_OUT_WIDTH/HEIGHT", c.out_w * 65536ull + c.out_h,
              fmt::format("output {}x{} larger than the {}x{} the input, kernel and padding allow", c.out_w, c.out_h,
                          max_w, max_h));
    if (c.method == PoolMethod::Average && (c.recip_w == 0 || c.recip_h == 0))
        fault("PPU", "RECIP_KERNEL_WIDTH/HEIGHT", "RECIP_KERNEL_WIDTH/HEIGHT", c.recip_w,
              "average pooling with a zero reciprocal kernel size");
    if (c.out_c > c2_of(c.prec, c.atom) && c.dst_surf_stride_bytes < surface_bytes(c.out_w, c.out_h, c.atom))
        fault("PPU", "DST_SURF_STRIDE", "DST_SURF_STRIDE", c.dst_surf_stride_bytes,
              fmt::format("output surface stride below width*height*{} bytes", c.atom));
    return out;
}

Cube run_ppu(const PpuConfig& c, const Cube& in) {
    if (in.w != c.in_w || in.h != c.in_h || in.c != c.in_c) throw std::logic_error("run_ppu: input cube does not match");
    const bool fl = c.prec == Precision::Fp16;
    Cube out = Cube::make(c.out_w, c.out_h, c.out_c, fl);
    const int64_t lo = c.prec == Precision::Int8 ? INT8_MIN : INT16_MIN, hi = c.prec == Precision::Int8 ? INT8_MAX : INT16_MAX;
    float pad_f = 0;
    std::memcpy(&pad_f, &c.pad_value, 4);
    // UNVERIFIED: the pad value is taken in the data precision (saturated to it).
    const int64_t pad_i = num::saturate(static_cast<int32_t>(c.pad_value), lo, hi);
    const float recip_f = static_cast<float>(c.recip_w) / 65536.0f * (static_cast<float>(c.recip_h) / 65536.0f);
    for (uint32_t ch = 0; ch < c.out_c; ++ch)
        for (uint32_t oy = 0; oy < c.out_h; ++oy)
            for (uint32_t ox = 0; ox < c.out_w; ++ox) {
                int64_t isum = 0, imax = std::numeric_limits<int64_t>::min(), imin = std::numeric_limits<int64_t>::max();
                float fsum = 0, fmax = -std::numeric_limits<float>::infinity(), fmin = std::numeric_limits<float>::infinity();
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky)
                    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                        const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky;
                        const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx;
                        const bool inside = iy >= 0 && iy < c.in_h && ix >= 0 && ix < c.in_w;
                        const size_t k = inside ? in.idx(ch, static_cast<uint32_t>(iy), static_cast<uint32_t>(ix)) : 0;
                        if (fl) {
                            const float v = inside ? (in.is_float ? in.f[k] : static_cast<float>(in.i[k])) : pad_f;
                            fsum += v, fmax = std::max(fmax, v), fmin = std::min(fmin, v);
                        } else {
                            const int64_t v = inside ? (in.is_float ? static_cast<int64_t>(in.f[k]) : in.i[k]) : pad_i;
                            isum += v, imax = std::max(imax, v), imin = std::min(imin, v);
                        }
                    }
                const size_t o = out.idx(ch, oy, ox);
                if (fl) {
                    const float v = c.method == PoolMethod::Max ? fmax : (c.method == PoolMethod::Min ? fmin : fsum * recip_f);
                    out.f[o] = round_to_fp16(v);
                } else {
                    int64_t v = c.method == PoolMethod::Max ? imax : imin;
                    // UNVERIFIED: average = (sum * RECIP_W * RECIP_H) >> 32, rounded half up, one
                    // rounding at the end.
                    if (c.method == PoolMethod::Average)
                        v = num::mul_shift(isum * static_cast<int64_t>(c.recip_w), static_cast<int32_t>(c.recip_h), 32,
                                           num::Rounding::HalfUp);
                    out.i[o] = num::saturate(v, lo, hi);
                }
            }
    return out;
}


bool ppu_fast_ok(const PpuConfig& c) {
    return (c.prec == Precision::Int8 || c.prec == Precision::Int16) && c.method_raw <= 2 && c.kernel_w * c.kernel_h <= 4096;
}

namespace {

/// Max / min pooling of int8 atoms (kC2 = the atom's 16 or 8 channels) in the int8 domain: the
/// int64 reductions of run_ppu_int below start from -inf / +inf and saturate to int8 at the end,
/// which equals starting from INT8_MIN / INT8_MAX, as every value and the pad are int8.
template <uint32_t kC2, bool kMax>
__attribute__((always_inline)) inline void pool_i8_body(const PpuConfig& c, const int8_t* __restrict src,
                                                        int8_t* __restrict dst, uint32_t lanes, int8_t pad) {
    for (uint32_t oy = 0; oy < c.out_h; ++oy)
        for (uint32_t ox = 0; ox < c.out_w; ++ox) {
            int8_t r[kC2];
            for (uint32_t j = 0; j < kC2; ++j) r[j] = kMax ? INT8_MIN : INT8_MAX;
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky;
                for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                    const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx;
                    if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                        for (uint32_t j = 0; j < kC2; ++j) r[j] = kMax ? std::max(r[j], pad) : std::min(r[j], pad);
                        continue;
                    }
                    const int8_t* a = src + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * kC2;
                    for (uint32_t j = 0; j < kC2; ++j) r[j] = kMax ? std::max(r[j], a[j]) : std::min(r[j], a[j]);
                }
            }
            int8_t* o = dst + (static_cast<uint64_t>(oy) * c.out_w + ox) * kC2;
            for (uint32_t j = 0; j < lanes; ++j) o[j] = r[j];
        }
}

using PoolFn = void (*)(const PpuConfig&, const int8_t*, int8_t*, uint32_t, int8_t);
template <uint32_t kC2, bool kMax>
void pool_i8_portable(const PpuConfig& c, const int8_t* s, int8_t* d, uint32_t lanes, int8_t pad) {
    pool_i8_body<kC2, kMax>(c, s, d, lanes, pad);
}
#if defined(__x86_64__) && defined(__GNUC__)
/// pool_i8_body with the atom in one SSE register (PMAXSB / PMINSB; the compiler does not
/// vectorise the byte lanes), for the AVX2 and AVX-512 builds alike.
template <uint32_t kC2, bool kMax>
__attribute__((target("avx2"))) void pool_i8_simd(const PpuConfig& c, const int8_t* src, int8_t* dst, uint32_t lanes,
                                                  int8_t pad) {
    const __m128i padv = _mm_set1_epi8(pad), init = _mm_set1_epi8(kMax ? INT8_MIN : INT8_MAX);
    for (uint32_t oy = 0; oy < c.out_h; ++oy)
        for (uint32_t ox = 0; ox < c.out_w; ++ox) {
            __m128i r = init;
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky;
                for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                    const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx;
                    __m128i v = padv;
                    if (iy >= 0 && iy < c.in_h && ix >= 0 && ix < c.in_w) {
                        const auto* a = reinterpret_cast<const __m128i*>(src + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * kC2);
                        v = kC2 == 16 ? _mm_loadu_si128(a) : _mm_loadl_epi64(a);
                    }
                    r = kMax ? _mm_max_epi8(r, v) : _mm_min_epi8(r, v);
                }
            }
            int8_t* o = dst + (static_cast<uint64_t>(oy) * c.out_w + ox) * kC2;
            if (lanes == kC2 && kC2 == 16) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(o), r);
            } else {
                alignas(16) int8_t t[16];
                _mm_store_si128(reinterpret_cast<__m128i*>(t), r);
                std::memcpy(o, t, lanes);
            }
        }
}
#endif
template <uint32_t kC2, bool kMax>
PoolFn pick_pool() {
#if defined(__x86_64__) && defined(__GNUC__)
    const EngineIsa i = engine_isa();
    if (i == EngineIsa::Avx512 || i == EngineIsa::Avx2) return pool_i8_simd<kC2, kMax>;
#endif
    return pool_i8_portable<kC2, kMax>;
}

}  // namespace

std::vector<std::vector<uint8_t>> run_ppu_int(const PpuConfig& c, const std::vector<const uint8_t*>& in) {
    // Same arithmetic as run_ppu's integer branch, an atom (C2 channels of one pixel) at a time on
    // the packed bytes: no Cube, no per-element dispatch.
    constexpr uint32_t kMaxC2 = 64;
    const uint32_t eb = elem_bytes(c.prec), c2 = c2_of(c.prec, c.atom), atom = c.atom;
    const uint32_t c1s = (c.out_c + c2 - 1) / c2;
    if (in.size() < (c.in_c + c2 - 1) / c2 || c2 > kMaxC2) throw std::logic_error("run_ppu_int: input surfaces missing");
    const int64_t lo = c.prec == Precision::Int8 ? INT8_MIN : INT16_MIN, hi = c.prec == Precision::Int8 ? INT8_MAX : INT16_MAX;
    const int64_t pad_i = num::saturate(static_cast<int32_t>(c.pad_value), lo, hi);
    const int64_t rw = c.recip_w, rh = static_cast<int32_t>(c.recip_h);
    std::vector<std::vector<uint8_t>> out(c1s);
    for (auto& v : out) v = zeroed_buffer(surface_bytes(c.out_w, c.out_h, atom));  // buffer_pool.h
    if (eb == 1 && c.method != PoolMethod::Average && (c2 == 16 || c2 == 8) && c2 == atom) {
        const bool mx = c.method == PoolMethod::Max;
        const PoolFn fn = c2 == 16 ? (mx ? pick_pool<16, true>() : pick_pool<16, false>())
                                   : (mx ? pick_pool<8, true>() : pick_pool<8, false>());
        for (uint32_t c1 = 0; c1 < c1s; ++c1)
            fn(c, reinterpret_cast<const int8_t*>(in[c1]), reinterpret_cast<int8_t*>(out[c1].data()),
               std::min(c2, c.out_c - c1 * c2), static_cast<int8_t>(pad_i));
        return out;
    }
    for (uint32_t c1 = 0; c1 < c1s; ++c1) {
        const uint8_t* src = in[c1];
        uint8_t* dst = out[c1].data();
        const uint32_t lanes = std::min(c2, c.out_c - c1 * c2);
        for (uint32_t oy = 0; oy < c.out_h; ++oy)
            for (uint32_t ox = 0; ox < c.out_w; ++ox) {
                int64_t sum[kMaxC2], mx[kMaxC2], mn[kMaxC2];
                for (uint32_t j = 0; j < c2; ++j) sum[j] = 0, mx[j] = INT64_MIN, mn[j] = INT64_MAX;
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                    const int64_t iy = static_cast<int64_t>(oy) * c.stride_y - c.pad_top + ky;
                    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                        const int64_t ix = static_cast<int64_t>(ox) * c.stride_x - c.pad_left + kx;
                        if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                            for (uint32_t j = 0; j < c2; ++j)
                                sum[j] += pad_i, mx[j] = std::max(mx[j], pad_i), mn[j] = std::min(mn[j], pad_i);
                            continue;
                        }
                        const uint8_t* a = src + (static_cast<uint64_t>(iy) * c.in_w + static_cast<uint64_t>(ix)) * atom;
                        for (uint32_t j = 0; j < c2; ++j) {
                            const int64_t v = eb == 1 ? int64_t{static_cast<int8_t>(a[j])}
                                                      : int64_t{static_cast<int16_t>(static_cast<uint16_t>(a[2 * j] | (a[2 * j + 1] << 8)))};
                            sum[j] += v, mx[j] = std::max(mx[j], v), mn[j] = std::min(mn[j], v);
                        }
                    }
                }
                uint8_t* o = dst + (static_cast<uint64_t>(oy) * c.out_w + ox) * atom;
                for (uint32_t j = 0; j < lanes; ++j) {
                    int64_t v = c.method == PoolMethod::Max ? mx[j] : mn[j];
                    if (c.method == PoolMethod::Average) {
                        const int64_t p = sum[j] * rw * rh;  // mul_shift(sum * rw, rh, 32, HalfUp)
                        v = (p >> 32) + ((p >> 31) & 1);
                    }
                    v = num::saturate(v, lo, hi);
                    o[j * eb] = static_cast<uint8_t>(v & 0xff);
                    if (eb == 2) o[j * eb + 1] = static_cast<uint8_t>((v >> 8) & 0xff);
                }
            }
    }
    return out;
}

}  // namespace npu::rknpu
