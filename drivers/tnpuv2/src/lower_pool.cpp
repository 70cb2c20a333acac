// SPDX-License-Identifier: MIT
// Pooling layers -> POOL: MaxPool on codes, QLinearAveragePool with one requantization record per
// window tap count (x_scale / (y_scale x count)), QLinearGlobalAveragePool with one.
#include <algorithm>
#include <cstring>

#include "compiler_internal.h"

namespace drv::tnpuv2::detail {
namespace {

namespace P = hw::tnpuv2::POOL;
namespace MODE = hw::tnpuv2::enums::POOL_MODE;

std::vector<uint8_t> count_table(double ratio, int64_t counts) {
    std::vector<uint8_t> t(static_cast<size_t>(counts) * 8);
    for (int64_t k = 1; k <= counts; ++k) {
        int32_t mult = 0, shift = 0;
        fixed_scale(ratio / static_cast<double>(k), 31, mult, shift);
        std::memcpy(t.data() + (k - 1) * 8, &mult, 4);
        std::memcpy(t.data() + (k - 1) * 8 + 4, &shift, 4);
    }
    return t;
}

}  // namespace

void lower_pool(Compiler& c, const ir::Node& n) {
    const DeviceTensor& x = c.dt(n.input(0));
    const DeviceTensor& y = c.dt(n.outputs[0]);
    if (x.shape.size() != 4 || y.shape.size() != 4) c.refuse("pooling runs on 4-D feature maps");
    Command cmd = hw::tnpuv2::make_command(hw::tnpuv2::op::POOL);
    const bool global = n.op_type == "QLinearGlobalAveragePool";
    const bool maxp = n.op_type == "MaxPool";
    if (!maxp && ir::attr_int(n.attrs, "channels_last", 0) != 0) c.refuse("channels_last pooling input");
    int64_t kh = x.shape[2], kw = x.shape[3];
    if (!global) {
        const std::vector<int64_t> k = ir::attr_ints(n.attrs, "kernel_shape", {});
        if (k.size() != 2) c.refuse("2-D kernel_shape expected");
        kh = k[0];
        kw = k[1];
        const std::vector<int64_t> st = ir::attr_ints(n.attrs, "strides", {1, 1});
        const std::vector<int64_t> pads = ir::attr_ints(n.attrs, "pads", {0, 0, 0, 0});
        if (ir::attr_ints(n.attrs, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) c.refuse("dilated pooling");
        const std::string ap = ir::attr_string(n.attrs, "auto_pad", "NOTSET");
        if (ap != "NOTSET" && ap != "VALID") c.refuse("auto_pad SAME pooling: give explicit pads");
        set_field(cmd, P::KERNEL_H, kh);
        set_field(cmd, P::KERNEL_W, kw);
        set_field(cmd, P::STRIDE_H, st[0]);
        set_field(cmd, P::STRIDE_W, st[1]);
        set_field(cmd, P::PAD_TOP, pads[0]);
        set_field(cmd, P::PAD_LEFT, pads[1]);
        // ceil_mode windows may overhang the bottom/right pad: the engine clips every window.
        set_field(cmd, P::PAD_BOTTOM, pads[2]);
        set_field(cmd, P::PAD_RIGHT, pads[3]);
        set_field(cmd, P::COUNT_INCLUDE_PAD, ir::attr_int(n.attrs, "count_include_pad", 0) ? 1 : 0);
    } else {
        set_field(cmd, P::KERNEL_H, 1);
        set_field(cmd, P::KERNEL_W, 1);
        set_field(cmd, P::STRIDE_H, 1);
        set_field(cmd, P::STRIDE_W, 1);
    }
    set_field(cmd, P::MODE, maxp ? MODE::MAX : (global ? MODE::GLOBAL_AVG : MODE::AVG));
    if (!maxp) {
        const double ratio = static_cast<double>(c.scalar_f(n, 1)) / static_cast<double>(c.scalar_f(n, 3));
        const int64_t counts = global ? 1 : kh * kw;
        std::vector<uint8_t> t;
        if (global) {
            // The reference's scale, x_scale / (y_scale x spatial size) formed in float, exactly.
            const float s = c.scalar_f(n, 1) / (c.scalar_f(n, 3) * static_cast<float>(kh * kw));
            int32_t mult = 0, shift = 0;
            exact_scale(s, mult, shift);
            t.resize(8);
            std::memcpy(t.data(), &mult, 4);
            std::memcpy(t.data() + 4, &shift, 4);
        } else {
            t = count_table(ratio, counts);
        }
        hw::tnpuv2::set_addr(cmd, P::TABLE_ADDR_LO, P::TABLE_ADDR_HI, c.blob(t));
        set_field(cmd, P::TABLE_ENTRIES, counts);
    }
    c.sb().tensor(S::IFM, c.fm_desc(x));
    c.sb().tensor(S::OFM, c.fm_desc(y));
    c.emit(cmd, {{P::TABLE_ADDR_LO, P::TABLE_ADDR_HI}});
    Layer& L = c.layer();
    L.op = maxp ? "MaxPool" : (global ? "GlobalAveragePool" : "AveragePool");
}

}  // namespace drv::tnpuv2::detail
