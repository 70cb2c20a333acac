// SPDX-License-Identifier: MIT
// tnpuv2 core: MMIO registers, command fetch, per-command DMA + engine execution, faults, IRQ.
#include "tnpu_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

#include "hw/tnpuv2_cmds.h"

namespace npu::tnpuv2 {

namespace R = hw::tnpuv2::reg;
namespace IRQ = hw::tnpuv2::reg::IRQ_RAW_bits;
namespace FC = hw::tnpuv2::fault;

namespace {

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }
sc_core::sc_time ps(uint64_t v) { return sc_core::sc_time::from_value(v); }
constexpr uint64_t kQuantumPs = 1000000;  // a core runs at most 1 us ahead before yielding

/// The core's staging buffers: the planned read runs (filled by DMA) and write runs (drained by
/// DMA). The engines see them as memory; an access outside the plan fails like a bad address.
class Staged : public MemView {
   public:
    Staged(const std::vector<Run>& reads, std::vector<std::vector<uint8_t>>& rdata, const std::vector<Run>& writes,
           std::vector<std::vector<uint8_t>>& wdata)
        : reads_(reads), rdata_(rdata), writes_(writes), wdata_(wdata) {}
    /// Bytes the SRAM holds from an earlier command (CONV weights under WEIGHT_REUSE).
    void resident(uint64_t addr, const std::vector<uint8_t>* bytes) {
        res_addr_ = addr;
        res_ = bytes;
    }
    bool read(uint64_t addr, uint8_t* dst, size_t n) override {
        if (res_ && addr >= res_addr_ && addr + n <= res_addr_ + res_->size()) {
            std::memcpy(dst, res_->data() + (addr - res_addr_), n);
            return true;
        }
        // Bytes written earlier by the same command (e.g. a 4-bit output row) read back first.
        if (const int w = find(writes_, addr, n); w >= 0) {
            std::memcpy(dst, wdata_[static_cast<size_t>(w)].data() + (addr - writes_[static_cast<size_t>(w)].addr), n);
            return true;
        }
        const int r = find(reads_, addr, n);
        if (r < 0) return false;
        std::memcpy(dst, rdata_[static_cast<size_t>(r)].data() + (addr - reads_[static_cast<size_t>(r)].addr), n);
        return true;
    }
    bool write(uint64_t addr, const uint8_t* src, size_t n) override {
        const int w = find(writes_, addr, n);
        if (w < 0) return false;
        std::memcpy(wdata_[static_cast<size_t>(w)].data() + (addr - writes_[static_cast<size_t>(w)].addr), src, n);
        return true;
    }

   private:
    static int find(const std::vector<Run>& runs, uint64_t addr, size_t n) {
        auto it = std::upper_bound(runs.begin(), runs.end(), addr, [](uint64_t a, const Run& r) { return a < r.addr; });
        if (it == runs.begin()) return -1;
        --it;
        if (addr + n > it->addr + it->bytes) return -1;
        return static_cast<int>(it - runs.begin());
    }
    const std::vector<Run>& reads_;
    std::vector<std::vector<uint8_t>>& rdata_;
    const std::vector<Run>& writes_;
    std::vector<std::vector<uint8_t>>& wdata_;
    uint64_t res_addr_ = 0;
    const std::vector<uint8_t>* res_ = nullptr;
};

/// Debug-transport view of memory for parameter blocks an engine reads before planning (GENBOX):
/// their bytes are part of the command's planned reads, so the bus time is counted there.
class DebugView : public MemView {
   public:
    explicit DebugView(tlm_utils::simple_initiator_socket<TnpuCore>& s) : s_(s) {}
    bool read(uint64_t addr, uint8_t* dst, size_t n) override { return io(addr, dst, n, false); }
    bool write(uint64_t, const uint8_t*, size_t) override { return false; }

