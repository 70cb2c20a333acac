// SPDX-License-Identifier: MIT
// VECTOR: the FP32 side path and the reductions. Quantized inputs are read as float(code - zp) x
// IN_SCALE and quantized outputs written as RNE(v / OUT_SCALE) + zp, saturated - the
// DequantizeLinear / QuantizeLinear arithmetic of seed 002 -, so a quantized Softmax is the
// DQ -> float Softmax -> Q of the model. Reductions sum exact integers and requantize.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace V = hw::tnpuv2::VECTOR;
namespace OP = E::VEC_OP;

bool is_reduce(uint32_t op) { return op == OP::REDUCE_SUM || op == OP::REDUCE_MEAN || op == OP::REDUCE_MAX; }
bool is_transcendental(uint32_t op) {
    return op == OP::ERF || op == OP::SQRT || op == OP::POW || op == OP::SOFTMAX || op == OP::LPNORM ||
           op == OP::LAYERNORM;
}

/// The dims a reduction keeps: AXES bit k clears DIM(5 - k).
std::array<int64_t, 6> reduced_dims(const std::array<int64_t, 6>& d, uint32_t axes) {
    std::array<int64_t, 6> r = d;
    for (int k = 0; k < 4; ++k)
        if (axes & (1u << k)) r[static_cast<size_t>(5 - k)] = 1;
    return r;
}

/// GRU_CELL: IFM and IFM2 [rows, 3H], AUX and OFM [rows, H], all F32; TABLE none or 6H entries.
Fault gru_check(const Command& c, const State& s) {
    for (int slot : {0, 1, 2, 3})
        if (Fault f = need_slot(c, s, slot)) return f;
    const TensorDesc &x = ifm(s), &hg = ifm2(s), &y = ofm(s), &hp = aux(s);
    for (int slot : {0, 1, 2, 3})
        if (!s.slot[static_cast<size_t>(slot)].is_float()) return desc_fault(c, slot, "must be F32 for GRU_CELL");
    const int64_t H = y.dims[5];
    if (x.dims[5] != 3 * H || hg.dims != x.dims)
        return desc_fault(c, 0, fmt::format("{} and IFM2 {} must both be [rows, 3H = {}]", x.text(), hg.text(), 3 * H));
    std::array<int64_t, 6> want = x.dims;
    want[5] = H;
    if (y.dims != want || hp.dims != want)
        return desc_fault(c, 2, fmt::format("{} and AUX {} must be [rows, H] of IFM {}", y.text(), hp.text(), x.text()));
    const int64_t n = field(c, V::TABLE_ENTRIES);
    if (n != 0 && n != 6 * H) return field_fault(c, V::TABLE_ENTRIES, fmt::format("GRU_CELL takes 0 or 6H = {} biases", 6 * H));
    return {};
}

Fault vector_check(const Command& c, const State& s, uint32_t op) {
    if (op == OP::GRU_CELL) return gru_check(c, s);
    for (int slot : {0, 2})
        if (Fault f = need_slot(c, s, slot)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    const uint32_t axes = static_cast<uint32_t>(field(c, V::AXES));
    if (op == OP::DEQUANT && (x.is_float() || !y.is_float()))
        return desc_fault(c, 0, "DEQUANT reads codes and writes F32");
    if (op == OP::QUANT && (!x.is_float() || y.is_float())) return desc_fault(c, 0, "QUANT reads F32 and writes codes");
    if (is_reduce(op)) {
        if (x.is_float() || y.is_float()) return desc_fault(c, 0, "reductions run on integer codes");
        if (!axes) return field_fault(c, V::AXES, "no axis to reduce");
        if (y.dims != reduced_dims(x.dims, axes))
            return desc_fault(c, 2,
                              fmt::format("{} is not IFM {} with the AXES dims reduced to 1", y.text(), x.text()));
        return {};
    }
    if (op == OP::RESIZE_LINEAR) {
        if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1] || x.dims[2] != y.dims[2] || x.dims[5] != y.dims[5])
            return desc_fault(c, 2, "RESIZE_LINEAR changes only H (DIM3) and W (DIM4)");
        return {};
    }
    if (x.dims != y.dims) return desc_fault(c, 2, fmt::format("{} must have the IFM's dims {}", y.text(), x.text()));
    if ((op == OP::LPNORM || op == OP::LAYERNORM) && !axes)
        return field_fault(c, V::AXES, "normalisation needs an axis");
    if (op == OP::LAYERNORM || (op == OP::POW && field(c, V::TABLE_ENTRIES) != 0)) {
        const int64_t want = op == OP::LAYERNORM ? 2 * x.dims[5] : x.dims[5];
        if (field(c, V::TABLE_ENTRIES) != want)
            return field_fault(
                c, V::TABLE_ENTRIES,
                fmt::format("{} needs {} F32 entries (per channel)", op == OP::POW ? "POW" : "LAYERNORM", want));
    }
    return {};
}

