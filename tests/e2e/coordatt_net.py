#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A coordinate-attention-style net (Hou, Zhou, Feng 2021, "Coordinate Attention for Efficient Mobile
Network Design": per stage a_h = sigmoid(conv1x1(AvgPool 1 x W)), a_w = sigmoid(conv1x1(AvgPool H x 1)),
x * a_h * a_w; the block's shared concat/split conv left out), 1x3x128x128, three stages, in the form
onnxruntime's quantize_static writes (QDQ, uint8 activations, per-channel int8 weights, one DQ per
reader; contract_probes.Probe's builder): the [b,c,h,1] and [b,c,1,w] broadcast Muls of issue 15.
    build() -> onnx.ModelProto;  coordatt_net.py OUT.onnx writes it."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract_probes as cp  # noqa: E402


def build():
    p = cp.Probe(seed=3)

    uses = {}
    def q(x, v, tag):
        s, z = p.qparams(v)
        p.init(tag + "_s", np.array(s, np.float32)); p.init(tag + "_z", np.array(z, np.uint8))
        p.node("QuantizeLinear", [x, tag + "_s", tag + "_z"], [tag + "_q"])
        p.vals[tag] = v
        return tag
    def dq(tag):
        uses[tag] = uses.get(tag, 0) + 1
        o = "%s_dq%d" % (tag, uses[tag])
        p.node("DequantizeLinear", [tag + "_q", tag + "_s", tag + "_z"], [o])
        return o
    def conv(tag_in, cout, k, s, name, act=True):
        x = p.vals[tag_in]; cin = x.shape[1]
        w = (p.rng.standard_normal((cout, cin, k, k)) * (1.0 / np.sqrt(cin * k * k))).astype(np.float32)
        b = (p.rng.standard_normal(cout) * 0.05).astype(np.float32)
        wn, ws = p.weights(name, w)
        bn = p.bias(name, b, ws * p.qparams(x)[0])
        v = cp.np_conv(x, w, b, s, k // 2)
        y = p.node("Conv", [dq(tag_in), wn, bn], [name + "_f"], name=name, kernel_shape=[k, k], pads=[k // 2] * 4, strides=[s, s])
        if act:
            v = np.maximum(v, 0); y = p.node("Relu", [y], [name + "_r"], name=name + "_relu")
        return q(y, v, name)
    def pool(tag_in, kh, kw, name):
        x = p.vals[tag_in]
        n, c, h, w = x.shape
        v = x.reshape(n, c, h // kh, kh, w // kw, kw).mean(axis=(3, 5)).astype(np.float32)
        y = p.node("AveragePool", [dq(tag_in)], [name + "_f"], name=name, kernel_shape=[kh, kw], strides=[kh, kw])
        return q(y, v, name)
    def sig(tag_in, name):
        v = (1 / (1 + np.exp(-p.vals[tag_in]))).astype(np.float32)
        return q(p.node("Sigmoid", [dq(tag_in)], [name + "_f"], name=name), v, name)
    def mul(ta, tb, name):
        v = (p.vals[ta] * p.vals[tb]).astype(np.float32)
        return q(p.node("Mul", [dq(ta), dq(tb)], [name + "_f"], name=name), v, name)

    x = p.rng.uniform(-1, 1, (1, 3, 128, 128)).astype(np.float32)
    p.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 128, 128]))
    t = q("x", x, "xin")
    t = conv(t, 16, 3, 2, "stem")
    for i, (c, s) in enumerate([(32, 2), (64, 2), (96, 2)]):
        t = conv(t, c, 3, s, "b%d_conv" % i)
        h, w = p.vals[t].shape[2:]
        ah = sig(conv(pool(t, 1, w, "b%d_poolw" % i), c, 1, 1, "b%d_fh" % i, act=False), "b%d_sh" % i)  # [1,c,h,1]
        aw = sig(conv(pool(t, h, 1, "b%d_poolh" % i), c, 1, 1, "b%d_fw" % i, act=False), "b%d_sw" % i)  # [1,c,1,w]
        t = mul(mul(t, ah, "b%d_mulh" % i), aw, "b%d_mulw" % i)
    t = conv(t, 32, 1, 1, "head", act=False)
    o = dq(t)
    p.nodes[-1].output[0] = "output"
    g = helper.make_graph(p.nodes, "ca_net", p.inputs, [helper.make_tensor_value_info("output", TensorProto.FLOAT, list(p.vals[t].shape))], p.inits)
    m = helper.make_model(g, producer_name="npusim-ca", opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 7
    onnx.checker.check_model(m)
    return m


if __name__ == "__main__":
    onnx.save(build(), sys.argv[1])
