#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A hidden-set style probe (issue 13 acceptance 3): a ShuffleNetV2-style net with squeeze-excite
blocks, written as torch.onnx exports an FX-quantized (x86 qconfig) model - a different net and
exporter convention from the zoo's.

Structure (ShuffleNetV2, Ma et al. 2018, with MobileNetV3-style SE in the branch): 3x3 s2 stem + ReLU,
3x3 s2 max pool, two stages of one downsampling unit (two branches, concat) and one basic unit (channel
split, one branch, concat), each unit ending in the channel shuffle Reshape [1,2,C/2,H,W] ->
Transpose(0,2,1,3,4) -> Reshape [1,C,H,W]; SE = GlobalAveragePool -> 1x1 conv + ReLU -> 1x1 conv ->
HardSigmoid -> Mul; head 1x1 conv + ReLU -> GlobalAveragePool -> Flatten -> Gemm(transB=1).

FX convention (as tools/zoo/conventions.py pytorch_fx): activations quint8 with reduce_range
(scale = (max - min) / 127), one QuantizeLinear -> DequantizeLinear per observed tensor (the DQ shared
by its readers); per-channel symmetric int8 weights (scale = max|w| / 127.5, axis 0) as float
initializer -> Q -> DQ; float biases; Conv + ReLU fused modules as Conv -> Relu -> Q; ops sharing their
input's observer (max pool, avg pool, flatten, split, reshape, transpose) carry the input's
parameters; cat observes its output (its inputs requantized to it); HardSigmoid has FX's fixed output
parameters (scale 1/256, zero point 0) and reads the observed conv output.
Deterministic (seed 7): same bytes each run.

usage: make_zoo_shufflenet.py OUT.onnx"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_zoo import conv2d, maxpool  # noqa: E402  (the zoo's numpy calibration reference)


