#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A hidden-set style probe (issue 15 acceptance 3): a PaddleOCR-det-style DBNet written as torch.onnx
exports a float PyTorch model (opset 14) - a net and exporter the zoo's figures were not tuned on.

Structure (DB, Liao et al. 2020, on a MobileNetV3-small-style backbone as PaddleOCR's det_mv3_db):
3x3 s2 stem + HardSwish; inverted residual blocks (1x1 expand, k x k depthwise, squeeze-excite =
GlobalAveragePool -> 1x1 conv + Relu -> 1x1 conv -> HardSigmoid(1/6, 1/2) -> Mul, 1x1 project, residual
Add) with Relu or HardSwish; FPN: 1x1 laterals, nearest x2 upsampling (nn.Upsample's export: Resize
asymmetric / floor with constant scales) + Add, 3x3 smoothing convs, x8 / x4 / x2 nearest upsampling and
Concat; DB head: 3x3 conv + Relu, ConvTranspose 2x2 s2 + Relu, ConvTranspose 2x2 s2 to one channel,
Sigmoid. Conv biases as exported after BatchNorm folding. Random weights, seeded: the same bytes
each run. Quantized by `npusim run --quantize int8` (RKNN-Toolkit2's default scheme).

usage: make_zoo_dbnet.py OUT.onnx [SIZE]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def dbnet(size=320, seed=3):
    """The float DBNet ModelProto (input x [1,3,size,size], output maps [1,1,size,size])."""
    rng = np.random.RandomState(seed)
    nodes, inits = [], []
    k = [0]
    def name(p):
        k[0] += 1
        return "%s_%d" % (p, k[0])
    def init(a, p):
        n = name(p)
        inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(op, ins, **attrs):
        o = name(op.lower())
        nodes.append(helper.make_node(op, ins, [o], name=o, **attrs))
        return o

    def conv(x, cin, cout, kk, s=1, g=1, act=None):
        w = (rng.standard_normal((cout, cin // g, kk, kk)) * np.sqrt(2.0 / (cin // g * kk * kk))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.05).astype(np.float32)
        y = node("Conv", [x, init(w, "w"), init(b, "b")], kernel_shape=[kk, kk], strides=[s, s], pads=[kk // 2] * 4, group=g)
        if act == "relu":
            y = node("Relu", [y])
        elif act == "hs":
            y = node("HardSwish", [y])
        return y
    def se(x, c):
        p = node("GlobalAveragePool", [x])
        r = conv(p, c, max(8, c // 4), 1, act="relu")
        h = conv(r, max(8, c // 4), c, 1)
        h = node("HardSigmoid", [h], alpha=1.0 / 6, beta=0.5)
        return node("Mul", [x, h])
    def bneck(x, cin, exp, cout, kk, s, use_se, act):
        y = conv(x, cin, exp, 1, act=act) if exp != cin else x
        y = conv(y, exp, exp, kk, s, g=exp, act=act)
        if use_se:
            y = se(y, exp)
        y = conv(y, exp, cout, 1)
        return node("Add", [x, y]) if s == 1 and cin == cout else y
    def up(x, f):
        return node("Resize", [x, "", init(np.array([1, 1, f, f], np.float32), "sc")], mode="nearest",
                    coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    x = "x"
    y = conv(x, 3, 16, 3, 2, act="hs")                        # 160
    y = bneck(y, 16, 16, 16, 3, 2, True, "relu"); c2 = y      # 80
    y = bneck(y, 16, 72, 24, 3, 2, False, "relu")             # 40
    y = bneck(y, 24, 88, 24, 3, 1, False, "relu"); c3 = y
    y = bneck(y, 24, 96, 40, 5, 2, True, "hs")                # 20
    y = bneck(y, 40, 240, 40, 5, 1, True, "hs")
    y = bneck(y, 40, 120, 48, 5, 1, True, "hs"); c4 = y
    y = bneck(y, 48, 288, 96, 5, 2, True, "hs")               # 10
    y = bneck(y, 96, 576, 96, 5, 1, True, "hs")
    c5 = conv(y, 96, 288, 1, act="hs")
    inner = 64
    i5 = conv(c5, 288, inner, 1); i4 = conv(c4, 48, inner, 1); i3 = conv(c3, 24, inner, 1); i2 = conv(c2, 16, inner, 1)
    o4 = node("Add", [i4, up(i5, 2)]); o3 = node("Add", [i3, up(o4, 2)]); o2 = node("Add", [i2, up(o3, 2)])
    p5 = conv(i5, inner, inner // 4, 3); p4 = conv(o4, inner, inner // 4, 3); p3 = conv(o3, inner, inner // 4, 3); p2 = conv(o2, inner, inner // 4, 3)
    fuse = node("Concat", [up(p5, 8), up(p4, 4), up(p3, 2), p2], axis=1)
    h = conv(fuse, inner, inner // 4, 3, act="relu")
    def convT(x, c):
        w = (rng.standard_normal((c, c, 2, 2)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(c) * 0.05).astype(np.float32)
        return node("ConvTranspose", [x, init(w, "wt"), init(b, "bt")], kernel_shape=[2, 2], strides=[2, 2])
    h = node("Relu", [convT(h, inner // 4)])
    w = (rng.standard_normal((inner // 4, 1, 2, 2)) * 0.3).astype(np.float32)
    h = node("ConvTranspose", [h, init(w, "wt"), init(np.zeros(1, np.float32), "bt")], kernel_shape=[2, 2], strides=[2, 2])
    out = node("Sigmoid", [h])
    nodes[-1].output[0] = "maps"
    g = helper.make_graph(nodes, "dbnet_mnv3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                          [helper.make_tensor_value_info("maps", TensorProto.FLOAT, [1, 1, size, size])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="dbnet-probe")
    m.ir_version = 7
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    # An option is not an output path; the size is a positive integer.
    if len(sys.argv) not in (2, 3) or sys.argv[1].startswith("-") or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        print(__doc__, file=sys.stderr)
        return 2
    onnx.save(dbnet(int(sys.argv[2]) if len(sys.argv) == 3 else 320), sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
