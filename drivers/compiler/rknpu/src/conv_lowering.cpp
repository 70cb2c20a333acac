// SPDX-License-Identifier: MIT
// The single-conv front door (conv_lowering.h) over the model compiler's conv lowering.
#include "compiler/rknpu/conv_lowering.h"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/regcmd.h"

namespace drv::rknpu {

namespace {

// Region bases the lowering sees (arena offsets): the constants occupy the arena from 0, the input
// and output images get bases no constant offset reaches; conv_task_words maps each back.
constexpr uint64_t kInputBase = 0x8000'0000ull, kOutputBase = 0xC000'0000ull;

uint64_t align16(uint64_t v) { return (v + 15) / 16 * 16; }

DeviceTensor image(const std::string& name, int c, int h, int w, float scale, int32_t zp, uint64_t offset,
                   const hw::SocProfile& soc) {
    DeviceTensor t;
    t.name = name;
    t.c = c, t.h = h, t.w = w;
    t.ir_shape = {1, c, h, w};
    t.c2 = soc.npu.c2_int8.value;
    t.offset = offset;
    t.line_stride = static_cast<uint32_t>(w * t.c2);
    // Surfaces on 16-byte boundaries, as the model compiler lays activations out (model_compiler.cpp).
    t.surf_stride = static_cast<uint32_t>(align16(static_cast<uint64_t>(t.line_stride) * static_cast<uint64_t>(h)));
    t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((c + t.c2 - 1) / t.c2);
    t.scale = scale;
    t.zp = zp;
    return t;
}

}  // namespace

void ConvLayer::check() const {
    auto bad = [&](const std::string& what) { throw std::invalid_argument(fmt::format("conv '{}': {}", name, what)); };
    if (in_c <= 0 || in_h <= 0 || in_w <= 0 || out_c <= 0) bad("empty input or output");
    if (kernel_h <= 0 || kernel_w <= 0 || stride_h <= 0 || stride_w <= 0 || dilation_h <= 0 || dilation_w <= 0)
        bad("kernel, stride and dilation must be positive");
    if (pad_top < 0 || pad_left < 0 || pad_bottom < 0 || pad_right < 0) bad("negative padding");
    if (out_h() <= 0 || out_w() <= 0) bad("kernel larger than the padded input");
    if (weights.size() != static_cast<size_t>(out_c) * in_c * kernel_h * kernel_w)
        bad(fmt::format("weights have {} values, expected {}", weights.size(),
                        static_cast<size_t>(out_c) * in_c * kernel_h * kernel_w));
    if (!bias.empty() && bias.size() != static_cast<size_t>(out_c)) bad("bias size != output channels");
    if (!(in_scale > 0) || !(w_scale > 0) || !(out_scale > 0)) bad("scales must be positive");
    if (in_zp < -128 || in_zp > 127 || out_zp < -128 || out_zp > 127) bad("zero points must be int8");
}

LoweredConv lower_conv(const ConvLayer& L, const hw::SocProfile& soc) {
    L.check();
    LoweredConv low;
    low.in = image(L.name + ".input", L.in_c, L.in_h, L.in_w, L.in_scale, L.in_zp, kInputBase, soc);
    low.out = image(L.name + ".output", L.out_c, L.out_h(), L.out_w(), L.out_scale, L.out_zp, kOutputBase, soc);
    low.input_bytes = low.in.bytes;
    low.output_bytes = low.out.bytes;
    if (low.input_bytes >= kOutputBase - kInputBase || low.output_bytes >= kOutputBase - kInputBase)
        throw std::invalid_argument(fmt::format("conv '{}': tensors of 1 GiB or more", L.name));

    ConvOp op;
    op.name = L.name;
    op.in_c = L.in_c, op.out_c = L.out_c;
    op.kernel_h = L.kernel_h, op.kernel_w = L.kernel_w;
    op.stride_h = L.stride_h, op.stride_w = L.stride_w;
    op.dilation_h = L.dilation_h, op.dilation_w = L.dilation_w;
    op.pad_top = L.pad_top, op.pad_left = L.pad_left, op.pad_bottom = L.pad_bottom, op.pad_right = L.pad_right;
    op.weights_ref = L.weights.data();  // alive for the lowering
    op.w_scales = {L.w_scale};
    op.bias = L.bias;
    op.in_scale = L.in_scale, op.out_scale = L.out_scale;
    op.in_zp = L.in_zp, op.out_zp = L.out_zp;
    op.act = L.relu ? Act::Relu : Act::None;

    ArenaBuilder arena;
    low.tasks = lower_conv_op(op, low.in, low.out, arena, soc, {0});
    if (arena.size() >= kInputBase) throw std::invalid_argument(fmt::format("conv '{}': constants of 2 GiB or more", L.name));
    low.constants = std::move(arena.init());
    low.constants.resize(arena.size(), 0);
    return low;
}

std::vector<uint8_t> pack_input(const ConvLayer& L, const LoweredConv& low, const std::vector<int8_t>& nchw) {
    if (nchw.size() != static_cast<size_t>(L.in_c) * L.in_h * L.in_w)
        throw std::invalid_argument(fmt::format("conv '{}': input has {} values, expected {}", L.name, nchw.size(),
                                                static_cast<size_t>(L.in_c) * L.in_h * L.in_w));
    num::Tensor x = num::Tensor::uninitialized(num::DType::I8, {1, L.in_c, L.in_h, L.in_w});
    std::memcpy(x.raw(), nchw.data(), nchw.size());
    return to_device(low.in, x);
}

std::vector<int8_t> unpack_output(const ConvLayer& L, const LoweredConv& low, const std::vector<uint8_t>& img) {
    if (img.size() < low.output_bytes)
        throw std::invalid_argument(fmt::format("conv '{}': output image of {} bytes, expected {}", L.name, img.size(),
                                                low.output_bytes));
    const num::Tensor y = from_device(low.out, img);
    std::vector<int8_t> out(y.numel());
    std::memcpy(out.data(), y.raw(), out.size());
    return out;
}

std::vector<uint64_t> conv_task_words(const LoweredConv& low, size_t task, const ConvAddresses& addr) {
    const TaskBody& t = low.tasks.at(task);
    std::vector<uint64_t> words = t.words;
    for (size_t i : t.addr_words) {
        auto c = hw::rknpu::RegCmd::decode(words.at(i));
        const uint64_t v = c.value;
        uint64_t dev = 0;
        if (v >= kOutputBase && v <= kOutputBase + low.output_bytes)
            dev = addr.output + (v - kOutputBase);
        else if (v >= kInputBase && v <= kInputBase + low.input_bytes)
            dev = addr.input + (v - kInputBase);
        else if (v <= low.constants.size())
            dev = addr.constants + v;
        else
            throw std::logic_error(fmt::format("conv lowering: address word {} (0x{:x}) is in no region", i, v));
        if (dev > 0xffffffffull) throw std::invalid_argument("conv lowering: a region ends above 4 GiB");
        c.value = static_cast<uint32_t>(dev);
        words[i] = c.encode();
    }
    return words;
}

void emit_conv_task(const ConvLayer& L, const LoweredConv& low, const ConvAddresses& addr, regcmd::Builder& b) {
    if (low.tasks.size() != 1)
        throw std::invalid_argument(fmt::format("conv '{}': the lowering tiled it into {} tasks, not one", L.name,
                                                low.tasks.size()));
    b.append(conv_task_words(low, 0, addr));
}

}  // namespace drv::rknpu
