// SPDX-License-Identifier: MIT
#include "drv/tnpuv2/driver.h"

#include <fmt/format.h>

#include "hw/tnpuv2_cmds.h"

namespace drv::tnpuv2 {

namespace R = hw::tnpuv2::reg;
namespace IRQ = hw::tnpuv2::reg::IRQ_RAW_bits;

std::string Driver::probe() {
    const uint32_t id = hal_.reg_read32(0, R::ID), ver = hal_.reg_read32(0, R::VERSION);
    if (id != R::kIdValue)
        return fmt::format("ID register reads {:#010x}, not a tnpuv2 core ({:#010x})", id, R::kIdValue);
    if ((ver >> 16) != hw::tnpuv2::kVersionMajor)
        return fmt::format("the core executes command-stream format {}.{}, this driver writes {}.{}", ver >> 16,
                           ver & 0xffff, hw::tnpuv2::kVersionMajor, hw::tnpuv2::kVersionMinor);
    return {};
}

SubmitResult Driver::submit(uint64_t stream_addr, uint32_t words, uint64_t timeout_ns) {
    SubmitResult r;
    const uint32_t all =
        IRQ::DONE | IRQ::CMD | IRQ::DECODE_FAULT | IRQ::PROGRAM_FAULT | IRQ::DMA_READ_FAULT | IRQ::DMA_WRITE_FAULT;
    const uint32_t faults = all & ~(IRQ::DONE | IRQ::CMD);
    hal_.reg_write32(0, R::IRQ_CLEAR, all);
    hal_.reg_write32(0, R::IRQ_MASK, IRQ::DONE | faults);  // IRQ commands are progress marks: not waited on
    hal_.reg_write32(0, R::CMD_BASE_LO, static_cast<uint32_t>(stream_addr));
    hal_.reg_write32(0, R::CMD_BASE_HI, static_cast<uint32_t>(stream_addr >> 32));
    hal_.reg_write32(0, R::CMD_WORDS, words);
    const uint64_t t0 = hal_.now_ns();
    hal_.reg_write32(0, R::CONTROL, R::CONTROL_bits::START);
    if (hal_.wait_irq(0, timeout_ns) == WaitResult::Timeout) {
        r.error = fmt::format("no interrupt within {} ms (CMD_PC {}, {} engine commands done)", timeout_ns / 1000000,
                              hal_.reg_read32(0, R::CMD_PC), hal_.reg_read32(0, R::OPS_DONE));
        hal_.reset(0);
        return r;
    }
    r.elapsed_ns = hal_.now_ns() - t0;
    r.irq_status = hal_.reg_read32(0, R::IRQ_STATUS);
    r.ops_done = hal_.reg_read32(0, R::OPS_DONE);
    r.cmd_pc = hal_.reg_read32(0, R::CMD_PC);
    r.cycles = hal_.reg_read32(0, R::CYCLES_LO) | (static_cast<uint64_t>(hal_.reg_read32(0, R::CYCLES_HI)) << 32);
    if (r.irq_status & faults) {
        r.fault_code = hal_.reg_read32(0, R::FAULT_CODE);
        r.fault_info = hal_.reg_read32(0, R::FAULT_INFO);
        r.fault_addr =
            hal_.reg_read32(0, R::FAULT_ADDR_LO) | (static_cast<uint64_t>(hal_.reg_read32(0, R::FAULT_ADDR_HI)) << 32);
        r.error = fmt::format(
            "fault {} ({}) at command word {} after {} engine commands: IRQ_STATUS {:#x}, FAULT_INFO {}, "
            "FAULT_ADDR {:#x}",
            r.fault_code, hw::tnpuv2::fault::name(r.fault_code), r.cmd_pc, r.ops_done, r.irq_status, r.fault_info,
            r.fault_addr);
        hal_.reg_write32(0, R::IRQ_CLEAR, all);
        hal_.reset(0);
        return r;
    }
    hal_.reg_write32(0, R::IRQ_CLEAR, all);
    r.ok = (r.irq_status & IRQ::DONE) != 0;
    if (!r.ok) r.error = fmt::format("interrupt without DONE: IRQ_STATUS {:#x}", r.irq_status);
    return r;
}

}  // namespace drv::tnpuv2
