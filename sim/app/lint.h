// SPDX-License-Identifier: MIT
// Checks of a regcmd buffer against the register database of the profile's generation and the PC
// interpreter the platform runs (npu/rknpu/pc.h): register existence and target, reserved bits,
// read-only writes, the task end, enabled vs programmed blocks, every task's programming as the
// model plans it (the faults replay would raise), CBUF entries, and each chain's pointers and
// amounts (a buffer may hold several independent chains). Errors are what silicon producers never
// write; warnings name the rule's source; notes list the documented assumptions a task relies on.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/profile.h"

namespace sim {

struct LintFinding {
    enum class Severity { Error, Warning, Note } severity = Severity::Error;
    std::string code;  ///< stable id, e.g. "E-target"
    int task = -1;
    long entry = -1;   ///< index of the 64-bit entry, -1 for task-level findings
    std::string reg;   ///< "CNA.CBUF_CON0" or ""
    std::string field;
    uint64_t value = 0;
    std::string message;
    std::string hint;
    std::string source;  ///< where the rule comes from (producer convention, document section)
    std::string text() const;
};

struct LintOptions {
    /// Device address of entry 0; when absent it is inferred from the first chain pointer.
    std::optional<uint64_t> base_addr;
};

std::vector<LintFinding> lint_regcmd(const std::vector<uint64_t>& words, const hw::SocProfile& soc,
                                     const LintOptions& opt = {});

}  // namespace sim
