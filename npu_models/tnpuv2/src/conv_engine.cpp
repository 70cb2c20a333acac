// SPDX-License-Identifier: MIT
// CONV: convolution (normal, grouped, depthwise, dilated) and matrix products on the MAC array.
// Exact integer sums of (x - IFM zero point) x w, clamped to the accumulator width, then the
// output channel's QTABLE record: + bias, x multiplier >> shift (round half to even), + OFM zero
// point, clamp to [ACT_MIN, ACT_MAX] and the OFM grid; FP32 output mode writes (acc + bias) x scale.
#include <algorithm>

#include "engine_internal.h"

namespace npu::tnpuv2::detail {
namespace {

namespace C = hw::tnpuv2::CONV;
namespace M = E::CONV_MODE;

struct Geom {
    uint32_t mode = 0;
    int64_t n = 1, h = 1, w = 1, c = 1;  // input (CONV/DW) or A rows: n = batch, h = M, c = K
    int64_t oh = 1, ow = 1, m = 1;       // output
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int64_t pt = 0, pb = 0, pl = 0, pr = 0, groups = 1;
    uint32_t wformat = 0;
    int wbits = 8;
    bool fp32_out = false;
    int64_t cg() const { return c / groups; }
    int64_t mg() const { return m / groups; }
};

int64_t weight_count(const Geom& g) {
    if (g.mode == M::DEPTHWISE) return g.kh * g.kw * g.c;
    if (g.mode == M::MATMUL) return g.m * g.c;
    return g.m * g.kh * g.kw * g.cg();
}

/// Bytes of the packed weight blob: rows of the innermost dim (C/G, C, K) packed at WFORMAT;
/// 4-bit rows hold two weights per byte and are padded to a whole byte.
uint64_t weight_bytes(const Geom& g) {
    const int64_t inner = g.mode == M::DEPTHWISE ? g.c : g.cg();
    const int64_t rows = weight_count(g) / std::max<int64_t>(inner, 1);
    const int bits = format_bits(g.wformat);
    const int64_t row = bits == 4 ? (inner + 1) / 2 : inner * (bits / 8);
    return static_cast<uint64_t>(rows * row);
}

Fault geometry(const Command& c, const State& s, Geom& g) {
    for (int slot : {0, 2})
        if (Fault f = need_slot(c, s, slot)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    g.mode = static_cast<uint32_t>(field(c, C::MODE));
    g.wformat = static_cast<uint32_t>(field(c, C::WFORMAT));
    g.wbits = static_cast<int>(field(c, C::WBITS));
    g.fp32_out = field(c, C::OUT_MODE) == E::OUT_MODE::FP32;
    g.kh = field(c, C::KERNEL_H);
    g.kw = field(c, C::KERNEL_W);
    g.sh = field(c, C::STRIDE_H);
    g.sw = field(c, C::STRIDE_W);
    g.dh = field(c, C::DILATION_H);
    g.dw = field(c, C::DILATION_W);
    g.pt = field(c, C::PAD_TOP);
    g.pb = field(c, C::PAD_BOTTOM);
    g.pl = field(c, C::PAD_LEFT);
    g.pr = field(c, C::PAD_RIGHT);
    g.groups = field(c, C::GROUPS);
    if (x.is_float()) return desc_fault(c, 0, "is F32; the MAC array takes integer codes");
    if (g.fp32_out != y.is_float())
        return desc_fault(c, 2, g.fp32_out ? "must be F32 for OUT_MODE FP32" : "is F32 but OUT_MODE is QUANT");
    if (g.mode != M::MATMUL_FM) {
        if (g.wformat != E::FORMAT::S4 && g.wformat != E::FORMAT::S8 && g.wformat != E::FORMAT::S16 &&
            g.wformat != E::FORMAT::S32)
            return field_fault(c, C::WFORMAT, "weights are S4, S8, S16 or S32 (20-bit)");
        const int cap = g.wformat == E::FORMAT::S32 ? 20 : format_bits(g.wformat);
        if (g.wbits > cap) return field_fault(c, C::WBITS, fmt::format("wider than the {}-bit weight format", cap));
    }
    if (x.dims[0] != 1 || x.dims[1] != 1 || y.dims[0] != 1 || y.dims[1] != 1)
        return desc_fault(c, 0, "must be a [N,H,W,C] tensor in DIM2..DIM5 (DIM0, DIM1 = 1)");
    if (g.mode == M::MATMUL || g.mode == M::MATMUL_FM) {
        if (g.kh != 1 || g.kw != 1 || g.sh != 1 || g.sw != 1 || g.pt || g.pb || g.pl || g.pr || g.groups != 1)
            return field_fault(c, C::KERNEL_H, "matrix products take a 1x1 kernel, stride 1, no padding, one group");
        g.n = x.dims[2] * x.dims[3];  // batch rows: N x M(rows)
        g.h = x.dims[4];
        g.c = x.dims[5];
        g.m = y.dims[5];
        g.oh = y.dims[4];
        g.ow = 1;
        g.w = 1;
        if (y.dims[2] * y.dims[3] != g.n || y.dims[4] != g.h)
            return desc_fault(c, 2, fmt::format("dims {} do not match the product of IFM {}", y.text(), x.text()));
        if (g.mode == M::MATMUL_FM) {
            if (Fault f = need_slot(c, s, 1)) return f;
            const TensorDesc& b = ifm2(s);
            if (b.is_float()) return desc_fault(c, 1, "is F32");
            if (b.dims[2] * b.dims[3] != g.n || b.dims[4] != g.c || b.dims[5] != g.m)
                return desc_fault(
                    c, 1, fmt::format("{} is not [batch, K={}, N={}] for IFM {}", b.text(), g.c, g.m, x.text()));
        }
        return {};
    }
    g.n = x.dims[2];
    g.h = x.dims[3];
    g.w = x.dims[4];
    g.c = x.dims[5];
    g.oh = y.dims[3];
    g.ow = y.dims[4];
    g.m = y.dims[5];
    if (y.dims[2] != g.n) return desc_fault(c, 2, "batch differs from the IFM's");
    if (g.mode == M::DEPTHWISE) {
        if (g.m != g.c)
            return desc_fault(c, 2, fmt::format("has {} channels, a depthwise conv keeps the IFM's {}", g.m, g.c));
        g.groups = g.c;
    } else if (g.c % g.groups || g.m % g.groups) {
        return field_fault(c, C::GROUPS, fmt::format("must divide the {} input and {} output channels", g.c, g.m));
    }
    const int64_t ekh = (g.kh - 1) * g.dh + 1, ekw = (g.kw - 1) * g.dw + 1;
    const int64_t want_oh = (g.h + g.pt + g.pb - ekh) / g.sh + 1, want_ow = (g.w + g.pl + g.pr - ekw) / g.sw + 1;
    if (g.h + g.pt + g.pb < ekh || g.w + g.pl + g.pr < ekw || want_oh != g.oh || want_ow != g.ow)
        return desc_fault(
            c, 2,
            fmt::format("is {}x{}: a {}x{} kernel (dilation {}x{}) at stride {}x{} with pads t{} b{} l{} r{} "
                        "over {}x{} gives {}x{}",
                        g.oh, g.ow, g.kh, g.kw, g.dh, g.dw, g.sh, g.sw, g.pt, g.pb, g.pl, g.pr, g.h, g.w, want_oh,
                        want_ow));
    return {};
}

int data_bits(const TensorDesc& t) { return t.bits; }

}  // namespace

OpPlan plan_conv(const Command& c, const State& s, const hw::tnpuv2::Profile& p) {
    OpPlan pl;
    pl.engine = "conv";
    Geom g;
    if ((pl.fault = geometry(c, s, g))) return pl;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    const uint64_t qentries = static_cast<uint64_t>(field(c, C::QTABLE_ENTRIES));
    if (qentries != static_cast<uint64_t>(g.m)) {
        pl.fault = field_fault(c, C::QTABLE_ENTRIES, fmt::format("the OFM has {} channels", g.m));
        return pl;
    }
    const uint64_t qaddr = field_addr(c, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI);
    int wb = g.wbits;
    if (g.mode == M::MATMUL_FM) {
        wb = ifm2(s).bits;
    } else {
        const uint64_t want = weight_bytes(g);
        if (static_cast<uint64_t>(field(c, C::WEIGHT_BYTES)) != want) {
            pl.fault =
                field_fault(c, C::WEIGHT_BYTES, fmt::format("the geometry needs {} bytes of packed weights", want));
            return pl;
        }
        pl.weight_addr = field_addr(c, C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI);
        pl.weight_bytes = want;
        pl.weight_reuse = field(c, C::WEIGHT_REUSE) != 0;
    }
    const char* mode_names[4] = {"conv", "dwconv", "matmul", "matmul"};
    pl.kind = fmt::format("{} {}x{}/{} a{}w{}{}", mode_names[g.mode & 3], g.kh, g.kw, g.sh, data_bits(x), wb,
                          g.fp32_out ? "->f32" : "");
    // Real and padded MACs: the array works on 16 output channels x 8 input channels (seed 003's
    // 8/16-channel granules); depthwise on 16-channel lanes.
    const int64_t taps = g.kh * g.kw;
    if (g.mode == M::DEPTHWISE) {
        pl.macs = static_cast<uint64_t>(g.n * g.oh * g.ow * g.c * taps);
        pl.macs_padded = static_cast<uint64_t>(g.n * g.oh * g.ow * static_cast<int64_t>(ceil_div(g.c, 16) * 16) * taps);
        const uint64_t rate =
            static_cast<uint64_t>(std::max(1, p.npu.depthwise_macs_per_cycle.value / (x.bits > 8 ? 2 : 1)));
        pl.compute_cycles = ceil_div(pl.macs_padded, rate);
    } else {
        const int64_t rows = g.n * g.oh * g.ow;
        pl.macs = static_cast<uint64_t>(rows * g.m * g.cg() * taps);
        pl.macs_padded = static_cast<uint64_t>(rows * g.groups * static_cast<int64_t>(ceil_div(g.mg(), 16) * 16) *
                                               static_cast<int64_t>(ceil_div(g.cg(), 8) * 8) * taps);
        pl.compute_cycles = ceil_div(pl.macs_padded, static_cast<uint64_t>(p.macs_per_cycle(data_bits(x), wb)));
    }
    // On-chip footprint: the input rows one output band needs, the weights, the output band.
    const uint64_t in_eb = static_cast<uint64_t>(std::max(1, x.elem_bits() / 8));
    const int64_t in_rows =
        g.mode >= M::MATMUL ? g.h : std::min<int64_t>(g.h, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
    pl.sram_bytes =
        static_cast<uint64_t>(g.n * in_rows * g.w * g.c) * in_eb +
        (g.mode == M::MATMUL_FM
             ? static_cast<uint64_t>(g.n * g.c * g.m) * static_cast<uint64_t>(std::max(1, ifm2(s).elem_bits() / 8))
             : pl.weight_bytes) +
        static_cast<uint64_t>(g.n * g.oh * g.ow * g.m) * static_cast<uint64_t>(std::max(1, y.elem_bits() / 8)) +
        qentries * kQRecordBytes;
    if (pl.sram_bytes > p.npu.conv_sram_bytes.value) {
        pl.fault =
            make_fault(fault::SRAM_OVERFLOW, static_cast<uint32_t>(std::min<uint64_t>(pl.sram_bytes, 0xffffffffu)),
                       fmt::format("CONV needs {} bytes of on-chip SRAM (input rows, weights, output band, "
                                   "QTABLE), the core has {} (npu.conv_sram_bytes): tile the output into bands",
                                   pl.sram_bytes, p.npu.conv_sram_bytes.value));
        return pl;
    }
    add_reads(pl, x);
    if (g.mode == M::MATMUL_FM)
        add_reads(pl, ifm2(s));
    else if (!pl.weight_reuse)
        for (const Run& r : blob_runs(pl.weight_addr, pl.weight_bytes)) pl.reads.push_back(r);
    for (const Run& r : blob_runs(qaddr, qentries * kQRecordBytes)) pl.reads.push_back(r);
    add_writes(pl, y, c);
    return pl;
}

namespace {

/// Unpacks the weight blob into int32 values, rows of `inner` weights.
std::vector<int32_t> unpack_weights(const std::vector<uint8_t>& blob, const Geom& g) {
    const int64_t inner = g.mode == M::DEPTHWISE ? g.c : g.cg();
    const int64_t n = weight_count(g), rows = n / std::max<int64_t>(inner, 1);
    const int bits = format_bits(g.wformat);
    std::vector<int32_t> w(static_cast<size_t>(n));
    const int64_t row_bytes = bits == 4 ? (inner + 1) / 2 : inner * (bits / 8);
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* src = blob.data() + r * row_bytes;
        for (int64_t k = 0; k < inner; ++k) {
            int32_t v;
            if (bits == 4) {
                const int nib = (src[k / 2] >> ((k & 1) * 4)) & 0xf;
                v = nib >= 8 ? nib - 16 : nib;
            } else if (bits == 8) {
                v = static_cast<int8_t>(src[k]);
            } else if (bits == 16) {
                int16_t t;
                std::memcpy(&t, src + k * 2, 2);
                v = t;
            } else {
                std::memcpy(&v, src + k * 4, 4);
            }
            w[static_cast<size_t>(r * inner + k)] = v;
        }
    }
    return w;
}

}  // namespace

Fault exec_conv(const Command& c, const State& s, const hw::tnpuv2::Profile& p, MemView& m) {
    Geom g;
    if (Fault f = geometry(c, s, g)) return f;
    const TensorDesc &x = ifm(s), &y = ofm(s);
    uint64_t bad = 0;
    std::vector<int64_t> xv;
    if (!load_codes(x, m, xv, &bad)) return dma_read_fault(c, bad);
    std::vector<uint8_t> qt;
    if (!read_blob(m, field_addr(c, C::QTABLE_ADDR_LO, C::QTABLE_ADDR_HI), static_cast<uint64_t>(g.m) * kQRecordBytes,
                   qt, &bad))
        return dma_read_fault(c, bad);
    std::vector<int32_t> w;
    int32_t wzp = 0;
    if (g.mode == M::MATMUL_FM) {
        std::vector<int64_t> bv;
        if (!load_codes(ifm2(s), m, bv, &bad)) return dma_read_fault(c, bad);
        w.assign(bv.begin(), bv.end());
        wzp = ifm2(s).zp;
    } else {
        std::vector<uint8_t> blob;
        if (!read_blob(m, field_addr(c, C::WEIGHT_ADDR_LO, C::WEIGHT_ADDR_HI), weight_bytes(g), blob, &bad))
            return dma_read_fault(c, bad);
        w = unpack_weights(blob, g);
    }
    const int acc_bits = p.npu.accumulator_bits.value;
    const int64_t acc_hi = (int64_t{1} << (acc_bits - 1)) - 1, acc_lo = -acc_hi - 1;
    const int64_t act_lo = std::max<int64_t>(field(c, C::ACT_MIN), y.grid_lo());
    const int64_t act_hi = std::min<int64_t>(field(c, C::ACT_MAX), y.grid_hi());
    std::vector<int32_t> xs(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) xs[i] = static_cast<int32_t>(xv[i] - x.zp);
    std::vector<QRecord> rec(static_cast<size_t>(g.m));
    for (int64_t k = 0; k < g.m; ++k) rec[static_cast<size_t>(k)] = qrecord_at(qt, static_cast<size_t>(k));
    const size_t out_n = static_cast<size_t>(g.n * g.oh * g.ow * g.m);
    std::vector<int64_t> oq(y.is_float() ? 0 : out_n);
    std::vector<float> of(y.is_float() ? out_n : 0);
    auto emit = [&](size_t o, int64_t oc, int64_t acc) {
        acc = std::min(acc_hi, std::max(acc_lo, acc));
        const QRecord& r = rec[static_cast<size_t>(oc)];
        const int64_t v = std::min(acc_hi, std::max(acc_lo, acc + r.bias));
        if (y.is_float())
            of[o] = static_cast<float>(static_cast<double>(v) * static_cast<double>(f32_of_bits(r.mult)));
        else
            oq[o] = requant(v, r.mult, r.shift, y.zp, act_lo, act_hi);
    };
    if (g.mode == M::MATMUL || g.mode == M::MATMUL_FM) {
        // rows r of A (n batches x h rows) times B: MATMUL weights [N][K], MATMUL_FM B [batch][K][N].
        for (int64_t b = 0; b < g.n; ++b)
            for (int64_t r = 0; r < g.h; ++r) {
                const int32_t* a = xs.data() + (b * g.h + r) * g.c;
                for (int64_t j = 0; j < g.m; ++j) {
                    int64_t acc = 0;
                    if (g.mode == M::MATMUL) {
                        const int32_t* wr = w.data() + j * g.c;
                        for (int64_t k = 0; k < g.c; ++k) acc += int64_t{a[k]} * wr[k];
                    } else {
                        const int32_t* bb = w.data() + b * g.c * g.m + j;
                        for (int64_t k = 0; k < g.c; ++k) acc += int64_t{a[k]} * (bb[k * g.m] - wzp);
                    }
                    emit(static_cast<size_t>((b * g.h + r) * g.m + j), j, acc);
                }
            }
    } else {
        const int64_t cg = g.cg(), mg = g.mg();
        std::vector<int64_t> acc(static_cast<size_t>(g.m));
        for (int64_t b = 0; b < g.n; ++b)
            for (int64_t oy = 0; oy < g.oh; ++oy)
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                    std::fill(acc.begin(), acc.end(), 0);
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                        if (iy < 0 || iy >= g.h) continue;
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                            const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                            if (ix < 0 || ix >= g.w) continue;
                            const int32_t* px = xs.data() + ((b * g.h + iy) * g.w + ix) * g.c;
                            if (g.mode == M::DEPTHWISE) {
                                const int32_t* pw = w.data() + (ky * g.kw + kx) * g.c;
                                for (int64_t ch = 0; ch < g.c; ++ch)
                                    acc[static_cast<size_t>(ch)] += int64_t{px[ch]} * pw[ch];
                                continue;
                            }
                            for (int64_t oc = 0; oc < g.m; ++oc) {
                                const int32_t* pw = w.data() + ((oc * g.kh + ky) * g.kw + kx) * cg;
                                const int32_t* pg = px + (oc / mg) * cg;
                                int64_t sum = 0;
                                for (int64_t ch = 0; ch < cg; ++ch) sum += int64_t{pg[ch]} * pw[ch];
                                acc[static_cast<size_t>(oc)] += sum;
                            }
                        }
                    }
                    const size_t base = static_cast<size_t>(((b * g.oh + oy) * g.ow + ox) * g.m);
                    for (int64_t oc = 0; oc < g.m; ++oc)
                        emit(base + static_cast<size_t>(oc), oc, acc[static_cast<size_t>(oc)]);
                }
    }
    const bool ok = y.is_float() ? store_floats(y, m, of, &bad) : store_codes(y, m, oq, &bad);
    if (!ok) return dma_write_fault(c, bad);
    return {};
}

}  // namespace npu::tnpuv2::detail
