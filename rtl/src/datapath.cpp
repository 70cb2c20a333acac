// SPDX-License-Identifier: MIT
#include "rtl/datapath.h"

#include <fmt/format.h>
#include <verilated.h>
#include <verilated_vcd_c.h>

#include <deque>
#include <stdexcept>
#include <systemc>

#include "Vnpu_rknpu_dp.h"

namespace npu::rtl {

using sc_core::sc_signal;
using sc_dt::sc_bv;

struct VcdFile::Impl {
    VerilatedVcdC vcd;
};

VcdFile::VcdFile() : impl_(std::make_unique<Impl>()) {}
VcdFile::~VcdFile() { close(); }

void VcdFile::open(const std::string& path) {
    impl_->vcd.set_time_unit("1ps");  // dump() times are picoseconds of the NPU clock
    impl_->vcd.set_time_resolution("1ps");
    impl_->vcd.open(path.c_str());
    if (!impl_->vcd.isOpen()) throw std::runtime_error(fmt::format("cannot write the RTL VCD '{}'", path));
    open_ = true;
}

void VcdFile::close() {
    if (open_) impl_->vcd.close();
    open_ = false;
}

namespace {

template <int N>
void put_bytes(sc_signal<sc_bv<N>>& s, const int8_t* b) {
    sc_bv<N> v;
    for (int w = 0; w < N / 32; ++w) {
        const auto* p = reinterpret_cast<const uint8_t*>(b + 4 * w);
        v.set_word(w, static_cast<sc_dt::sc_digit>(p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24));
    }
    s.write(v);
}

}  // namespace

/// The module holding the verilated datapath and the signals of its ports (children of the
/// module, so each datapath's names are its own: rtl_npu_core0.clk, rtl_npu_core0.rtl.u_core...).
struct Datapath::Impl : public sc_core::sc_module {
    Impl(sc_core::sc_module_name name, uint64_t period) : sc_module(name), top("rtl"), clock_ps(period) { bind(); }

    Vnpu_rknpu_dp top;
    uint64_t clock_ps;
    VcdFile* vcd = nullptr;
    uint64_t now_ps = 0;  ///< VCD time of the current cycle start

    sc_signal<bool> clk{"clk"}, rst_n{"rst_n"}, cfg_flying{"cfg_flying"};
    sc_signal<bool> c_cfg_dw{"c_cfg_dw"};
    sc_signal<uint32_t> c_cfg_clip_shift{"c_cfg_clip_shift"}, c_cfg_cout{"c_cfg_cout"}, c_cfg_dw_rate{"c_cfg_dw_rate"};
    sc_signal<bool> w_valid{"w_valid"}, w_ready{"w_ready"}, w_last{"w_last"};
    sc_signal<sc_bv<kWeightAtoms * kLanes * 8>> w_data{"w_data"};
    sc_signal<uint32_t> w_cnt{"w_cnt"};
    sc_signal<bool> f_valid{"f_valid"}, f_ready{"f_ready"}, f_first{"f_first"}, f_last{"f_last"}, f_wlast{"f_wlast"};
    sc_signal<sc_bv<kFeatureSlots * kLanes * 8>> f_data{"f_data"};
    sc_signal<uint32_t> f_pmask{"f_pmask"}, f_entry{"f_entry"}, f_pix{"f_pix"}, f_cgrp{"f_cgrp"};
    sc_signal<bool> c_o_valid{"c_o_valid"}, c_o_ready{"c_o_ready"}, c_idle{"c_idle"}, c_o_fire{"c_o_fire"};
    sc_signal<sc_bv<kLanes * 32>> c_o_data{"c_o_data"};
    sc_signal<uint32_t> c_o_pix{"c_o_pix"}, c_o_cgrp{"c_o_cgrp"};