   private:
    bool io(uint64_t addr, uint8_t* p, size_t n, bool w) {
        tlm::tlm_generic_payload gp;
        gp.set_command(w ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(p);
        gp.set_data_length(static_cast<unsigned int>(n));
        gp.set_streaming_width(static_cast<unsigned int>(n));
        return s_->transport_dbg(gp) == n;
    }
    tlm_utils::simple_initiator_socket<TnpuCore>& s_;
};

}  // namespace

TnpuCore::TnpuCore(sc_core::sc_module_name name, const hw::tnpuv2::Profile& p, Mode mode, trace::TraceWriter* tw)
    : sc_module(name), mmio("mmio"), dma("dma"), irq("irq"), p_(p), mode_(mode), tw_(tw), clock_ps_(p.clock_ps()) {
    mmio.register_b_transport(this, &TnpuCore::mmio_transport);
    mmio.register_transport_dbg(this, &TnpuCore::mmio_dbg);
    SC_THREAD(run_thread);
    SC_METHOD(irq_method);
    sensitive << irq_ev_;
    dont_initialize();
    if (tw_) {
        const std::string n = this->name();
        tr_.fetch = tw_->track(n, "command fetch");
        tr_.conv = tw_->track(n, "conv engine");
        tr_.vector = tw_->track(n, "vector engine");
        tr_.pool = tw_->track(n, "pool engine");
        tr_.move = tw_->track(n, "move engine");
        tr_.genbox = tw_->track(n, "genbox unit");
        tr_.dma_rd = tw_->track(n, "dma read");
        tr_.dma_wr = tw_->track(n, "dma write");
    }
}

uint32_t TnpuCore::reg_read(uint32_t off) const {
    switch (off) {
        case R::ID:
            return R::kIdValue;
        case R::VERSION:
            return hw::tnpuv2::kVersion;
        case R::CONTROL:
            return 0;
        case R::STATUS:
            return (busy_ ? R::STATUS_bits::BUSY : 0) | (fault_code_ ? R::STATUS_bits::FAULTED : 0);
        case R::IRQ_RAW:
            return irq_raw_;
        case R::IRQ_MASK:
            return irq_mask_;
        case R::IRQ_STATUS:
            return irq_raw_ & irq_mask_;
        case R::CMD_BASE_LO:
            return cmd_base_lo_;
        case R::CMD_BASE_HI:
            return cmd_base_hi_;
        case R::CMD_WORDS:
            return cmd_words_;
        case R::CMD_PC:
            return cmd_pc_;
        case R::FAULT_CODE:
            return fault_code_;
        case R::FAULT_INFO:
            return fault_info_;
        case R::FAULT_ADDR_LO:
            return static_cast<uint32_t>(fault_addr_);
        case R::FAULT_ADDR_HI:
            return static_cast<uint32_t>(fault_addr_ >> 32);
        case R::OPS_DONE:
            return ops_done_;
        case R::CYCLES_LO:
            return static_cast<uint32_t>(cycles_);
        case R::CYCLES_HI:
            return static_cast<uint32_t>(cycles_ >> 32);
        case R::CMD_IRQ_CODE:
            return cmd_irq_code_;
        default:
            return 0;
    }
}

void TnpuCore::reg_write(uint32_t off, uint32_t v) {
    switch (off) {
        case R::CONTROL:
            if (v & R::CONTROL_bits::SOFT_RESET) {
                reset_state();
                return;
            }
            if ((v & R::CONTROL_bits::START) && !busy_) {
                busy_ = true;
                start_ev_.notify(sc_core::SC_ZERO_TIME);
            }
            return;
        case R::IRQ_MASK:
            irq_mask_ = v;
            break;
        case R::IRQ_CLEAR:
            irq_raw_ &= ~v;
            break;
        case R::CMD_BASE_LO:
            cmd_base_lo_ = v;
            break;
        case R::CMD_BASE_HI:
            cmd_base_hi_ = v;
            break;
        case R::CMD_WORDS:
            cmd_words_ = v;
            break;
        default:
            return;  // read-only and unmapped offsets ignore writes
    }
    update_irq();
}

void TnpuCore::mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t off = gp.get_address();
    if (gp.get_data_length() != 4 || off % 4 || off >= hw::tnpuv2::kMmioWindowBytes) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    uint32_t v = 0;
    if (gp.is_write()) {
        std::memcpy(&v, gp.get_data_ptr(), 4);
        reg_write(static_cast<uint32_t>(off), v);
    } else {
        v = reg_read(static_cast<uint32_t>(off));
        std::memcpy(gp.get_data_ptr(), &v, 4);
    }
    delay += ps(clock_ps_);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int TnpuCore::mmio_dbg(tlm::tlm_generic_payload& gp) {
    if (gp.get_data_length() != 4 || gp.get_address() % 4 || gp.is_write()) return 0;
    const uint32_t v = reg_read(static_cast<uint32_t>(gp.get_address()));
    std::memcpy(gp.get_data_ptr(), &v, 4);
    return 4;
}

void TnpuCore::update_irq() { irq_ev_.notify(sc_core::SC_ZERO_TIME); }
void TnpuCore::irq_method() { irq.write((irq_raw_ & irq_mask_) != 0); }

void TnpuCore::reset_state() {
    irq_raw_ = irq_mask_ = cmd_pc_ = fault_code_ = fault_info_ = ops_done_ = cmd_irq_code_ = 0;
    fault_addr_ = cycles_ = 0;
    busy_ = false;
    sram_weights_valid_ = false;
    update_irq();
}

void TnpuCore::fail(const Fault& f) {
    fault_code_ = f.code;
    fault_info_ = f.info;
    fault_addr_ = f.addr;
    cmd_pc_ = f.pc;
    irq_raw_ |= fault_irq_bit(f.code);
    diags_.push_back(fmt::format("{}: fault {} ({}) at command word {}: {}", name(), f.code,
                                 hw::tnpuv2::fault::name(f.code), f.pc, f.message));
}

bool TnpuCore::dma_runs(const std::vector<Run>& runs, bool write, std::vector<std::vector<uint8_t>>& data,
                        sc_core::sc_time start, sc_core::sc_time& done, uint64_t* bad, const char* what) {
    const uint64_t seg = static_cast<uint64_t>(p_.npu.dma_segment_bytes.value);
    const uint64_t window = static_cast<uint64_t>(p_.npu.dma_outstanding_bytes.value);
    const bool timing = mode_ == Mode::Timing;
    if (!write) data.resize(runs.size());
    std::deque<std::pair<sc_core::sc_time, uint64_t>> inflight;  // completion, bytes
    uint64_t in_bytes = 0;
    done = start;
    const uint64_t first = start.value();
    for (size_t r = 0; r < runs.size(); ++r) {
        const Run& run = runs[r];
        if ((run.addr + run.bytes) >> p_.npu.dma_address_bits.value) {
            *bad = run.addr;
            return false;
        }
        if (!write && !timing) data[r].resize(run.bytes);
        for (uint64_t off = 0; off < run.bytes; off += seg) {
            const uint64_t n = std::min(seg, run.bytes - off);
            sc_core::sc_time req = start;
            while (!inflight.empty() && in_bytes + n > window) {
                req = std::max(req, inflight.front().first);
                in_bytes -= inflight.front().second;
                inflight.pop_front();
            }
            const sc_core::sc_time now = sc_core::sc_time_stamp();
            if (req > now + ps(kQuantumPs)) sc_core::wait(req - now);
            tlm::tlm_generic_payload gp;
            gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
            gp.set_address(run.addr + off);
            gp.set_data_ptr(timing ? nullptr : data[r].data() + off);
            gp.set_data_length(static_cast<unsigned int>(n));
            gp.set_streaming_width(static_cast<unsigned int>(n));
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            sc_core::sc_time t =
                req > sc_core::sc_time_stamp() ? req - sc_core::sc_time_stamp() : sc_core::SC_ZERO_TIME;
            dma->b_transport(gp, t);
            if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
                *bad = run.addr + off;
                return false;
            }
            const sc_core::sc_time complete = sc_core::sc_time_stamp() + t;
            inflight.emplace_back(complete, n);
            in_bytes += n;
            done = std::max(done, complete);
        }
    }
    if (tw_ && !runs.empty())
        tw_->complete(write ? tr_.dma_wr : tr_.dma_rd, what, first, done.value() - first,
                      {trace::arg("bytes", runs_bytes(runs)), trace::arg("runs", static_cast<uint64_t>(runs.size()))},
                      "dma");
    return true;
}

