// SPDX-License-Identifier: MIT
// Disassembles regcmd entries into block/register/field names using the register database.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/regcmd.h"

namespace trace {

/// One line for an entry, e.g. "CNA.CONV_CON3 = 0x00000009  CONV_X_STRIDE=1 CONV_Y_STRIDE=1".
std::string disasm_entry(const hw::rknpu::RegCmd& cmd);

/// A whole buffer of little-endian 64-bit entries, task by task (a task ends at its op-enable
/// entry). Each line is prefixed with the entry index.
std::string disasm_buffer(const std::vector<uint64_t>& words);

}  // namespace trace