    sc_signal<bool> bs_en{"bs_en"}, bs_alu_en{"bs_alu_en"}, bs_mul_en{"bs_mul_en"}, bs_mul_prelu{"bs_mul_prelu"},
        bs_relu_en{"bs_relu_en"}, bs_relux_en{"bs_relux_en"};
    sc_signal<uint32_t> bs_alu_algo{"bs_alu_algo"}, bs_mul_shift{"bs_mul_shift"}, bs_relux{"bs_relux"};
    sc_signal<bool> bn_en{"bn_en"}, bn_alu_en{"bn_alu_en"}, bn_mul_en{"bn_mul_en"}, bn_mul_prelu{"bn_mul_prelu"},
        bn_relu_en{"bn_relu_en"}, bn_relux_en{"bn_relux_en"};
    sc_signal<uint32_t> bn_alu_algo{"bn_alu_algo"}, bn_mul_shift{"bn_mul_shift"}, bn_relux{"bn_relux"};
    sc_signal<bool> ew_en{"ew_en"}, ew_op_en{"ew_op_en"}, ew_op_mul{"ew_op_mul"}, ew_mul_prelu{"ew_mul_prelu"},
        ew_op_mem{"ew_op_mem"}, ew_cvt_en{"ew_cvt_en"}, ew_relu_en{"ew_relu_en"}, ew_relux_en{"ew_relux_en"};
    sc_signal<uint32_t> ew_alu_algo{"ew_alu_algo"}, ew_operand{"ew_operand"}, ew_cvt_offset{"ew_cvt_offset"},
        ew_cvt_scale{"ew_cvt_scale"}, ew_cvt_shift{"ew_cvt_shift"}, ew_truncate{"ew_truncate"}, ew_relux{"ew_relux"};
    sc_signal<uint32_t> out_scale{"out_scale"}, out_shift{"out_shift"}, out_offset{"out_offset"};
    sc_signal<bool> out_int16{"out_int16"};
    sc_signal<bool> p_valid{"p_valid"};
    sc_signal<uint32_t> p_addr{"p_addr"};
    sc_signal<sc_bv<kLanes * 96>> p_data{"p_data"};
    sc_signal<bool> i_valid{"i_valid"}, i_ready{"i_ready"}, e_valid{"e_valid"}, e_ready{"e_ready"};
    sc_signal<sc_bv<kLanes * 32>> i_data{"i_data"};
    sc_signal<uint32_t> i_pix{"i_pix"}, i_cgrp{"i_cgrp"};
    sc_signal<sc_bv<kLanes * 16>> e_data{"e_data"};
    sc_signal<bool> o_valid{"o_valid"}, o_ready{"o_ready"}, d_idle{"d_idle"};
    sc_signal<sc_bv<kLanes * 16>> o_data{"o_data"};
    sc_signal<uint32_t> o_pix{"o_pix"}, o_cgrp{"o_cgrp"};

    void bind() {
        top.clk(clk), top.rst_n(rst_n), top.cfg_flying(cfg_flying);
        top.c_cfg_dw(c_cfg_dw), top.c_cfg_clip_shift(c_cfg_clip_shift), top.c_cfg_cout(c_cfg_cout);
        top.c_cfg_dw_rate(c_cfg_dw_rate);
        top.w_valid(w_valid), top.w_ready(w_ready), top.w_data(w_data), top.w_cnt(w_cnt), top.w_last(w_last);
        top.f_valid(f_valid), top.f_ready(f_ready), top.f_data(f_data), top.f_pmask(f_pmask), top.f_first(f_first);
        top.f_last(f_last), top.f_wlast(f_wlast), top.f_entry(f_entry), top.f_pix(f_pix), top.f_cgrp(f_cgrp);
        top.c_o_valid(c_o_valid), top.c_o_ready(c_o_ready), top.c_o_data(c_o_data), top.c_o_pix(c_o_pix);
        top.c_o_cgrp(c_o_cgrp), top.c_idle(c_idle), top.c_o_fire(c_o_fire);
        top.cfg_bs_en(bs_en), top.cfg_bs_alu_en(bs_alu_en), top.cfg_bs_alu_algo(bs_alu_algo);
        top.cfg_bs_mul_en(bs_mul_en), top.cfg_bs_mul_prelu(bs_mul_prelu), top.cfg_bs_mul_shift(bs_mul_shift);
        top.cfg_bs_relu_en(bs_relu_en), top.cfg_bs_relux_en(bs_relux_en), top.cfg_bs_relux(bs_relux);
        top.cfg_bn_en(bn_en), top.cfg_bn_alu_en(bn_alu_en), top.cfg_bn_alu_algo(bn_alu_algo);
        top.cfg_bn_mul_en(bn_mul_en), top.cfg_bn_mul_prelu(bn_mul_prelu), top.cfg_bn_mul_shift(bn_mul_shift);
        top.cfg_bn_relu_en(bn_relu_en), top.cfg_bn_relux_en(bn_relux_en), top.cfg_bn_relux(bn_relux);
        top.cfg_ew_en(ew_en), top.cfg_ew_op_en(ew_op_en), top.cfg_ew_op_mul(ew_op_mul);
        top.cfg_ew_mul_prelu(ew_mul_prelu), top.cfg_ew_alu_algo(ew_alu_algo), top.cfg_ew_op_mem(ew_op_mem);
        top.cfg_ew_operand(ew_operand), top.cfg_ew_cvt_en(ew_cvt_en), top.cfg_ew_cvt_offset(ew_cvt_offset);
        top.cfg_ew_cvt_scale(ew_cvt_scale), top.cfg_ew_cvt_shift(ew_cvt_shift), top.cfg_ew_truncate(ew_truncate);
        top.cfg_ew_relu_en(ew_relu_en), top.cfg_ew_relux_en(ew_relux_en), top.cfg_ew_relux(ew_relux);
        top.cfg_out_scale(out_scale), top.cfg_out_shift(out_shift), top.cfg_out_offset(out_offset);
        top.cfg_out_int16(out_int16);
        top.p_valid(p_valid), top.p_addr(p_addr), top.p_data(p_data);
        top.i_valid(i_valid), top.i_ready(i_ready), top.i_data(i_data), top.i_pix(i_pix), top.i_cgrp(i_cgrp);
        top.e_valid(e_valid), top.e_ready(e_ready), top.e_data(e_data);
        top.o_valid(o_valid), top.o_ready(o_ready), top.o_data(o_data), top.o_pix(o_pix), top.o_cgrp(o_cgrp);
        top.d_idle(d_idle);
    }

