// SPDX-License-Identifier: MIT
// GENBOX: the GenerateBox unit (seed 003): decodes YOLOv3/v5/v8 head tensors into boxes x fields
// in FP32, in the operation order of the exporters' decode graphs (so the unit equals the decode
// it replaces): YOLOv5 (ultralytics v7.0 export) s = 1 / (1 + exp(-t)); xy = (s * 2 + grid) *
// stride with grid = cell + GRID_OFFSET; wh = (s * 2)^2 * anchor; YOLOv3 (darknet) xy = (s + cell)
// * stride, wh = exp(t) * anchor; YOLOv8 DFL softmax over REG_MAX bins -> distances from the
// anchor point (cell + 0.5) -> cx, cy, w, h times stride, class scores sigmoid.
#include <algorithm>
#include <cmath>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace G = hw::tnpuv2::GENBOX;
namespace VER = E::GENBOX_VERSION;

struct Head {
    uint64_t addr = 0, cls_addr = 0;
    int64_t h = 0, w = 0, pix = 0, row = 0, cls_pix = 0, cls_row = 0;
    float stride = 0;
    float anchors[8] = {};
    uint32_t format = E::FORMAT::F32;
    float scale = 1;
    int32_t zp = 0;
};

uint32_t u32(const std::vector<uint8_t>& b, size_t w) {
    uint32_t v;
    std::memcpy(&v, b.data() + w * 4, 4);
    return v;
}

Head head_at(const std::vector<uint8_t>& b, uint32_t k) {
    const size_t o = static_cast<size_t>(k) * kGenboxHeadWords;
    Head h;
    h.addr = u32(b, o) | (static_cast<uint64_t>(u32(b, o + 1)) << 32);
    h.h = u32(b, o + 2);
    h.w = u32(b, o + 3);
    h.pix = u32(b, o + 4);
    h.row = u32(b, o + 5);
    h.stride = f32_of_bits(static_cast<int32_t>(u32(b, o + 6)));
    for (size_t i = 0; i < 8; ++i) h.anchors[i] = f32_of_bits(static_cast<int32_t>(u32(b, o + 7 + i)));
    h.format = u32(b, o + 15);
    h.scale = f32_of_bits(static_cast<int32_t>(u32(b, o + 16)));
    h.zp = static_cast<int32_t>(u32(b, o + 17));
    h.cls_addr = u32(b, o + 18) | (static_cast<uint64_t>(u32(b, o + 19)) << 32);
    h.cls_pix = u32(b, o + 20);
    h.cls_row = u32(b, o + 21);
    return h;
}

struct Cfg {
    uint32_t version = 5, heads = 1, nc = 1, na = 1, reg_max = 16;
    float grid_offset = 0;
    int64_t in_channels() const { return version == VER::YOLOV8 ? 4 * reg_max : na * (5 + nc); }
    int64_t fields() const { return version == VER::YOLOV8 ? 4 + nc : 5 + nc; }
    int64_t boxes_per_cell() const { return version == VER::YOLOV8 ? 1 : na; }
};

Fault genbox_check(const Command& c, const State& s, Cfg& g) {
    if (Fault f = need_slot(c, s, 2)) return f;
    g.version = static_cast<uint32_t>(field(c, G::VERSION));
    g.heads = static_cast<uint32_t>(field(c, G::HEADS));
    g.nc = static_cast<uint32_t>(field(c, G::NUM_CLASSES));
    g.na = static_cast<uint32_t>(field(c, G::NUM_ANCHORS));
    g.reg_max = static_cast<uint32_t>(field(c, G::REG_MAX));
    g.grid_offset = field_f32(c, G::GRID_OFFSET);
    if (g.version != VER::YOLOV8 && g.na > 4)
        return field_fault(c, G::NUM_ANCHORS, "the parameter block holds up to 4 anchors per head");
    if (g.version == VER::YOLOV8 && g.reg_max < 1)
        return field_fault(c, G::REG_MAX, "YOLOv8 needs at least one DFL bin");
    if (static_cast<uint32_t>(field(c, G::PARAM_WORDS)) != g.heads * kGenboxHeadWords)
        return field_fault(c, G::PARAM_WORDS,
                           fmt::format("{} heads need {} parameter words", g.heads, g.heads * kGenboxHeadWords));
    if (!ofm(s).is_float()) return desc_fault(c, 2, "GENBOX writes F32 boxes");
    if (ofm(s).dims[5] != g.fields())
        return desc_fault(c, 2,
                          fmt::format("DIM5 holds the {} fields of a box (x, y, w, h{}, classes)", g.fields(),
                                      g.version == VER::YOLOV8 ? "" : ", objectness"));
    return {};
}

