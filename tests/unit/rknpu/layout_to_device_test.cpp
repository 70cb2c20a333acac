// SPDX-License-Identifier: MIT
// drv::rknpu::to_device: the vector path for image inputs (C <= 7 channels, 16-byte atoms) writes
// the same image as the definition (each element at surface c / C2, row y, pixel x, lane c % C2,
// uint8 shifted by -128, the padding lanes holding the zero point), checked against a direct loop
// over widths around the 16-pixel step, padded rows, both signednesses, and the round trip.
#include <gtest/gtest.h>

#include <random>

#include "compiler/rknpu/model.h"

namespace {

using drv::rknpu::DeviceTensor;

std::vector<uint8_t> expected(const DeviceTensor& t, const num::Tensor& x) {
    std::vector<uint8_t> img(t.bytes, static_cast<uint8_t>(static_cast<int8_t>(t.zp)));
    const uint8_t shift = t.graph_uint8 ? 128 : 0;
    for (int c = 0; c < t.c; ++c)
        for (int y = 0; y < t.h; ++y)
            for (int xx = 0; xx < t.w; ++xx)
                img[static_cast<size_t>(c / t.c2) * t.surf_stride + static_cast<size_t>(y) * t.line_stride +
                    static_cast<size_t>(xx) * t.c2 + static_cast<size_t>(c % t.c2)] =
                    static_cast<uint8_t>(x.raw()[(static_cast<size_t>(c) * t.h + y) * t.w + xx] - shift);
    return img;
}

TEST(LayoutToDevice, SmallChannelImagesMatchTheDefinition) {
    std::mt19937 rng(3);
    int cases = 0;
    for (const bool u8 : {false, true})
        for (int c = 1; c <= 9; c += 2)
            for (const int w : {15, 16, 17, 33, 64, 70})
                for (const int h : {1, 3})
                    for (const uint32_t line_pad : {0u, 32u}) {
                        DeviceTensor t;
                        t.name = "x";
                        t.c = c, t.h = h, t.w = w, t.c2 = 16;
                        t.line_stride = static_cast<uint32_t>(w * 16) + line_pad;
                        t.surf_stride = t.line_stride * static_cast<uint32_t>(h) + 16;
                        t.bytes = static_cast<uint64_t>(t.surf_stride) * static_cast<uint64_t>((c + 15) / 16);
                        t.zp = u8 ? -5 : 7;
                        t.graph_uint8 = u8;
                        num::Tensor x(u8 ? num::DType::U8 : num::DType::I8, {1, c, h, w});
                        for (size_t i = 0; i < x.numel(); ++i) x.raw()[i] = static_cast<uint8_t>(rng());
                        const std::vector<uint8_t> got = drv::rknpu::to_device(t, x);
                        ASSERT_EQ(got, expected(t, x)) << "c " << c << " w " << w << " h " << h << " u8 " << u8;
                        const num::Tensor back = drv::rknpu::from_device(t, got);
                        ASSERT_EQ(std::vector<uint8_t>(back.raw(), back.raw() + back.numel()),
                                  std::vector<uint8_t>(x.raw(), x.raw() + x.numel()));
                        ++cases;
                    }
    EXPECT_EQ(cases, 2 * 5 * 6 * 2 * 2);
}

}  // namespace
