// SPDX-License-Identifier: MIT
// DPU on blocked int32 accumulators (internal to npu_rknpu): the CORE output of the fast int8 conv
// path lies pixel-major in blocks of 16 channels, acc[(b * n + p) * 16 + j] = channel b * 16 + j of
// pixel p (n pixels in the block), the layout the GEMM kernel writes and the DPU consumes without a
// transposition. The common configuration (dpu_simple_config, int8 output) runs in one fused sweep
// per output surface over a range of pixels, so that the GEMM and the DPU can alternate on chunks
// of pixels that stay in the cache. Bit-identical to run_dpu + pack_cube (the simple_row / surface
// kernels' arithmetic; tests/unit/rknpu/engine_equivalence_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "npu/rknpu/dpu_engine.h"

namespace npu::rknpu::detail {

constexpr uint32_t kAccBlock = 16;  ///< channels per accumulator block

/// dpu_int_simple's configuration (BS/BN add-mul-relu, EW bypassed or an add, no LUT); defined in
/// dpu_engine.cpp.
bool dpu_simple_config(const DpuConfig& d);

/// The fused sweep applies: dpu_fast_ok, the simple configuration, int8 output, an atom of 8 or 16,
/// and an EW operand (if any from memory) of int8 elements, per pixel or per channel.
bool dpu_blocked_ok(const DpuConfig& d);

/// Per-lane constants of the fused sweep, resolved once per task for every output surface.
class DpuBlocked {
public:
    DpuBlocked(const DpuConfig& d, const DpuOperands& ops);
    /// Pixels [p0, p0 + n) of every surface: `acc` holds those n pixels in blocks (block stride
    /// n * 16 int32); writes out[s][(p0 + p) * atom + j].
    void run(const int32_t* acc, uint64_t p0, uint64_t n, Surfaces& out) const;
    /// run for the output channels [16 b0, 16 b1) only: the accumulator blocks [b0, b1).
    void run(const int32_t* acc, uint64_t p0, uint64_t n, Surfaces& out, uint32_t b0, uint32_t b1) const;
    /// The whole cube from the MRDMA's compact int8 NC1HWC2 image (d.src_prec Int8).
    void run_image(const uint8_t* img, Surfaces& out) const;

    struct Lanes {
        int64_t a[16], m[16], lo[16], hi[16], a2[16], m2[16], lo2[16], hi2[16], e[16];
    };
    struct Scalars {
        int64_t m_half = 0, msh = 0, m2_half = 0, msh2 = 0, e_off = 0, e_scale = 1, e_half = 0, e_shift = 0;
        int64_t ew_lo = INT64_MIN, ew_hi = INT64_MAX, scale = 1, s_half = 0, shift = 0, offset = 0;
    };
    /// One lane's whole sweep as a single map, out = clamp((x * M + R) >> S, lo, hi) for the input
    /// x (fuse_lane), in natural lane order, S = fused_shift_; with a BS shift S1 (fuse_lane2) x is
    /// first y = clamp((x * M1 + R1) >> S1, lo1, hi1).
    struct Fused {
        int64_t M[16], R[16], lo[16], hi[16];
        int64_t M1[16], R1[16], lo1[16], hi1[16];
    };

    /// Fused for 16-lane atoms in the AVX-512 kernel's order, when the last map's shift S is at
    /// least 32 after a pre-scale (fused_hi): the product lanes' high dwords are
    /// floor((x * M' + R') / 2^32), shifted by S - 32 and clamped in int32. Even lanes (0, 2, ..)
    /// first: e[i] = lane 2i, o[i] = lane 2i + 1.
    struct FusedHi {
        int64_t Me[8], Mo[8], Re[8], Ro[8];
        int32_t lo[16], hi[16];
        int64_t M1e[8], M1o[8], R1e[8], R1o[8], L1e[8], L1o[8], H1e[8], H1o[8];
    };

    /// The task's constants, a function of the DPU fields and the BS / BN (and per-channel EW)
    /// operand bytes alone, shared through the engine cache (engine_cache.h).
    struct Prepared {
        uint32_t lanes = 16, surfaces = 0;
        bool ew_mem = false, ew_cvt = false;  ///< per-pixel int8 EW operand (else e[] per lane)
        int bn_mode = 2;        ///< 0 BN bypassed, 1 without its ALU add, 2 full
        bool ew_used = true;    ///< an EW addend or clamp applies
        uint64_t ew_surf = 0;
        Scalars k;
        std::vector<Lanes> lane;
        bool fused = false;      ///< every lane's sweep folds into one multiply, shift and clamp
        bool two_stage = false;  ///< ... after the BS map of its own (a BS shift)
        int64_t fused_shift = 0;
        std::vector<Fused> fused_lane;
        /// fused_lane in the high-dword form (16 lanes only; empty when a lane's constants do not
        /// fit it), with its right shift after the high dword.
        std::vector<FusedHi> fused_hi;
        int64_t hi_shift = 0;
    };

private:
    void sweep(const int32_t* acc, const uint8_t* img, uint64_t p0, uint64_t n, Surfaces& out, uint32_t sf0,
               uint32_t sf1) const;
    const DpuConfig& d_;
    const DpuOperands& ops_;
    std::shared_ptr<const Prepared> t_;
};

/// Per-lane constants of dpu_engine.cpp's surface kernel (int8 NC1HWC2 in and out, BS, EW add,
/// output convert; lane j = channel c1 * C2 + j of one atom).
struct SurfaceK {
    static constexpr uint32_t kMaxLanes = 64;
    int64_t a[kMaxLanes], m[kMaxLanes], lo[kMaxLanes], hi[kMaxLanes];
    int64_t m_half = 0, msh = 0, e_const = 0, e_off = 0, e_scale = 1, e_half = 0, e_shift = 0;
    int64_t ew_lo = INT64_MIN, ew_hi = INT64_MAX, scale = 1, s_half = 0, shift = 0, offset = 0;
};
/// That kernel (simple_surface_body's arithmetic) written out for AVX-512; lanes 8 or 16. Call
/// only where engine_isa() is Avx512.
void simple_surface_avx512(bool ew_mem, bool ew_cvt, uint32_t lanes, const int8_t* in, const int8_t* ew, int8_t* out,
                           uint64_t P, const SurfaceK& k);

/// Blocked accumulators (n = P pixels) -> the planar order of run_dpu_int_acc / Cube.
void blocked_to_planar(const int32_t* acc, uint64_t P, uint32_t C, int32_t* planar);

}  // namespace npu::rknpu::detail
