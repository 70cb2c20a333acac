// SPDX-License-Identifier: MIT
// RKNPU core: MMIO register window, interrupt logic and the PC (regcmd fetch, decode, chaining).
#include "npu/tlm/rknpu_core.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "hw/regcmd.h"
#include "hw/regdb.h"
#include "npu/memory/sparse_memory.h"
#include "npu/rknpu/buffer_pool.h"
#include "npu/tlm/mem_stamp.h"
#include "npu/tlm/time.h"

namespace npu::tlm_models {

using namespace hw::rknpu;

namespace {
constexpr uint32_t kErrorBits = PC_INTERRUPT_RAW_STATUS::DMA_READ_ERROR.mask() |
                                PC_INTERRUPT_RAW_STATUS::DMA_WRITE_ERROR.mask() |
                                PC_INTERRUPT_RAW_STATUS::SIM_PROGRAMMING_FAULT.mask();
/// VERSION register value reported by the model (UNVERIFIED: silicon values are not public).
constexpr uint32_t kModelVersion = 0x00010000;
}  // namespace

RknpuCore::RknpuCore(sc_core::sc_module_name name, int index, const hw::SocProfile& soc, SimMode mode,
                     trace::TraceWriter* tw)
    : sc_module(name), mmio("mmio"), dma("dma"), irq("irq"), index_(index), soc_(soc), mode_(mode), tw_(tw) {
    mmio.register_b_transport(this, &RknpuCore::mmio_transport);
    mmio.register_transport_dbg(this, &RknpuCore::mmio_dbg);
    clock_ps_ = static_cast<uint64_t>(1e12 / static_cast<double>(soc.npu.core_clock_hz.value) + 0.5);
    if (tw_) {
        const std::string p = this->name();
        tr_.pc = tw_->track(p, "PC");
        tr_.cna = tw_->track(p, "CNA");
        tr_.core = tw_->track(p, "CORE");
        tr_.dpu = tw_->track(p, "DPU");
        // Several transfers are in flight at once: one lane per outstanding transfer.
        tr_.dma_rd = tw_->track(p, "DMA read", trace::Layout::Lanes);
        tr_.dma_wr = tw_->track(p, "DMA write", trace::Layout::Lanes);
    }
    SC_THREAD(pc_thread);
    SC_METHOD(irq_method);
    sensitive << irq_ev_;
    dont_initialize();
}

uint32_t RknpuCore::reg_read(uint32_t offset) const {
    const uint32_t mask = rf_.read(PC_INTERRUPT_MASK::kOffset);
    if (offset == PC_INTERRUPT_RAW_STATUS::kOffset) return raw_status_;
    if (offset == PC_INTERRUPT_STATUS::kOffset) return raw_status_ & (mask | kErrorBits);
    if (offset == soc_.npu.pc_task_status_offset.value) return task_status_;
    if (offset == PC_VERSION::kOffset) return kModelVersion;
    if (offset == PC_INTERRUPT_CLEAR::kOffset) return 0;
    return rf_.read(offset);
}

void RknpuCore::reg_write(uint32_t offset, uint32_t value) {
    if (offset == PC_INTERRUPT_CLEAR::kOffset) {
        raw_status_ &= ~value;
        update_irq();
        return;
    }
    const RegInfo* r = find_reg(static_cast<uint16_t>(offset));
    if (r && r->access == hw::Access::RO) return;  // writes to read-only registers are ignored
    rf_.write(offset, value);
    if (offset == PC_INTERRUPT_MASK::kOffset) update_irq();
    if (offset == PC_OPERATION_ENABLE::kOffset && (value & 1)) {
        if (busy_) {
            diags_.push_back(fmt::format("{}: OPERATION_ENABLE written while a kick is running; ignored", name()));
            return;
        }
        busy_ = true;
        done_ = false;
        kick_.notify(sc_core::SC_ZERO_TIME);
    }
}

void RknpuCore::update_irq() {
    const uint32_t mask = rf_.read(PC_INTERRUPT_MASK::kOffset);
    irq_level_ = done_ && (raw_status_ & (mask | kErrorBits)) != 0;
    if (tw_) tw_->level(name(), "irq", to_ps(sc_core::sc_time_stamp()), irq_level_);
    irq_ev_.notify(sc_core::SC_ZERO_TIME);
}

void RknpuCore::irq_method() { irq.write(irq_level_); }

void RknpuCore::mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (gp.get_data_length() != 4 || (gp.get_address() & 3) || gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    const uint32_t off = static_cast<uint32_t>(gp.get_address());
    if (off >= rknpu::RegFile::kWindowBytes) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    uint32_t v = 0;
    if (gp.is_write()) {
        std::memcpy(&v, gp.get_data_ptr(), 4);
        reg_write(off, v);
    } else {
        v = reg_read(off);
        std::memcpy(gp.get_data_ptr(), &v, 4);
    }
    delay += from_ps(clock_ps_);  // one register access on the AHB slave
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int RknpuCore::mmio_dbg(tlm::tlm_generic_payload& gp) {
    if (gp.get_data_length() != 4 || gp.is_write()) return 0;
    const uint32_t v = reg_read(static_cast<uint32_t>(gp.get_address()));
    std::memcpy(gp.get_data_ptr(), &v, 4);
    return 4;
}

namespace {
/// DMA segment size and in-flight depth: a segment is one bus transaction; several are kept in
/// flight so the DDR latency is hidden behind the previous data phase (UNVERIFIED: the CNA's real
/// outstanding-request depth is not public; 4 x 4 KiB covers the modelled latency).
constexpr uint64_t kSegmentBytes = 4096;
constexpr size_t kInFlight = 4;
/// How far a core may run ahead of simulated time before it yields to other initiators.
constexpr uint64_t kQuantumPs = 1000000;  // 1 us
/// Weight regions kept as shared images: from this size (smaller ones cost less to copy than to
/// look up), up to this total (then the images are dropped and collected again).
constexpr uint64_t kSnapshotMinBytes = 4096;
constexpr uint64_t kSnapshotBytes = uint64_t{512} << 20;
}  // namespace

bool RknpuCore::mem_stamp(uint64_t addr, uint64_t len, uint64_t& stamp) {
    tlm::tlm_generic_payload p;
    return query_mem_stamp(p, addr, len, stamp, [&](tlm::tlm_generic_payload& q) { return dma->transport_dbg(q); });
}

bool RknpuCore::dma_move(const std::vector<rknpu::DmaRegion>& regions, bool write, std::vector<std::vector<uint8_t>>& data,
                    sc_core::sc_time start, sc_core::sc_time& done, size_t& bad,
                    std::vector<std::shared_ptr<const std::vector<uint8_t>>>* shared) {
    std::deque<sc_core::sc_time> inflight;
    done = start;
    if (!write) data.resize(regions.size());
    if (shared) shared->assign(regions.size(), nullptr);
    size_t run_first = 0, run_end = 0;  // the read run being filled: regions [run_first, run_end)
    uint64_t run_off = 0;
    for (size_t r = 0; r < regions.size(); ++r) {
        const rknpu::DmaRegion& reg = regions[r];
        if (reg.bytes > soc_.mem.ddr_size_bytes.value || reg.addr >> soc_.npu.dma_address_bits.value) {
            diags_.push_back(fmt::format("{}: DMA {} of {} bytes at 0x{:x} ({}) is outside the {}-bit DMA window or "
                                         "larger than memory",
                                         name(), write ? "write" : "read", reg.bytes, reg.addr, reg.what,
                                         soc_.npu.dma_address_bits.value));
            bad = r;
            return false;
        }
        // Timing mode moves no bytes (null data pointer), except the regcmd the PC must decode.
        const bool timing_only = mode_ == SimMode::Timing && reg.block != "PC";
        std::vector<uint8_t>& buf = data[r];
        // A weight image read before at the same memory stamp: the engines get that image (the
        // bytes are the same); the transfer below still runs, timing only.
        const bool snapshot = shared && !write && !timing_only && reg.bytes >= kSnapshotMinBytes &&
                              reg.what == rknpu::kWeightsRead;
        uint64_t stamp0 = memory::kVolatileStamp;
        const Snapshot* hit = nullptr;
        if (snapshot && mem_stamp(reg.addr, reg.bytes, stamp0) && stamp0 != memory::kVolatileStamp) {
            const auto it = snapshots_.find({reg.addr, reg.bytes});
            if (it != snapshots_.end() && it->second.stamp == stamp0) hit = &it->second;
        }
        // The region's bytes by debug transport (no bus time); false when they leave memory.
        const auto read_dbg = [&]() {
            buf.resize(reg.bytes);
            tlm::tlm_generic_payload& gp = dma_gp_;
            gp.set_command(tlm::TLM_READ_COMMAND);
            gp.set_address(reg.addr);
            gp.set_data_ptr(buf.data());
            gp.set_data_length(static_cast<unsigned int>(reg.bytes));
            gp.set_streaming_width(static_cast<unsigned int>(reg.bytes));
            return dma->transport_dbg(gp) == reg.bytes;
        };
        // After the transfer: share the image (a hit whose stamp held), or keep the bytes just read
        // as the region's image when nothing wrote into it meanwhile.
        const auto finish_snapshot = [&]() {
            if (!snapshot) return;
            uint64_t stamp1 = memory::kVolatileStamp;
            const bool same = mem_stamp(reg.addr, reg.bytes, stamp1) && stamp1 == stamp0 && stamp0 != memory::kVolatileStamp;
            if (hit && same) {
                (*shared)[r] = hit->bytes;
                return;
            }
            // Written while the transfer ran (another initiator): the bytes as they are now.
            if (hit && !read_dbg()) buf.assign(reg.bytes, 0);
            if (!same) return;
            const auto it = snapshots_.find({reg.addr, reg.bytes});
            if (it != snapshots_.end() && *it->second.bytes == buf) {
                // A write near the weights moved the stamp (64 KiB pages), not the bytes: the same
                // image, so that what the engines keep for it stays found.
                it->second.stamp = stamp0;
                (*shared)[r] = it->second.bytes;
                buf = std::vector<uint8_t>();
                return;
            }
            if (snapshot_bytes_ + reg.bytes > kSnapshotBytes) snapshots_.clear(), snapshot_bytes_ = 0;
            auto img = std::make_shared<const std::vector<uint8_t>>(std::move(buf));
            buf = std::vector<uint8_t>();
            Snapshot& sn = snapshots_[{reg.addr, reg.bytes}];
            if (sn.bytes) snapshot_bytes_ -= sn.bytes->size();
            sn = Snapshot{img, stamp0};
            snapshot_bytes_ += reg.bytes;
            (*shared)[r] = std::move(img);
        };
        if (reg.cbuf_resident && !write) {
            // Held in the CBUF (WEIGHT_REUSE): no bus time. The model keeps no CBUF image, so the
            // engines get the same bytes from memory by debug transport.
            if (!timing_only && !hit && !read_dbg()) {
                diags_.push_back(fmt::format("{}: CBUF-resident {} of {} bytes at 0x{:x} is outside memory", name(), reg.what,
                                             reg.bytes, reg.addr));
                bad = r;
                return false;
            }
            finish_snapshot();
            continue;
        }
        // A read lands in a buffer an earlier task's writes gave back (buffer_pool.h: no zero fill,
        // every byte is overwritten), burst by burst. With `shared` (the engines' own reads),
        // consecutive regions of one kind (a cube read surface by surface) go into one buffer, the
        // first region's, the others left empty (execute_task's concatenated runs).
        const bool fill = !write && !timing_only && !hit;
        const auto joins = [&](size_t k) {
            const rknpu::DmaRegion& a = regions[k];
            return shared && !a.cbuf_resident && a.what != rknpu::kWeightsRead && a.bytes > 0;
        };
        uint8_t* dst = buf.data();  // a write's source
        if (fill) {
            if (r > 0 && run_end > r) {  // inside the run a previous region opened
                dst = data[run_first].data() + run_off;
            } else {
                run_first = r, run_off = 0, run_end = r + 1;
                uint64_t total = reg.bytes;
                if (joins(r))
                    while (run_end < regions.size() && joins(run_end) && regions[run_end].what == reg.what)
                        total += regions[run_end++].bytes;
                buf = rknpu::overwritten_buffer(total);
                dst = buf.data();
            }
            run_off += reg.bytes;
        }
        sc_core::sc_time first_req = sc_core::SC_ZERO_TIME, last_done = start;
        for (uint64_t off = 0; off < reg.bytes || (reg.bytes == 0 && off == 0); off += kSegmentBytes) {
            const uint64_t n = std::min(kSegmentBytes, reg.bytes - off);
            sc_core::sc_time req = start;
            if (inflight.size() >= kInFlight) {
                req = std::max(req, inflight.front());
                inflight.pop_front();
            }
            const sc_core::sc_time now = sc_core::sc_time_stamp();
            if (req > now + from_ps(kQuantumPs)) sc_core::wait(req - now);
            if (off == 0) first_req = std::max(req, sc_core::sc_time_stamp());
            tlm::tlm_generic_payload& gp = dma_gp_;
            gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
            gp.set_address(reg.addr + off);
            gp.set_data_ptr(timing_only || hit ? nullptr : dst + off);
            gp.set_data_length(static_cast<unsigned int>(n));
            gp.set_streaming_width(static_cast<unsigned int>(n));
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            sc_core::sc_time t = req > sc_core::sc_time_stamp() ? req - sc_core::sc_time_stamp() : sc_core::SC_ZERO_TIME;
            if (n > 0) dma->b_transport(gp, t);
            else gp.set_response_status(tlm::TLM_OK_RESPONSE);
            if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
                diags_.push_back(fmt::format("{}: DMA {} of {} bytes at 0x{:x} ({}) failed: {}", name(),
                                             write ? "write" : "read", n, reg.addr + off, reg.what,
                                             gp.get_response_string()));
                bad = r;
                return false;
            }
            const sc_core::sc_time complete = sc_core::sc_time_stamp() + t;
            inflight.push_back(complete);
            last_done = std::max(last_done, complete);
            if (reg.bytes == 0) break;
        }
        done = std::max(done, last_done);
        finish_snapshot();
        if (tw_)
            tw_->complete(write ? tr_.dma_wr : tr_.dma_rd, reg.what, to_ps(first_req), to_ps(last_done - first_req),
                          {trace::arg("addr", fmt_hex(reg.addr)), trace::arg("bytes", reg.bytes),
                           trace::arg("block", reg.block)},
                          "dma");
    }
    return true;
}

void RknpuCore::raise_fault(TaskRecord& rec, uint32_t status_bits) {
    for (const rknpu::Fault& f : rec.faults)
        diags_.push_back(fmt::format("{}: task {}: {}.{}.{} = {} (0x{:x}): {}", name(), rec.index, f.block, f.reg,
                                     f.field, f.value, f.value, f.message));
    raw_status_ |= status_bits;
}

void RknpuCore::pc_thread() {
    for (;;) {
        sc_core::wait(kick_);
        run_kick();
        busy_ = false;
        done_ = true;
        update_irq();
    }
}

void RknpuCore::reset_core_state() {
    rf_.clear();
    raw_status_ = 0;
    task_status_ = 0;
    done_ = false;
    state_.reset();
    update_irq();
}

}  // namespace npu::tlm_models
