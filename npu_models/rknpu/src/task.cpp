// SPDX-License-Identifier: MIT
// Task planning and execution: dispatch on the enabled blocks to the block engines.
#include "npu/rknpu/task.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "npu/rknpu/block_timing.h"
#include "npu/rknpu/buffer_pool.h"
#include "npu/rknpu/conv_engine.h"
#include "npu/rknpu/conv_timing.h"
#include "npu/rknpu/dpu_engine.h"
#include "npu/rknpu/ppu_config.h"

namespace npu::rknpu {

uint64_t TaskPlan::pipeline_cycles() const { return std::max({core_cycles, dpu_cycles, ppu_cycles}); }

namespace {

// DmaRegion::what names execute_task routes the bytes by.
constexpr const char* kWeights = kWeightsRead;
constexpr const char* kFeature = "feature";
constexpr const char* kFeatureLine = "feature line";
constexpr const char* kBsOperands = "bias";
constexpr const char* kBnOperands = "bn operands";
constexpr const char* kEwCube = "ew operand";
constexpr const char* kDpuInput = "dpu input";
constexpr const char* kPpuInput = "ppu input";
constexpr const char* kDpuBlock = "DPU";

/// Read of an NC1HWC2 cube of w atoms per line: one region when compact, else one per surface
/// (compact lines) or one per line.
void plan_cube_read(TaskPlan& p, uint64_t addr, uint32_t w, uint32_t h, uint32_t c1s, uint64_t line_stride,
                    uint64_t surf_stride, const char* what, const char* block, uint32_t atom) {
    const uint64_t line = static_cast<uint64_t>(w) * atom, surf = line * h;
    if (line_stride == line && (c1s == 1 || surf_stride == surf)) {
        p.reads.push_back({addr, surf * c1s, what, block});
    } else if (line_stride == line) {
        for (uint32_t c1 = 0; c1 < c1s; ++c1) p.reads.push_back({addr + c1 * surf_stride, surf, what, block});
    } else {
        for (uint32_t c1 = 0; c1 < c1s; ++c1)
            for (uint32_t y = 0; y < h; ++y)
                p.reads.push_back({addr + c1 * surf_stride + y * line_stride, line, what, block});
    }
}

void plan_cube_write(TaskPlan& p, uint64_t addr, uint32_t w, uint32_t h, uint32_t c, Precision prec,
                     uint64_t surf_stride, const char* what, const char* block, uint32_t atom, uint64_t row_stride = 0) {
    const uint64_t surf = surface_bytes(w, h, atom), row = static_cast<uint64_t>(w) * atom;
    const uint64_t c1s = (c + c2_of(prec, atom) - 1) / c2_of(prec, atom);
    if (row_stride == 0 || row_stride == row) {
        for (uint64_t c1 = 0; c1 < c1s; ++c1) p.writes.push_back({addr + c1 * surf_stride, surf, what, block});
        return;
    }
    for (uint64_t c1 = 0; c1 < c1s; ++c1)
        for (uint64_t y = 0; y < h; ++y) p.writes.push_back({addr + c1 * surf_stride + y * row_stride, row, what, block});
}

/// The DPU's WDMA writes: NC1HWC2 surfaces (rows notch apart), or with TP_EN one channel-last
/// image (assumption A-TP).
void plan_dpu_write(TaskPlan& p, const DpuConfig& d) {
    if (d.transpose) {
        p.writes.push_back({d.dst_addr, static_cast<uint64_t>(d.w) * d.h * d.tp_channels * elem_bytes(d.out), "output",
                            kDpuBlock});
        return;
    }
    plan_cube_write(p, d.dst_addr, d.w, d.h, d.c, d.out, d.dst_surf_stride_bytes, "output", kDpuBlock, d.atom,
                    d.notch ? d.out_row_bytes() : 0);
}

/// DPU_RDMA operand reads (BS, BN, EW) shared by conv and DPU-only tasks.
void plan_dpu_operands(TaskPlan& p, const DpuConfig& d) {
    if (const uint64_t n = d.bs.operand_bytes(d.c)) p.reads.push_back({d.bs.operand_addr, n, kBsOperands, "DPU_RDMA"});
    if (const uint64_t n = d.bn.operand_bytes(d.c)) p.reads.push_back({d.bn.operand_addr, n, kBnOperands, "DPU_RDMA"});
    if (d.ew_bytes()) {
        const uint32_t c1s = (d.c + c2_of(d.ew_prec(), d.atom) - 1) / c2_of(d.ew_prec(), d.atom);
        const uint64_t surf = surface_bytes(d.ew_w(), d.ew_h(), d.atom);
        plan_cube_read(p, d.ew.addr, d.ew_w(), d.ew_h(), c1s, static_cast<uint64_t>(d.ew_w()) * d.atom,
                       d.ew.surf_stride_bytes ? d.ew.surf_stride_bytes : surf, kEwCube, "DPU_RDMA", d.atom);
    }
}

std::string dpu_kind(const DpuConfig& d) {
    std::string k;
    auto add = [&](const char* s) { k += k.empty() ? s : std::string("+") + s; };
    auto stage = [&](const DpuStage& s, const char* alu_name) {
        if (s.bypass) return;
        if (!s.alu_bypass) add(alu_name);
        if (!s.mul_bypass) add(s.mul_prelu ? "leaky" : "mul");
        if (!s.relu_bypass) add(s.relux_en ? "clip" : "relu");
    };
    stage(d.bs, "bias");
    stage(d.bn, "bn");
    if (!d.ew.bypass) {
        if (!d.ew.op_bypass) add(d.ew.op_is_mul ? "ew-mul" : (d.ew.op_from_mem ? "eltwise" : "ew-alu"));
        if (!d.ew.lut_bypass) add("lut");
        if (!d.ew.relu_bypass) add(d.ew.relux_en ? "clip" : "relu");
    }
    return k;
}

/// The PPU on the fly after the DPU: checks it, plans its writes and cycles. Returns whether the
/// DPU still writes its own output (FEATURE_MODE_CFG.OUTPUT_MODE bit 1, UNVERIFIED: value 2 is the
/// open drivers' "to memory"; with the PPU consuming the stream and bit 1 clear, no WDMA write).
bool plan_ppu_on_the_fly(const RegFile& rf, const hw::SocProfile& soc, const DpuConfig& d, TaskPlan& p) {
    PpuConfig c = decode_ppu(rf, true, d.atom);
    p.faults = validate_ppu(c, soc, d.out);
    if (c.in_w != d.w || c.in_h != d.h || c.in_c != d.c)
        p.faults.push_back({"PPU", "DATA_CUBE_IN_WIDTH/HEIGHT/CHANNEL", "CUBE_IN_WIDTH/HEIGHT/CHANNEL", c.in_w * 65536ull + c.in_h,
                            fmt::format("PPU input {}x{}x{} differs from the DPU output {}x{}x{}", c.in_w, c.in_h, c.in_c,
                                        d.w, d.h, d.c)});
    if (!p.faults.empty()) return false;
    p.ppu_cycles = ppu_cycles(soc.npu, cube_atoms(c.in_w, c.in_h, c.in_c, c.prec, c.atom),
                              cube_atoms(c.out_w, c.out_h, c.out_c, c.prec, c.atom));
    p.ppu = c;
    return (d.output_mode & 2u) != 0;
}

const char* pool_name(PoolMethod m) {
    return m == PoolMethod::Max ? "maxpool" : (m == PoolMethod::Min ? "minpool" : "avgpool");
}

void plan_ppu_writes(TaskPlan& p) {
    const PpuConfig& c = *p.ppu;
    plan_cube_write(p, c.dst_addr, c.out_w, c.out_h, c.out_c, c.prec, c.dst_surf_stride_bytes, "pool output", "PPU",
                    c.atom);
}

void plan_conv(const RegFile& rf, const hw::SocProfile& soc, TaskPlan& p) {
    ConvConfig c = decode_conv(rf, p.enable_mask, soc);
    p.faults = validate_conv(c, soc);
    if (!p.faults.empty()) return;
    p.assumptions = conv_assumptions(c);
    const std::string post = dpu_kind(c.dpu);
    p.kind = std::string(c.depthwise ? "dwconv" : "conv") +
             (c.precision == Precision::Fp16 ? "-fp16" : (c.precision == Precision::Int4 ? "-int4" : ""));
    // "conv" / "conv+relu" as before; the bias add is implied, other DPU work is listed.
    if (!post.empty()) {
        const std::string extra = post == "bias" ? "" : (post.rfind("bias+", 0) == 0 ? post.substr(5) : post);
        if (!extra.empty()) p.kind += "+" + extra;
    }
    const ConvCost cost = conv_cost(c, soc);
    p.core_cycles = cost.compute_cycles;
    p.macs = cost.macs;
    p.macs_padded = cost.macs_padded;
    p.dpu_cycles = dpu_cycles(soc.npu, c.out_w, c.out_h, c.out_c, c.dpu.out, !c.dpu.ew.bypass && !c.dpu.ew.lut_bypass, c.atom);
    // WEIGHT_REUSE: the weights stay in the CBUF from the previous task (no re-stream from DDR).
    p.reads.push_back({c.weight_addr, c.weight_bytes, kWeights, "CNA", c.weight_reuse});
    plan_dpu_operands(p, c.dpu);
    // The feature pixels as they lie in memory (docs §8): one region when compact, else one per
    // surface or per row. execute_task turns them into the engines' cube (canonical_feature).
    const uint64_t row = static_cast<uint64_t>(c.in_w) * c.pixel_bytes, surf = row * c.in_h;
    const uint32_t surfaces = c.mem_surfaces;
    if (c.line_stride_bytes == row && (surfaces == 1 || c.surf_stride_bytes == surf)) {
        p.reads.push_back({c.feature_addr, surf * surfaces, kFeature, "CNA"});
    } else if (c.line_stride_bytes == row) {
        for (uint32_t s1 = 0; s1 < surfaces; ++s1)
            p.reads.push_back({c.feature_addr + s1 * c.surf_stride_bytes, surf, kFeature, "CNA"});
    } else {
        for (uint32_t s1 = 0; s1 < surfaces; ++s1)
            for (uint32_t h = 0; h < c.in_h; ++h)
                p.reads.push_back({c.feature_addr + s1 * c.surf_stride_bytes + h * c.line_stride_bytes, row, kFeatureLine,
                                   "CNA"});
    }
    bool dpu_writes = true;
    if (p.enable_mask & enable::PPU) {
        dpu_writes = plan_ppu_on_the_fly(rf, soc, c.dpu, p);
        if (!p.faults.empty()) return;
        p.kind += std::string("+") + pool_name(p.ppu->method);
    }
    if (dpu_writes) plan_dpu_write(p, c.dpu);
    if (p.ppu) plan_ppu_writes(p);
    p.conv = c;
}

void plan_dpu_only(const RegFile& rf, const hw::SocProfile& soc, TaskPlan& p) {
    DpuConfig d = decode_dpu(rf, false, atom_bytes(soc));
    p.faults = validate_dpu(d, soc);
    if (!p.faults.empty()) return;
    if (d.notch) p.assumptions.push_back("A-NOTCH: output rows of width + DATA_CUBE_NOTCH_ADDR.NOTCH_ADDR_0 atoms");
    if (d.transpose) p.assumptions.push_back("A-TP: TP_EN writes the output channel-last (NHWC)");
    p.kind = "dpu" + (d.float_path() ? std::string("-fp16") : std::string()) + ":" + dpu_kind(d);
    p.dpu_cycles = dpu_cycles(soc.npu, d.w, d.h, d.c, d.out, !d.ew.bypass && !d.ew.lut_bypass, d.atom);
    const uint32_t c1s = (d.c + c2_of(d.src_prec, d.atom) - 1) / c2_of(d.src_prec, d.atom);
    plan_cube_read(p, d.src_addr, d.w, d.h, c1s, static_cast<uint64_t>(d.w) * d.atom, d.src_surf_stride_bytes,
                   kDpuInput, "DPU_RDMA", d.atom);
    plan_dpu_operands(p, d);
    bool dpu_writes = true;
    if (p.enable_mask & enable::PPU) {
        dpu_writes = plan_ppu_on_the_fly(rf, soc, d, p);
        if (!p.faults.empty()) return;
        p.kind += std::string("+") + pool_name(p.ppu->method);
    }
    if (dpu_writes) plan_dpu_write(p, d);
    if (p.ppu) plan_ppu_writes(p);
    p.dpu = d;
}

void plan_ppu_only(const RegFile& rf, const hw::SocProfile& soc, TaskPlan& p) {
    PpuConfig c = decode_ppu(rf, false, atom_bytes(soc));
    p.faults = validate_ppu(c, soc);
    if (!p.faults.empty()) return;
    p.kind = std::string("ppu") + (c.prec == Precision::Fp16 ? "-fp16" : "") + ":" + pool_name(c.method);
    p.ppu_cycles = ppu_cycles(soc.npu, cube_atoms(c.in_w, c.in_h, c.in_c, c.prec, c.atom),
                              cube_atoms(c.out_w, c.out_h, c.out_c, c.prec, c.atom));
    const uint32_t c1s = (c.in_c + c2_of(c.prec, c.atom) - 1) / c2_of(c.prec, c.atom);
    plan_cube_read(p, c.src_addr, c.in_w, c.in_h, c1s, c.src_line_stride_bytes, c.src_surf_stride_bytes, kPpuInput,
                   "PPU_RDMA", c.atom);
    p.ppu = c;
    plan_ppu_writes(p);
}

/// Bytes of every read named `what`.
uint64_t plan_bytes(const TaskPlan& plan, const char* what) {
    uint64_t n = 0;
    for (const DmaRegion& r : plan.reads)
        if (r.what == what) n += r.bytes;
    return n;
}

/// Concatenated bytes of every read named `what`, in plan order. The reads are consumed: a single
/// matching buffer (one region, or a run the DMA read into one buffer) is moved out, not copied.
std::vector<uint8_t> gather(const TaskPlan& plan, std::vector<std::vector<uint8_t>>& reads, const char* what) {
    size_t n = 0, last = 0, filled = 0, only = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < plan.reads.size(); ++i)
        if (plan.reads[i].what == what) {
            ++n, last = i, total += plan.reads[i].bytes;
            if (!reads[i].empty()) ++filled, only = i;
        }
    if (n == 1) return std::move(reads[last]);
    if (filled == 1 && reads[only].size() == total) return std::move(reads[only]);
    std::vector<uint8_t> out;
    for (size_t i = 0; i < plan.reads.size(); ++i)
        if (plan.reads[i].what == what) out.insert(out.end(), reads[i].begin(), reads[i].end());
    return out;
}

std::vector<std::vector<uint8_t>> split_writes(const TaskPlan& plan, const std::vector<uint8_t>& img) {
    std::vector<std::vector<uint8_t>> out;
    uint64_t at = 0;
    for (const DmaRegion& w : plan.writes) {
        if (at + w.bytes > img.size()) throw std::logic_error("execute_task: output image smaller than the writes");
        out.emplace_back(img.begin() + static_cast<std::ptrdiff_t>(at), img.begin() + static_cast<std::ptrdiff_t>(at + w.bytes));
        at += w.bytes;
    }
    return out;
}

/// The writes from an image given by surfaces: the surfaces themselves when they are the regions
/// (the usual case), else split from their concatenation.
std::vector<std::vector<uint8_t>> surfaces_to_writes(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& s) {
    bool same = s.size() == plan.writes.size();
    for (size_t i = 0; same && i < s.size(); ++i) same = s[i].size() == plan.writes[i].bytes;
    if (same) return std::move(s);
    std::vector<uint8_t> img;
    for (const auto& v : s) img.insert(img.end(), v.begin(), v.end());
    return split_writes(plan, img);
}

/// Writes of a DPU task: the DPU output (when written) then the PPU output (when the PPU runs).
/// The channel-last image of A-TP: per pixel (rows in order) the first `channels` channels.
std::vector<uint8_t> pack_transposed(const Cube& q, Precision p, uint32_t channels, uint32_t atom) {
    const uint32_t eb = elem_bytes(p);
    const std::vector<uint8_t> nc = pack_cube(q, p, atom);  // saturated, packed elements
    const uint32_t c2 = c2_of(p, atom);
    const uint64_t surf = surface_bytes(q.w, q.h, atom);
    std::vector<uint8_t> img(static_cast<uint64_t>(q.w) * q.h * channels * eb);
    for (uint64_t pix = 0; pix < static_cast<uint64_t>(q.w) * q.h; ++pix)
        for (uint32_t ch = 0; ch < channels; ++ch)
            std::memcpy(img.data() + (pix * channels + ch) * eb, nc.data() + (ch / c2) * surf + pix * atom + (ch % c2) * eb,
                        eb);
    return img;
}

const DpuConfig* dpu_of(const TaskPlan& plan) {
    return plan.conv ? &plan.conv->dpu : (plan.dpu ? &*plan.dpu : nullptr);
}

std::vector<std::vector<uint8_t>> finish(const TaskPlan& plan, const Cube& dpu_out, Precision out, uint32_t atom) {
    std::vector<uint8_t> img;
    const bool dpu_writes = std::any_of(plan.writes.begin(), plan.writes.end(),
                                        [](const DmaRegion& w) { return w.block == kDpuBlock; });
    const DpuConfig* d = dpu_of(plan);
    if (dpu_writes) img = d && d->transpose ? pack_transposed(dpu_out, out, d->tp_channels, atom) : pack_cube(dpu_out, out, atom);
    if (plan.ppu) {
        const std::vector<uint8_t> pooled = pack_cube(run_ppu(*plan.ppu, dpu_out), plan.ppu->prec, plan.ppu->atom);
        img.insert(img.end(), pooled.begin(), pooled.end());
    }
    return split_writes(plan, img);
}

/// Writes of a DPU task from its packed output surfaces (integer paths): the DPU surfaces when the
/// DPU writes, then the PPU's pooled surfaces computed from them on the fly.
std::vector<std::vector<uint8_t>> finish_surfaces(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& dpu) {
    if (!plan.ppu) return surfaces_to_writes(plan, std::move(dpu));
    const bool dpu_writes = std::any_of(plan.writes.begin(), plan.writes.end(),
                                        [](const DmaRegion& w) { return w.block == kDpuBlock; });
    std::vector<const uint8_t*> in;
    for (const auto& v : dpu) in.push_back(v.data());
    std::vector<std::vector<uint8_t>> pooled = run_ppu_int(*plan.ppu, in);
    std::vector<std::vector<uint8_t>> w;
    if (dpu_writes) w = std::move(dpu);
    for (auto& v : pooled) w.push_back(std::move(v));
    return surfaces_to_writes(plan, std::move(w));
}

bool fast_ppu(const TaskPlan& plan) { return !plan.ppu || (ppu_fast_ok(*plan.ppu) && !reference_engines()); }

}  // namespace