/// Quantize one float as QuantizeLinear does (v / scale in float, NaN -> zero point, RNE).
int64_t quantize(float v, float scale, const TensorDesc& y) {
    float t = v / scale;
    if (t != t) t = 0.0f;
    const float lo = static_cast<float>(y.grid_lo() - y.zp), hi = static_cast<float>(y.grid_hi() - y.zp);
    t = std::min(std::max(t, lo), hi);
    return static_cast<int64_t>(std::nearbyint(t)) + y.zp;
}

}  // namespace

OpPlan plan_vector(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "vector";
    const uint32_t op = static_cast<uint32_t>(field(c, V::OP));
    if ((pl.fault = vector_check(c, s, op))) return pl;
    static const char* names[13] = {"dequant",     "quant",      "erf",           "sqrt",    "pow",
                                    "softmax",     "lpnorm",     "layernorm",     "reduce_sum",
                                    "reduce_mean", "reduce_max", "resize_linear", "gru_cell"};
    pl.kind = fmt::format("vector {}", names[op]);
    const uint64_t n = static_cast<uint64_t>(std::max(ifm(s).numel(), ofm(s).numel()));
    if (op == OP::GRU_CELL) {
        // Per state element: two sigmoids and a tanh on the transcendental path, the adds and
        // products of the update on the FP32 lanes (3H gate values per row read twice).
        const uint64_t h = static_cast<uint64_t>(ofm(s).numel());
        pl.compute_cycles = ceil_div(h * 3 * static_cast<uint64_t>(p.npu.vector_transcendental_cycles.value) + 2 * n,
                                     static_cast<uint64_t>(p.npu.vector_fp32_elems_per_cycle.value));
        add_reads(pl, ifm2(s));
        add_reads(pl, aux(s));
    } else if (is_reduce(op)) {
        const int f = ifm(s).bits > 8 ? 2 : 1;
        pl.compute_cycles =
            ceil_div(n * static_cast<uint64_t>(f), static_cast<uint64_t>(p.npu.vector_int_elems_per_cycle.value));
    } else {
        const uint64_t per =
            is_transcendental(op) ? static_cast<uint64_t>(p.npu.vector_transcendental_cycles.value) : 1;
        pl.compute_cycles = ceil_div(n * per, static_cast<uint64_t>(p.npu.vector_fp32_elems_per_cycle.value));
    }
    add_reads(pl, ifm(s));
    const uint64_t tbytes = static_cast<uint64_t>(field(c, V::TABLE_ENTRIES)) * 4;
    if (tbytes > p.npu.lut_sram_bytes.value) {
        pl.fault = make_fault(fault::SRAM_OVERFLOW, static_cast<uint32_t>(tbytes),
                              fmt::format("VECTOR table of {} bytes exceeds the table SRAM (npu.lut_sram_bytes {})",
                                          tbytes, p.npu.lut_sram_bytes.value));
        return pl;
    }
    pl.sram_bytes = tbytes;
    for (const Run& r : blob_runs(field_addr(c, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI), tbytes)) pl.reads.push_back(r);
    add_writes(pl, ofm(s), c);
    return pl;
}

