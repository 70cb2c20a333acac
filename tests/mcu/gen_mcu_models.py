#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Deterministic int8 QDQ ONNX models for the MCU path (issue 8), written at test time, never committed:
  lenet5_int8.onnx   LeNet-5 digit classifier, 1x1x28x28 -> 10 logits
  dscnn_kws_int8.onnx  DS-CNN keyword spotter, 1x1x49x10 MFCC -> 12 classes (depthwise: seed 000's ONNX
                       Conv allows group = 1 only, so the check rejects it unless overridden)
  cnn_kws_int8.onnx    the same task with plain convolutions (passes the seed-000 check)
  float_cnn_f32.onnx   a small fp32 CNN (Conv, Relu, MaxPool, Sigmoid, AveragePool, Gemm, Softmax)
  gru_kws_f32.onnx     fp32 GRU keyword spotter (+ _input.npy, _expected.npy from float64 equations)
  lstm_kws_f32.onnx    fp32 LSTM keyword spotter (the same, ONNX LSTM equations)
  act_int8.onnx        int8 Sigmoid / LeakyRelu (QLinearSigmoid / QLinearLeakyRelu as 256-entry tables)
  layout_f32.onnx      fp32 Pad, Slice, Transpose, Resize, ReduceMean, GlobalAveragePool, Concat
  resnet50_stem_int8.onnx  ResNet-50 stem + last stage + classifier: too large for either MCU
