// SPDX-License-Identifier: MIT
// The PC (program controller) as a plain interpreter, without SystemC: a kick read from the PC
// registers, each task's fetched regcmd entries applied to the register file, the task planned at
// its op-enable entry, the chain followed through PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS, and every
// fault with the interrupt status bit it raises (docs/rknpu-register-semantics.md §1-4). The
// SystemC core (npu/tlm/rknpu_core.h) adds only bus timing around these steps; replay, lint, the
// direct executor and the fuzz target use the same functions, so no path is laxer than the
// platform.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/profile.h"
#include "hw/regdb.h"
#include "npu/rknpu/reg_file.h"
#include "npu/rknpu/task.h"

namespace npu::rknpu {

/// Entries that end every task (vendor RKNPU_PC_DATA_EXTRA_AMOUNT).
inline constexpr uint64_t kTaskEndEntries = 4;

/// Status bits of PC_INTERRUPT_RAW_STATUS the model raises (regdb field positions).
namespace status {
uint32_t programming_fault();  ///< bit 14 SIM_PROGRAMMING_FAULT (reserved on silicon: model only)
uint32_t dma_read_error();     ///< bit 12
uint32_t dma_write_error();    ///< bit 13
uint32_t error_bits();         ///< all three
}  // namespace status

/// A kick as the PC registers hold it at OPERATION_ENABLE (vendor rknpu_job_subcore_commit_pc).
struct Kick {
    uint64_t addr = 0;     ///< PC_BASE_ADDRESS.PC_SOURCE_ADDR (16-byte units) in bytes
    uint32_t amount = 0;   ///< PC_REGISTER_AMOUNTS.PC_DATA_AMOUNT
    uint32_t tasks = 0;    ///< TASK_CON.TASK_NUMBER
    bool count_clear = false, pingpong = false;
};
Kick read_kick(const RegFile& rf, const hw::SocProfile& soc);

/// Entries the PC fetches for a task whose amount field is `amount`: (amount + 1) x scale
/// (vendor rknpu_job.c). Assumption A-PC-FETCH: when the op-enable entry is not among them the
/// PC fetches up to kTaskEndEntries more (Mesa's chained amounts, ALIGN((n - 4) / 2, 2), are up
/// to four entries short of its tasks, and they run on silicon).
uint64_t fetch_entries(uint32_t amount, const hw::SocProfile& soc);

/// What the PC made of one task's fetched entries.
struct TaskEntries {
    uint64_t used = 0;  ///< entries up to and including the op-enable entry
    bool has_op_en = false, has_sync = false;
    uint32_t enable_mask = 0;  ///< value of the 0x0081 op-enable entry (GLOBAL.OPERATION_ENABLE bits)
    /// PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS writes of the task end; absent when the slot holds a
    /// zero word (Mesa single-task ops, mtx512, the vendor's last task of a chain).
    std::optional<uint32_t> next_addr, next_amount;
    std::vector<Fault> faults;  ///< malformed entries (the PC stops at the first)
};

/// Apply `n` fetched entries to `rf` the way the PC does, stopping at the op-enable entry. PC
/// chain registers are captured, not written to `rf`. A malformed entry (no write flag, no
/// block, no register at the offset on this generation, target of another block) stops it.
TaskEntries apply_entries(const uint64_t* words, uint64_t n, RegFile& rf, hw::rknpu::Generation g);

/// State a core keeps between tasks and kicks.
struct CoreState {
    /// Weights the CBUF holds from the last conv task that loaded them (WEIGHT_REUSE check).
    struct CbufWeights {
        bool valid = false;
        uint64_t addr = 0, bytes = 0;
    } cbuf_weights;
    /// Executer register group per interrupt-raising block (bit i: CNA, CORE, DPU, PPU), toggled
    /// after each task the block runs when its S_POINTER.EXECUTER_PP_EN is set.
    uint32_t exec_group = 0;
    void reset() { *this = CoreState{}; }
};

/// The plan of one task at its op-enable entry, with the PC-level checks and its status bits.
struct TaskStep {
    TaskPlan plan;
    std::vector<Fault> faults;  ///< non-empty: the task does not run
    uint32_t fault_bits = 0;    ///< status bits raised when faults is non-empty
    /// Status bits its completion raises: each enabled block's own bit of the register group the
    /// task ran in (CNA feature/weight/CSC, CORE, DPU, PPU; docs §4). Assumption A-IRQ-GROUP.
    uint32_t done_bits = 0;
};

/// Plan the task whose entries were just applied to `rf`; checks WEIGHT_REUSE against the
/// CBUF-resident weights. Call complete_task() once it ran.
TaskStep plan_step(const TaskEntries& e, const RegFile& rf, const hw::SocProfile& soc, const CoreState& st);
/// The task ran: record its CBUF weights and toggle the ping-pong groups.
void complete_task(const TaskStep& s, const RegFile& rf, CoreState& st);

/// Follows one kick's chain: which address and amount the next fetch uses, when the kick ends.
class ChainWalker {
   public:
    explicit ChainWalker(const Kick& k) : k_(k), addr_(k.addr), amount_(k.amount) {}
    uint32_t index() const { return index_; }  ///< task being fetched / run
    bool done() const { return index_ >= k_.tasks; }
    uint64_t addr() const { return addr_; }
    uint32_t amount() const { return amount_; }
    /// The task ran; move to the next one. A fault when TASK_NUMBER asks for more tasks but the
    /// chain ends here (zero word or PC_BASE_ADDRESS = 0 in the task end).
    std::optional<Fault> advance(const TaskEntries& e);

   private:
    Kick k_;
    uint64_t addr_;
    uint32_t amount_;
    uint32_t index_ = 0;
};

/// Memory as the NPU's DMA sees it (IOVAs or physical addresses): false when an access leaves it.
class DmaPort {
   public:
    virtual ~DmaPort() = default;
    virtual bool read(uint64_t addr, uint8_t* dst, uint64_t n) = 0;
    virtual bool write(uint64_t addr, const uint8_t* src, uint64_t n) = 0;
};

/// One task of a functional kick.
struct KickTask {
    uint32_t index = 0;
    uint64_t addr = 0;     ///< where its entries were fetched
    uint64_t entries = 0;  ///< entries used
    uint32_t enable_mask = 0;  ///< its op-enable value
    std::string kind;
    std::vector<Fault> faults;
};

struct KickResult {
    uint32_t raw_status = 0;      ///< bits raised (OR of every task's, plus fault bits)
    uint32_t tasks_done = 0;      ///< tasks that completed (PC_TASK_STATUS)
    std::vector<KickTask> tasks;  ///< every task fetched, the failing one last
    std::vector<std::string> diagnostics;  ///< "task N: BLOCK.REG.FIELD = v (0x..): message"
    bool ok() const { return (raw_status & status::error_bits()) == 0; }
};

/// Run one kick from the PC registers in `rf` without time: fetch, apply, plan, and (execute =
/// true) move the planned bytes through `mem` and the block engines. Stops at the first fault.
KickResult run_kick(RegFile& rf, CoreState& st, const hw::SocProfile& soc, DmaPort& mem, bool execute = true);

/// "BLOCK.REG.FIELD = v (0xv): message" for diagnostics.
std::string fault_text(const Fault& f);

}  // namespace npu::rknpu
