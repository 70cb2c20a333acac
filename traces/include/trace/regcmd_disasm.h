// SPDX-License-Identifier: MIT
// Disassembles regcmd entries into block/register/field names using the register database: enum
// values by name, minus-one counts and byte sizes of fields in units, assumed meanings marked.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/regcmd.h"

namespace trace {

/// One line for an entry, e.g. "CNA.CONV_CON3 = 0x00000009  CONV_X_STRIDE=1 CONV_Y_STRIDE=1".
/// Field values show their meaning: "PROC_PRECISION=INT8", "WIDTH=31 (32)", "LINE_STRIDE=128
/// (512 B)"; "*" marks a field or enum value whose meaning is a documented assumption.
std::string disasm_entry(const hw::rknpu::RegCmd& cmd, hw::rknpu::Generation g);
std::string disasm_entry(const hw::rknpu::RegCmd& cmd);

/// A whole buffer of little-endian 64-bit entries, task by task (a task ends at its op-enable
/// entry). Each line is prefixed with the entry index.
std::string disasm_buffer(const std::vector<uint64_t>& words, hw::rknpu::Generation g);
std::string disasm_buffer(const std::vector<uint64_t>& words);

/// Entry counts of a buffer: register writes to offsets the generation does not define
/// (`unknown`), to registers whose meaning is not public (`unverified`), NOPs.
struct DisasmStats {
    size_t entries = 0, unknown = 0, unverified = 0, nops = 0;
};
DisasmStats disasm_stats(const std::vector<uint64_t>& words, hw::rknpu::Generation g);

}  // namespace trace
