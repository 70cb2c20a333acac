// SPDX-License-Identifier: MIT
// Static checks of a regcmd buffer against the register database and a SoC profile: register
// existence and target, reserved bits, read-only writes, the task-ending sequence, enabled vs
// programmed blocks, conv-path legality (field limits, CBUF banks and entries, sizes) and the
// chaining between tasks. Each finding names task, entry, register, field and value, with a hint.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/profile.h"

namespace sim {

struct LintFinding {
    enum class Severity { Error, Warning } severity = Severity::Error;
    std::string code;  ///< stable id, e.g. "E-target"
    int task = -1;
    long entry = -1;   ///< index of the 64-bit entry, -1 for task-level findings
    std::string reg;   ///< "CNA.CBUF_CON0" or ""
    std::string field;
    uint64_t value = 0;
    std::string message;
    std::string hint;
    std::string text() const;
};

struct LintOptions {
    /// Device address of entry 0; when absent it is inferred from the first chain pointer.
    std::optional<uint64_t> base_addr;
};

std::vector<LintFinding> lint_regcmd(const std::vector<uint64_t>& words, const hw::SocProfile& soc,
                                     const LintOptions& opt = {});

}  // namespace sim