namespace {

Fault exec_reduce(const Command& c, const State& s, MemView& m, uint32_t op) {
    const TensorDesc &x = ifm(s), &y = ofm(s);
    uint64_t bad = 0;
    std::vector<int64_t> xv;
    if (!load_codes(x, m, xv, &bad)) return dma_read_fault(c, bad);
    const std::array<int64_t, 6> od = y.dims;
    std::vector<int64_t> acc(static_cast<size_t>(y.numel()),
                             op == OP::REDUCE_MAX ? std::numeric_limits<int64_t>::min() : 0);
    for_each_index(x.dims, [&](int64_t i, const std::array<int64_t, 6>& idx) {
        int64_t o = 0;
        for (size_t d = 0; d < 6; ++d) o = o * od[d] + (od[d] == 1 ? 0 : idx[d]);
        const int64_t v = xv[static_cast<size_t>(i)] - x.zp;
        if (op == OP::REDUCE_MAX)
            acc[static_cast<size_t>(o)] = std::max(acc[static_cast<size_t>(o)], v);
        else
            acc[static_cast<size_t>(o)] += v;
    });
    const int64_t mult = field(c, V::MULT);
    const int sh = static_cast<int>(field(c, V::SHIFT));
    for (int64_t& v : acc) v = requant(v, mult, sh, y.zp, y.grid_lo(), y.grid_hi());
    if (!store_codes(y, m, acc, &bad)) return dma_write_fault(c, bad);
    return {};
}

/// Bilinear source coordinate and weights along one axis (ONNX Resize linear).
void linear_coord(int64_t o, int64_t in, int64_t out, float scale, uint32_t mode, int64_t& i0, int64_t& i1, float& w1) {
    float x;
    switch (mode) {
        case E::RESIZE_COORD::ALIGN_CORNERS:
            x = out > 1 ? static_cast<float>(o) * static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
            break;
        case E::RESIZE_COORD::ASYMMETRIC:
            x = static_cast<float>(o) / scale;
            break;
        case E::RESIZE_COORD::PYTORCH_HALF_PIXEL:
            x = out > 1 ? (static_cast<float>(o) + 0.5f) / scale - 0.5f : 0.0f;
            break;
        default:
            x = (static_cast<float>(o) + 0.5f) / scale - 0.5f;
            break;
    }
    x = std::max(0.0f, std::min(x, static_cast<float>(in - 1)));
    i0 = static_cast<int64_t>(std::floor(x));
    i1 = std::min(i0 + 1, in - 1);
    w1 = x - static_cast<float>(i0);
}

}  // namespace

namespace {

/// One GRU step (ONNX GRU, linear_before_reset = 1, activations Sigmoid and Tanh), in float.
Fault exec_gru(const Command& c, const State& s, MemView& m) {
    const TensorDesc &x = ifm(s), &hg = ifm2(s), &y = ofm(s), &hp = aux(s);
    uint64_t bad = 0;
    std::vector<float> xf, hf, pf;
    if (!load_floats(x, m, xf, &bad) || !load_floats(hg, m, hf, &bad) || !load_floats(hp, m, pf, &bad))
        return dma_read_fault(c, bad);
    const size_t H = static_cast<size_t>(y.dims[5]);
    std::vector<float> b(6 * H, 0.0f);
    if (field(c, V::TABLE_ENTRIES) != 0) {
        std::vector<uint8_t> raw;
        if (!read_blob(m, field_addr(c, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI), 6 * H * 4, raw, &bad))
            return dma_read_fault(c, bad);
        std::memcpy(b.data(), raw.data(), raw.size());
    }
    auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
    std::vector<float> yf(pf.size());
    for (size_t r = 0; r < pf.size() / H; ++r) {
        const float *xr = xf.data() + r * 3 * H, *hr = hf.data() + r * 3 * H;
        for (size_t j = 0; j < H; ++j) {
            const float z = sig((xr[j] + b[j]) + (hr[j] + b[3 * H + j]));
            const float rg = sig((xr[H + j] + b[H + j]) + (hr[H + j] + b[4 * H + j]));
            const float n = std::tanh((xr[2 * H + j] + b[2 * H + j]) + rg * (hr[2 * H + j] + b[5 * H + j]));
            const float prev = pf[r * H + j];
            yf[r * H + j] = (1.0f - z) * n + z * prev;
        }
    }
    if (!store_floats(y, m, yf, &bad)) return dma_write_fault(c, bad);
    return {};
}

}  // namespace

