// SPDX-License-Identifier: MIT
// The tnpuv2 command encoder: TENSOR descriptors and engine commands appended to one stream, with
// the positions of every address word recorded for relocation (addresses are arena offsets until
// the runtime places the arena). Encodes through the generated tables (hw/tnpuv2/codec.h).
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "hw/tnpuv2/codec.h"

namespace drv::tnpuv2 {

/// A tensor descriptor as the encoder writes it: six right-aligned dims (outermost first).
struct Desc {
    uint32_t format = 0;
    int bits = 8;
    int32_t zp = 0;
    uint64_t offset = 0;  ///< arena offset (relocated)
    int rank = 4;
    std::array<int64_t, 6> dims{1, 1, 1, 1, 1, 1};
    std::array<int64_t, 6> strides{0, 0, 0, 0, 0, 0};
};

class StreamBuilder {
   public:
    /// A TENSOR command loading `d` into `slot` (hw::tnpuv2::enums::SLOT).
    void tensor(uint32_t slot, const Desc& d);
    /// Appends an engine command; `addrs` are its (LO, HI) address fields holding arena offsets.
    /// Returns the engine command's index (OPS_DONE order).
    uint32_t engine(const hw::tnpuv2::Command& c,
                    std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs = {});
    /// The complete stream: header, commands, END. `relocs` receives the word indices (within
    /// the stream) of each (low, high) address pair.
    std::vector<uint32_t> finish(std::vector<std::pair<uint32_t, uint32_t>>& relocs) const;
    uint32_t engine_ops() const { return ops_; }

   private:
    void put(const hw::tnpuv2::Command& c,
             std::initializer_list<std::pair<hw::tnpuv2::Field, hw::tnpuv2::Field>> addrs);
    std::vector<uint32_t> body_;
    std::vector<std::pair<uint32_t, uint32_t>> relocs_;  ///< body word indices
    uint32_t ops_ = 0;
};

}  // namespace drv::tnpuv2
