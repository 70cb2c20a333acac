// SPDX-License-Identifier: MIT
#include "rtl/core_seq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace npu::rtl {

using rknpu::ConvConfig;
using rknpu::Precision;

std::string core_unsupported(const ConvConfig& c) {
    if (c.precision != Precision::Int8)
        return fmt::format("{} convolution (the RTL MAC array is int8)", rknpu::precision_name(c.precision));
    if (c.atom != kLanes || c.c2() != kLanes)
        return fmt::format("{}-byte atoms (the RTL array is built for {} int8 lanes)", c.atom, kLanes);
    if (c.clip_truncate > 31) return "CORE_CLIP_TRUNCATE beyond 31";
    if (static_cast<uint64_t>(c.out_w) * c.out_h >= (uint64_t{1} << 28))
        return "more output pixels than the 28-bit tag";
    return "";
}

DwSchedule dw_schedule(const hw::SocProfile& soc) {
    DwSchedule d;
    const auto align = static_cast<uint32_t>(std::max(soc.npu.depthwise_cout_align.value, 1));
    d.cout_align = (align + kLanes - 1) / kLanes * kLanes;
    // Products per cycle the model charges (efficiency x peak) over the products of one beat.
    const uint32_t slots = std::min(d.cout_align / kLanes, kFeatureSlots);
    const double per_beat = soc.npu.depthwise_mac_efficiency.value * soc.npu.int8_macs_per_cycle.value /
                            static_cast<double>(slots * kLanes);
    d.rate_q16 = static_cast<uint32_t>(std::clamp(std::lround(per_beat * kDwRateOne), 1L, static_cast<long>(kDwRateOne)));
    return d;
}

CoreSequencer::CoreSequencer(const ConvConfig& c, const rknpu::ConvOperands& ops, const DwSchedule& dw)
    : c_(c), ops_(ops), dw_(dw) {
    pixels_ = c.out_w * c.out_h;
    const uint32_t max_px = kEntries * slots();
    stripes_ = std::max<uint32_t>(1, (pixels_ + max_px - 1) / max_px);
    const uint32_t per = (pixels_ + stripes_ - 1) / stripes_;  // balanced stripes: no short tail
    stripe_px_ = (per + slots() - 1) / slots() * slots();
    taps_ = c.kernel_w * c.kernel_h;
    in_groups_ = (c.in_c + kLanes - 1) / kLanes;
    out_groups_ = (c.out_c + kLanes - 1) / kLanes;
    const uint32_t dw_align = (std::max(dw.cout_align, kLanes) + kLanes - 1) / kLanes * kLanes;
    dw_slots_ = std::min(dw_align / kLanes, kFeatureSlots);
    const uint32_t dw_groups = (c.out_c + dw_align - 1) / dw_align * dw_align / kLanes;  // padded
    groups_ = c.depthwise ? (dw_groups + dw_slots_ - 1) / dw_slots_ : (c.out_c + kKernels - 1) / kKernels;
    surf_ = rknpu::surface_bytes(c.in_w, c.in_h, c.atom);
}

uint32_t CoreSequencer::stripe_end(uint32_t s) const { return std::min(pixels_, (s + 1) * stripe_px_); }

uint32_t CoreSequencer::set_atoms(uint32_t g) const {
    return c_.depthwise ? dw_slots_ : std::min(kKernels, c_.out_c - g * kKernels);
}

uint64_t CoreSequencer::feature_beats() const {
    uint64_t entries = 0;
    for (uint32_t s = 0; s < stripes_; ++s) entries += stripe_entries(s);
    return entries * groups_ * taps_ * in_groups_per_set();
}

uint64_t CoreSequencer::weight_beats() const {
    uint64_t beats = 0;
    for (uint32_t g = 0; g < groups_; ++g) beats += (set_atoms(g) + kWeightAtoms - 1) / kWeightAtoms;
    return beats * stripes_ * taps_ * in_groups_per_set();
}

void CoreSequencer::advance(Pos& p, uint32_t inner, uint32_t step) const {
    p.n += step;
    if (p.n < inner) return;
    p.n = 0;
    if (++p.i < in_groups_per_set()) return;
    p.i = 0;
    if (++p.t < taps_) return;
    p.t = 0;
    if (++p.s < stripes_) return;
    p.s = 0;
    if (++p.g < groups_) return;
    p.done = true;
}

