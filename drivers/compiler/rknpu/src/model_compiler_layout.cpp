// SPDX-License-Identifier: MIT
// Channel-last layouts (issue 15): detection heads permute a conv output to NHWC and flatten it
// (RetinaFace, SSD: Conv -> Transpose(0, 2, 3, 1) -> Reshape(1, -1, k) -> Concat(axis 1)). The
// Transpose is one DPU copy whose WDMA writes the cube channel-last (FEATURE_MODE_CFG.TP_EN with
// WDMA_SIZE_0.SIZE_C_WDMA = C - 1: assumption A-TP of docs/rknpu-register-semantics.md, the TRM
// naming "transpose" among the DPU's functions) into a row-major tensor (DeviceTensor::row_major);
// the NHWC bytes in row order are every row-major reshape of it, so the Reshape is a view.
#include "compiler_internal.h"
#include "lower_move.h"

namespace drv::rknpu::compiler_detail {

DeviceTensor& Compiler::dev_row_major(const std::string& name) {
    const ir::Value& v = g_.value(name);
    if (v.quant.empty() || v.quant.per_axis())
        unsupported(fmt::format("tensor '{}' has no per-tensor quantization", name));
    const float scale = v.quant.scale[0];
    const int32_t zp = v.quant.zero_point.empty() ? 0 : v.quant.zero_point[0];
    if (auto it = m_.tensors.find(name); it != m_.tensors.end()) {
        if (!it->second.row_major) unsupported(fmt::format("tensor '{}' already has an NC1HWC2 image", name));
        row_major_ok_ = true;
        DeviceTensor& t = dev(name, scale, zp);  // quantization check and the attempt's journal
        row_major_ok_ = false;
        return t;
    }
    if (!v.shape_known || v.shape.empty()) unsupported(fmt::format("tensor '{}' has no static shape", name));
    uint64_t numel = 1;
    for (int64_t d : v.shape) {
        if (d <= 0) unsupported(fmt::format("tensor '{}' shape {} is not static", name, v.shape_str()));
        numel *= static_cast<uint64_t>(d);
    }
    if (numel > (1ull << 31)) unsupported(fmt::format("tensor '{}' is too large for one row-major image", name));
    if (!is_q8(v.dtype)) unsupported(fmt::format("tensor '{}' is {}, not int8/uint8", name, num::dtype_name(v.dtype)));
    DeviceTensor t;
    t.name = name;
    t.ir_shape = v.shape;
    t.row_major = true;
    t.c = 1, t.h = 1, t.w = static_cast<int>(numel);
    t.c2 = soc_.npu.c2_int8.value;
    t.bytes = align_up(numel, 16);
    t.line_stride = t.surf_stride = static_cast<uint32_t>(t.bytes);
    t.graph_uint8 = v.dtype == num::DType::U8;
    t.scale = scale;
    t.zp = zp - (t.graph_uint8 ? 128 : 0);
    if (t.zp < -128 || t.zp > 127) unsupported(fmt::format("tensor '{}' zero point out of range", name));
    if (journal_on_) journal_new_.push_back(name);
    return m_.tensors.emplace(name, t).first->second;
}

bool Compiler::transpose_node(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    const ir::Value& x = g_.value(n.input(0));
    const ir::Value& yv = g_.value(n.outputs.at(0));
    if (!is_q8(x.dtype) || x.dtype != yv.dtype) return false;
    const auto perm = ir::attr_ints(n.attrs, "perm", {});
    if (x.shape.size() != 4 || x.shape[0] != 1 || perm != std::vector<int64_t>{0, 2, 3, 1})
        unsupported("Transpose other than (0, 2, 3, 1) of a [1, C, H, W] tensor (NCHW -> NHWC)");
    const DeviceTensor& in = dev_q(n.input(0));
    if (in.row_major) unsupported("Transpose of a row-major tensor");
    // A Reshape / Flatten / Squeeze / Unsqueeze that alone reads the transposed tensor (a detection
    // head's flattening) joins the layer: the channel-last bytes are its output.
    std::string y = n.outputs[0];
    int reshape = -1;
    const auto cons = g_.consumers(y);
    if (cons.size() == 1 && std::find(g_.outputs().begin(), g_.outputs().end(), y) == g_.outputs().end()) {
        const ir::Node& r = g_.nodes()[cons[0]];
        static const std::set<std::string> kViews{"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
        const ir::Value* rv = r.outputs.size() == 1 ? g_.find_value(r.outputs[0]) : nullptr;
        if (r.domain.empty() && kViews.count(r.op_type) && r.input(0) == y && rv && rv->dtype == yv.dtype &&
            !rv->quant.empty() && !yv.quant.empty() && rv->quant.scale == yv.quant.scale &&
            rv->quant.zero_point == yv.quant.zero_point && !forced_cpu(r) && !checker_cpu_.count(r.name) &&
            !consumed_.count(cons[0]))
            reshape = static_cast<int>(cons[0]);
    }
    if (reshape >= 0) y = g_.nodes()[static_cast<size_t>(reshape)].outputs[0];
    const DeviceTensor& out = dev_row_major(y);
    if (in.scale != out.scale || in.zp != out.zp) unsupported("Transpose changes the quantization");
    const int atom = soc_.npu.c2_int8.value;
    if (in.w > 8192 || in.h > 8192 || in.c > 8192) unsupported("Transpose cube beyond the 13-bit DPU fields");
    // SIZE_C_WDMA (11 bits) holds the pixel's channel count - 1.
    if (in.c > 2048) unsupported("Transpose of more than 2048 channels (WDMA_SIZE_0.SIZE_C_WDMA)");
    Layer L = base_layer(i, "Transpose", Unit::Npu);
    L.note = "DPU copy writing channel-last (TP_EN, assumption A-TP) into a row-major tensor";
    if (reshape >= 0) {
        const size_t r = static_cast<size_t>(reshape);
        L.outputs = {y};
        L.out_shape = shape_of(y);
        std::vector<size_t> nodes = L.ir_nodes;
        for (size_t k : g_.members(r)) nodes.push_back(k);
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        L.ir_nodes = nodes;
        L.note += fmt::format("; the {} after it is the same bytes", g_.nodes()[r].op_type);
        consumed_.insert(r);
    }
    const std::string a = n.input(0);
    const int core = m_.cores.front();
    push_npu(
        std::move(L),
        [this, a, y, atom, core]() {
            const DeviceTensor& s = m_.tensors.at(a);
            const DeviceTensor& d = m_.tensors.at(y);
            TaskBody t = lower_dpu_copy(fmt::format("transpose {}x{}x{} to channel-last", s.c, s.h, s.w), s.offset,
                                        s.surf_stride, d.offset, 0, s.w, s.h, s.c, 0, atom, core, true);
            t.meta.out_window = {0, d.c, 0, d.h, 0, d.w};
            t.meta.in_window = {0, s.c, 0, s.h, 0, s.w};
            return std::vector<TaskBody>{std::move(t)};
        },
        false);
    return true;
}

bool Compiler::row_major_view(size_t i) {
    const ir::Node& n = g_.nodes()[i];
    auto it = m_.tensors.find(n.input(0));
    if (it == m_.tensors.end() || !it->second.row_major) return false;
    const ir::Value& x = g_.value(n.input(0));
    const ir::Value& y = g_.value(n.outputs.at(0));
    if (!is_q8(x.dtype) || x.dtype != y.dtype) return false;
    const std::string parent = it->second.name;
    const float scale = it->second.scale;
    const int32_t zp = it->second.zp;
    DeviceTensor& out = dev_row_major(n.outputs[0]);
    const DeviceTensor& in = m_.tensors.at(parent);
    if (out.w != in.w) unsupported("reshape changes the element count");
    if (out.scale != scale || out.zp != zp) unsupported("reshape changes the quantization");
    out.alias_of = in.alias_of.empty() ? parent : in.alias_of;
    Layer L = base_layer(i, n.op_type, Unit::View);
    L.note = fmt::format("same bytes as '{}' (row-major)", parent);
    pending_.push_back({std::move(L), nullptr, false, cur_unit_});
    return true;
}

}  // namespace drv::rknpu::compiler_detail