Weights are seeded random (He-scaled); activation scales are fixed so values stay in range.
Usage: gen_mcu_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.RandomState(8)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr, p):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(arr, n))
        return n

    def q(self, x, scale, zp):
        s, z = self.const(np.array(scale, np.float32), "s"), self.const(np.array(zp, np.int8), "z")
        y = self.name("q")
        self.nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [y]))
        return y, (s, z)

    def dq(self, x, sz):
        y = self.name("dq")
        self.nodes.append(helper.make_node("DequantizeLinear", [x, sz[0], sz[1]], [y]))
        return y

    def qdq(self, x, scale, zp):
        y, sz = self.q(x, scale, zp)
        return self.dq(y, sz), scale

    def weight_dq(self, w, axis):
        """Per-channel symmetric int8 weights -> DequantizeLinear (axis 0)."""
        amax = np.abs(w).reshape(w.shape[0], -1).max(axis=1) if axis == 0 else np.array(np.abs(w).max())
        scale = (np.maximum(amax, 1e-6) / 127.0).astype(np.float32)
        bshape = (-1,) + (1,) * (w.ndim - 1) if axis == 0 else ()
        wq = np.clip(np.round(w / scale.reshape(bshape)), -127, 127).astype(np.int8)
        wn, sn = self.const(wq, "w"), self.const(scale, "ws")
        zn = self.const(np.zeros(scale.shape, np.int8), "wz")
        y = self.name("wdq")
        attrs = {"axis": axis} if scale.ndim else {}
        self.nodes.append(helper.make_node("DequantizeLinear", [wn, sn, zn], [y], **attrs))
        return y, scale

    def bias_dq(self, b, scale):
        bq = np.round(b / scale).astype(np.int32)
        bn, sn = self.const(bq, "b"), self.const(scale.astype(np.float32), "bs")
        zn = self.const(np.zeros(scale.shape, np.int32), "bz")
        y = self.name("bdq")
        attrs = {"axis": 0} if scale.ndim else {}
        self.nodes.append(helper.make_node("DequantizeLinear", [bn, sn, zn], [y], **attrs))
        return y

    def conv(self, x, xs, cin, cout, k, stride=1, pad=0, group=1, out_scale=0.05, relu=True):
        kh, kw = (k, k) if isinstance(k, int) else k
        fan_in = (cin // group) * kh * kw
        w = (rng.randn(cout, cin // group, kh, kw) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        wd, ws = self.weight_dq(w, 0)
        bd = self.bias_dq((rng.randn(cout) * 0.05).astype(np.float32), (xs * ws).astype(np.float32))
        y = self.name("conv")
        pads = [pad] * 4 if isinstance(pad, int) else pad
        self.nodes.append(helper.make_node("Conv", [x, wd, bd], [y], kernel_shape=[kh, kw], strides=[stride, stride],
                                           pads=pads, group=group))
        # ReLU folded into the quantization range (zero point -128), as ORT's QDQ quantizer emits it.
        return self.qdq(y, out_scale, -128 if relu else 0)

    def gemm(self, x, xs, k, n, out_scale, relu):
        w = (rng.randn(n, k) * np.sqrt(2.0 / k)).astype(np.float32)
        wd, ws = self.weight_dq(w, 0)
        bd = self.bias_dq((rng.randn(n) * 0.05).astype(np.float32), (xs * ws).astype(np.float32))
        y = self.name("fc")
        self.nodes.append(helper.make_node("Gemm", [x, wd, bd], [y], transB=1))
        return self.qdq(y, out_scale, -128 if relu else 0)

    def pool(self, x, xs, op, **attrs):
        y = self.name("pool")
        self.nodes.append(helper.make_node(op, [x], [y], **attrs))
        return self.qdq(y, xs, -128)

    def flatten(self, x, xs):
        y = self.name("flat")
        self.nodes.append(helper.make_node("Flatten", [x], [y], axis=1))
        return self.qdq(y, xs, -128)

    def save(self, path, in_shape, out, out_shape, name):
        graph = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npusim-gen")
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, path)


def lenet(path):
    b = Builder()
    x, xs = b.qdq("input", 1.0 / 255.0, -128)  # pixels in [0, 1]
    x, xs = b.conv(x, xs, 1, 6, 5, pad=2, out_scale=0.02)
    x, xs = b.pool(x, xs, "MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    x, xs = b.conv(x, xs, 6, 16, 5, out_scale=0.04)
    x, xs = b.pool(x, xs, "MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    x, xs = b.flatten(x, xs)
    x, xs = b.gemm(x, xs, 400, 120, 0.05, True)
    x, xs = b.gemm(x, xs, 120, 84, 0.05, True)
    x, xs = b.gemm(x, xs, 84, 10, 0.1, False)
    b.save(path, [1, 1, 28, 28], x, [1, 10], "lenet5_int8")


def dscnn(path):
    b = Builder()
    x, xs = b.qdq("input", 0.05, 0)
    x, xs = b.conv(x, xs, 1, 64, (10, 4), stride=2, pad=[4, 1, 5, 2], out_scale=0.05)  # 49x10 -> 25x5
    for _ in range(4):
        x, xs = b.conv(x, xs, 64, 64, 3, pad=1, group=64, out_scale=0.05)
        x, xs = b.conv(x, xs, 64, 64, 1, out_scale=0.05)
    x, xs = b.pool(x, xs, "GlobalAveragePool")
    x, xs = b.flatten(x, xs)
    x, xs = b.gemm(x, xs, 64, 12, 0.1, False)
    b.save(path, [1, 1, 49, 10], x, [1, 12], "dscnn_kws_int8")


def cnn_kws(path):
    """Seed-000-compliant keyword spotter for the ONNX path: plain (group = 1) convolutions only."""
    b = Builder()
    x, xs = b.qdq("input", 0.05, 0)
    x, xs = b.conv(x, xs, 1, 32, 3, stride=2, pad=1, out_scale=0.05)   # 49x10 -> 25x5
    x, xs = b.conv(x, xs, 32, 32, 3, pad=1, out_scale=0.05)
    x, xs = b.conv(x, xs, 32, 48, 3, stride=2, pad=1, out_scale=0.05)  # -> 13x3
    x, xs = b.conv(x, xs, 48, 48, 3, pad=1, out_scale=0.05)
    x, xs = b.pool(x, xs, "GlobalAveragePool")
    x, xs = b.flatten(x, xs)
    x, xs = b.gemm(x, xs, 48, 12, 0.1, False)
    b.save(path, [1, 1, 49, 10], x, [1, 12], "cnn_kws_int8")


def act_int8(path):
    """int8 activations as conversion-time lookup tables: Conv -> Sigmoid -> Conv -> LeakyRelu -> GAP -> Gemm."""
    b = Builder()
    x, xs = b.qdq("input", 0.02, 0)
    x, xs = b.conv(x, xs, 3, 8, 3, pad=1, out_scale=0.05, relu=False)
    y = b.name("sig")
    b.nodes.append(helper.make_node("Sigmoid", [x], [y]))
    x, xs = b.qdq(y, 1.0 / 256.0, -128)
    x, xs = b.conv(x, xs, 8, 8, 3, pad=1, out_scale=0.05, relu=False)
    y = b.name("lrelu")
    b.nodes.append(helper.make_node("LeakyRelu", [x], [y], alpha=0.1))
    x, xs = b.qdq(y, 0.04, -100)
    x, xs = b.pool(x, xs, "GlobalAveragePool")
    x, xs = b.flatten(x, xs)
    x, xs = b.gemm(x, xs, 8, 4, 0.1, False)
    b.save(path, [1, 3, 12, 12], x, [1, 4], "act_int8")


def float_cnn(path):
    """fp32 model (seed 000: float32 is the other MCU dtype): Conv+BatchNorm+Relu, MaxPool, Conv+Sigmoid,
    AveragePool, Flatten, Gemm, Softmax."""
    nodes, inits = [], []

    def const(arr, name):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    nodes.append(helper.make_node("Conv", ["input", const(rng.randn(8, 3, 3, 3) * 0.3, "w1"), const(rng.randn(8) * 0.1, "b1")],
                                  ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    inits += [numpy_helper.from_array(v.astype(np.float32), n) for n, v in [
        ("bn_g", rng.uniform(0.5, 1.5, 8)), ("bn_b", rng.randn(8) * 0.1), ("bn_m", rng.randn(8) * 0.1),
        ("bn_v", rng.uniform(0.5, 2.0, 8))]]
    nodes.append(helper.make_node("BatchNormalization", ["c1", "bn_g", "bn_b", "bn_m", "bn_v"], ["bn1"]))
    nodes.append(helper.make_node("Relu", ["bn1"], ["r1"]))
    nodes.append(helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Conv", ["p1", const(rng.randn(16, 8, 3, 3) * 0.2, "w2"), const(rng.randn(16) * 0.1, "b2")],
                                  ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]))
    nodes.append(helper.make_node("Sigmoid", ["c2"], ["s2"]))
    nodes.append(helper.make_node("AveragePool", ["s2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Flatten", ["p2"], ["f"], axis=1))
    nodes.append(helper.make_node("Gemm", ["f", const(rng.randn(10, 64) * 0.2, "w3"), const(rng.randn(10) * 0.1, "b3")],
                                  ["g"], transB=1))
    nodes.append(helper.make_node("Softmax", ["g"], ["output"], axis=-1))
    graph = helper.make_graph(nodes, "float_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npusim-gen")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def layout_f32(path):
    """fp32 data-movement ops on the MCU: Pad, Slice (strided), Transpose, Resize, ReduceMean,
    GlobalAveragePool, Concat, Flatten."""
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in [
        ("pads", [0, 0, 1, 1, 0, 0, 1, 1]), ("starts", [1, 0, 1]), ("ends", [4, 10, 9]), ("axes", [1, 2, 3]),
        ("steps", [1, 2, 1]), ("sizes", [1, 5, 6, 16])]]
    inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "padv"))
    nodes = [
        helper.make_node("Pad", ["input", "pads", "padv"], ["pd"]),                       # 1x4x10x10
        helper.make_node("Slice", ["pd", "starts", "ends", "axes", "steps"], ["sl"]),     # 1x3x5x8
        helper.make_node("Transpose", ["sl"], ["tr"], perm=[0, 2, 1, 3]),                 # 1x5x3x8
        helper.make_node("Resize", ["tr", "", "", "sizes"], ["rs"], mode="linear"),       # 1x5x6x16
        helper.make_node("ReduceMean", ["rs"], ["rm"], axes=[2, 3], keepdims=1),          # 1x5x1x1
        helper.make_node("GlobalAveragePool", ["tr"], ["gp"]),                            # 1x5x1x1
        helper.make_node("Concat", ["rm", "gp"], ["cc"], axis=1),                         # 1x10x1x1
        helper.make_node("Flatten", ["cc"], ["output"], axis=1),
    ]
    graph = helper.make_graph(nodes, "layout_f32", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npusim-gen")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def gru_kws(path):
    """fp32 GRU keyword spotter (seed 000 GRU: float only, forward, no sequence_lens), 49 MFCC frames
    of 10 -> GRU(32) -> Gemm(12) -> Softmax. num::run_op has no GRU, so the expected output is computed
    here in float64 from the ONNX GRU equations (linear_before_reset = 1) and saved with the input."""
    T, I, H = 49, 10, 32
    W = (rng.randn(1, 3 * H, I) * 0.3).astype(np.float32)
    R = (rng.randn(1, 3 * H, H) * 0.2).astype(np.float32)
    Bb = (rng.randn(1, 6 * H) * 0.1).astype(np.float32)
    FW = (rng.randn(12, H) * 0.3).astype(np.float32)
    FB = (rng.randn(12) * 0.1).astype(np.float32)
    x = rng.uniform(-1, 1, (T, 1, I)).astype(np.float32)
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(Bb, "B"),
             numpy_helper.from_array(FW, "fw"), numpy_helper.from_array(FB, "fb"),
             numpy_helper.from_array(np.array([1, H], np.int64), "shp")]
    nodes = [helper.make_node("GRU", ["input", "W", "R", "B"], ["Y", "Y_h"], hidden_size=H, linear_before_reset=1),
             helper.make_node("Reshape", ["Y_h", "shp"], ["h"]),
             helper.make_node("Gemm", ["h", "fw", "fb"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["output"], axis=-1)]
    graph = helper.make_graph(nodes, "gru_kws", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [T, 1, I])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 12])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npusim-gen")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    w, r, wb, rb = W[0].astype(np.float64), R[0].astype(np.float64), Bb[0, :3 * H].astype(np.float64), Bb[0, 3 * H:].astype(np.float64)
    h = np.zeros(H)
    for t in range(T):
        gx, gh = w @ x[t, 0].astype(np.float64) + wb, r @ h + rb
        z, rr = sig(gx[:H] + gh[:H]), sig(gx[H:2 * H] + gh[H:2 * H])
        hh = np.tanh(gx[2 * H:] + rr * gh[2 * H:])
        h = (1 - z) * hh + z * h
    g = FW.astype(np.float64) @ h + FB
    e = np.exp(g - g.max())
    np.save(path.replace(".onnx", "_input.npy"), x)
    np.save(path.replace(".onnx", "_expected.npy"), (e / e.sum()).astype(np.float32).reshape(1, 12))


def lstm_kws(path):
    """fp32 LSTM keyword spotter (seed 000 LSTM: float only, forward, no sequence_lens / P), 49 frames of 10
    -> LSTM(24) -> Gemm(12) -> Softmax; expected output from the ONNX LSTM equations in float64."""
    T, I, H = 49, 10, 24
    W = (rng.randn(1, 4 * H, I) * 0.3).astype(np.float32)
    R = (rng.randn(1, 4 * H, H) * 0.2).astype(np.float32)
    Bb = (rng.randn(1, 8 * H) * 0.1).astype(np.float32)
    FW = (rng.randn(12, H) * 0.3).astype(np.float32)
    FB = (rng.randn(12) * 0.1).astype(np.float32)
    x = rng.uniform(-1, 1, (T, 1, I)).astype(np.float32)
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(Bb, "B"),
             numpy_helper.from_array(FW, "fw"), numpy_helper.from_array(FB, "fb"),
             numpy_helper.from_array(np.array([1, H], np.int64), "shp")]
    nodes = [helper.make_node("LSTM", ["input", "W", "R", "B"], ["Y", "Y_h"], hidden_size=H),
             helper.make_node("Reshape", ["Y_h", "shp"], ["h"]),
             helper.make_node("Gemm", ["h", "fw", "fb"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["output"], axis=-1)]
    graph = helper.make_graph(nodes, "lstm_kws", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [T, 1, I])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 12])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npusim-gen")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    w, r = W[0].astype(np.float64), R[0].astype(np.float64)
    b = Bb[0, :4 * H].astype(np.float64) + Bb[0, 4 * H:].astype(np.float64)
    h, c = np.zeros(H), np.zeros(H)
    for t in range(T):  # ONNX gate order i, o, f, c
        g = w @ x[t, 0].astype(np.float64) + r @ h + b
        i_, o_, f_, c_ = sig(g[:H]), sig(g[H:2 * H]), sig(g[2 * H:3 * H]), np.tanh(g[3 * H:])
        c = f_ * c + i_ * c_
        h = o_ * np.tanh(c)
    g = FW.astype(np.float64) @ h + FB
    e = np.exp(g - g.max())
    np.save(path.replace(".onnx", "_input.npy"), x)
    np.save(path.replace(".onnx", "_expected.npy"), (e / e.sum()).astype(np.float32).reshape(1, 12))


