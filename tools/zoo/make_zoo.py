#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""npusim model zoo (issue 3): deterministic, seeded, architecture-faithful ONNX models.

Writes float and QDQ-int8 variants of MobileNetV2 (1x3x224x224), ResNet50 v2 (pre-activation,
1x3x224x224), YOLOv5s with ReLU (1x3x640x640, v6.0 layout, three raw head outputs as in
rknn_model_zoo) and YOLOv8n with SiLU (1x3x640x640: C2f, SPPF, decoupled head; on request), plus small one-op-family test nets, and prints parameter and MAC counts against
the commonly cited figures (calibration/README.md). Weights are seeded random (latency does not
depend on them); BatchNorm after a convolution is folded into the convolution, as deployment
toolchains do. Quantization is static: one seeded calibration input, per-tensor asymmetric activations
(uint8 in <model>_qdq.onnx, onnxruntime's default QDQ activation type; int8 in <model>_qdq_s8.onnx),
per-channel symmetric int8 weights restricted to 7 bits (onnxruntime's reduce_range,
which keeps u8s8 kernels on CPUs without VNNI free of int16 saturation, so results are exact
integer arithmetic everywhere), int32 biases with scale = x_scale * w_scale. Why uint8 activations
by default: onnxruntime on x86 does not run int8-activation QDQ units as integer ops; it rewrites
simple int8 Q->DQ pairs to uint8 and leaves units whose Q feeds several consumers (residual
branches) in float, so only uint8 activations give an all-integer graph there.

Other producers' conventions of the same nets (tools/zoo/conventions.py: onnxruntime QDQ with int8
activations and QOperator format, PyTorch FX / QAT export, TensorRT explicit quantization):
--convention ort_qdq,ort_qdq_s8,ort_qoperator,pytorch_fx,tensorrt writes <model>_<convention>.onnx
(ort_qdq and ort_qdq_s8 keep their names <model>_qdq.onnx and <model>_qdq_s8.onnx) instead of the
default float + QDQ set.

Run with /usr/bin/python3 (needs python3-onnx and python3-numpy from Debian):
    /usr/bin/python3 tools/zoo/make_zoo.py OUT_DIR [--models mobilenetv2,resnet50v2,yolov5s,yolov8n,tests]
                                                   [--convention ort_qdq,pytorch_fx,...]
Same arguments, same bytes: no timestamps, no host paths, seeded generators only.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import conventions
import make_zoo_effnet

OPSET = 13
CITED = {  # (parameters, MACs) commonly cited; calibration/README.md
    "mobilenetv2": (3.5e6, 0.30e9),
    "resnet50v2": (25.6e6, 4.1e9),
    "yolov5s": (7.2e6, 8.2e9),
    "yolov8n": (3.2e6, 4.35e9),  # Ultralytics: 3.2M parameters, 8.7 GFLOPs (multiply-adds x 2) at 640
}


# ----------------------------------------------------------------------------------------------
# Numpy reference used only for calibration ranges.
def conv2d(x, w, b, stride, pad, group, dilation=1):
    if dilation > 1 and group == 1:  # one product per tap of the shifted input (no zero-filled kernel)
        m0, c0, kh0, kw0 = w.shape
        xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
        oh = (xp.shape[2] - (kh0 - 1) * dilation - 1) // stride + 1
        ow = (xp.shape[3] - (kw0 - 1) * dilation - 1) // stride + 1
        y = np.zeros((x.shape[0], m0, oh, ow), np.float32)
        for i in range(kh0):
            for j in range(kw0):
                win = xp[:, :, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                         j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
                y += np.einsum("nchw,mc->nmhw", win, w[:, :, i, j], optimize=True)
        return (y + (b.reshape(1, -1, 1, 1) if b is not None else 0)).astype(np.float32)
    if dilation > 1:  # dilated kernel = kernel with zeros between taps
        m0, c0, kh0, kw0 = w.shape
        wd_ = np.zeros((m0, c0, (kh0 - 1) * dilation + 1, (kw0 - 1) * dilation + 1), np.float32)
        wd_[:, :, ::dilation, ::dilation] = w
        w = wd_
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride][:, :, :oh, :ow]
    # win: n, c, oh, ow, kh, kw
    if group == 1:
        y = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # n, oh, ow, m
        y = y.transpose(0, 3, 1, 2)
    elif group == c and cg == 1 and m == c:
        y = np.einsum("nchwij,cij->nchw", win, w[:, 0], optimize=True)
    else:
        outs = []
        mg = m // group
        for g in range(group):
            wi = win[:, g * cg:(g + 1) * cg]
            outs.append(np.tensordot(wi, w[g * mg:(g + 1) * mg], axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2))
        y = np.concatenate(outs, axis=1)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def maxpool(x, k, s, p):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    oh = (xp.shape[2] - k) // s + 1
    ow = (xp.shape[3] - k) // s + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s][:, :, :oh, :ow]
    return win.max(axis=(4, 5)).astype(np.float32)


