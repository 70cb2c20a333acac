// SPDX-License-Identifier: MIT
// MOVE: the data-movement engine. COPY walks the OFM's six dims and reads the IFM at the same index
// through the IFM's strides - with the strides the compiler chooses that is a transpose, a
// depth/space rearrangement, a channel shuffle, a slice, a concat input or a nearest upscale
// (zero strides); FILL writes a constant; GATHER picks indices along one dim. REQUANT maps codes
// between two grids.
#include <algorithm>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace MV = hw::tnpuv2::MOVE;
namespace MODE = E::MOVE_MODE;

Fault move_check(const Command& c, const State& s, uint32_t mode) {
    if (Fault f = need_slot(c, s, 2)) return f;
    if (mode == MODE::FILL) return {};
    if (Fault f = need_slot(c, s, 0)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    const bool req = field(c, MV::REQUANT) != 0;
    if (x.is_float() != y.is_float()) return desc_fault(c, 2, "MOVE keeps F32 as F32 and codes as codes");
    if (x.is_float() && req) return field_fault(c, MV::REQUANT, "F32 data is not requantized");
    if (!req && !x.is_float() && (x.format != y.format || x.zp != y.zp))
        return desc_fault(
            c, 2, fmt::format("{} differs from IFM {} in format or zero point (set REQUANT)", y.text(), x.text()));
    if (mode == MODE::COPY && x.dims != y.dims)
        return desc_fault(c, 2,
                          fmt::format("{}: COPY walks the OFM's dims, the IFM {} must have the same (strides map them)",
                                      y.text(), x.text()));
    if (mode == MODE::GATHER) {
        if (Fault f = need_slot(c, s, 3)) return f;
        const int ax = static_cast<int>(field(c, MV::AXIS));
        const TensorDesc& idx = aux(s);
        if (idx.format != E::FORMAT::S32 || idx.numel() != y.dims[static_cast<size_t>(ax)])
            return desc_fault(c, 3,
                              fmt::format("must be {} S32 indices (OFM DIM{})", y.dims[static_cast<size_t>(ax)], ax));
        for (size_t d = 0; d < 6; ++d)
            if (static_cast<int>(d) != ax && x.dims[d] != y.dims[d])
                return desc_fault(c, 2, fmt::format("GATHER keeps every dim but DIM{} of IFM {}", ax, x.text()));
    }
    return {};
}

}  // namespace

OpPlan plan_move(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "move";
    const uint32_t mode = static_cast<uint32_t>(field(c, MV::MODE));
    if ((pl.fault = move_check(c, s, mode))) return pl;
    const char* names[3] = {"copy", "fill", "gather"};
    pl.kind = fmt::format("move {}{}", names[mode], field(c, MV::REQUANT) ? " requant" : "");
    if (mode != MODE::FILL) add_reads(pl, ifm(s));
    if (mode == MODE::GATHER) add_reads(pl, aux(s));
    add_writes(pl, ofm(s), c);
    pl.compute_cycles = ceil_div(runs_bytes(pl.writes), static_cast<uint64_t>(p.npu.move_bytes_per_cycle.value));
    return pl;
}

Fault exec_move(const Command& c, const State& s, MemView& m) {
    const uint32_t mode = static_cast<uint32_t>(field(c, MV::MODE));
    if (Fault f = move_check(c, s, mode)) return f;
    const TensorDesc& y = ofm(s);
    uint64_t bad = 0;
    const int64_t n = y.numel();
    if (mode == MODE::FILL) {
        const int64_t v = field(c, MV::FILL_VALUE);
        bool ok;
        if (y.is_float())
            ok = store_floats(y, m, std::vector<float>(static_cast<size_t>(n), f32_of_bits(static_cast<int32_t>(v))),
                              &bad);
        else
            ok = store_codes(y, m, std::vector<int64_t>(static_cast<size_t>(n), v), &bad);
        return ok ? Fault{} : dma_write_fault(c, bad);
    }
    const TensorDesc& x = ifm(s);
    // GATHER: the IFM dense image is indexed along AXIS by the AUX indices.
    std::vector<int64_t> index;
    int ax = 0;
    if (mode == MODE::GATHER) {
        ax = static_cast<int>(field(c, MV::AXIS));
        if (!load_codes(aux(s), m, index, &bad)) return dma_read_fault(c, bad);
        for (size_t i = 0; i < index.size(); ++i)
            if (index[i] < 0 || index[i] >= x.dims[static_cast<size_t>(ax)])
                return make_fault(fault::INDEX_RANGE, static_cast<uint32_t>(i),
                                  fmt::format("MOVE GATHER: index {} = {} outside DIM{} of IFM ({})", i, index[i], ax,
                                              x.dims[static_cast<size_t>(ax)]));
    }
    auto src_of = [&](const std::array<int64_t, 6>& idx) {
        int64_t o = 0;
        for (size_t d = 0; d < 6; ++d)
            o = o * x.dims[d] +
                (static_cast<int>(d) == ax && mode == MODE::GATHER ? index[static_cast<size_t>(idx[d])] : idx[d]);
        return o;
    };
    if (x.is_float()) {
        std::vector<float> xf, yf(static_cast<size_t>(n));
        if (!load_floats(x, m, xf, &bad)) return dma_read_fault(c, bad);
        for_each_index(y.dims, [&](int64_t i, const std::array<int64_t, 6>& idx) {
            yf[static_cast<size_t>(i)] = xf[static_cast<size_t>(src_of(idx))];
        });
        return store_floats(y, m, yf, &bad) ? Fault{} : dma_write_fault(c, bad);
    }
    std::vector<int64_t> xv, yv(static_cast<size_t>(n));
    if (!load_codes(x, m, xv, &bad)) return dma_read_fault(c, bad);
    const bool req = field(c, MV::REQUANT) != 0;
    const int64_t mult = field(c, MV::MULT);
    const int sh = static_cast<int>(field(c, MV::SHIFT));
    for_each_index(y.dims, [&](int64_t i, const std::array<int64_t, 6>& idx) {
        const int64_t v = xv[static_cast<size_t>(src_of(idx))];
        yv[static_cast<size_t>(i)] = req ? requant(v - x.zp, mult, sh, y.zp, y.grid_lo(), y.grid_hi()) : v;
    });
    return store_codes(y, m, yv, &bad) ? Fault{} : dma_write_fault(c, bad);
}

}  // namespace npu::tnpuv2::detail