class FxNet:
    def __init__(self, seed=7, shape=(1, 3, 64, 64)):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.k = [], [], 0
        self.val = {"input": self.rng.uniform(-1, 1, size=shape).astype(np.float32)}
        self.q = {}  # float tensor -> (scale, zp) of its observer
        self.dq = {}  # float tensor -> the DQ output its readers use

    def name(self, kind):
        self.k += 1
        return "%s_%d" % (kind, self.k)

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=self.name(op.lower()), **attrs))

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def observe(self, t, params=None, relu=False):
        """QuantizeLinear -> DequantizeLinear of float tensor t (FX observer); returns the DQ output."""
        if params is None:
            v = self.val[t]
            lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
            if relu:
                lo = 0.0
            hi = max(hi, lo + 1e-3)
            s = np.float32((hi - lo) / 127.0)
            params = (s, np.uint8(int(np.clip(np.round(-lo / s), 0, 127))))
        s, z = params
        sn, zn = self.init(t + "_s", np.array(params[0], np.float32)), self.init(t + "_z", np.array(z, np.uint8))
        self.node("QuantizeLinear", [t, sn, zn], [t + "_q"])
        self.node("DequantizeLinear", [t + "_q", sn, zn], [t + "_dq"])
        self.q[t], self.dq[t] = params, t + "_dq"
        # the observed value is what the next op reads (fake quantization)
        self.val[t + "_dq"] = ((np.clip(np.round(self.val[t] / s) + z, 0, 255) - z) * s).astype(np.float32)
        return t + "_dq"

    def weight(self, base, w):
        ws = (np.maximum(np.abs(w).reshape(w.shape[0], -1).max(axis=1), 1e-8) / 127.5).astype(np.float32)
        self.init(base + "_wf", w)
        self.init(base + "_ws", ws)
        self.init(base + "_wz", np.zeros(ws.shape, np.int8))
        self.node("QuantizeLinear", [base + "_wf", base + "_ws", base + "_wz"], [base + "_wq"], axis=0)
        self.node("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"], [base + "_w"], axis=0)
        q = np.clip(np.round(w / ws.reshape(-1, *([1] * (w.ndim - 1)))), -128, 127)
        return base + "_w", (q * ws.reshape(-1, *([1] * (w.ndim - 1)))).astype(np.float32)

    def conv(self, x, cout, k, s=1, relu=True, group=1, observe=True):
        cin = self.val[x].shape[1]
        y = self.name("conv")
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))).astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.05).astype(np.float32)
        wn, wq = self.weight(y, w)
        p = k // 2
        self.node("Conv", [x, wn, self.init(y + "_b", b)], [y], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                  group=group)
        self.val[y] = conv2d(self.val[x], wq, b, s, [p] * 4, group)
        if relu:
            self.node("Relu", [y], [y + "_relu"])
            self.val[y + "_relu"] = np.maximum(self.val[y], 0)
            y += "_relu"
        return self.observe(y, relu=relu) if observe else y

    def shared(self, op, x, y, fn, **attrs):
        """An op sharing its input's observer: DQ -> op -> Q with the input's parameters."""
        self.node(op, [x], [y], **attrs)
        self.val[y] = fn(self.val[x])
        return self.observe(y, self.q[x[:-3]])

    def shuffle(self, x):
        n, c, h, w = self.val[x].shape
        r1 = self.init(self.name("shape5"), np.array([1, 2, c // 2, h, w], np.int64))
        r2 = self.init(self.name("shape4"), np.array([1, c, h, w], np.int64))
        a = self.name("shuf_a")
        self.nodes.append(helper.make_node("Reshape", [x, r1], [a], name=self.name("reshape")))
        self.val[a] = self.val[x].reshape(1, 2, c // 2, h, w)
        a = self.observe(a, self.q[x[:-3]])
        b = self.shared("Transpose", a, self.name("shuf_t"), lambda v: v.transpose(0, 2, 1, 3, 4), perm=[0, 2, 1, 3, 4])
        y = self.name("shuf_r")
        self.nodes.append(helper.make_node("Reshape", [b, r2], [y], name=self.name("reshape")))
        self.val[y] = self.val[b].reshape(1, c, h, w)
        return self.observe(y, self.q[b[:-3]])

    def concat(self, xs):
        y = self.name("cat")
        self.node("Concat", xs, [y], axis=1)
        self.val[y] = np.concatenate([self.val[x] for x in xs], axis=1)
        return self.observe(y)  # FX: cat's output observer (its inputs requantized to it)

    def se(self, x):
        c = self.val[x].shape[1]
        g = self.shared("GlobalAveragePool", x, self.name("se_gap"), lambda v: v.mean(axis=(2, 3), keepdims=True))
        h = self.conv(g, max(c // 4, 8), 1)
        t = self.conv(h, c, 1, relu=False)
        hs = self.name("hsig")
        self.node("HardSigmoid", [t], [hs], alpha=1.0 / 6, beta=0.5)
        self.val[hs] = np.clip(self.val[t] / 6 + 0.5, 0, 1).astype(np.float32)
        hs = self.observe(hs, (np.float32(1 / 256), np.uint8(0)))
        y = self.name("se_mul")
        self.node("Mul", [x, hs], [y])
        self.val[y] = self.val[x] * self.val[hs]
        return self.observe(y)

    def split(self, x):
        c = self.val[x].shape[1]
        a, b = self.name("split_a"), self.name("split_b")
        self.node("Split", [x, self.init(self.name("sizes"), np.array([c // 2, c // 2], np.int64))], [a, b], axis=1)
        self.val[a], self.val[b] = self.val[x][:, :c // 2], self.val[x][:, c // 2:]
        p = self.q[x[:-3]]
        return self.observe(a, p), self.observe(b, p)

    def unit(self, x, cout, stride):
        half = cout // 2
        if stride == 2:
            b1 = self.conv(self.conv(x, self.val[x].shape[1], 3, 2, relu=False, group=self.val[x].shape[1]), half, 1)
            b2 = self.conv(x, half, 1)
        else:
            b1, b2 = self.split(x)
        b2 = self.conv(b2, half, 3, stride, relu=False, group=half)
        b2 = self.se(b2)
        b2 = self.conv(b2, half, 1)
        return self.shuffle(self.concat([b1, b2]))

    def build(self):
        x = self.observe("input")
        x = self.conv(x, 24, 3, 2)
        x = self.shared("MaxPool", x, self.name("pool"), lambda v: maxpool(v, 3, 2, 1), kernel_shape=[3, 3],
                        strides=[2, 2], pads=[1] * 4)
        for c in (48, 96):
            x = self.unit(x, c, 2)
            x = self.unit(x, c, 1)
        x = self.conv(x, 128, 1)
        x = self.shared("GlobalAveragePool", x, self.name("gap"), lambda v: v.mean(axis=(2, 3), keepdims=True))
        x = self.shared("Flatten", x, self.name("flat"), lambda v: v.reshape(1, -1), axis=1)
        w = (self.rng.standard_normal((10, 128)) * np.sqrt(1.0 / 128)).astype(np.float32)
        b = (self.rng.standard_normal(10) * 0.05).astype(np.float32)
        wn, wq = self.weight("fc", w)
        self.node("Gemm", [x, wn, self.init("fc_b", b)], ["fc"], transB=1)
        self.val["fc"] = self.val[x] @ wq.T + b
        self.observe("fc")
        self.nodes[-1].output[0] = "output"
        g = helper.make_graph(self.nodes, "shufflenet_se_fx",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(self.val["input"].shape))],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="pytorch")
        m.ir_version = 8
        checker.check_model(m)
        return m


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    # An option is not an output path (an earlier `--help` wrote a model named "--help").
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.stderr.write("usage: " + __doc__.split("usage: ")[1] + "\n")
        return 2
    save(FxNet().build(), sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
