// SPDX-License-Identifier: MIT
// tnpuv2 command sequencer (plain C++).
#include "npu/tnpuv2/core.h"

#include <cmath>
#include <cstring>

#include "engine_internal.h"

namespace npu::tnpuv2 {

using namespace detail;
namespace IRQ = hw::tnpuv2::reg::IRQ_RAW_bits;

uint64_t decode_cycles(const Command& c, const hw::tnpuv2::Profile& p) {
    return static_cast<uint64_t>(1 + c.payload.size()) * static_cast<uint64_t>(p.npu.cmd_cycles_per_word.value);
}

uint64_t dma_cycles_estimate(uint64_t bytes, bool write, const hw::tnpuv2::Profile& p) {
    if (!bytes) return 0;
    const double bw = p.mem.ddr_peak_bytes_per_s.value * p.mem.ddr_efficiency.value;
    const double lat = write ? p.mem.ddr_write_latency_ns.value : p.mem.ddr_read_latency_ns.value;
    const double s = static_cast<double>(bytes) / bw + lat * 1e-9;
    return static_cast<uint64_t>(std::llround(s * static_cast<double>(p.npu.core_clock_hz.value)));
}

uint32_t fault_irq_bit(uint32_t code) {
    switch (code) {
        case fault::NONE:
            return 0;
        case fault::DMA_READ:
            return IRQ::DMA_READ_FAULT;
        case fault::DMA_WRITE:
            return IRQ::DMA_WRITE_FAULT;
        case fault::BAD_MAGIC:
        case fault::BAD_VERSION:
        case fault::UNKNOWN_OPCODE:
        case fault::BAD_LENGTH:
        case fault::TRUNCATED:
        case fault::NO_END:
            return IRQ::DECODE_FAULT;
        default:
            return IRQ::PROGRAM_FAULT;
    }
}

StreamResult run_stream(const std::vector<uint32_t>& words, const hw::tnpuv2::Profile& p, MemView& m, bool functional) {
    StreamResult r;
    hw::tnpuv2::DecodeError err;
    const uint32_t declared = hw::tnpuv2::check_header(words, err);
    auto stop = [&](Fault f) {
        r.fault = std::move(f);
        r.irq_raw |= fault_irq_bit(r.fault.code);
        return r;
    };
    if (err) return stop(make_fault(err.code, 0, err.message));
    const std::vector<uint32_t> body(words.begin(), words.begin() + std::min<size_t>(words.size(), declared));
    State s;
    uint32_t pc = hw::tnpuv2::kHeaderWords;
    uint32_t ops = 0;
    for (;;) {
        Command c = hw::tnpuv2::decode_command(body, pc, err);
        if (err) {
            Fault f = make_fault(err.code == fault::TRUNCATED && pc >= body.size() ? fault::NO_END : err.code, 0,
                                 err.message);
            f.pc = pc;
            return stop(f);
        }
        pc += 1 + static_cast<uint32_t>(c.payload.size());
        namespace op = hw::tnpuv2::op;
        if (c.opcode == op::NOP) continue;
        if (c.opcode == op::END) {
            r.irq_raw |= IRQ::DONE;
            return r;
        }
        if (c.opcode == op::IRQ) {
            r.irq_raw |= IRQ::CMD;
            r.cmd_irq_code = static_cast<uint32_t>(field(c, hw::tnpuv2::IRQ::CODE));
            continue;
        }
        if (c.opcode == op::TENSOR) {
            if (Fault f = apply_tensor(c, s)) {
                f.pc = c.pc;
                return stop(f);
            }
            continue;
        }
        OpPlan pl = plan_command(c, s, p, &m);
        if (pl.fault) return stop(pl.fault);
        OpRecord rec;
        rec.pc = c.pc;
        rec.index = ops++;
        rec.engine = pl.engine;
        rec.kind = pl.kind;
        rec.macs = pl.macs;
        rec.macs_padded = pl.macs_padded;
        rec.bytes_read = runs_bytes(pl.reads);
        rec.bytes_written = runs_bytes(pl.writes);
        rec.compute_cycles = pl.compute_cycles;
        rec.decode_cycles = decode_cycles(c, p);
        rec.overhead_cycles = static_cast<uint64_t>(p.npu.op_overhead_cycles.value);
        if (functional)
            if (Fault f = execute_command(c, s, p, m)) return stop(f);
        const uint64_t rd = dma_cycles_estimate(rec.bytes_read, false, p),
                       wr = dma_cycles_estimate(rec.bytes_written, true, p);
        const double hidden = p.npu.load_compute_overlap.value;
        const uint64_t exposed = static_cast<uint64_t>(std::llround((1.0 - hidden) * static_cast<double>(rd)));
        r.cycles += rec.decode_cycles + std::max(rd, exposed + rec.compute_cycles) + wr + rec.overhead_cycles;
        r.ops.push_back(std::move(rec));
    }
}

bool FlatMemory::read(uint64_t addr, uint8_t* dst, size_t n) {
    if (addr < base_ || addr + n > base_ + bytes_.size() || addr + n < addr) return false;
    std::memcpy(dst, bytes_.data() + (addr - base_), n);
    return true;
}

bool FlatMemory::write(uint64_t addr, const uint8_t* src, size_t n) {
    if (addr < base_ || addr + n > base_ + bytes_.size() || addr + n < addr) return false;
    std::memcpy(bytes_.data() + (addr - base_), src, n);
    return true;
}

}  // namespace npu::tnpuv2
