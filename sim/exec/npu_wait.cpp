// SPDX-License-Identifier: MIT
#include "exec/npu_wait.h"

#include <fmt/format.h>

#include "hw/regdb.h"

namespace sim::exec {

using namespace hw::rknpu;

WaitResult wait_core_irq(SocHost& soc, int core, uint64_t deadline_ps, const sc_core::sc_event& abort,
                         const bool& aborted) {
    sc_core::sc_signal<bool>& line = soc.platform().irq(core);
    for (;;) {
        if (aborted) return WaitResult::Aborted;
        if (line.read()) return WaitResult::Irq;
        const uint64_t now = SocHost::now_ps();
        if (now >= deadline_ps) return WaitResult::Timeout;
        sc_core::wait(sc_core::sc_time(static_cast<double>(deadline_ps - now), sc_core::SC_PS),
                      line.posedge_event() | abort);
    }
}

void settle_irq(SocHost& soc, int core) {
    sc_core::sc_signal<bool>& line = soc.platform().irq(core);
    for (int i = 0; i < 4 && line.read(); ++i) sc_core::wait(sc_core::SC_ZERO_TIME);
}

std::string status_text(uint32_t status) {
    static const char* const names[] = {"CNA feature group 0", "CNA feature group 1", "CNA weight group 0",
                                        "CNA weight group 1",  "CNA CSC group 0",     "CNA CSC group 1",
                                        "CORE group 0",        "CORE group 1",        "DPU group 0",
                                        "DPU group 1",         "PPU group 0",         "PPU group 1",
                                        "DMA read error",      "DMA write error"};
    std::string out;
    for (unsigned b = 0; b < 32; ++b) {
        if (!(status & (1u << b))) continue;
        if (!out.empty()) out += ", ";
        out += b < 14 ? names[b] : fmt::format("bit {}", b);
    }
    return fmt::format("0x{:x}{}", status, out.empty() ? "" : " (" + out + ")");
}

std::string explain_core(SocHost& soc, int core, size_t diag0, size_t task0, const std::string& indent) {
    SimHal& hal = soc.hal();
    npu::tlm_models::RknpuCore& c = soc.platform().core(core);
    const uint32_t pc = hal.reg_read32(core, PC_BASE_ADDRESS::kOffset);
    const uint32_t amount = hal.reg_read32(core, PC_REGISTER_AMOUNTS::kOffset);
    const uint32_t raw = hal.reg_read32(core, PC_INTERRUPT_RAW_STATUS::kOffset);
    const uint32_t done = hal.reg_read32(core, soc.soc().npu.pc_task_status_offset.value) &
                          ((1u << soc.soc().npu.pc_task_number_bits.value) - 1u);
    std::string out = fmt::format("{}core {}: PC_BASE_ADDRESS 0x{:08x}, PC_REGISTER_AMOUNTS {}, tasks completed {}, "
                                  "INTERRUPT_RAW_STATUS {}\n",
                                  indent, core, pc, amount, done, status_text(raw));
    for (size_t i = task0; i < c.tasks().size(); ++i) {
        const npu::tlm_models::TaskRecord& t = c.tasks()[i];
        out += fmt::format("{}  task {}: {} ({} regcmd entries), {:.3f} us{}\n", indent, t.index,
                           t.kind.empty() ? "-" : t.kind, t.regcmd_entries, (t.end_ps - t.start_ps) / 1e6,
                           t.faults.empty() ? "" : fmt::format(", {} fault(s)", t.faults.size()));
    }
    for (size_t i = diag0; i < c.diagnostics().size(); ++i) out += fmt::format("{}  model: {}\n", indent, c.diagnostics()[i]);
    return out;
}

}  // namespace sim::exec