namespace {
TaskPlan plan_task_blocks(const RegFile& rf, uint32_t enable_mask, const hw::SocProfile& soc) {
    TaskPlan p;
    p.enable_mask = enable_mask;
    const uint32_t known = enable::CNA | enable::CORE | enable::DPU | enable::DPU_RDMA | enable::PPU | enable::PPU_RDMA;
    if (enable_mask & enable::CNA) {
        if (enable_mask & enable::PPU_RDMA) {
            p.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", enable_mask,
                                "PPU_RDMA with a convolution: the PPU of a conv task takes the DPU output on the fly"});
            return p;
        }
        plan_conv(rf, soc, p);
        return p;
    }
    if ((enable_mask & known) == (enable::DPU | enable::DPU_RDMA) ||
        (enable_mask & known) == (enable::DPU | enable::DPU_RDMA | enable::PPU)) {
        plan_dpu_only(rf, soc, p);
        return p;
    }
    if ((enable_mask & known) == (enable::PPU | enable::PPU_RDMA)) {
        plan_ppu_only(rf, soc, p);
        return p;
    }
    p.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", enable_mask,
                        fmt::format("block combination 0x{:02x} is not modelled (modelled: CNA|CORE|DPU[|DPU_RDMA][|PPU], "
                                    "DPU|DPU_RDMA[|PPU], PPU|PPU_RDMA)",
                                    enable_mask)});
    return p;
}
}  // namespace

