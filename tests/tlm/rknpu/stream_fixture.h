// SPDX-License-Identifier: MIT
// A small, valid int8 conv task (16x8x8 -> 16, 3x3, pad 1) at fixed DDR addresses, as regcmd
// words plus the tensors it reads: the base that fault and fuzz tests mutate.
#pragma once
#include <cstdint>
#include <vector>

#include "app/replay.h"
#include "hw/profile.h"

namespace testfix {

inline constexpr uint64_t kInput = 0x01000000, kWeights = 0x01010000, kBias = 0x01020000, kOutput = 0x01030000,
                          kRegcmd = 0x02000000;

/// The job (regcmd at kRegcmd, tensors preloaded) and the index of each register write by name.
struct ValidConv {
    sim::RawJob job;
    int index_of(const char* reg) const;  ///< entry index of the write to "BLOCK_REG"; -1 if none
};

/// `tasks` copies of the conv, chained in one buffer, task i writing kOutput + i * 0x1000.
/// `channels` 32 makes it a 32 -> 32 channel conv (two input and two output surfaces).
ValidConv make_valid_conv(const hw::SocProfile& soc, int tasks = 1, int channels = 16);
inline constexpr size_t kOutputBytes = 16 * 8 * 8;

/// Replace the value of the entry at `i`, keeping op and offset.
void set_value(std::vector<uint64_t>& w, int i, uint32_t value);

}  // namespace testfix