def resnet50_stem(path):
    b = Builder()
    x, xs = b.qdq("input", 0.02, 0)
    x, xs = b.conv(x, xs, 3, 64, 7, stride=2, pad=3, out_scale=0.05)  # 224 -> 112x112x64
    x, xs = b.pool(x, xs, "MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 56x56
    x, xs = b.conv(x, xs, 64, 512, 1, stride=8, out_scale=0.05)  # to the last stage: 7x7x512
    for _ in range(1):  # a conv5_x 3x3 512->512 (2.4 MB of int8 weights)
        x, xs = b.conv(x, xs, 512, 512, 3, pad=1, out_scale=0.05)
    x, xs = b.conv(x, xs, 512, 2048, 1, out_scale=0.05)
    x, xs = b.pool(x, xs, "GlobalAveragePool")
    x, xs = b.flatten(x, xs)
    x, xs = b.gemm(x, xs, 2048, 1000, 0.1, False)
    b.save(path, [1, 3, 224, 224], x, [1, 1000], "resnet50_stem_int8")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    lenet(os.path.join(out, "lenet5_int8.onnx"))
    dscnn(os.path.join(out, "dscnn_kws_int8.onnx"))
    cnn_kws(os.path.join(out, "cnn_kws_int8.onnx"))
    float_cnn(os.path.join(out, "float_cnn_f32.onnx"))
    act_int8(os.path.join(out, "act_int8.onnx"))
    gru_kws(os.path.join(out, "gru_kws_f32.onnx"))
    layout_f32(os.path.join(out, "layout_f32.onnx"))
    lstm_kws(os.path.join(out, "lstm_kws_f32.onnx"))
    resnet50_stem(os.path.join(out, "resnet50_stem_int8.onnx"))
