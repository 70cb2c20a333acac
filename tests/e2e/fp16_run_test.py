#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The fp16 path (issue 14): small float ONNX nets, one per layer kind the RKNPU compiler lowers in
fp16 (conv, depthwise, grouped, Gemm / MatMul as 1x1 convs, fused Relu / ReLU6 / Clip, Add, Mul,
BatchNormalization, standalone Relu, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, Concat,
views, the LUT functions
Sigmoid / Tanh / SiLU / HardSigmoid / HardSwish / LeakyRelu / Elu, PRelu per channel, arithmetic with scalar and
per-channel constants, the [1,C,1,1] squeeze-excite product, nearest Resize, Split, Slice, constant Pad,
bilinear Resize, Concat along H / W, Gather along H / C, Softmax along W and C), run with
`npusim run` (full mode, no --quantize: RKNN's fp16 default) on rk3588 and rk3566. Asserts: exit 0,
every layer on the NPU (or a view), and, per layer, the device tensor against the reference
executor's float32 result on the device's own inputs (--dump-layers) within the stated relative
tolerance max|device - reference| <= 2^-7 x max|reference| (drv::rknpu::kFp16LayerRtol) (the data-movement
net "move" also through check_run_agree.py: `npusim check` places each node as run does); the end
to end output against numpy's float64 evaluation of the same net and against onnxruntime
(tests/oracle/run_ort.js, when onnxruntime-node is installed) within 2^-5 relative (the fp16
roundings of every layer compound). The nets follow ONNX operator semantics (opset 13).

usage: fp16_run_test.py NPUSIM"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL_LAYER = 2.0 ** -7
RTOL_E2E = 2.0 ** -5


class Net:
    def __init__(self, name, shape):
        self.name, self.nodes, self.inits, self.k = name, [], [], 0
        self.rng = np.random.RandomState(sum(map(ord, name)))
        self.x = self.rng.uniform(-1, 1, shape).astype(np.float32)
        self.input = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        self.vals = {"x": self.x.astype(np.float64)}
        self.opset = 13
        self.plats = ("rk3588", "rk3566")

    def t(self, prefix):
        self.k += 1
        return "%s%d" % (prefix, self.k)

    def init(self, a):
        n = self.t("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a, dtype=np.float32), n))
        self.vals[n] = np.asarray(a, dtype=np.float32).astype(np.float64)
        return n

    def node(self, op, ins, value, **attrs):
        y = self.t("v")
        self.nodes.append(helper.make_node(op, ins, [y], name=y + "_" + op, **attrs))
        self.vals[y] = value
        return y

    def conv(self, x, cout, k=3, stride=1, pad=1, group=1, dil=1):
        v = self.vals[x]
        cin = v.shape[1]
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))).astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        xp = np.pad(v, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        eff = (k - 1) * dil + 1
        sh, sw = stride if isinstance(stride, tuple) else (stride, stride)
        oh = (xp.shape[2] - eff) // sh + 1
        ow = (xp.shape[3] - eff) // sw + 1
        out = np.zeros((1, cout, oh, ow))
        cg, mg = cin // group, cout // group
        for o in range(cout):
            g = o // mg
            for ky in range(k):
                for kx in range(k):
                    patch = xp[0, g * cg:(g + 1) * cg, ky * dil:ky * dil + sh * oh:sh, kx * dil:kx * dil + sw * ow:sw]
                    out[0, o] += np.tensordot(w[o, :, ky, kx].astype(np.float64), patch, axes=(0, 0))
            out[0, o] += b[o]
        return self.node("Conv", [x, self.init(w), self.init(b)], out, kernel_shape=[k, k], strides=[sh, sw],
                         pads=[pad] * 4, group=group, dilations=[dil, dil])

    def relu(self, x):
        return self.node("Relu", [x], np.maximum(self.vals[x], 0))

    def clip(self, x, lo, hi):
        return self.node("Clip", [x, self.init(np.float32(lo)), self.init(np.float32(hi))], np.clip(self.vals[x], lo, hi))

    def binary(self, op, a, b):
        f = {"Add": np.add, "Mul": np.multiply}[op]
        return self.node(op, [a, b], f(self.vals[a], self.vals[b]))

    def bn(self, x):
        c = self.vals[x].shape[1]
        s, b = self.rng.uniform(0.5, 1.5, c), self.rng.standard_normal(c) * 0.1
        m, var = self.rng.standard_normal(c) * 0.1, self.rng.uniform(0.5, 1.5, c)
        r = lambda a: a.reshape(1, c, 1, 1)
        y = (self.vals[x] - r(m)) / np.sqrt(r(var) + 1e-5) * r(s) + r(b)
        return self.node("BatchNormalization", [x, self.init(s), self.init(b), self.init(m), self.init(var)], y,
                         epsilon=1e-5)

    def maxpool(self, x, k, s, p):
        v = np.pad(self.vals[x], ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
        oh, ow = (v.shape[2] - k) // s + 1, (v.shape[3] - k) // s + 1
        out = np.full((1, v.shape[1], oh, ow), -np.inf)
        for ky in range(k):
            for kx in range(k):
                out = np.maximum(out, v[:, :, ky:ky + s * oh:s, kx:kx + s * ow:s])
        return self.node("MaxPool", [x], out, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)

    def avgpool(self, x, k, s, p):  # count_include_pad=1 where padded
        v = np.pad(self.vals[x], ((0, 0), (0, 0), (p, p), (p, p)))
        oh, ow = (v.shape[2] - k) // s + 1, (v.shape[3] - k) // s + 1
        out = np.zeros((1, v.shape[1], oh, ow))
        for ky in range(k):
            for kx in range(k):
                out += v[:, :, ky:ky + s * oh:s, kx:kx + s * ow:s]
        return self.node("AveragePool", [x], out / (k * k), kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                         count_include_pad=1)

    def gap(self, x):
        return self.node("GlobalAveragePool", [x], self.vals[x].mean(axis=(2, 3), keepdims=True))

    def flatten(self, x):
        return self.node("Flatten", [x], self.vals[x].reshape(1, -1), axis=1)

    def gemm(self, x, n):
        k = self.vals[x].shape[1]
        w = (self.rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        b = (self.rng.standard_normal(n) * 0.1).astype(np.float32)
        return self.node("Gemm", [x, self.init(w), self.init(b)], self.vals[x] @ w.T.astype(np.float64) + b, transB=1)

    def matmul(self, x, n):
        k = self.vals[x].shape[1]
        w = (self.rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        return self.node("MatMul", [x, self.init(w)], self.vals[x] @ w.astype(np.float64))

    def unary(self, op, x, f, **attrs):
        return self.node(op, [x], f(self.vals[x]), **attrs)

    def sigmoid(self, x):
        return self.unary("Sigmoid", x, lambda v: 1 / (1 + np.exp(-v)))

    def silu(self, x):  # as exported by PyTorch: Mul(x, Sigmoid(x))
        return self.binary("Mul", x, self.sigmoid(x))

    def const_op(self, op, x, c, const_first=False):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op]
        k = self.init(c)
        v = f(self.vals[k], self.vals[x]) if const_first else f(self.vals[x], self.vals[k])
        return self.node(op, [k, x] if const_first else [x, k], v)

    def resize(self, x, fh, fw):  # nearest, half_pixel / round_prefer_floor (opset 13 defaults): out = in[o / f]
        v = np.repeat(np.repeat(self.vals[x], fh, axis=2), fw, axis=3)
        return self.node("Resize", [x, "", self.init([1, 1, fh, fw])], v, mode="nearest")

    def split(self, x, sizes):  # along channels; opset 13: the sizes as an input
        ys = [self.t("v") for _ in sizes]
        k = self.t("c")
        self.inits.append(numpy_helper.from_array(np.asarray(sizes, dtype=np.int64), k))
        self.nodes.append(helper.make_node("Split", [x, k], ys, name=ys[0] + "_Split", axis=1))
        for y, a in zip(ys, np.split(self.vals[x], np.cumsum(sizes)[:-1], axis=1)):
            self.vals[y] = a
        return ys

    def slice(self, x, starts, ends, axes, steps):
        k = []
        for a in (starts, ends, axes, steps):
            k.append(self.t("c"))
            self.inits.append(numpy_helper.from_array(np.asarray(a, dtype=np.int64), k[-1]))
        idx = [slice(None)] * 4
        for s0, e, a, st in zip(starts, ends, axes, steps):
            idx[a] = slice(s0, e, st)
        return self.node("Slice", [x] + k, self.vals[x][tuple(idx)])

    def concat(self, xs, axis=1):
        return self.node("Concat", xs, np.concatenate([self.vals[x] for x in xs], axis=axis), axis=axis)

    def bilinear(self, x, f):  # linear, half_pixel (ONNX Resize): source (o + 0.5) / f - 0.5, clamped to the edges
        v = self.vals[x]
        for ax in (2, 3):
            n = v.shape[ax]
            s = np.clip((np.arange(n * f) + 0.5) / f - 0.5, 0, n - 1)
            i0 = np.floor(s).astype(np.int64)
            i1 = np.minimum(i0 + 1, n - 1)
            t = (s - i0).reshape([-1 if a == ax else 1 for a in range(4)])
            v = np.take(v, i0, axis=ax) * (1 - t) + np.take(v, i1, axis=ax) * t
        r = self.node("Resize", [x, "", self.init([1, 1, f, f])], v, mode="linear")
        return r

    def pad(self, x, pads, value=0.0):  # constant, ONNX order (x1_begin, x2_begin, ..., x1_end, ...)
        k = self.t("c")
        self.inits.append(numpy_helper.from_array(np.asarray(pads, dtype=np.int64), k))
        v = np.pad(self.vals[x], list(zip(pads[:4], pads[4:])), constant_values=value)
        return self.node("Pad", [x, k, self.init(value)], v)

    def gather(self, x, idx, axis):
        k = self.t("c")
        self.inits.append(numpy_helper.from_array(np.asarray(idx, dtype=np.int64), k))
        return self.node("Gather", [x, k], np.take(self.vals[x], idx, axis=axis), axis=axis)

    def softmax(self, x, axis):
        v = self.vals[x]
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return self.node("Softmax", [x], e / e.sum(axis=axis, keepdims=True), axis=axis)

    def save(self, path, y):
        out = helper.make_tensor_value_info(y, TensorProto.FLOAT, list(self.vals[y].shape))
        g = helper.make_graph(self.nodes, self.name, [self.input], [out], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 7
        onnx.save(m, path)
        np.save(path[:-5] + "_x.npy", self.x)
        return self.vals[y]


def nets():
    n = Net("conv_relu6", [1, 3, 20, 20])
    y = n.clip(n.conv("x", 24, k=3, stride=2), 0.0, 6.0)
    y = n.relu(n.conv(y, 40, k=1, pad=0))
    yield n, n.clip(n.conv(y, 16, k=3, dil=2, pad=2), -0.5, 0.75)
    n = Net("depthwise_grouped", [1, 32, 14, 14])
    y = n.clip(n.conv("x", 32, k=3, group=32), 0.0, 6.0)
    y = n.conv(y, 32, k=3, stride=2, group=32)
    yield n, n.conv(y, 48, k=3, group=4)
    n = Net("residual_bn", [1, 16, 7, 7])  # odd w x h: 8-byte fp16 atoms (RK356x) read whole surfaces
    a = n.conv("x", 16, k=3)
    y = n.relu(n.binary("Add", a, "x"))
    y = n.relu(n.bn(y))
    yield n, n.binary("Mul", n.bn(y), n.relu(n.conv(y, 16, k=1, pad=0)))
    n = Net("pool_concat", [1, 24, 16, 16])
    a = n.relu(n.conv("x", 16, k=1, pad=0))
    b = n.maxpool(a, 5, 1, 2)
    y = n.maxpool(n.concat([a, b, n.relu(n.conv(a, 8, k=3))]), 3, 2, 1)
    y = n.binary("Add", n.avgpool(y, 3, 1, 1), y)
    p2 = n.avgpool(y, 2, 2, 0)
    yield n, n.binary("Mul", p2, n.node("GlobalMaxPool", [p2], n.vals[p2].max(axis=(2, 3), keepdims=True)))
    # Element-wise functions on the DPU's float-path LUT (ONNX operator definitions, opset 13).
    n = Net("activations", [1, 16, 9, 12])
    n.opset = 14  # HardSwish
    a = n.const_op("Mul", n.conv("x", 16, k=3), 12.0)  # about +-30: both extrapolations of every table
    t = [n.sigmoid(a), n.unary("Tanh", a, np.tanh), n.silu(a),
         n.unary("HardSigmoid", a, lambda v: np.clip(np.float32(1 / 6) * v + 0.5, 0, 1), alpha=1 / 6, beta=0.5),
         n.unary("HardSwish", a, lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
         n.unary("LeakyRelu", a, lambda v: np.where(v < 0, 0.1 * v, v), alpha=0.1),
         n.unary("Elu", a, lambda v: np.where(v < 0, np.exp(np.minimum(v, 0)) - 1, v), alpha=1.0)]
    s = n.rng.uniform(-0.5, 0.5, (16, 1, 1)).astype(np.float32)  # PRelu: one slope per channel
    t.append(n.node("PRelu", [a, n.init(s)], np.where(n.vals[a] < 0, n.vals[a] * s.astype(np.float64), n.vals[a])))
    yield n, n.concat(t)
    # The same functions fused into the conv before them (its EW stage), as YOLOv8's Conv + SiLU.
    n = Net("conv_lut", [1, 8, 12, 10])
    n.opset = 14
    y = n.silu(n.conv("x", 16, k=3))
    y = n.unary("HardSwish", n.conv(y, 24, k=3, stride=2), lambda v: v * np.clip(v / 6 + 0.5, 0, 1))
    y = n.silu(n.conv(y, 24, k=3, group=24))
    yield n, n.concat([n.sigmoid(n.conv(y, 8, k=1, pad=0)), n.unary("Tanh", n.conv(y, 8, k=3), np.tanh)])
    # Arithmetic with constants (scalar, per channel, constant first) and squeeze-excite's
    # [1,C,1,1] x [1,C,H,W] product.
    n = Net("const_se", [1, 24, 7, 7])  # the vendor rules keep GlobalAveragePool to 7x7
    c = n.rng.uniform(0.5, 1.5, (24, 1, 1)).astype(np.float32)
    y = n.const_op("Sub", n.const_op("Add", n.conv("x", 24, k=1, pad=0), c), 0.25)
    y = n.const_op("Div", n.const_op("Mul", y, c.reshape(1, 24, 1, 1)), 3.0)
    y = n.const_op("Sub", y, np.ones((1, 1, 1, 1)), const_first=True)  # the vendor rules: a rank-4 constant
    se = n.sigmoid(n.conv(n.relu(n.conv(n.gap(y), 8, k=1, pad=0)), 24, k=1, pad=0))
    yield n, n.binary("Add", n.binary("Mul", se, y), y)
    # Nearest Resize (YOLOv5's upsampling) as fp16 DPU copies (a width pass into a scratch, a height
    # pass), factors 2..8 (the vendor rules); 6x7 surfaces: 16-byte multiples with RK356x's 8-byte atoms.
    n = Net("resize", [1, 24, 6, 7])
    a = n.relu(n.conv("x", 40, k=3))
    u = n.concat([n.resize(a, 2, 2), n.relu(n.conv(n.resize("x", 2, 2), 16, k=1, pad=0))])
    yield n, n.binary("Add", n.resize(n.conv(u, 8, k=1, pad=0), 2, 3), n.resize(n.conv(a, 8, k=1, pad=0), 4, 6))
    # Split / Slice (YOLOv8's C2f split): atom-aligned parts as views, parts from inside an atom as
    # 1x1 selection convolutions, a spatial Slice as a PPU window copy.
    n = Net("split_slice", [1, 16, 8, 10])
    a = n.relu(n.conv("x", 48, k=3))
    p, q = n.split(a, [16, 32])
    r, t = n.split(q, [12, 20])
    u = n.slice(a, [8], [24], [1], [1])
    v = n.slice(n.relu(n.conv("x", 8, k=1, pad=0)), [1, 1], [8, 10], [2, 3], [1, 1])  # rows 1-7, columns 1-9
    w = n.concat([n.conv(p, 8, k=1, pad=0), n.conv(r, 8, k=1, pad=0), u, t])  # fp16 C2-aligned offsets
    yield n, n.concat([n.relu(n.conv(v, 8, k=3, stride=(2, 2), pad=1)), n.maxpool(w, 3, 2, 1)])
    # Data movement of DeepLabV3+ / decoder heads on the fp16 path (the int8 lowerings with 2-byte
    # elements): constant Pad, bilinear x2 (replicate pad + nearest copies + fp16 depthwise conv),
    # Concat along H and W (DPU copies), Gather along H (PPU row copies) and C (selection conv).
    n = Net("move", [1, 16, 6, 8])
    a = n.relu(n.conv("x", 16, k=3))
    b = n.conv(n.pad(a, [0, 0, 1, 1, 0, 0, 1, 1]), 16, k=3, pad=0)
    u = n.bilinear(b, 2)
    gh = n.gather(n.concat([a, b], axis=2), [11, 0, 1, 2, 7, 6], 2)
    v = n.bilinear(n.gather(gh, list(range(15, -1, -1)), 1), 2)
    cw = n.concat([a, b], axis=3)
    yield n, n.binary("Add", n.binary("Add", u, v), n.concat([cw, cw], axis=2))
    # Softmax (A-SOFTMAX-F16, model_compiler_softmax.cpp) along W: per row the PPU max over a 3 x 16
    # grid of the 48 pixels, EW minus, exp on the float-path LUT, a depthwise sum of ones, EW div.
    # RK3566_RK3568 has no Softmax (vendor rule): RK3562 instead.
    n = Net("softmax", [1, 8, 2, 48])
    n.plats = ("rk3588", "rk3562")
    yield n, n.softmax(n.const_op("Mul", n.conv("x", 16, k=3), 6.0), 3)
    # Along C (a segmentation head's per-pixel class scores, 21 classes): the channel max tree of EW
    # max tasks over channel halves, 1x1 broadcast convs, the 1x1 sum conv.
    n = Net("softmax_c", [1, 16, 6, 8])
    n.plats = ("rk3588", "rk3562")
    yield n, n.softmax(n.const_op("Mul", n.conv("x", 21, k=3), 6.0), 1)
    n = Net("head", [1, 64, 7, 7])
    y = n.flatten(n.relu(n.gap(n.conv("x", 96, k=1, pad=0))))  # the vendor rules keep Relu to 4-D inputs
    yield n, n.matmul(n.gemm(y, 40), 24)


ORT_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle", "run_ort.js")


def ort_outputs(tmp, cases):
    """onnxruntime (tests/oracle/run_ort.js, onnxruntime-node) on every net: {name: output}; None when
    it is not installed (scripts/deps.sh installs it)."""
    if not os.path.isdir(os.path.join(os.path.dirname(ORT_JS), "node_modules", "onnxruntime-node")):
        return None
    root = os.path.join(tmp, "ort")
    for name, (path, y) in cases.items():
        d = os.path.join(root, name)
        os.makedirs(d)
        os.symlink(path, os.path.join(d, "model.onnx"))
        os.symlink(path[:-5] + "_x.npy", os.path.join(d, "x.npy"))
        json.dump({"feeds": [{"name": "x", "file": "x.npy"}], "output_names": [y], "expected": ["ort.npy"]},
                  open(os.path.join(d, "manifest.json"), "w"))
    r = subprocess.run(["node", ORT_JS, root], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("FAIL onnxruntime: %s" % (r.stderr + r.stdout).strip()[-600:])
    out = {}
    for name in cases:
        err = os.path.join(root, name, "ort_error.txt")
        if os.path.exists(err):
            raise SystemExit("FAIL onnxruntime rejects %s: %s" % (name, open(err).read().strip()))
        out[name] = np.load(os.path.join(root, name, "ort.npy")).astype(np.float64)
    return out


def main():
    npusim = sys.argv[1]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        all_nets = list(nets())
        cases = {}
        for net, y in all_nets:
            path = os.path.join(tmp, net.name + ".onnx")
            net.want = net.save(path, y)
            cases[net.name] = (path, y)
        ort = ort_outputs(tmp, cases)
        if ort is None:
            print("onnxruntime-node not installed: the outputs are compared with numpy only")
        for net, y in all_nets:
            path, want = cases[net.name][0], net.want
            for plat in net.plats:
                tag = "%s on %s" % (net.name, plat)
                rep, dump, outdir = (os.path.join(tmp, "%s_%s%s" % (net.name, plat, s)) for s in (".json", "_dump", "_out"))
                r = subprocess.run([npusim, "run", "-p", plat, path, "--input", path[:-5] + "_x.npy", "--report", rep, "-q",
                                    "--dump-layers", dump, "--output-dir", outdir], capture_output=True, text=True)
                if r.returncode != 0:
                    fails.append("%s: exit %d: %s" % (tag, r.returncode, (r.stderr + r.stdout).strip()[-600:]))
                    continue
                j = json.load(open(rep))
                off = [l["name"] + " " + l["unit"] + " " + l.get("note", "") for l in j["layers"] if l["unit"] not in ("NPU", "view")]
                if off:
                    fails.append("%s: layers not on the NPU: %s" % (tag, off))
                if not any("fp16" in n for n in j.get("notes", [])):
                    fails.append("%s: the report does not say the model ran fp16: %s" % (tag, j.get("notes")))
                worst = 0.0
                rows = list(csv.DictReader(open(os.path.join(dump, "index.csv"))))
                if len(rows) < sum(1 for l in j["layers"] if l["unit"] == "NPU"):
                    fails.append("%s: %d layer dumps for %d NPU layers" % (tag, len(rows), len(j["layers"])))
                for row in rows:
                    d = np.load(os.path.join(dump, row["file_stem"] + ".device.npy")).astype(np.float64)
                    ref = np.load(os.path.join(dump, row["file_stem"] + ".reference.npy")).astype(np.float64)
                    rel = np.abs(d - ref).max() / max(np.abs(ref).max(), 1e-30)
                    worst = max(worst, rel)
                    if not rel <= RTOL_LAYER:
                        fails.append("%s: layer %s relative error %.3g > %.3g" % (tag, row["layer"], rel, RTOL_LAYER))
                got = np.load(os.path.join(outdir, os.listdir(outdir)[0])).astype(np.float64)
                e2e = np.abs(got - want).max() / np.abs(want).max()
                if not e2e <= RTOL_E2E:
                    fails.append("%s: end to end relative error %.3g > %.3g" % (tag, e2e, RTOL_E2E))
                ort_e2e = float("nan")
                if ort is not None:
                    ort_e2e = np.abs(got - ort[net.name]).max() / np.abs(ort[net.name]).max()
                    if not ort_e2e <= RTOL_E2E:
                        fails.append("%s: relative error %.3g against onnxruntime > %.3g" % (tag, ort_e2e, RTOL_E2E))
                print("%-28s %d layers, worst layer relative error %.2e, end to end %.2e (onnxruntime %.2e)"
                      % (tag, len(j["layers"]), worst, e2e, ort_e2e))
            if net.name in ("move", "softmax", "softmax_c"):  # `npusim check` places every node as run does
                agree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_run_agree.py")
                r = subprocess.run([sys.executable, agree, npusim, "full", ",".join(net.plats), path], capture_output=True,
                                   text=True)
                print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "")
                if r.returncode != 0:
                    fails.append("%s: check and run disagree: %s" % (net.name, (r.stdout + r.stderr).strip()[-600:]))
    for f in fails:
        print("FAIL - " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
