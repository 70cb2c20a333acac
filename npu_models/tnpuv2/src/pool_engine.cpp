// SPDX-License-Identifier: MIT
// POOL: max pooling (codes kept), average pooling (exact integer window sums, requantized with the
// multiplier of the window's tap count) and global average pooling over [N,H,W,C].
#include <algorithm>
#include <limits>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace P = hw::tnpuv2::POOL;
namespace MODE = E::POOL_MODE;

struct PoolGeom {
    uint32_t mode = 0;
    int64_t n = 1, h = 1, w = 1, c = 1, oh = 1, ow = 1;
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    bool include_pad = false;
};

Fault pool_geometry(const Command& c, const State& s, PoolGeom& g) {
    for (int slot : {0, 2})
        if (Fault f = need_slot(c, s, slot)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    if (x.is_float() || y.is_float()) return desc_fault(c, 0, "POOL runs on integer codes");
    g.mode = static_cast<uint32_t>(field(c, P::MODE));
    g.include_pad = field(c, P::COUNT_INCLUDE_PAD) != 0;
    g.n = x.dims[2];
    g.h = x.dims[3];
    g.w = x.dims[4];
    g.c = x.dims[5];
    g.oh = y.dims[3];
    g.ow = y.dims[4];
    if (x.dims[0] * x.dims[1] != 1 || y.dims[0] * y.dims[1] != 1 || y.dims[2] != g.n || y.dims[5] != g.c)
        return desc_fault(c, 2, fmt::format("{} must keep the batch and channels of IFM {}", y.text(), x.text()));
    if (g.mode == MODE::GLOBAL_AVG) {
        g.kh = g.h;
        g.kw = g.w;
        if (g.oh != 1 || g.ow != 1) return desc_fault(c, 2, "GLOBAL_AVG writes a 1x1 map");
        return {};
    }
    g.kh = field(c, P::KERNEL_H);
    g.kw = field(c, P::KERNEL_W);
    g.sh = field(c, P::STRIDE_H);
    g.sw = field(c, P::STRIDE_W);
    g.pt = field(c, P::PAD_TOP);
    g.pb = field(c, P::PAD_BOTTOM);
    g.pl = field(c, P::PAD_LEFT);
    g.pr = field(c, P::PAD_RIGHT);
    // Every output window must start inside the padded input (floor or ceil mode both satisfy it).
    if ((g.oh - 1) * g.sh >= g.h + g.pt + g.pb || (g.ow - 1) * g.sw >= g.w + g.pl + g.pr || g.oh < 1 || g.ow < 1)
        return desc_fault(c, 2,
                          fmt::format("{}x{} windows at stride {}x{} do not fit a {}x{} input padded t{} b{} l{} r{}",
                                      g.oh, g.ow, g.sh, g.sw, g.h, g.w, g.pt, g.pb, g.pl, g.pr));
    if (g.mode == MODE::MAX && (x.zp != y.zp || x.format != y.format || x.bits != y.bits))
        return desc_fault(c, 2, "MAX keeps codes: IFM and OFM need the same format, grid and zero point");
    return {};
}

}  // namespace

OpPlan plan_pool(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "pool";
    PoolGeom g;
    if ((pl.fault = pool_geometry(c, s, g))) return pl;
    const char* names[3] = {"max", "avg", "global avg"};
    pl.kind = fmt::format("pool {} {}x{}/{} a{}", names[g.mode], g.kh, g.kw, g.sh, ifm(s).bits);
    const uint64_t taps = static_cast<uint64_t>(g.kh * g.kw);
    const uint64_t work = static_cast<uint64_t>(g.n * g.oh * g.ow * g.c) * taps * (ifm(s).bits > 8 ? 2 : 1);
    pl.compute_cycles = ceil_div(work, static_cast<uint64_t>(p.npu.pool_elems_per_cycle.value));
    add_reads(pl, ifm(s));
    if (g.mode != MODE::MAX) {
        const uint64_t need = g.mode == MODE::GLOBAL_AVG ? 1 : taps;
        const uint64_t have = static_cast<uint64_t>(field(c, P::TABLE_ENTRIES));
        if (have < need) {
            pl.fault = field_fault(c, P::TABLE_ENTRIES,
                                   fmt::format("average pooling needs a record for each of 1..{} taps", need));
            return pl;
        }
        for (const Run& r : blob_runs(field_addr(c, P::TABLE_ADDR_LO, P::TABLE_ADDR_HI), have * kPoolRecordBytes))
            pl.reads.push_back(r);
    }
    add_writes(pl, ofm(s), c);
    return pl;
}

Fault exec_pool(const Command& c, const State& s, MemView& m) {
    PoolGeom g;
    if (Fault f = pool_geometry(c, s, g)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    uint64_t bad = 0;
    std::vector<int64_t> xv;
    if (!load_codes(x, m, xv, &bad)) return dma_read_fault(c, bad);
    std::vector<uint8_t> table;
    if (g.mode != MODE::MAX &&
        !read_blob(m, field_addr(c, P::TABLE_ADDR_LO, P::TABLE_ADDR_HI),
                   static_cast<uint64_t>(field(c, P::TABLE_ENTRIES)) * kPoolRecordBytes, table, &bad))
        return dma_read_fault(c, bad);
    auto record = [&](int64_t count, int32_t& mult, int32_t& shift) {
        const size_t k = static_cast<size_t>(g.mode == MODE::GLOBAL_AVG ? 0 : count - 1);
        std::memcpy(&mult, table.data() + k * kPoolRecordBytes, 4);
        std::memcpy(&shift, table.data() + k * kPoolRecordBytes + 4, 4);
    };
    std::vector<int64_t> out(static_cast<size_t>(y.numel()));
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox) {
                const int64_t y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
                const int64_t ya = std::max<int64_t>(0, y0), yb = std::min(g.h, y0 + g.kh);
                const int64_t xa = std::max<int64_t>(0, x0), xb = std::min(g.w, x0 + g.kw);
                // Taps inside the padded input (count_include_pad), or inside the input itself.
                const int64_t pya = std::max(-g.pt, y0), pyb = std::min(g.h + g.pb, y0 + g.kh);
                const int64_t pxa = std::max(-g.pl, x0), pxb = std::min(g.w + g.pr, x0 + g.kw);
                const int64_t count = g.include_pad ? (pyb - pya) * (pxb - pxa) : (yb - ya) * (xb - xa);
                for (int64_t ch = 0; ch < g.c; ++ch) {
                    int64_t acc = g.mode == MODE::MAX ? std::numeric_limits<int64_t>::min() : 0;
                    for (int64_t iy = ya; iy < yb; ++iy)
                        for (int64_t ix = xa; ix < xb; ++ix) {
                            const int64_t v = xv[static_cast<size_t>(((b * g.h + iy) * g.w + ix) * g.c + ch)];
                            acc = g.mode == MODE::MAX ? std::max(acc, v) : acc + (v - x.zp);
                        }
                    int64_t q;
                    if (g.mode == MODE::MAX) {
                        q = (yb > ya && xb > xa) ? acc : x.zp;
                    } else {
                        int32_t mult = 0, shift = 0;
                        record(std::max<int64_t>(count, 1), mult, shift);
                        q = requant(acc, mult, shift, y.zp, y.grid_lo(), y.grid_hi());
                    }
                    out[static_cast<size_t>(((b * g.oh + oy) * g.ow + ox) * g.c + ch)] = q;
                }
            }
    if (!store_codes(y, m, out, &bad)) return dma_write_fault(c, bad);
    return {};
}

}  // namespace npu::tnpuv2::detail