Fault exec_vector(const Command& c, const State& s, MemView& m) {
    const uint32_t op = static_cast<uint32_t>(field(c, V::OP));
    if (Fault f = vector_check(c, s, op)) return f;
    if (op == OP::GRU_CELL) return exec_gru(c, s, m);
    if (is_reduce(op)) return exec_reduce(c, s, m, op);
    const TensorDesc &x = ifm(s), &y = ofm(s);
    const float in_scale = field_f32(c, V::IN_SCALE), out_scale = field_f32(c, V::OUT_SCALE);
    uint64_t bad = 0;
    std::vector<float> xf;
    if (x.is_float()) {
        if (!load_floats(x, m, xf, &bad)) return dma_read_fault(c, bad);
    } else {
        std::vector<int64_t> q;
        if (!load_codes(x, m, q, &bad)) return dma_read_fault(c, bad);
        xf.resize(q.size());
        for (size_t i = 0; i < q.size(); ++i) xf[i] = static_cast<float>(static_cast<int32_t>(q[i] - x.zp)) * in_scale;
    }
    std::vector<float> table;
    if (const int64_t n = field(c, V::TABLE_ENTRIES); n > 0) {
        std::vector<uint8_t> raw;
        if (!read_blob(m, field_addr(c, V::TABLE_ADDR_LO, V::TABLE_ADDR_HI), static_cast<uint64_t>(n) * 4, raw, &bad))
            return dma_read_fault(c, bad);
        table.resize(static_cast<size_t>(n));
        std::memcpy(table.data(), raw.data(), raw.size());
    }
    const float p0 = field_f32(c, V::PARAM0), p1 = field_f32(c, V::PARAM1);
    const int64_t C = x.dims[5];
    std::vector<float> yf(static_cast<size_t>(y.numel()));
    switch (op) {
        case OP::DEQUANT:
        case OP::QUANT:
            yf = xf;
            break;
        case OP::ERF:
            for (size_t i = 0; i < xf.size(); ++i) yf[i] = std::erf(xf[i]);
            break;
        case OP::SQRT:
            for (size_t i = 0; i < xf.size(); ++i) yf[i] = std::sqrt(xf[i]);
            break;
        case OP::POW:
            // A scalar exponent of 2 or 3 is a product (what onnxruntime's Pow computes for those).
            for (size_t i = 0; i < xf.size(); ++i) {
                const float v = xf[i];
                if (table.empty() && p0 == 2.0f)
                    yf[i] = v * v;
                else if (table.empty() && p0 == 3.0f)
                    yf[i] = v * v * v;
                else
                    yf[i] = std::pow(v, table.empty() ? p0 : table[i % static_cast<size_t>(C)]);
            }
            break;
        case OP::SOFTMAX:
            // Along C: max, sum of exp(x - max) in channel order, exp(x - max) / sum.
            for (size_t r = 0; r < xf.size(); r += static_cast<size_t>(C)) {
                float mx = -std::numeric_limits<float>::infinity();
                for (int64_t k = 0; k < C; ++k) mx = std::max(mx, xf[r + static_cast<size_t>(k)]);
                float sum = 0.0f;
                for (int64_t k = 0; k < C; ++k) sum += std::exp(xf[r + static_cast<size_t>(k)] - mx);
                for (int64_t k = 0; k < C; ++k)
                    yf[r + static_cast<size_t>(k)] = std::exp(xf[r + static_cast<size_t>(k)] - mx) / sum;
            }
            break;
        case OP::LPNORM:
        case OP::LAYERNORM: {
            // Over the innermost AXES dims (the normalised block is contiguous in the dense image).
            const uint32_t axes = static_cast<uint32_t>(field(c, V::AXES));
            int64_t blk = 1;
            for (int k = 0; k < 4 && (axes & (1u << k)); ++k) blk *= x.dims[static_cast<size_t>(5 - k)];
            for (size_t r = 0; r < xf.size(); r += static_cast<size_t>(blk)) {
                const float* v = xf.data() + r;
                float* o = yf.data() + r;
                if (op == OP::LPNORM) {
                    float nrm = 0.0f;
                    for (int64_t k = 0; k < blk; ++k) nrm += p0 == 1.0f ? std::fabs(v[k]) : v[k] * v[k];
                    if (p0 != 1.0f) nrm = std::sqrt(nrm);
                    for (int64_t k = 0; k < blk; ++k) o[k] = nrm == 0.0f ? 0.0f : v[k] / nrm;
                } else {
                    float mean = 0.0f, var = 0.0f;
                    for (int64_t k = 0; k < blk; ++k) mean += v[k];
                    mean /= static_cast<float>(blk);
                    for (int64_t k = 0; k < blk; ++k) var += (v[k] - mean) * (v[k] - mean);
                    var /= static_cast<float>(blk);
                    const float inv = 1.0f / std::sqrt(var + p0);
                    for (int64_t k = 0; k < blk; ++k) {
                        const size_t ch = (r + static_cast<size_t>(k)) % static_cast<size_t>(C);
                        o[k] = (v[k] - mean) * inv * table[2 * ch] + table[2 * ch + 1];
                    }
                }
            }
            break;
        }
        case OP::RESIZE_LINEAR: {
            const uint32_t mode = static_cast<uint32_t>(field(c, V::COORD));
            const int64_t H = x.dims[3], W = x.dims[4], OH = y.dims[3], OW = y.dims[4];
            const int64_t outer = x.dims[0] * x.dims[1] * x.dims[2];
            for (int64_t b = 0; b < outer; ++b)
                for (int64_t oy = 0; oy < OH; ++oy) {
                    int64_t y0, y1;
                    float wy;
                    linear_coord(oy, H, OH, p0, mode, y0, y1, wy);
                    for (int64_t ox = 0; ox < OW; ++ox) {
                        int64_t x0, x1;
                        float wx;
                        linear_coord(ox, W, OW, p1, mode, x0, x1, wx);
                        for (int64_t ch = 0; ch < C; ++ch) {
                            auto at = [&](int64_t yy, int64_t xx) {
                                return xf[static_cast<size_t>(((b * H + yy) * W + xx) * C + ch)];
                            };
                            const float top = at(y0, x0) * (1.0f - wx) + at(y0, x1) * wx;
                            const float bot = at(y1, x0) * (1.0f - wx) + at(y1, x1) * wx;
                            yf[static_cast<size_t>(((b * OH + oy) * OW + ox) * C + ch)] = top * (1.0f - wy) + bot * wy;
                        }
                    }
                }
            break;
        }
        default:
            break;
    }
    (void)p1;
    bool ok;
    if (y.is_float()) {
        ok = store_floats(y, m, yf, &bad);
    } else {
        std::vector<int64_t> q(yf.size());
        for (size_t i = 0; i < yf.size(); ++i) q[i] = quantize(yf[i], out_scale, y);
        ok = store_codes(y, m, q, &bad);
    }
    if (!ok) return dma_write_fault(c, bad);
    return {};
}

}  // namespace npu::tnpuv2::detail