void TnpuCore::run_thread() {
    for (;;) {
        sc_core::wait(start_ev_);
        const uint64_t t0 = now_ps();
        fault_code_ = fault_info_ = 0;
        fault_addr_ = 0;
        ops_done_ = 0;
        run_stream();
        cycles_ = (now_ps() - t0) / std::max<uint64_t>(clock_ps_, 1);
        busy_ = false;
        update_irq();
    }
}

void TnpuCore::run_stream() {
    // Command fetch: the whole stream over the bus (CMD_WORDS words at CMD_BASE).
    const uint64_t base = cmd_base_lo_ | (static_cast<uint64_t>(cmd_base_hi_) << 32);
    std::vector<std::vector<uint8_t>> sbuf;
    sc_core::sc_time fdone;
    uint64_t bad = 0;
    const uint64_t f0 = now_ps();
    const Mode saved = mode_;
    mode_ = Mode::Full;  // the stream itself always moves (the core must decode it)
    const bool fetched = dma_runs({Run{base, uint64_t{cmd_words_} * 4}}, false, sbuf, sc_core::sc_time_stamp(), fdone,
                                  &bad, "command stream");
    mode_ = saved;
    if (!fetched) {
        Fault f;
        f.code = FC::DMA_READ;
        f.addr = bad;
        f.message = fmt::format("command fetch of {} words at {:#x} outside memory", cmd_words_, base);
        return fail(f);
    }
    sc_core::wait(fdone - sc_core::sc_time_stamp());
    std::vector<uint32_t> words(cmd_words_);
    if (cmd_words_) std::memcpy(words.data(), sbuf[0].data(), words.size() * 4);
    fetch_ps_ += now_ps() - f0;
    if (tw_) tw_->complete(tr_.fetch, "fetch", f0, now_ps() - f0, {trace::arg("words", uint64_t{cmd_words_})}, "npu");
    hw::tnpuv2::DecodeError err;
    const uint32_t declared = hw::tnpuv2::check_header(words, err);
    if (!err && declared > words.size())
        err = {FC::TRUNCATED, fmt::format("the header declares {} words, CMD_WORDS is {}", declared, words.size())};
    if (err) {
        Fault f;
        f.code = err.code;
        f.message = err.message;
        return fail(f);
    }
    words.resize(declared);
    State s;
    DebugView dbg(dma);
    uint32_t pc = hw::tnpuv2::kHeaderWords;
    for (;;) {
        cmd_pc_ = pc;
        hw::tnpuv2::Command c = hw::tnpuv2::decode_command(words, pc, err);
        if (err) {
            Fault f;
            f.code = err.code == FC::TRUNCATED && pc >= words.size() ? FC::NO_END : err.code;
            f.pc = pc;
            f.message = err.message;
            return fail(f);
        }
        pc += 1 + static_cast<uint32_t>(c.payload.size());
        const uint64_t dec_ps = decode_cycles(c, p_) * clock_ps_;
        namespace op = hw::tnpuv2::op;
        if (c.opcode == op::NOP || c.opcode == op::TENSOR || c.opcode == op::IRQ || c.opcode == op::END) {
            sc_core::wait(ps(dec_ps));
            if (c.opcode == op::END) {
                irq_raw_ |= IRQ::DONE;
                return;
            }
            if (c.opcode == op::IRQ) {
                cmd_irq_code_ = static_cast<uint32_t>(hw::tnpuv2::field(c, hw::tnpuv2::IRQ::CODE));
                irq_raw_ |= IRQ::CMD;
                update_irq();
            }
            if (c.opcode == op::TENSOR)
                if (Fault f = apply_tensor(c, s)) {
                    f.pc = c.pc;
                    return fail(f);
                }
            continue;
        }
        OpPlan pl = plan_command(c, s, p_, &dbg);
        if (pl.fault) return fail(pl.fault);
        OpRecord rec;
        rec.pc = c.pc;
        rec.index = ops_done_;
        rec.engine = pl.engine;
        rec.kind = pl.kind;
        rec.macs = pl.macs;
        rec.macs_padded = pl.macs_padded;
        rec.compute_cycles = pl.compute_cycles;
        rec.decode_cycles = decode_cycles(c, p_);
        rec.overhead_cycles = static_cast<uint64_t>(p_.npu.op_overhead_cycles.value);
        rec.start_ps = now_ps();
        rec.fetch_ps = dec_ps;
        // WEIGHT_REUSE: the SRAM must still hold exactly these weights.
        if (pl.weight_bytes) {
            if (pl.weight_reuse && !(sram_weights_valid_ && sram_weight_addr_ == pl.weight_addr &&
                                     sram_weight_bytes_ == pl.weight_bytes)) {
                Fault f;
                f.code = FC::BAD_DESCRIPTOR;
                f.pc = c.pc;
                f.message = fmt::format(
                    "CONV.WEIGHT_REUSE set, but the SRAM holds {} (the command's weights are {} bytes at {:#x})",
                    sram_weights_valid_ ? fmt::format("{} bytes from {:#x}", sram_weight_bytes_, sram_weight_addr_)
                                        : std::string("no weights"),
                    pl.weight_bytes, pl.weight_addr);
                return fail(f);
            }
            sram_weights_valid_ = true;
            sram_weight_addr_ = pl.weight_addr;
            sram_weight_bytes_ = pl.weight_bytes;
        }
        const sc_core::sc_time t0 = sc_core::sc_time_stamp() + ps(dec_ps);
        std::vector<std::vector<uint8_t>> rdata, wdata(pl.writes.size());
        sc_core::sc_time rd_done;
        if (!dma_runs(pl.reads, false, rdata, t0, rd_done, &bad, pl.kind.c_str())) {
            Fault f;
            f.code = FC::DMA_READ;
            f.addr = bad;
            f.pc = c.pc;
            f.message = fmt::format("{}: DMA read at {:#x} outside memory", c.def->name, bad);
            return fail(f);
        }
        for (const Run& r : pl.reads) rec.bytes_read += r.bytes;
        if (mode_ == Mode::Full) {
            for (size_t w = 0; w < pl.writes.size(); ++w) wdata[w].assign(pl.writes[w].bytes, 0);
            Staged view(pl.reads, rdata, pl.writes, wdata);
            if (pl.weight_bytes && !pl.weight_reuse) {  // keep the weights the SRAM now holds
                sram_weight_data_.assign(pl.weight_bytes, 0);
                if (!view.read(pl.weight_addr, sram_weight_data_.data(), pl.weight_bytes)) sram_weight_data_.clear();
            }
            if (pl.weight_reuse) view.resident(pl.weight_addr, &sram_weight_data_);
            if (Fault f = execute_command(c, s, p_, view)) {
                if (f.code == FC::DMA_READ || f.code == FC::DMA_WRITE)
                    f.message += " (outside the command's planned DMA: an engine bug)";
                return fail(f);
            }
        }
        const uint64_t pipe_ps = pl.compute_cycles * clock_ps_;
        const double hidden = p_.npu.load_compute_overlap.value;
        const uint64_t load_ps = (rd_done - t0).value();
        const uint64_t fill_ps = static_cast<uint64_t>(std::llround((1.0 - hidden) * static_cast<double>(load_ps)));
        const sc_core::sc_time comp_end = std::max(rd_done, t0 + ps(fill_ps + pipe_ps));
        if (comp_end > sc_core::sc_time_stamp()) sc_core::wait(comp_end - sc_core::sc_time_stamp());
        sc_core::sc_time wr_done;
        if (!dma_runs(pl.writes, true, wdata, comp_end, wr_done, &bad, pl.kind.c_str())) {
            Fault f;
            f.code = FC::DMA_WRITE;
            f.addr = bad;
            f.pc = c.pc;
            f.message = fmt::format("{}: DMA write at {:#x} outside memory", c.def->name, bad);
            return fail(f);
        }
        for (const Run& r : pl.writes) rec.bytes_written += r.bytes;
        const uint64_t ovh_ps = rec.overhead_cycles * clock_ps_;
        sc_core::wait(wr_done + ps(ovh_ps) - sc_core::sc_time_stamp());
        rec.end_ps = now_ps();
        rec.dma_read_ps = load_ps;
        rec.compute_ps = pipe_ps;
        rec.write_ps = (wr_done - comp_end).value();
        rec.overhead_ps = ovh_ps;
        if (tw_) {
            const int tr = pl.engine == "conv"     ? tr_.conv
                           : pl.engine == "pool"   ? tr_.pool
                           : pl.engine == "move"   ? tr_.move
                           : pl.engine == "genbox" ? tr_.genbox
                                                   : tr_.vector;
            tw_->complete(tr, pl.kind, t0.value(), (comp_end - t0).value(),
                          {trace::arg("op", uint64_t{rec.index}), trace::arg("cycles", pl.compute_cycles),
                           trace::arg("macs", pl.macs)},
                          "npu");
        }
        ++ops_done_;
        records_.push_back(std::move(rec));
    }
}

}  // namespace npu::tnpuv2
