// SPDX-License-Identifier: MIT
// The convolution sequencer in front of the RTL MAC array (the CNA's CSC role, NVDLA lineage):
// it walks an int8 conv task (ConvConfig + the bytes the CNA DMA fetched) in the order the array
// computes it and produces the weight-set and feature-beat streams of npu_core_mac.sv.
//
// Order (normal conv): kernel group (kKernels output channels) -> stripe (<= kEntries * kPixels
// output pixels, row-major; stripes of one group are equal in size) -> kernel tap (ky, kx) ->
// input channel group (kLanes channels) -> accumulator entry (kPixels pixels). One weight set per
// (group, stripe, tap, channel group): the kernels' atoms for that tap and channel group,
// kWeightAtoms per beat, so the array reloads weights once per stripe pass (it has shadow
// registers for the next set).
// Depthwise: channel set (the beat's channel groups: DwSchedule::cout_align / kLanes of them, at
// most kFeatureSlots; groups of the padded channels included, computed on zeros and not emitted)
// -> stripe (<= kEntries pixels) -> tap -> entry (one pixel), one weight atom per channel group
// of the set. Taps outside the input read PAD_VALUE (the CNA's padding).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "npu/rknpu/conv_config.h"
#include "npu/rknpu/conv_engine.h"
#include "hw/profile.h"
#include "rtl/streams.h"

namespace npu::rtl {

/// The depthwise schedule of a SoC profile: npu.depthwise_cout_align (rounded up to kLanes) and
/// the lane utilisation npu.depthwise_mac_efficiency x npu.int8_macs_per_cycle / (the products
/// of one beat: min(align / kLanes, kFeatureSlots) x kLanes), at most one beat per cycle.
DwSchedule dw_schedule(const hw::SocProfile& soc);

/// Why the RTL CORE cannot run this conv task ("" = it can): int8 only, 16-byte atoms.
std::string core_unsupported(const rknpu::ConvConfig& c);

class CoreSequencer {
   public:
    /// `c` must be supported (core_unsupported(c) empty); the operands stay referenced.
    CoreSequencer(const rknpu::ConvConfig& c, const rknpu::ConvOperands& ops, const DwSchedule& dw = {});

    bool next_weight(WeightBeat& b);
    bool next_feature(FeatureBeat& b);

    /// Output atoms the CORE emits (pixels x output channel groups).
    uint64_t expected_outputs() const { return static_cast<uint64_t>(pixels_) * out_groups_; }
    uint64_t feature_beats() const;
    uint64_t weight_beats() const;
    uint32_t pixels() const { return pixels_; }
    uint32_t out_groups() const { return out_groups_; }
    bool depthwise() const { return c_.depthwise; }
    uint32_t clip_shift() const { return c_.clip_truncate; }
    uint32_t out_channels() const { return c_.out_c; }
    /// cfg_dw_rate of the task (Q16 beats per cycle; kDwRateOne for normal convolutions).
    uint32_t dw_rate_q16() const { return c_.depthwise ? dw_.rate_q16 : kDwRateOne; }
    /// Output tags of the CORE atoms a completed entry (a beat with `last`) emits, in order.
    template <typename F>
    void entry_outputs(const FeatureBeat& b, F&& emit) const {
        if (c_.depthwise) {  // one pixel, channel groups cgrp + q
            for (uint32_t q = 0; q < dw_slots_; ++q)
                if ((b.pmask >> q & 1u) && (b.cgrp + q) * kLanes < c_.out_c) emit(b.pix, b.cgrp + q);
            return;
        }
        for (uint32_t q = 0; q < kPixels; ++q) {
            if (!(b.pmask >> q & 1u)) continue;
            const uint32_t atoms = kKernelAtoms;
            for (uint32_t a = 0; a < atoms; ++a)
                if ((b.cgrp + a) * kLanes < c_.out_c) emit(b.pix + q, b.cgrp + a);
        }
    }

   private:
    struct Pos {  // loop position: group, stripe, tap, channel group, kernel (weights) / entry (features)
        uint32_t g = 0, s = 0, t = 0, i = 0, n = 0;
        bool done = false;
    };
    uint32_t stripe_begin(uint32_t s) const { return s * stripe_px_; }
    uint32_t stripe_end(uint32_t s) const;
    /// Pixels per feature beat: kPixels, or one in depthwise mode.
    uint32_t slots() const { return c_.depthwise ? 1 : kPixels; }
    uint32_t stripe_entries(uint32_t s) const { return (stripe_end(s) - stripe_begin(s) + slots() - 1) / slots(); }
    uint32_t set_atoms(uint32_t g) const;
    uint32_t in_groups_per_set() const { return c_.depthwise ? 1 : in_groups_; }
    /// Advance `step` items along the innermost index with `inner` items.
    void advance(Pos& p, uint32_t inner, uint32_t step = 1) const;
    void load_atom(uint32_t pixel, uint32_t tap, uint32_t c1, int8_t* dst) const;

    const rknpu::ConvConfig& c_;
    const rknpu::ConvOperands& ops_;
    DwSchedule dw_;
    uint32_t dw_slots_ = 1;  ///< depthwise: channel groups per beat
    uint32_t pixels_ = 0, stripes_ = 0, stripe_px_ = 0, taps_ = 0;
    uint32_t in_groups_ = 0, out_groups_ = 0, groups_ = 0;  ///< groups_: kernel groups (depthwise: channel sets)
    uint64_t surf_ = 0;
    Pos wp_, fp_;
};

}  // namespace npu::rtl