bool CoreSequencer::next_weight(WeightBeat& b) {
    if (wp_.done) return false;
    const uint32_t n = set_atoms(wp_.g);
    const auto* w = reinterpret_cast<const int8_t*>(ops_.weights.data());
    const uint32_t ky = wp_.t / c_.kernel_w, kx = wp_.t % c_.kernel_w;
    b.count = std::min(kWeightAtoms, n - wp_.n);
    for (uint32_t a = 0; a < kWeightAtoms; ++a)
        for (uint32_t l = 0; l < kLanes; ++l) {
            // Channel group of the atom: the set's input group (normal: atoms are kernels) or, in
            // depthwise mode, the set's group a (atoms are channel groups).
            const uint32_t c1 = c_.depthwise ? wp_.g * dw_slots_ + wp_.n + a : wp_.i;
            const uint32_t ch = c1 * kLanes + l;
            int8_t& dst = b.w[a * kLanes + l];
            if (a >= b.count || ch >= c_.in_c) {
                dst = 0;
                continue;
            }
            const uint64_t at = c_.depthwise ? rknpu::weight_index(c_, 0, ky, kx, ch)
                                             : rknpu::weight_index(c_, wp_.g * kKernels + wp_.n + a, ky, kx, ch);
            dst = w[at];
        }
    b.last = wp_.n + b.count == n;
    advance(wp_, n, b.count);
    return true;
}

void CoreSequencer::load_atom(uint32_t pixel, uint32_t tap, uint32_t c1, int8_t* dst) const {
    const uint32_t oy = pixel / c_.out_w, ox = pixel % c_.out_w;
    const uint32_t ky = tap / c_.kernel_w, kx = tap % c_.kernel_w;
    const int64_t iy = static_cast<int64_t>(oy) * c_.stride_y - c_.pad_top + static_cast<int64_t>(ky) * c_.dilation_y;
    const int64_t ix = static_cast<int64_t>(ox) * c_.stride_x - c_.pad_left + static_cast<int64_t>(kx) * c_.dilation_x;
    if (c1 >= in_groups_) {  // a depthwise channel group of the padding: zeros
        std::memset(dst, 0, kLanes);
        return;
    }
    if (iy < 0 || iy >= c_.in_h || ix < 0 || ix >= c_.in_w) {
        std::memset(dst, static_cast<uint8_t>(static_cast<int8_t>(c_.pad_value)), kLanes);
        return;
    }
    const uint64_t at = c1 * surf_ + (static_cast<uint64_t>(iy) * c_.in_w + static_cast<uint64_t>(ix)) * c_.atom;
    std::memcpy(dst, ops_.feature.data() + at, kLanes);
}

bool CoreSequencer::next_feature(FeatureBeat& b) {
    if (fp_.done) return false;
    const uint32_t entries = stripe_entries(fp_.s);
    const uint32_t p0 = stripe_begin(fp_.s) + fp_.n * slots(), end = stripe_end(fp_.s);
    const uint32_t c1 = c_.depthwise ? fp_.g * dw_slots_ : fp_.i;
    b.pmask = 0;
    b.f.fill(0);
    if (c_.depthwise) {  // one pixel, the set's channel groups
        for (uint32_t q = 0; q < dw_slots_; ++q) load_atom(p0, fp_.t, c1 + q, b.f.data() + q * kLanes);
        b.pmask = (1u << dw_slots_) - 1u;
    } else {  // kPixels pixels of one input channel group
        for (uint32_t q = 0; q < kPixels; ++q)
            if (p0 + q < end) {
                b.pmask |= 1u << q;
                load_atom(p0 + q, fp_.t, c1, b.f.data() + q * kLanes);
            }
    }
    b.first = fp_.t == 0 && fp_.i == 0;
    b.last = fp_.t + 1 == taps_ && fp_.i + 1 == in_groups_per_set();
    b.wlast = fp_.n + 1 == entries;
    b.entry = fp_.n;
    b.pix = p0;
    b.cgrp = c_.depthwise ? fp_.g * dw_slots_ : fp_.g * kKernelAtoms;
    advance(fp_, entries);
    return true;
}

}  // namespace npu::rtl
