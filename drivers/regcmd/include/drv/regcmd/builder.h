// SPDX-License-Identifier: MIT
// Regcmd stream builder: register writes checked against the register database (the register
// must exist in the target block, every field value must fit), and the four task-ending entries
// (hardware-facts.md Part I §1.2). Field overflow is reported the way RKNN's REGTASK errors are,
// but naming the register and field, not just the offset.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hw/regcmd.h"
#include "hw/regdb.h"

namespace drv::regcmd {

/// A programming error caught while emitting (e.g. a value wider than its field).
class EmitError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// One field assignment; `name` is the register field name in the regdb, the value a number or
/// one of the regdb's value enums (hw::rknpu::enums::*: emitters use these, not bare codes).
struct FieldValue {
    const char* name;
    uint64_t value;
    FieldValue(const char* n, uint64_t v) : name(n), value(v) {}
    template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
    FieldValue(const char* n, E e) : name(n), value(static_cast<uint64_t>(e)) {}
};

class Builder {
   public:
    /// Raw write of a whole register value. `reg` is "BLOCK_REG" as in the regdb (e.g.
    /// "CNA_CONV_CON3"); throws EmitError if the register does not exist.
    void write(const std::string& reg, uint32_t value);
    /// Write a register assembled from named fields; every field must exist and its value fit.
    void write_fields(const std::string& reg, std::initializer_list<FieldValue> fields);
    /// Close the task: PC_BASE_ADDRESS = next task's regcmd address (0 if last),
    /// PC_REGISTER_AMOUNTS = next task's fetch amount, the 0x0041 sync entry and the 0x0081
    /// op-enable entry with the per-block enable mask.
    void end_task(uint32_t next_regcmd_addr, uint32_t next_amount, uint32_t enable_mask);
    /// Pad with NOP entries to a multiple of `entries` (tasks are fetched in whole units).
    void align(size_t entries);
    /// Append entries another builder produced (a task body built elsewhere, already encoded).
    void append(const std::vector<uint64_t>& entries) { words_.insert(words_.end(), entries.begin(), entries.end()); }

    const std::vector<uint64_t>& words() const { return words_; }
    size_t size() const { return words_.size(); }
    void clear() { words_.clear(); }

   private:
    friend std::vector<uint64_t> link_tasks(const std::vector<std::vector<uint64_t>>&, uint64_t, int, uint32_t,
                                            std::vector<size_t>*);
    std::vector<uint64_t> words_;
};

/// Lay out several task bodies (register writes without the ending entries) in one buffer at
/// device address `base_addr`: each task gets its four ending entries chaining to the next task
/// (0 after the last) and is padded to 64 bytes, as open drivers lay regcmd out. Returns the words;
/// `starts` receives each task's first entry index and `regcfg` its register-entry count.
std::vector<uint64_t> link_tasks(const std::vector<std::vector<uint64_t>>& bodies, uint64_t base_addr,
                                 int pc_data_amount_scale, uint32_t enable_mask, std::vector<size_t>* starts = nullptr);

/// Fetch amount for a task of `entries` 64-bit words (including the 4 ending entries) as the PC
/// expects it: ceil(entries / scale) - 1 (vendor rknpu_job_subcore_commit_pc).
uint32_t pc_data_amount(size_t entries, int pc_data_amount_scale);

}  // namespace drv::regcmd