// The numerically stable logistic (the reference library's Sigmoid, numerics activation.cpp).
float sigmoid(float t) { return t >= 0.0f ? 1.0f / (1.0f + std::exp(-t)) : std::exp(t) / (1.0f + std::exp(t)); }

}  // namespace

OpPlan plan_genbox(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView* indirect) {
    OpPlan pl;
    pl.engine = "genbox";
    Cfg g;
    if ((pl.fault = genbox_check(c, s, g))) return pl;
    pl.kind = fmt::format("genbox yolov{} {} head(s)", g.version, g.heads);
    const uint64_t paddr = field_addr(c, G::PARAM_ADDR_LO, G::PARAM_ADDR_HI);
    for (const Run& r : blob_runs(paddr, static_cast<uint64_t>(g.heads) * kGenboxHeadWords * 4)) pl.reads.push_back(r);
    // The head tensors are described inside the parameter block: the unit's sequencer reads the
    // block first (`indirect`), then the heads' pixels.
    std::vector<uint8_t> params;
    uint64_t bad = 0;
    if (indirect) {
        if (!read_blob(*indirect, paddr, static_cast<uint64_t>(g.heads) * kGenboxHeadWords * 4, params, &bad)) {
            pl.fault = dma_read_fault(c, bad);
            return pl;
        }
        for (uint32_t k = 0; k < g.heads; ++k) {
            const Head h = head_at(params, k);
            const int64_t eb = h.format == E::FORMAT::F32 ? 4 : 2;
            for (int64_t cy = 0; cy < h.h; ++cy)
                for (int64_t cx = 0; cx < h.w; ++cx) {
                    pl.reads.push_back({h.addr + static_cast<uint64_t>(cy * h.row + cx * h.pix),
                                        static_cast<uint64_t>(g.in_channels() * eb)});
                    if (g.version == VER::YOLOV8)
                        pl.reads.push_back({h.cls_addr + static_cast<uint64_t>(cy * h.cls_row + cx * h.cls_pix),
                                            static_cast<uint64_t>(g.nc) * static_cast<uint64_t>(eb)});
                }
        }
    }
    const uint64_t values = static_cast<uint64_t>(ofm(s).numel());
    pl.compute_cycles = values * static_cast<uint64_t>(p.npu.genbox_cycles_per_value.value);
    add_writes(pl, ofm(s), c);
    return pl;
}

namespace {

/// Reads value `ch` of cell (y, x) of a head input (F32 or S16 dequantized).
bool head_value(MemView& m, const Head& h, bool cls, int64_t y, int64_t x, int64_t ch, float& v, uint64_t* bad) {
    const uint64_t base = cls ? h.cls_addr : h.addr;
    const int64_t pix = cls ? h.cls_pix : h.pix, row = cls ? h.cls_row : h.row;
    const int eb = h.format == E::FORMAT::F32 ? 4 : 2;
    const uint64_t a = base + static_cast<uint64_t>(y * row + x * pix + ch * eb);
    uint8_t b[4];
    if (!m.read(a, b, static_cast<size_t>(eb))) {
        *bad = a;
        return false;
    }
    if (eb == 4) {
        std::memcpy(&v, b, 4);
    } else {
        int16_t q;
        std::memcpy(&q, b, 2);
        v = static_cast<float>(static_cast<int32_t>(q) - h.zp) * h.scale;
    }
    return true;
}

}  // namespace

