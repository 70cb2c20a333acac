#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a ResNet-50 v1.5 int8 ONNX model with the same operators and shapes as
resnet50_int8_bench (QLinearConv u8/s8 per-channel, QLinearAdd, MaxPool, QLinearGlobalAveragePool,
QLinearMatMul; random weights, seed 7) so onnxruntime can be timed on it (bench/time_ort.js).
Usage: /usr/bin/python3 resnet50_int8_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        return name

    s = const("s", np.array(0.02, np.float32))
    z = const("z", np.array(0, np.uint8))
    zin = const("zin", np.array(128, np.uint8))
    n = [0]

    def conv(x, xz, cin, cout, k, stride):
        n[0] += 1
        i = n[0]
        w = const("w%d" % i, rng.integers(-64, 64, size=(cout, cin, k, k)).astype(np.int8))
        ws = const("ws%d" % i, (0.002 + 0.00001 * (np.arange(cout) % 50)).astype(np.float32))
        wz = const("wz%d" % i, np.zeros(cout, np.int8))
        b = const("b%d" % i, rng.integers(-500, 501, size=cout).astype(np.int32))
        p = k // 2
        y = "c%d" % i
        nodes.append(helper.make_node("QLinearConv", [x, s, xz, w, ws, wz, s, z, b], [y], pads=[p] * 4, strides=[stride] * 2))
        return y

    x = conv("input", zin, 3, 64, 7, 2)
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 64
    for st, (mid, blocks) in enumerate(zip([64, 128, 256, 512], [3, 4, 6, 3])):
        for b in range(blocks):
            stride = 2 if st > 0 and b == 0 else 1
            h = conv(x, z, cin, mid, 1, 1)
            h = conv(h, z, mid, mid, 3, stride)
            h = conv(h, z, mid, mid * 4, 1, 1)
            skip = conv(x, z, cin, mid * 4, 1, stride) if b == 0 else x
            y = "add%d_%d" % (st, b)
            nodes.append(helper.make_node("QLinearAdd", [h, s, z, skip, s, z, s, z], [y], domain="com.microsoft"))
            x, cin = y, mid * 4
    nodes.append(helper.make_node("QLinearGlobalAveragePool", [x, s, z, s, z], ["gap"], domain="com.microsoft", channels_last=0))
    shp = const("shp", np.array([1, 2048], np.int64))
    nodes.append(helper.make_node("Reshape", ["gap", shp], ["flat"]))
    fc = const("fc", rng.integers(-64, 64, size=(2048, 1000)).astype(np.int8))
    fcs = const("fcs", np.array(0.001, np.float32))
    fcz = const("fcz", np.array(0, np.int8))
    nodes.append(helper.make_node("QLinearMatMul", ["flat", s, z, fc, fcs, fcz, s, z], ["logits"]))
    g = helper.make_graph(nodes, "resnet50_int8", [helper.make_tensor_value_info("input", TensorProto.UINT8, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.UINT8, [1, 1000])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, out)


if __name__ == "__main__":
    main(sys.argv[1])
