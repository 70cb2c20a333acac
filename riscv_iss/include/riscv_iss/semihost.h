// SPDX-License-Identifier: MIT
// RISC-V semihosting (ARM semihosting operations, RV32 calling convention) as picolibc's
// --oslib=semihost / --crt0=semihost uses it. Console only: host files other than ":tt" and the
// ":semihosting-features" pseudo-file cannot be opened (the ISS never touches the host file system).
#pragma once
#include <cstdint>
#include <string>

#include "riscv_iss/hart.h"

namespace iss {

class Semihost : public SemihostHandler {
   public:
    /// `cmdline` is returned by SYS_GET_CMDLINE; time-related calls derive from the hart's cycle count
    /// and `clock_hz` (deterministic, no host time).
    Semihost(std::string cmdline, uint64_t clock_hz) : cmdline_(std::move(cmdline)), clock_hz_(clock_hz) {}
    bool semihost_call(Hart& h) override;

   private:
    uint32_t op_open(Hart& h, uint32_t block);
    uint32_t op_write(Hart& h, uint32_t block);
    uint32_t op_read(Hart& h, uint32_t block);
    uint32_t word(Hart& h, uint32_t addr);
    std::string cmdline_;
    uint64_t clock_hz_;
    uint32_t features_pos_ = 0;
    uint32_t errno_ = 0;
};

}  // namespace iss