TaskPlan plan_task(const RegFile& rf, uint32_t enable_mask, const hw::SocProfile& soc) {
    TaskPlan p = plan_task_blocks(rf, enable_mask, soc);
    if (!p.faults.empty()) return p;
    // Model watchdog (no legal task comes near it): it bounds the memory and time the functional
    // model spends on one task, so a malformed stream cannot exhaust the host.
    constexpr uint64_t kMaxTaskBytes = uint64_t{1} << 30;
    constexpr size_t kMaxRegions = size_t{1} << 22;
    uint64_t bytes = 0;
    for (const auto* list : {&p.reads, &p.writes})
        for (const DmaRegion& r : *list) bytes += r.bytes;
    if (bytes > kMaxTaskBytes || p.reads.size() + p.writes.size() > kMaxRegions) {
        const uint64_t n = p.reads.size() + p.writes.size();
        p.faults.push_back({"PC", "OPERATION_ENABLE", "OP_EN", enable_mask,
                            fmt::format("the task moves {} bytes in {} DMA regions, beyond the model's watchdog of {} "
                                        "bytes / {} regions",
                                        bytes, n, kMaxTaskBytes, kMaxRegions)});
        p.reads.clear();
        p.writes.clear();
    }
    return p;
}

namespace {
std::vector<std::vector<uint8_t>> execute_task_impl(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                                    EngineHooks* hooks, const SharedReads* shared);
}  // namespace

