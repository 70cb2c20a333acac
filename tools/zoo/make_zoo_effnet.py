# SPDX-License-Identifier: MIT
"""EfficientNet-Lite0 (Tan & Le 2019; the "lite" variant of tensorflow/tpu models/official/efficientnet/lite:
no squeeze-excite, ReLU6, stem and head fixed at 32 / 1280 channels), 224x224, 1000 classes, as a
make_zoo Net: written by make_zoo.py in every producer convention (--models efficientnet_lite0
--convention ...). A hidden-set style probe (issue 13 acceptance 3): MBConv blocks with 5x5 depthwise
kernels and expansion 6, a different layer mix from the zoo's MobileNetV2 (3x3 only).

Blocks (expansion t, channels c, repeats n, stride s, kernel k) as the reference lite0:
(1,16,1,1,3) (6,24,2,2,3) (6,40,2,2,5) (6,80,3,2,3) (6,112,3,1,5) (6,192,4,2,5) (6,320,1,1,3)."""

BLOCKS = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3), (6, 112, 3, 1, 5),
          (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]


def efficientnet_lite0(net_cls, seed=9):
    n = net_cls("efficientnet_lite0", seed, (1, 3, 224, 224))
    x = n.conv("input", 32, 3, 2, "relu6")
    cin = 32
    for t, c, reps, s, k in BLOCKS:
        for i in range(reps):
            stride = s if i == 0 else 1
            h = x
            if t != 1:
                h = n.conv(h, cin * t, 1, 1, "relu6")
            h = n.conv(h, cin * t, k, stride, "relu6", group=cin * t)
            h = n.conv(h, c, 1, 1, None)
            x = n.add(x, h) if stride == 1 and cin == c else h
            cin = c
    x = n.conv(x, 1280, 1, 1, "relu6")
    x = n.gemm(n.flatten(n.gap(x)), 1000)
    n.output(x)
    return n