Fault exec_genbox(const Command& c, const State& s, MemView& m) {
    Cfg g;
    if (Fault f = genbox_check(c, s, g)) return f;
    const TensorDesc& y = ofm(s);
    uint64_t bad = 0;
    std::vector<uint8_t> params;
    if (!read_blob(m, field_addr(c, G::PARAM_ADDR_LO, G::PARAM_ADDR_HI),
                   static_cast<uint64_t>(g.heads) * kGenboxHeadWords * 4, params, &bad))
        return dma_read_fault(c, bad);
    std::vector<Head> heads;
    int64_t boxes = 0;
    for (uint32_t k = 0; k < g.heads; ++k) {
        heads.push_back(head_at(params, k));
        const Head& h = heads.back();
        if (h.format != E::FORMAT::F32 && h.format != E::FORMAT::S16)
            return make_fault(fault::BAD_DESCRIPTOR, 3,
                              fmt::format("GENBOX head {}: input format {} (F32 or S16)", k, h.format));
        boxes += h.h * h.w * g.boxes_per_cell();
    }
    if (y.numel() != boxes * g.fields())
        return desc_fault(c, 2,
                          fmt::format("{} holds {} values; the heads decode {} boxes x {} fields", y.text(), y.numel(),
                                      boxes, g.fields()));
    std::vector<float> out(static_cast<size_t>(y.numel()));
    const int64_t F = g.fields();
    int64_t b = 0;
    for (const Head& h : heads) {
        if (g.version == VER::YOLOV8) {
            std::vector<float> bins(g.reg_max);
            for (int64_t cy = 0; cy < h.h; ++cy)
                for (int64_t cx = 0; cx < h.w; ++cx, ++b) {
                    float d[4];
                    for (int k = 0; k < 4; ++k) {
                        float mx = -INFINITY;
                        for (uint32_t i = 0; i < g.reg_max; ++i) {
                            if (!head_value(m, h, false, cy, cx, k * g.reg_max + i, bins[i], &bad))
                                return dma_read_fault(c, bad);
                            mx = std::max(mx, bins[i]);
                        }
                        float sum = 0;
                        for (uint32_t i = 0; i < g.reg_max; ++i) sum += std::exp(bins[i] - mx);
                        float e = 0;
                        // The DFL 1x1 convolution: fused multiply-adds in bin order (the
                        // reference library's AVX-512 GEMM order, so the unit equals it there).
                        for (uint32_t i = 0; i < g.reg_max; ++i)
                            e = std::fma(static_cast<float>(i), std::exp(bins[i] - mx) / sum, e);
                        d[k] = e;
                    }
                    const float ax = static_cast<float>(cx) + 0.5f, ay = static_cast<float>(cy) + 0.5f;
                    const float x1 = ax - d[0], y1 = ay - d[1], x2 = ax + d[2], y2 = ay + d[3];
                    float* o = out.data() + b * F;
                    o[0] = (x1 + x2) / 2.0f * h.stride;
                    o[1] = (y1 + y2) / 2.0f * h.stride;
                    o[2] = (x2 - x1) * h.stride;
                    o[3] = (y2 - y1) * h.stride;
                    for (uint32_t k = 0; k < g.nc; ++k) {
                        float t;
                        if (!head_value(m, h, true, cy, cx, k, t, &bad)) return dma_read_fault(c, bad);
                        o[4 + k] = sigmoid(t);
                    }
                }
            continue;
        }
        for (uint32_t a = 0; a < g.na; ++a)
            for (int64_t cy = 0; cy < h.h; ++cy)
                for (int64_t cx = 0; cx < h.w; ++cx, ++b) {
                    float* o = out.data() + b * F;
                    for (int64_t f = 0; f < F; ++f) {
                        float t;
                        if (!head_value(m, h, false, cy, cx, a * F + f, t, &bad)) return dma_read_fault(c, bad);
                        const float sg = sigmoid(t);
                        const float cell = static_cast<float>(f == 0 ? cx : cy);
                        if (g.version == VER::YOLOV5) {
                            if (f < 2)
                                o[f] = (sg * 2.0f + (cell + g.grid_offset)) * h.stride;
                            else if (f < 4)
                                o[f] = (sg * 2.0f) * (sg * 2.0f) * h.anchors[2 * a + static_cast<uint32_t>(f - 2)];
                            else
                                o[f] = sg;
                        } else {  // YOLOv3 (darknet)
                            if (f < 2)
                                o[f] = (sg + (cell + g.grid_offset)) * h.stride;
                            else if (f < 4)
                                o[f] = std::exp(t) * h.anchors[2 * a + static_cast<uint32_t>(f - 2)];
                            else
                                o[f] = sg;
                        }
                    }
                }
    }
    if (!store_floats(y, m, out, &bad)) return dma_write_fault(c, bad);
    return {};
}

}  // namespace npu::tnpuv2::detail