    /// Let the kernel propagate the signal writes and the model's evaluation (two delta cycles:
    /// one to update the inputs and run the model, one to update its outputs).
    static void settle() {
        sc_core::wait(sc_core::SC_ZERO_TIME);
        sc_core::wait(sc_core::SC_ZERO_TIME);
    }
    void dump(uint64_t t) {
        if (vcd && vcd->open_) {
            vcd->impl_->vcd.dump(t);
            vcd->last_ps_ = t;
        }
    }
    /// One full clock cycle with the inputs as they are.
    void idle_cycle() {
        clk.write(false);
        settle();
        dump(now_ps + clock_ps / 2);
        clk.write(true);
        settle();
        now_ps += clock_ps;
        dump(now_ps);
    }

    void program(const DatapathJob& j) {
        cfg_flying.write(j.flying);
        if (j.core) {
            c_cfg_dw.write(j.core->depthwise());
            c_cfg_clip_shift.write(j.core->clip_shift());
            c_cfg_cout.write(j.core->out_channels());
            c_cfg_dw_rate.write(j.core->dw_rate_q16());
        }
        if (j.dpu) {
            const DpuPorts& p = *j.dpu;
            bs_en.write(p.bs_en), bs_alu_en.write(p.bs_alu_en), bs_alu_algo.write(p.bs_alu_algo);
            bs_mul_en.write(p.bs_mul_en), bs_mul_prelu.write(p.bs_mul_prelu), bs_mul_shift.write(p.bs_mul_shift);
            bs_relu_en.write(p.bs_relu_en), bs_relux_en.write(p.bs_relux_en), bs_relux.write(p.bs_relux);
            bn_en.write(p.bn_en), bn_alu_en.write(p.bn_alu_en), bn_alu_algo.write(p.bn_alu_algo);
            bn_mul_en.write(p.bn_mul_en), bn_mul_prelu.write(p.bn_mul_prelu), bn_mul_shift.write(p.bn_mul_shift);
            bn_relu_en.write(p.bn_relu_en), bn_relux_en.write(p.bn_relux_en), bn_relux.write(p.bn_relux);
            ew_en.write(p.ew_en), ew_op_en.write(p.ew_op_en), ew_op_mul.write(p.ew_op_mul);
            ew_mul_prelu.write(p.ew_mul_prelu), ew_alu_algo.write(p.ew_alu_algo), ew_op_mem.write(p.ew_op_mem);
            ew_operand.write(p.ew_operand), ew_cvt_en.write(p.ew_cvt_en), ew_cvt_offset.write(p.ew_cvt_offset);
            ew_cvt_scale.write(p.ew_cvt_scale), ew_cvt_shift.write(p.ew_cvt_shift), ew_truncate.write(p.ew_truncate);
            ew_relu_en.write(p.ew_relu_en), ew_relux_en.write(p.ew_relux_en), ew_relux.write(p.ew_relux);
            out_scale.write(p.out_scale), out_shift.write(p.out_shift), out_offset.write(p.out_offset);
            out_int16.write(p.out_int16);
        }
    }

