// SPDX-License-Identifier: MIT
#include "stream_fixture.h"

#include <cstring>
#include <random>

#include "drv/regcmd/builder.h"
#include "../../unit/rknpu/mesa_conv.h"
#include "hw/regcmd.h"
#include "hw/regdb.h"

namespace testfix {

ValidConv make_valid_conv(const hw::SocProfile& soc, int tasks, int channels) {
    drv::rknpu::ConvLayer L;
    L.in_c = channels, L.in_h = 8, L.in_w = 8, L.out_c = channels;
    L.pad_top = L.pad_left = L.pad_bottom = L.pad_right = 1;
    L.relu = true;
    L.in_scale = 0.05f, L.w_scale = 0.02f, L.out_scale = 0.5f;
    std::mt19937 rng(5);
    L.weights.resize(size_t(channels) * channels * 9);
    for (auto& w : L.weights) w = static_cast<int8_t>(int(rng() % 255) - 127);
    L.bias.assign(size_t(channels), 100);
    std::vector<int8_t> x(size_t(channels) * 8 * 8);
    for (auto& v : x) v = static_cast<int8_t>(int(rng() % 256) - 128);
    const auto low = mesa_conv::lower(L, soc);
    std::vector<std::vector<uint64_t>> bodies;
    for (int t = 0; t < tasks; ++t) {
        drv::regcmd::Builder b;
        mesa_conv::emit(
            L, low, {uint32_t(kInput), uint32_t(kWeights), uint32_t(kBias), uint32_t(kOutput + 0x1000u * t)}, b);
        bodies.push_back(b.words());
        }
    ValidConv v;
    v.job.addr = kRegcmd;
    v.job.words = drv::regcmd::link_tasks(bodies, kRegcmd, soc.npu.pc_data_amount_scale.value,
                                          hw::rknpu::kConvOpEnableMask);
    for (int t = 0; t < tasks; ++t) v.job.readback.push_back({kOutput + 0x1000u * t, kOutputBytes * size_t(channels) / 16});
    const auto packed = mesa_conv::pack_input(L, low, x);
    v.job.preload = {{kInput, packed}, {kWeights, low.weights}, {kBias, low.bias}};
    return v;
}

int ValidConv::index_of(const char* reg) const {
    const auto* r = hw::rknpu::find_reg(std::string(reg));
    if (!r) return -1;
    for (size_t i = 0; i < job.words.size(); ++i) {
        const auto c = hw::rknpu::RegCmd::decode(job.words[i]);
        if (c.target() != 0 && c.offset == r->offset) return static_cast<int>(i);
    }
    return -1;
}

void set_value(std::vector<uint64_t>& w, int i, uint32_t value) {
    auto c = hw::rknpu::RegCmd::decode(w.at(static_cast<size_t>(i)));
    c.value = value;
    w[static_cast<size_t>(i)] = c.encode();
}

}  // namespace testfix