# ----------------------------------------------------------------------------------------------
class Net:
    """Records layers once; emits the float graph, the QDQ graph, and counts parameters/MACs."""

    def __init__(self, name, seed, input_shape):
        self.name = name
        self.rng = np.random.RandomState(seed)
        self.ops = []  # (kind, inputs, output, params)
        self.vals = {}  # float activations of the calibration pass
        self.count = 0
        self.params = 0
        self.macs = 0
        self.input_shape = input_shape
        self.vals["input"] = self.rng.uniform(-1.0, 1.0, size=input_shape).astype(np.float32)
        self.outputs = []

    def fresh(self, kind):
        self.count += 1
        return "%s_%d" % (kind, self.count)

    def conv(self, x, cout, k, s=1, act="relu", group=1, pad=None, bias_init=0.05, dilation=1):
        cin = self.vals[x].shape[1]
        if pad is None:
            pad = k // 2 * dilation
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        b = (self.rng.standard_normal(cout) * bias_init).astype(np.float32)
        y = self.fresh("conv")
        v = conv2d(self.vals[x], w, b, s, (pad,) * 4, group, dilation)
        self.params += w.size + b.size
        self.macs += v.size * (cin // group) * k * k
        if act == "relu":
            v = np.maximum(v, 0)
        elif act == "relu6":
            v = np.clip(v, 0, 6)
        elif act == "silu":  # x * sigmoid(x): the pre-activation and the sigmoid are quantized too
            self.vals[y + "_pre"] = v
            self.vals[y + "_sig"] = (1.0 / (1.0 + np.exp(-v))).astype(np.float32)
            v = (v * self.vals[y + "_sig"]).astype(np.float32)
        elif act == "leaky":
            v = np.where(v > 0, v, 0.1 * v).astype(np.float32)
        self.vals[y] = v
        self.ops.append(("conv", [x], y, dict(w=w, b=b, s=s, pad=pad, group=group, act=act, dilation=dilation)))
        return y

    def add(self, a, b, act=None):
        y = self.fresh("add")
        v = self.vals[a] + self.vals[b]
        if act == "relu":
            v = np.maximum(v, 0)
        self.vals[y] = v
        self.ops.append(("add", [a, b], y, dict(act=act)))
        return y

    def bn_relu(self, x):
        c = self.vals[x].shape[1]
        scale = self.rng.uniform(0.5, 1.5, c).astype(np.float32)
        bias = (self.rng.standard_normal(c) * 0.1).astype(np.float32)
        mean = (self.rng.standard_normal(c) * 0.1).astype(np.float32)
        var = self.rng.uniform(0.5, 1.5, c).astype(np.float32)
        self.params += 2 * c
        y = self.fresh("bnrelu")
        v = (self.vals[x] - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
        v = v * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)
        self.vals[y] = np.maximum(v, 0).astype(np.float32)
        self.ops.append(("bnrelu", [x], y, dict(scale=scale, bias=bias, mean=mean, var=var)))
        return y

    def maxpool(self, x, k, s, p):
        y = self.fresh("maxpool")
        self.vals[y] = maxpool(self.vals[x], k, s, p)
        self.ops.append(("maxpool", [x], y, dict(k=k, s=s, p=p)))
        return y

    def gap(self, x):
        y = self.fresh("gap")
        self.vals[y] = self.vals[x].mean(axis=(2, 3), keepdims=True)
        self.ops.append(("gap", [x], y, {}))
        return y

    def flatten(self, x):
        y = self.fresh("flatten")
        self.vals[y] = self.vals[x].reshape(self.vals[x].shape[0], -1)
        self.ops.append(("reshape", [x], y, dict(shape=[self.vals[x].shape[0], -1])))
        return y

    def gemm(self, x, n):
        k = self.vals[x].shape[1]
        w = (self.rng.standard_normal((n, k)) * np.sqrt(1.0 / k)).astype(np.float32)
        b = (self.rng.standard_normal(n) * 0.05).astype(np.float32)
        self.params += w.size + b.size
        self.macs += k * n * self.vals[x].shape[0]
        y = self.fresh("gemm")
        self.vals[y] = (self.vals[x] @ w.T + b).astype(np.float32)
        self.ops.append(("gemm", [x], y, dict(w=w, b=b)))
        return y

    def concat(self, xs):
        y = self.fresh("concat")
        self.vals[y] = np.concatenate([self.vals[x] for x in xs], axis=1)
        self.ops.append(("concat", list(xs), y, {}))
        return y

    def split(self, x, sizes):
        ys = [self.fresh("split") for _ in sizes]
        at = 0
        for y, k in zip(ys, sizes):
            self.vals[y] = self.vals[x][:, at:at + k]
            at += k
        self.ops.append(("split", [x], ys, dict(sizes=list(sizes))))
        return list(ys)  # callers append to their copy

    def upsample(self, x, f=2):
        y = self.fresh("resize")
        self.vals[y] = self.vals[x].repeat(f, axis=2).repeat(f, axis=3)
        self.ops.append(("resize", [x], y, dict(f=f)))
        return y

    def relu(self, x):
        y = self.fresh("relu")
        self.vals[y] = np.maximum(self.vals[x], 0)
        self.ops.append(("relu", [x], y, {}))
        return y

    def bilinear(self, x, f):
        """Resize linear, half_pixel (PyTorch align_corners=False), integer factor f."""
        y = self.fresh("bilinear")
        v = self.vals[x]
        n_, c, h, w = v.shape

        def axis_weights(n_in, n_out):
            src = np.clip((np.arange(n_out) + 0.5) / f - 0.5, 0, n_in - 1)
            lo = np.floor(src).astype(int)
            hi = np.minimum(lo + 1, n_in - 1)
            return lo, hi, (src - lo).astype(np.float32)

        ly, hy, fy = axis_weights(h, h * f)
        lx, hx, fx = axis_weights(w, w * f)
        r = v[:, :, ly, :] * (1 - fy)[None, None, :, None] + v[:, :, hy, :] * fy[None, None, :, None]
        r = r[:, :, :, lx] * (1 - fx) + r[:, :, :, hx] * fx
        self.vals[y] = r.astype(np.float32)
        self.ops.append(("bilinear", [x], y, dict(f=f)))
        return y

    def transpose(self, x, perm):
        y = self.fresh("transpose")
        self.vals[y] = np.ascontiguousarray(self.vals[x].transpose(perm))
        self.ops.append(("transpose", [x], y, dict(perm=list(perm))))
        return y

    def reshape(self, x, shape):
        y = self.fresh("reshape")
        self.vals[y] = self.vals[x].reshape(shape)
        self.ops.append(("reshape", [x], y, dict(shape=list(shape))))
        return y

    def concat_axis(self, xs, axis):
        y = self.fresh("concat")
        self.vals[y] = np.concatenate([self.vals[x] for x in xs], axis=axis)
        self.ops.append(("concat", list(xs), y, dict(axis=axis)))
        return y

    def output(self, x):
        self.outputs.append(x)


# ----------------------------------------------------------------------------------------------
# Architectures.
def mobilenetv2(seed=1):
    n = Net("mobilenetv2", seed, (1, 3, 224, 224))
    x = n.conv("input", 32, 3, 2, "relu6")
    cin = 32
    for t, c, reps, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                          (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(reps):
            stride = s if i == 0 else 1
            h = x
            if t != 1:
                h = n.conv(h, cin * t, 1, 1, "relu6")
            h = n.conv(h, cin * t, 3, stride, "relu6", group=cin * t)
            h = n.conv(h, c, 1, 1, None)
            x = n.add(x, h) if stride == 1 and cin == c else h
            cin = c
    x = n.conv(x, 1280, 1, 1, "relu6")
    x = n.gemm(n.flatten(n.gap(x)), 1000)
    n.output(x)
    return n


def resnet50v2(seed=2):
    # Pre-activation ResNet (He et al. 2016, "Identity mappings"), resnet50-v2-7 layout: a
    # BN-ReLU opens each bottleneck; BN after a convolution is folded into it.
    n = Net("resnet50v2", seed, (1, 3, 224, 224))
    x = n.conv("input", 64, 7, 2, "relu", pad=3)
    x = n.maxpool(x, 3, 2, 1)
    cin = 64
    for width, reps, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(reps):
            s = stride if i == 0 else 1
            pre = n.bn_relu(x)
            short = n.conv(pre, width * 4, 1, s, None, bias_init=0.0) if i == 0 else x
            h = n.conv(pre, width, 1, 1, "relu")
            h = n.conv(h, width, 3, s, "relu")
            h = n.conv(h, width * 4, 1, 1, None)
            x = n.add(short, h)
            cin = width * 4
    x = n.bn_relu(x)
    x = n.gemm(n.flatten(n.gap(x)), 1000)
    n.output(x)
    return n


def yolov5s(seed=3):
    # YOLOv5 v6.0 "s" (depth 0.33, width 0.50) with ReLU instead of SiLU (rknn_model_zoo variant);
    # outputs are the three raw Detect convolutions (3 anchors x 85) at strides 8/16/32.
    n = Net("yolov5s", seed, (1, 3, 640, 640))

    def c3(x, c2, reps, shortcut=True):
        c_ = c2 // 2
        a = n.conv(x, c_, 1)
        for _ in range(reps):
            h = n.conv(n.conv(a, c_, 1), c_, 3)
            a = n.add(a, h) if shortcut else h
        b = n.conv(x, c_, 1)
        return n.conv(n.concat([a, b]), c2, 1)

    def sppf(x, c2):
        c_ = n.vals[x].shape[1] // 2
        a = n.conv(x, c_, 1)
        p1 = n.maxpool(a, 5, 1, 2)
        p2 = n.maxpool(p1, 5, 1, 2)
        p3 = n.maxpool(p2, 5, 1, 2)
        return n.conv(n.concat([a, p1, p2, p3]), c2, 1)

    x = n.conv("input", 32, 6, 2, pad=2)
    x = n.conv(x, 64, 3, 2)
    x = c3(x, 64, 1)
    x = n.conv(x, 128, 3, 2)
    p3 = c3(x, 128, 2)
    x = n.conv(p3, 256, 3, 2)
    p4 = c3(x, 256, 3)
    x = n.conv(p4, 512, 3, 2)
    x = c3(x, 512, 1)
    x = sppf(x, 512)
    h10 = n.conv(x, 256, 1)
    x = c3(n.concat([n.upsample(h10), p4]), 256, 1, False)
    h14 = n.conv(x, 128, 1)
    out3 = c3(n.concat([n.upsample(h14), p3]), 128, 1, False)
    x = n.conv(out3, 128, 3, 2)
    out4 = c3(n.concat([x, h14]), 256, 1, False)
    x = n.conv(out4, 256, 3, 2)
    out5 = c3(n.concat([x, h10]), 512, 1, False)
    for o in (out3, out4, out5):
        n.output(n.conv(o, 255, 1, 1, None))
    return n


def yolov8n(seed=4):
    # Ultralytics YOLOv8 "n" (depth 0.33, width 0.25) at 640x640 with SiLU, as exported to ONNX: C2f
    # blocks (1x1 conv, Split in two, bottlenecks on the last half, Concat of all parts, 1x1 conv),
    # SPPF (three chained 5x5 max pools), PAN neck with nearest 2x Resize, and the decoupled head:
    # per stride 8/16/32 a box branch (3x3, 3x3 SiLU convs, 1x1 conv to 4 x 16 DFL bins) and a class
    # branch (3x3, 3x3, 1x1 to 80 classes), concatenated to 144 channels. The DFL decode and the
    # box/anchor post-processing after it run on the host (rknn_model_zoo's export stops at the
    # head convolutions as well), so the outputs are the three 144-channel maps.
    n = Net("yolov8n", seed, (1, 3, 640, 640))

    def conv(x, c2, k=3, s=1):
        return n.conv(x, c2, k, s, "silu")

    def c2f(x, c2, reps, shortcut):
        c = c2 // 2
        parts = n.split(conv(x, 2 * c, 1), [c, c])
        for _ in range(reps):
            h = conv(conv(parts[-1], c, 3), c, 3)
            parts.append(n.add(parts[-1], h) if shortcut else h)
        return conv(n.concat(parts), c2, 1)

    def sppf(x, c2):
        c_ = n.vals[x].shape[1] // 2
        a = conv(x, c_, 1)
        p1 = n.maxpool(a, 5, 1, 2)
        p2 = n.maxpool(p1, 5, 1, 2)
        p3 = n.maxpool(p2, 5, 1, 2)
        return conv(n.concat([a, p1, p2, p3]), c2, 1)

    x = conv("input", 16, 3, 2)
    x = conv(x, 32, 3, 2)
    x = c2f(x, 32, 1, True)
    x = conv(x, 64, 3, 2)
    p3 = c2f(x, 64, 2, True)
    x = conv(p3, 128, 3, 2)
    p4 = c2f(x, 128, 2, True)
    x = conv(p4, 256, 3, 2)
    x = c2f(x, 256, 1, True)
    p5 = sppf(x, 256)
    h12 = c2f(n.concat([n.upsample(p5), p4]), 128, 1, False)
    out3 = c2f(n.concat([n.upsample(h12), p3]), 64, 1, False)
    out4 = c2f(n.concat([conv(out3, 64, 3, 2), h12]), 128, 1, False)
    out5 = c2f(n.concat([conv(out4, 128, 3, 2), p5]), 256, 1, False)
    c2, c3 = 64, 80  # max(16, 64 // 4, 16 * 4), max(64, min(80, 100))
    for o in (out3, out4, out5):
        box = n.conv(conv(conv(o, c2, 3), c2, 3), 4 * 16, 1, 1, None)
        cls = n.conv(conv(conv(o, c3, 3), c3, 3), 80, 1, 1, None)
        n.output(n.concat([box, cls]))
    return n


def retinaface(seed=4):
    # RetinaFace with the mobilenet0.25 backbone (biubug6/Pytorch_Retinaface, cfg_mnet: LeakyReLU
    # 0.1 after every conv+BN, FPN with 64 channels and nearest upsampling, SSH context modules,
    # 2 anchors per location), 640x640; heads permuted to NHWC and reshaped to [1, N, k], the
    # three levels concatenated (softmax of the class scores left to the post-processing).
    n = Net("retinaface", seed, (1, 3, 640, 640))

    def dw(x, cout, s):
        x = n.conv(x, n.vals[x].shape[1], 3, s, "leaky", group=n.vals[x].shape[1])
        return n.conv(x, cout, 1, 1, "leaky")

    x = n.conv("input", 8, 3, 2, "leaky")
    x = dw(x, 16, 1)
    x = dw(x, 32, 2)
    x = dw(x, 32, 1)
    x = dw(x, 64, 2)
    c1 = dw(x, 64, 1)
    x = dw(c1, 128, 2)
    for _ in range(5):
        x = dw(x, 128, 1)
    c2 = x
    x = dw(c2, 256, 2)
    c3 = dw(x, 256, 1)
    o1, o2, o3 = n.conv(c1, 64, 1, 1, "leaky"), n.conv(c2, 64, 1, 1, "leaky"), n.conv(c3, 64, 1, 1, "leaky")
    o2 = n.conv(n.add(o2, n.upsample(o3)), 64, 3, 1, "leaky")
    o1 = n.conv(n.add(o1, n.upsample(o2)), 64, 3, 1, "leaky")

    def ssh(x):
        a = n.conv(x, 32, 3, 1, None)
        b1 = n.conv(x, 16, 3, 1, "leaky")
        b = n.conv(b1, 16, 3, 1, None)
        c = n.conv(n.conv(b1, 16, 3, 1, "leaky"), 16, 3, 1, None)
        return n.relu(n.concat([a, b, c]))

    feats = [ssh(o1), ssh(o2), ssh(o3)]
    for k in (4, 2, 10):  # class (2 anchors x 2), box (2 x 4), landmarks (2 x 10) per level
        parts = []
        for f in feats:
            h = n.conv(f, 2 * k if k != 4 else 4, 1, 1, None)
            t = n.transpose(h, (0, 2, 3, 1))
            parts.append(n.reshape(t, (1, -1, k if k != 4 else 2)))
        n.output(n.concat_axis(parts, 1))
    return n


def deeplabv3plus(seed=5):
    # DeepLabV3+ with a MobileNetV2 backbone at output stride 16 (VainF/DeepLabV3Plus-Pytorch
    # deeplabv3plus_mobilenet: the last two stages dilated instead of strided, ASPP 1x1 + 3x3
    # dilations 6/12/18 + image pooling, 256 channels; decoder: low-level features at stride 4
    # projected to 48 channels, bilinear x4 upsampling of the ASPP output, two 3x3 convs; bilinear
    # x4 to the input size), 512x512, 21 classes. The pooling branch's bilinear resize from 1x1 is a
    # broadcast: written as a nearest x32 Resize.
    n = Net("deeplabv3plus", seed, (1, 3, 512, 512))
    x = n.conv("input", 32, 3, 2, "relu6")
    cin, low, dil = 32, None, 1
    for t, c, reps, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                          (6, 160, 3, 2), (6, 320, 1, 1)]:
        if c == 160:
            s, dil = 1, 2  # output stride 16: this stage dilated
        for i in range(reps):
            stride = s if i == 0 else 1
            h = x
            if t != 1:
                h = n.conv(h, cin * t, 1, 1, "relu6")
            h = n.conv(h, cin * t, 3, stride, "relu6", group=cin * t, dilation=dil)
            h = n.conv(h, c, 1, 1, None)
            x = n.add(x, h) if stride == 1 and cin == c else h
            cin = c
        if c == 24:
            low = x
    branches = [n.conv(x, 256, 1, 1, "relu")]
    for d in (6, 12, 18):
        branches.append(n.conv(x, 256, 3, 1, "relu", dilation=d))
    pool = n.conv(n.gap(x), 256, 1, 1, "relu")
    branches.append(n.upsample(pool, n.vals[x].shape[2]))
    a = n.conv(n.concat(branches), 256, 1, 1, "relu")
    up = n.bilinear(a, 4)
    lowp = n.conv(low, 48, 1, 1, "relu")
    y = n.conv(n.concat([lowp, up]), 256, 3, 1, "relu")
    y = n.conv(y, 256, 3, 1, "relu")
    y = n.conv(y, 21, 1, 1, None)
    n.output(n.bilinear(y, 4))
    return n


# ----------------------------------------------------------------------------------------------
# ONNX emission.
class Emitter:
    def __init__(self, net, qdq, act_type=np.uint8):
        self.net = net
        self.qdq = qdq
        self.act_type = act_type
        self.nodes = []
        self.inits = []
        self.qparams = {}  # activation -> (scale, zp)
        self.dq_name = {}  # activation -> name of its float view in the QDQ graph
        self.k = 0

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op, ins, outs, **attrs):
        self.k += 1
        self.nodes.append(helper.make_node(op, ins, outs, name="%s_n%d" % (op.lower(), self.k), **attrs))

    def act_range(self, name, relu):
        v = self.net.vals[name]
        lo, hi = float(min(v.min(), 0.0)), float(max(v.max(), 0.0))
        if relu:
            lo = 0.0
        if hi - lo < 1e-6:
            hi = lo + 1e-3
        scale = np.float32((hi - lo) / 255.0)
        qmin = -128 if self.act_type == np.int8 else 0
        zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmin + 255))
        return scale, zp

    def quantize(self, float_name, act_name, params=None, relu=False):
        """Q then DQ of float_name; records the params under act_name; returns the DQ output."""
        s, z = params if params is not None else self.act_range(act_name, relu)
        self.qparams[act_name] = (s, z)
        sn = self.init(act_name + "_scale", np.array(s, dtype=np.float32))
        zn = self.init(act_name + "_zp", np.array(z, dtype=self.act_type))
        self.node("QuantizeLinear", [float_name, sn, zn], [act_name + "_q"])
        out = act_name + "_dq"
        self.node("DequantizeLinear", [act_name + "_q", sn, zn], [out])
        self.dq_name[act_name] = out
        return out

    def src(self, name):
        return self.dq_name[name] if self.qdq else name

    def weight(self, base, w, per_channel, x_act):
        if not self.qdq:
            return self.init(base + "_w", w), None
        axes = tuple(range(1, w.ndim))
        amax = np.abs(w).max(axis=axes) if per_channel else np.array(np.abs(w).max())
        ws = (np.maximum(amax, 1e-8) / 63.0).astype(np.float32)  # 7-bit weights (reduce_range)
        shape = (-1,) + (1,) * (w.ndim - 1) if per_channel else ()
        wq = np.clip(np.round(w / ws.reshape(shape)), -63, 63).astype(np.int8)
        self.init(base + "_wq", wq)
        self.init(base + "_ws", ws)
        self.init(base + "_wz", np.zeros(ws.shape, dtype=np.int8))
        kw = {"axis": 0} if per_channel else {}
        self.node("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"], [base + "_w"], **kw)
        xs = self.qparams[x_act][0]
        return base + "_w", (ws * np.float32(xs)).astype(np.float32)

    def bias(self, base, b, bscale):
        if not self.qdq:
            return self.init(base + "_b", b)
        bq = np.round(b / bscale).astype(np.int32)
        self.init(base + "_bq", bq)
        self.init(base + "_bs", bscale.reshape(-1) if bscale.ndim else bscale)
        self.init(base + "_bz", np.zeros(bscale.shape, dtype=np.int32))
        kw = {"axis": 0} if bscale.ndim else {}
        self.node("DequantizeLinear", [base + "_bq", base + "_bs", base + "_bz"], [base + "_b"], **kw)
        return base + "_b"

    def finish(self, y_float, y, relu=False, same_as=None):
        if not self.qdq:
            return
        params = self.qparams[same_as] if same_as else None
        self.quantize(y_float, y, params, relu)

    def emit(self):
        if self.qdq:
            self.quantize("input", "input")
        for kind, ins, y, p in self.net.ops:
            getattr(self, "op_" + kind)(ins, y, p)
        outs = []
        for i, o in enumerate(self.net.outputs):
            name = "output" if len(self.net.outputs) == 1 else "output%d" % i
            self.rename(self.dq_name[o] if self.qdq else o, name)
            outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(self.net.vals[o].shape)))
        g = helper.make_graph(self.nodes, self.net.name + ("_qdq" if self.qdq else ""),
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(self.net.input_shape))],
                              outs, self.inits)
        m = helper.make_model(g, producer_name="npusim-zoo", producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 7
        return m

    def op_conv(self, ins, y, p):
        x = ins[0]
        w, bscale = self.weight(y, p["w"], True, x)
        b = self.bias(y, p["b"], bscale)
        attrs = dict(kernel_shape=list(p["w"].shape[2:]), strides=[p["s"]] * 2, pads=[p["pad"]] * 4, group=p["group"])
        if p.get("dilation", 1) > 1:
            attrs["dilations"] = [p["dilation"]] * 2
        act = p["act"]
        raw = y + "_conv" if act else y + "_f"
        self.node("Conv", [self.src(x), w, b], [raw], **attrs)
        out = raw
        if act == "relu":
            out = y + "_f"
            self.node("Relu", [raw], [out])
        elif act == "relu6":
            out = y + "_f"
            self.node("Clip", [raw, self.init(y + "_lo", np.array(0, np.float32)),
                               self.init(y + "_hi", np.array(6, np.float32))], [out])
        elif act == "silu":
            # onnxruntime's QDQ quantizer (quantize_static) on x * sigmoid(x): the Conv, the Sigmoid
            # and the Mul each get their own QuantizeLinear -> DequantizeLinear.
            self.finish(raw, y + "_pre")
            pre = self.src(y + "_pre") if self.qdq else raw
            self.node("Sigmoid", [pre], [y + "_sigf"])
            self.finish(y + "_sigf", y + "_sig")
            out = y + "_f"
            self.node("Mul", [pre, self.src(y + "_sig") if self.qdq else y + "_sigf"], [out])
            if not self.qdq:
                self.rename(out, y)
            self.finish(out, y)
            return
        elif act == "leaky":
            out = y + "_f"
            self.node("LeakyRelu", [raw], [out], alpha=0.1)
        if not self.qdq:
            self.rename(out, y)
        self.finish(out, y, relu=act in ("relu", "relu6"))

    def rename(self, old, new):
        for nd in self.nodes:
            nd.output[:] = [new if o == old else o for o in nd.output]

    def op_add(self, ins, y, p):
        out = y + "_f"
        self.node("Add", [self.src(ins[0]), self.src(ins[1])], [out])
        if p["act"] == "relu":
            self.node("Relu", [out], [y + "_r"])
            out = y + "_r"
        if not self.qdq:
            self.rename(out, y)
        self.finish(out, y, relu=p["act"] == "relu")

    def op_bnrelu(self, ins, y, p):
        names = [self.init(y + "_bn_" + k, p[k]) for k in ("scale", "bias", "mean", "var")]
        self.node("BatchNormalization", [self.src(ins[0])] + names, [y + "_bn"], epsilon=1e-5)
        out = y if not self.qdq else y + "_f"
        self.node("Relu", [y + "_bn"], [out])
        self.finish(out, y, relu=True)

    def op_maxpool(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("MaxPool", [self.src(ins[0])], [out], kernel_shape=[p["k"]] * 2, strides=[p["s"]] * 2, pads=[p["p"]] * 4)
        self.finish(out, y, same_as=ins[0])

    def op_gap(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("GlobalAveragePool", [self.src(ins[0])], [out])
        self.finish(out, y)

    def op_reshape(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("Reshape", [self.src(ins[0]), self.init(y + "_shape", np.array(p["shape"], np.int64))], [out])
        self.finish(out, y, same_as=ins[0])

    def op_gemm(self, ins, y, p):
        w, bscale = self.weight(y, p["w"], False, ins[0])
        b = self.bias(y, p["b"], bscale)
        out = y if not self.qdq else y + "_f"
        self.node("Gemm", [self.src(ins[0]), w, b], [out], transB=1)
        self.finish(out, y)

    def op_concat(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("Concat", [self.src(i) for i in ins], [out], axis=p.get("axis", 1))
        self.finish(out, y)

    def op_split(self, ins, ys, p):
        outs = ys if not self.qdq else [y + "_f" for y in ys]
        self.node("Split", [self.src(ins[0]), self.init(ys[0] + "_sizes", np.array(p["sizes"], np.int64))], outs, axis=1)
        for o, y in zip(outs, ys):
            self.finish(o, y, same_as=ins[0])

    def op_resize(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        f = p.get("f", 2)
        scales = self.init(y + "_scales", np.array([1, 1, f, f], np.float32))
        self.node("Resize", [self.src(ins[0]), "", scales], [out], mode="nearest")
        self.finish(out, y, same_as=ins[0])

    def op_bilinear(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        f = p["f"]
        scales = self.init(y + "_scales", np.array([1, 1, f, f], np.float32))
        self.node("Resize", [self.src(ins[0]), "", scales], [out], mode="linear",
                  coordinate_transformation_mode="half_pixel")
        # onnxruntime's quantize_static (QDQResize) gives a Resize's output its input's scale and zero
        # point, linear as nearest (bilinear interpolation stays inside the input's range).
        self.finish(out, y, same_as=ins[0])

    def op_relu(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("Relu", [self.src(ins[0])], [out])
        self.finish(out, y, relu=True)

    def op_transpose(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("Transpose", [self.src(ins[0])], [out], perm=p["perm"])
        self.finish(out, y, same_as=ins[0])


# ----------------------------------------------------------------------------------------------
# Small one-op-family test nets (float), 1-2 nodes each, for importer/executor unit checks.
def small_nets():
    rng = np.random.RandomState(7)
    nets = {}

    def model(name, nodes, inputs, outputs, inits, domains=()):
        g = helper.make_graph(nodes, name, inputs, outputs, inits)
        ops = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in domains]
        m = helper.make_model(g, producer_name="npusim-zoo", producer_version="1", opset_imports=ops)
        m.ir_version = 7
        nets[name] = m

    def t(name, shape, elem=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, elem, shape)

    def f32(name, arr):
        return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)

    def arr(name, a):
        return numpy_helper.from_array(a, name)

    model("t_conv", [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
                     helper.make_node("Relu", ["c"], ["y"])],
          [t("x", [1, 3, 16, 16])], [t("y", [1, 8, 8, 8])],
          [f32("w", rng.standard_normal((8, 3, 3, 3)) * 0.3), f32("b", rng.standard_normal(8) * 0.1)])
    model("t_depthwise", [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], group=4)],
          [t("x", [1, 4, 8, 8])], [t("y", [1, 4, 8, 8])], [f32("w", rng.standard_normal((4, 1, 3, 3)) * 0.3)])
    model("t_pool", [helper.make_node("MaxPool", ["x"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
                     helper.make_node("AveragePool", ["a"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                     helper.make_node("GlobalAveragePool", ["b"], ["y"])],
          [t("x", [1, 4, 8, 8])], [t("y", [1, 4, 1, 1])], [])
    model("t_gemm", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
          [t("x", [2, 16])], [t("y", [2, 10])], [f32("w", rng.standard_normal((10, 16)) * 0.2), f32("b", np.zeros(10))])
    model("t_matmul", [helper.make_node("MatMul", ["x", "w"], ["y"])],
          [t("x", [2, 3, 8])], [t("y", [2, 3, 5])], [f32("w", rng.standard_normal((8, 5)))])
    model("t_elementwise", [helper.make_node("Add", ["x", "k"], ["a"]), helper.make_node("Mul", ["a", "x"], ["b"]),
                            helper.make_node("Sub", ["b", "k"], ["c"]), helper.make_node("Div", ["c", "d"], ["y"])],
          [t("x", [1, 4, 3, 3])], [t("y", [1, 4, 3, 3])],
          [f32("k", rng.standard_normal((4, 1, 1))), f32("d", [2.0])])
    model("t_activations", [helper.make_node("Sigmoid", ["x"], ["a"]), helper.make_node("Tanh", ["a"], ["b"]),
                            helper.make_node("LeakyRelu", ["x"], ["c"], alpha=0.1), helper.make_node("Add", ["b", "c"], ["y"])],
          [t("x", [1, 8])], [t("y", [1, 8])], [])
    model("t_shape", [helper.make_node("Transpose", ["x"], ["a"], perm=[0, 2, 3, 1]),
                      helper.make_node("Reshape", ["a", "s"], ["b"]),
                      helper.make_node("Concat", ["b", "b"], ["c"], axis=1),
                      helper.make_node("Slice", ["c", "st", "en", "ax"], ["y"])],
          [t("x", [1, 2, 3, 4])], [t("y", [1, 20])],
          [arr("s", np.array([1, -1], np.int64)), arr("st", np.array([2], np.int64)), arr("en", np.array([22], np.int64)),
           arr("ax", np.array([1], np.int64))])
    model("t_reduce", [helper.make_node("ReduceMean", ["x"], ["a"], axes=[2, 3], keepdims=0),
                       helper.make_node("Softmax", ["a"], ["y"], axis=1)],
          [t("x", [1, 6, 4, 4])], [t("y", [1, 6])], [])
    # Integer ops: QLinearConv, MatMulInteger, ConvInteger and com.microsoft QLinearAdd.
    i8 = lambda name, a: arr(name, np.asarray(a, dtype=np.int8))
    model("t_qlinear", [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["c"], pads=[1, 1, 1, 1]),
                        helper.make_node("QLinearAdd", ["c", "ys", "yz", "c", "ys", "yz", "zs", "zz"], ["d"], domain="com.microsoft"),
                        helper.make_node("DequantizeLinear", ["d", "zs", "zz"], ["y"])],
          [t("x", [1, 2, 6, 6])], [t("y", [1, 4, 6, 6])],
          [f32("xs", 0.01), i8("xz", 3), i8("w", rng.randint(-60, 60, (4, 2, 3, 3))), f32("ws", [0.02, 0.01, 0.03, 0.02]),
           i8("wz", [0, 0, 0, 0]), f32("ys", 0.05), i8("yz", -5), f32("zs", 0.1), i8("zz", 0)], domains=["com.microsoft"])
    model("t_integer", [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
          [t("a", [2, 4], TensorProto.UINT8)], [t("y", [2, 3], TensorProto.INT32)],
          [arr("b", rng.randint(0, 255, (4, 3)).astype(np.uint8)), arr("az", np.array(10, np.uint8)), arr("bz", np.array(128, np.uint8))])
    return nets


# ----------------------------------------------------------------------------------------------
def save(model, path):
    onnx.checker.check_model(model)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", default="mobilenetv2,resnet50v2,yolov5s,tests")
    ap.add_argument("--no-qdq", action="store_true", help="float models only")
    ap.add_argument("--convention", default="",
                    help="write these quantized conventions only: " + ",".join(conventions.CONVENTIONS))
    args = ap.parse_args()
    convs = [c for c in args.convention.split(",") if c]
    for c in convs:
        if c not in conventions.CONVENTIONS:
            print("unknown convention '%s' (known: %s)" % (c, ", ".join(conventions.CONVENTIONS)), file=sys.stderr)
            return 2
    os.makedirs(args.out_dir, exist_ok=True)
    builders = {"mobilenetv2": mobilenetv2, "resnet50v2": resnet50v2, "yolov5s": yolov5s, "yolov8n": yolov8n,
                "retinaface": retinaface, "deeplabv3plus": deeplabv3plus,
                "efficientnet_lite0": lambda: make_zoo_effnet.efficientnet_lite0(Net)}
    status = 0
    for name in args.models.split(","):
        if name == "tests":
            for tname, m in sorted(small_nets().items()):
                save(m, os.path.join(args.out_dir, tname + ".onnx"))
            print("tests: %d small nets" % len(small_nets()))
            continue
        if name not in builders:
            print("unknown model '%s'" % name, file=sys.stderr)
            return 2
        net = builders[name]()
        if convs:
            for c in convs:
                fname = {"ort_qdq": "_qdq", "ort_qdq_s8": "_qdq_s8"}.get(c, "_" + c)
                try:
                    m = conventions.emit(net, c, lambda n, act: Emitter(n, True, act).emit())
                except AttributeError as e:  # an emitter without this layer kind (yolov8n: Split, SiLU)
                    print("make_zoo: model '%s' is not written in convention '%s' (%s)" % (name, c, e), file=sys.stderr)
                    return 2
                save(m, os.path.join(args.out_dir, name + fname + ".onnx"))
            continue
        save(Emitter(net, False).emit(), os.path.join(args.out_dir, name + ".onnx"))
        if not args.no_qdq:
            save(Emitter(net, True).emit(), os.path.join(args.out_dir, name + "_qdq.onnx"))
            save(Emitter(net, True, np.int8).emit(), os.path.join(args.out_dir, name + "_qdq_s8.onnx"))
        if name not in CITED:  # issue-15 graphs written from the architecture, no cited figure to meet
            print("%-13s params %10d  MACs %13d  (no cited figure)" % (name, net.params, net.macs))
            continue
        cp, cm = CITED[name]
        dp, dm = (net.params - cp) / cp * 100, (net.macs - cm) / cm * 100
        ok = abs(dp) <= 5 and abs(dm) <= 5
        status |= 0 if ok else 1
        print("%-12s params %10d (cited %.1fM, %+5.1f%%)  MACs %13d (cited %.2fG, %+5.1f%%)  %s"
              % (name, net.params, cp / 1e6, dp, net.macs, cm / 1e9, dm, "ok" if ok else "OUT OF 5%"))
    return status


if __name__ == "__main__":
    sys.exit(main())