    void write_operands(uint32_t g, const std::vector<ChannelOperands>& ops) {
        sc_bv<kLanes * 96> v;
        for (uint32_t l = 0; l < kLanes; ++l) {
            // lane l at [l*96 +: 96] = {BS ALU (32), BS MUL (16), BN ALU (32), BN MUL (16)}, MSB first
            const ChannelOperands& o = ops[l];
            const int base = static_cast<int>(l) * 96;
            v.range(base + 15, base) = static_cast<uint32_t>(static_cast<uint16_t>(o.bn_mul));
            v.range(base + 47, base + 16) = static_cast<uint32_t>(o.bn_alu);
            v.range(base + 63, base + 48) = static_cast<uint32_t>(static_cast<uint16_t>(o.bs_mul));
            v.range(base + 95, base + 64) = static_cast<uint32_t>(o.bs_alu);
        }
        p_addr.write(g);
        p_data.write(v);
        p_valid.write(true);
    }

    DatapathStats run(DatapathJob& j, uint64_t time_ps);
};

DatapathStats Datapath::Impl::run(DatapathJob& j, uint64_t time_ps) {
    if (j.flying && !(j.core && j.dpu)) throw std::logic_error("RTL datapath: flying mode needs the CORE and the DPU");
    if (j.dpu && !j.flying && !j.dpu_in) throw std::logic_error("RTL datapath: DPU job without an input");
    if (vcd && vcd->open_)
        now_ps = std::max(time_ps, vcd->last_ps_ + clock_ps);
    else
        now_ps = time_ps;
    const bool ew_mem = j.dpu && j.dpu->ew_en && j.dpu->ew_op_en && j.dpu->ew_op_mem;
    if (ew_mem && !j.ew) throw std::logic_error("RTL datapath: EW operand from memory without the EW cube");

    // Idle inputs, program the static configuration, reset for two cycles (not counted).
    w_valid.write(false), f_valid.write(false), i_valid.write(false), e_valid.write(false), p_valid.write(false);
    c_o_ready.write(false), o_ready.write(false);
    program(j);
    rst_n.write(false);
    idle_cycle();
    idle_cycle();
    rst_n.write(true);

    DatapathStats st;
    WeightBeat w_cur;
    FeatureBeat f_cur;
    DpuBeat i_cur;
    std::array<int16_t, kLanes> e_cur{};
    bool w_have = false, f_have = false, i_have = false, e_have = false;
    bool w_src = j.core != nullptr, f_src = j.core != nullptr, i_src = j.dpu && !j.flying;
    std::deque<std::pair<uint32_t, uint32_t>> e_tags;  // (pixel, group) of the DPU inputs to come
    uint32_t groups_written = 0;
    int64_t last_group = -1;
    uint64_t core_got = 0, dpu_got = 0, last_progress = 0;
    CoreOut co;
    DpuOut dout;

    for (uint64_t cyc = 0;; ++cyc) {
        // ---- before the edge: drive the inputs for this cycle ----
        clk.write(false);
        p_valid.write(false);
        if (w_src && !w_have) {
            w_have = j.core->next_weight(w_cur);
            w_src = w_have;
            if (w_have) put_bytes(w_data, w_cur.w.data()), w_cnt.write(w_cur.count), w_last.write(w_cur.last);
        }
        w_valid.write(w_have);
        if (f_src && !f_have) {
            f_have = j.core->next_feature(f_cur);
            f_src = f_have;
            if (f_have) {
                put_bytes(f_data, f_cur.f.data());
                f_pmask.write(f_cur.pmask), f_first.write(f_cur.first), f_last.write(f_cur.last);
                f_wlast.write(f_cur.wlast), f_entry.write(f_cur.entry), f_pix.write(f_cur.pix),
                    f_cgrp.write(f_cur.cgrp);
            }
        }
        f_valid.write(f_have);
        if (i_src && !i_have) {
            i_have = j.dpu_in->next(i_cur);
            i_src = i_have;
            if (i_have) {
                sc_bv<kLanes * 32> v;
                for (uint32_t l = 0; l < kLanes; ++l)
                    v.set_word(static_cast<int>(l), static_cast<uint32_t>(i_cur.v[l]));
                i_data.write(v), i_pix.write(i_cur.pix), i_cgrp.write(i_cur.cgrp);
                if (ew_mem) e_tags.emplace_back(i_cur.pix, i_cur.cgrp);
                if (static_cast<int64_t>(i_cur.cgrp) != last_group) {  // first beat of a group: its operands
                    last_group = i_cur.cgrp;
                    write_operands(i_cur.cgrp, j.operands(i_cur.cgrp));
                }
            }
        }
        i_valid.write(i_have);
        if (j.flying && groups_written < j.dpu_groups) {
            write_operands(groups_written, j.operands(groups_written));
            ++groups_written;
        }
        if (ew_mem && !e_have && !e_tags.empty()) {
            ew_atom(*j.ew, e_tags.front().first, e_tags.front().second, e_cur);
            e_tags.pop_front();
            e_have = true;
            sc_bv<kLanes * 16> v;
            for (uint32_t l = 0; l < kLanes; l += 2)
                v.set_word(static_cast<int>(l / 2),
                           static_cast<uint16_t>(e_cur[l]) | static_cast<uint32_t>(static_cast<uint16_t>(e_cur[l + 1]))
                                                                 << 16);
            e_data.write(v);
        }
        e_valid.write(e_have);
        const bool ready = j.out_ready ? j.out_ready() : true;
        c_o_ready.write(!j.flying && ready);
        o_ready.write(ready);
        settle();
        dump(now_ps + clock_ps / 2);

        // ---- sample the transfers of this edge (valid and ready are register outputs) ----
        const bool w_fire = w_have && w_ready.read();
        const bool f_fire = f_have && f_ready.read();
        const bool i_fire = i_have && i_ready.read();
        const bool e_fire = e_have && e_ready.read();
        const bool c_fire = c_o_fire.read();
        const bool d_fire = o_valid.read() && ready;
        if (c_fire) {
            co.pix = c_o_pix.read(), co.cgrp = c_o_cgrp.read();
            if (j.flying && co.cgrp >= groups_written)
                throw std::logic_error(
                    fmt::format("RTL datapath: CORE output of channel group {} reached the DPU "
                                "before its operands",
                                co.cgrp));
            if (!j.flying) {
                const sc_bv<kLanes* 32> v = c_o_data.read();
                for (uint32_t l = 0; l < kLanes; ++l) co.v[l] = static_cast<int32_t>(v.get_word(static_cast<int>(l)));
                if (j.on_core) j.on_core(co);
            }
            ++core_got;
            st.core_last = cyc + 1;
        }
        if (d_fire) {
            const sc_bv<kLanes* 16> v = o_data.read();
            for (uint32_t l = 0; l < kLanes; l += 2) {
                const uint32_t word = v.get_word(static_cast<int>(l / 2));
                dout.v[l] = static_cast<int16_t>(word & 0xffffu);
                dout.v[l + 1] = static_cast<int16_t>(word >> 16);
            }
            dout.pix = o_pix.read(), dout.cgrp = o_cgrp.read();
            if (j.on_dpu) j.on_dpu(dout);
            ++dpu_got;
            st.dpu_last = cyc + 1;
        }

        // ---- the edge ----
        clk.write(true);
        settle();
        now_ps += clock_ps;
        dump(now_ps);

        if (w_fire) w_have = false, ++st.weight_beats;
        if (f_fire) {
            if (j.flying && ew_mem && f_cur.last)
                j.core->entry_outputs(f_cur, [&](uint32_t pix, uint32_t g) { e_tags.emplace_back(pix, g); });
            f_have = false, ++st.feature_beats;
        }
        if (i_fire) i_have = false, ++st.dpu_inputs;
        if (e_fire) e_have = false;
        if (w_fire || f_fire || i_fire || e_fire || c_fire || d_fire) last_progress = cyc;
        const bool core_done = !j.core || core_got >= j.core_outputs;
        const bool dpu_done = !j.dpu || dpu_got >= j.dpu_outputs;
        if (core_done && dpu_done) {
            st.cycles = cyc + 1;
            break;
        }
        if (cyc - last_progress > j.stall_limit)
            throw std::runtime_error(
                fmt::format("RTL datapath stalled: no transfer for {} cycles (CORE {}/{} outputs, "
                            "DPU {}/{})",
                            j.stall_limit, core_got, j.core_outputs, dpu_got, j.dpu_outputs));
    }
    // Leave the inputs idle (the VCD shows the end of the job).
    w_valid.write(false), f_valid.write(false), i_valid.write(false), e_valid.write(false), p_valid.write(false);
    clk.write(false);
    settle();
    return st;
}

Datapath::Datapath(const std::string& name, uint64_t clock_ps) {
    // The default context (the models are built on it): VCD tracing can be enabled later.
    Verilated::defaultContextp()->traceEverOn(true);
    impl_ = std::make_unique<Impl>(name.c_str(), clock_ps);
}

Datapath::~Datapath() = default;

DatapathStats Datapath::run(DatapathJob& job, uint64_t time_ps) { return impl_->run(job, time_ps); }

void Datapath::trace(VcdFile& vcd) {
    impl_->vcd = &vcd;
    impl_->top.trace(&vcd.impl_->vcd, 99);
}

uint64_t Datapath::clock_ps() const { return impl_->clock_ps; }

}  // namespace npu::rtl
