// SPDX-License-Identifier: MIT
// ResNet-50 v1.5 layer list (224x224, batch 1): the shapes the int8 reference-inference budget is
// measured on. Shared by the benchmark and (as text via --list) by the ONNX model generator.
#pragma once
#include <cstdint>
#include <vector>

namespace bench {

struct ConvLayer {
    int64_t cin, cout, k, stride, in_hw;
    int block = -1;  // residual block index (-1: stem / downsample path marker below)
    bool downsample = false;
    bool relu = true;
};

inline std::vector<ConvLayer> resnet50_convs() {
    std::vector<ConvLayer> v;
    v.push_back({3, 64, 7, 2, 224, -1, false, true});
    int64_t cin = 64, hw = 56;
    const int64_t mids[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3};
    int block = 0;
    for (int s = 0; s < 4; ++s)
        for (int64_t b = 0; b < blocks[s]; ++b, ++block) {
            const int64_t mid = mids[s], out = mid * 4, stride = (s > 0 && b == 0) ? 2 : 1;
            v.push_back({cin, mid, 1, 1, hw, block, false, true});
            v.push_back({mid, mid, 3, stride, hw, block, false, true});
            const int64_t ohw = hw / stride;
            v.push_back({mid, out, 1, 1, ohw, block, false, false});
            if (b == 0) v.push_back({cin, out, 1, stride, hw, block, true, false});
            cin = out;
            hw = ohw;
        }
    return v;
}

}  // namespace bench