std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, const std::vector<std::vector<uint8_t>>& reads) {
    return execute_task(plan, std::vector<std::vector<uint8_t>>(reads));
}

std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads) {
    return execute_task(plan, std::move(reads), nullptr);
}

std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                               EngineHooks* hooks) {
    return execute_task_impl(plan, std::move(reads), hooks, nullptr);
}

std::vector<std::vector<uint8_t>> execute_task(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                               const SharedReads& shared) {
    if (shared.size() != reads.size()) throw std::logic_error("execute_task: shared read count mismatch");
    return execute_task_impl(plan, std::move(reads), nullptr, &shared);
}

namespace {
std::vector<std::vector<uint8_t>> execute_task_impl(const TaskPlan& plan, std::vector<std::vector<uint8_t>>&& reads,
                                                    EngineHooks* hooks, const SharedReads* shared) {
    if (!plan.faults.empty()) throw std::logic_error("execute_task: plan has faults");
    if (reads.size() != plan.reads.size()) throw std::logic_error("execute_task: read count mismatch");
    // A conv's one weight region may stay the shared image (the blocked int8 path takes it);
    // every other shared read becomes the owned buffer the engines consume.
    std::shared_ptr<const std::vector<uint8_t>> shared_w;
    size_t wi = reads.size();
    if (shared) {
        size_t n = 0;
        for (size_t i = 0; i < reads.size(); ++i)
            if (plan.reads[i].what == kWeights) ++n, wi = i;
        if (!plan.conv || n != 1 || !(*shared)[wi]) wi = reads.size();
        for (size_t i = 0; i < reads.size(); ++i) {
            if (!(*shared)[i]) continue;
            if (!reads[i].empty()) throw std::logic_error("execute_task: a read both shared and owned");
            if (i == wi) shared_w = (*shared)[i];
            else reads[i] = *(*shared)[i];
        }
    }
    // Each region's bytes, or a run of regions of one kind concatenated in the first one's buffer
    // (the others empty: RknpuCore reads a cube's surfaces into one buffer).
    for (size_t i = 0; i < reads.size();) {
        const uint64_t have = i == wi ? shared_w->size() : reads[i].size();
        if (have == plan.reads[i].bytes) {
            ++i;
            continue;
        }
        uint64_t total = plan.reads[i].bytes;
        size_t j = i + 1;
        while (i != wi && j < reads.size() && j != wi && total < have && plan.reads[j].what == plan.reads[i].what &&
               reads[j].empty() && plan.reads[j].bytes > 0)
            total += plan.reads[j++].bytes;
        if (total != have) throw std::logic_error("execute_task: read size mismatch");
        i = j;
    }
    if (plan.conv) {
        // The engines' view of the task: the cubes in canonical layout, depthwise channels beyond
        // the input (Mesa pads the output to 64) and kernels beyond WEIGHT_KERNELS accumulate 0.
        ConvConfig c = *plan.conv;
        const uint32_t channels = c.depthwise ? std::max(c.in_c, (c.out_c + c.c2() - 1) / c.c2() * c.c2()) : c.in_c;
        c.present_kernels = c.depthwise ? std::min(c.in_c, c.out_c) : std::min(c.kernels, c.out_c);
        ConvOperands ops;
        // The blocked int8 path packs its GEMM panels straight from the weight blocks as read.
        const bool raw_w = !hooks && fast_ppu(plan) && !c.dpu.transpose && channels == c.in_c &&
                         conv_takes_raw_weights(c, plan_bytes(plan, kWeights));
        if (shared_w && !raw_w) reads[wi] = *shared_w;  // the other paths reshape the weights
        if (raw_w) {
            if (shared_w) ops.weights_shared = shared_w;
            else ops.weights = gather(plan, reads, kWeights);
            ops.weights_raw = true;
            ops.raw_kernels = c.kernels;
        } else {
            ops.weights = canonical_weights(c, gather(plan, reads, kWeights), c.out_c, channels);
        }
        ops.bias = gather(plan, reads, kBsOperands);
        std::vector<uint8_t> raw = gather(plan, reads, kFeature);
        const std::vector<uint8_t> lines = gather(plan, reads, kFeatureLine);
        raw.insert(raw.end(), lines.begin(), lines.end());
        ops.feature = canonical_feature(c, std::move(raw), channels);
        c.in_c = channels;
        c.kernels = c.out_c;
        if (hooks) {  // the co-simulated datapath sees the engines' (canonical) view of the task
            const DpuOperands dops{ops.bias, gather(plan, reads, kBnOperands), gather(plan, reads, kEwCube)};
            Cube out;
            if (hooks->conv_dpu(c, ops, dops, out)) return finish(plan, out, c.dpu.out, c.atom);
            return finish(plan, conv_dpu_cube(c, ops, dops.bn, dops.ew), c.dpu.out, c.atom);
        }
        if (fast_ppu(plan) && !c.dpu.transpose) {  // the DPU writes its surfaces straight (fast int8 path inside)
            std::vector<uint8_t> bn = gather(plan, reads, kBnOperands), ew = gather(plan, reads, kEwCube);
            Surfaces s = run_conv_surfaces(c, ops, bn, ew);
            recycle(ops.feature, ew);  // spent: the next task's reads and outputs reuse the memory
            return finish_surfaces(plan, std::move(s));
        }
        return finish(plan, conv_dpu_cube(c, ops, gather(plan, reads, kBnOperands), gather(plan, reads, kEwCube)), c.dpu.out,
                      c.atom);
    }
    if (plan.dpu) {
        const DpuConfig& d = *plan.dpu;
        if (hooks) {
            const Cube in = unpack_cube(gather(plan, reads, kDpuInput), d.w, d.h, d.c, d.src_prec, d.atom);
            const DpuOperands ops{gather(plan, reads, kBsOperands), gather(plan, reads, kBnOperands),
                                  gather(plan, reads, kEwCube)};
            Cube out;
            if (!hooks->dpu(d, in, ops, out)) out = run_dpu(d, in, ops);
            return finish(plan, out, d.out, d.atom);
        }
        if (dpu_fast_ok(d) && !reference_engines() && fast_ppu(plan)) {
            DpuOperands ops{gather(plan, reads, kBsOperands), gather(plan, reads, kBnOperands), gather(plan, reads, kEwCube)};
            std::vector<uint8_t> in = gather(plan, reads, kDpuInput);
            Surfaces s = run_dpu_int_image(d, in, ops);
            recycle(in, ops.ew);
            return finish_surfaces(plan, std::move(s));
        }
        const Cube in = unpack_cube(gather(plan, reads, kDpuInput), d.w, d.h, d.c, d.src_prec, d.atom);
        const DpuOperands ops{gather(plan, reads, kBsOperands), gather(plan, reads, kBnOperands),
                              gather(plan, reads, kEwCube)};
        return finish(plan, run_dpu(d, in, ops), d.out, d.atom);
    }
    if (plan.ppu) {
        const PpuConfig& c = *plan.ppu;
        // The PPU_RDMA lines/surfaces arrive compacted in plan order.
        if (ppu_fast_ok(c) && !reference_engines()) {
            const std::vector<uint8_t> img = gather(plan, reads, kPpuInput);
            const uint64_t surf = surface_bytes(c.in_w, c.in_h, c.atom);
            const uint32_t c2 = c2_of(c.prec, c.atom);
            if (img.size() < (c.in_c + c2 - 1) / c2 * surf) throw std::logic_error("unpack_cube: image smaller than the cube");
            std::vector<const uint8_t*> in;
            for (uint64_t at = 0; at + surf <= img.size(); at += surf) in.push_back(img.data() + at);
            return surfaces_to_writes(plan, run_ppu_int(c, in));
        }
        const Cube in = unpack_cube(gather(plan, reads, kPpuInput), c.in_w, c.in_h, c.in_c, c.prec, c.atom);
        return split_writes(plan, pack_cube(run_ppu(c, in), c.prec, c.atom));
    }
    return {};
}

}  // namespace

}  // namespace npu::rknpu
