#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""TFLite test models for the MCU path (issue 21), written at test time, never committed, each with its
ONNX twin (the same graph and weights in ONNX's NCHW convention, QDQ for the int8 models):
  tfl_cnn_{f32,int8}       CONV_2D, DEPTHWISE_CONV_2D, ADD, MAX_POOL_2D, AVERAGE_POOL_2D, RESHAPE,
                           FULLY_CONNECTED, SOFTMAX (int8: float I/O through QUANTIZE / DEQUANTIZE)
  tfl_kws_{f32,int8}       DS-CNN keyword spotter (49x10 MFCC -> 12 classes), int8 I/O
  tfl_mobilenet_{f32,int8} MobileNetV2-style inverted residuals (RELU6, ADD), MEAN, FULLY_CONNECTED
  tfl_facedet_f32          MediaPipe-BlazeFace pattern: float16 weights through DEQUANTIZE, residual
                           blocks with MAX_POOL_2D + channel PAD, two heads RESHAPEd and CONCATENATEd
The TFLite files are produced from JSON by flatc with the repository's schema
(drivers/compiler/tflite/schema/npusim_tflite.fbs) - the flatbuffers library writing the public TFL3
format. int8 quantization follows the TFLite converter's conventions: activations per tensor,
asymmetric, range from a float calibration run (numpy, in this file); weights symmetric per output
channel (CONV_2D/FULLY_CONNECTED dimension 0, DEPTHWISE_CONV_2D dimension 3); bias int32 with scale
s_x * s_w; SOFTMAX output 1/256 with zero point -128; pooling/reshape/pad/concat keep their input's
quantization. Usage: gen_tflite_models.py OUTDIR FLATC SCHEMA"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
import onnx

BUILTIN = {"ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4, "DEQUANTIZE": 6,
           "FULLY_CONNECTED": 9, "MAX_POOL_2D": 17, "RESHAPE": 22, "SOFTMAX": 25, "PAD": 34, "MEAN": 40,
           "QUANTIZE": 114, "RELU": 19, "RELU6": 21, "RESIZE_BILINEAR": 23, "TRANSPOSE_CONV": 67,
           "RESIZE_NEAREST_NEIGHBOR": 97, "BATCH_MATMUL": 126, "GATHER": 36, "TILE": 69, "MAXIMUM": 55, "MINIMUM": 57,
           "SUM": 74, "REDUCE_MAX": 82, "REDUCE_MIN": 89, "GELU": 150}
ACT = {"NONE": None, "RELU": (0.0, None), "RELU6": (0.0, 6.0)}


def pad_same(n, k, s):
    out = (n + s - 1) // s
    total = max((out - 1) * s + k - n, 0)
    return out, total // 2, total - total // 2


def act_np(v, act):
    if act == "RELU":
        return np.maximum(v, 0)
    if act == "RELU6":
        return np.clip(v, 0, 6)
    return v


class Net:
    """A float graph in TFLite's NHWC convention, computed with numpy as it is built (calibration)."""

    def __init__(self, name, in_shape, rng, fp16=False):
        self.name, self.rng, self.fp16 = name, rng, fp16
        self.ops, self.t = [], {}  # ops: dict(op, ins, outs, opt, consts)
        self.calib = (rng.uniform(-1, 1, size=(4,) + tuple(in_shape[1:]))).astype(np.float32)
        self.input = self.tensor("input", self.calib)
        self.outputs = []

    def tensor(self, name, val, const=False):
        name = name if name not in self.t else "%s_%d" % (name, len(self.t))
        self.t[name] = {"val": val, "const": const}
        return name

    def v(self, n):
        return self.t[n]["val"]

    def op(self, op, ins, val, opt=None, name=None, out_q=None):
        out = self.tensor(name or "%s_%d" % (op.lower(), len(self.ops)), val)
        self.ops.append({"op": op, "ins": ins, "out": out, "opt": opt or {}, "out_q": out_q})
        return out

    def weight(self, shape, fan_in):
        w = (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        # float16-stored weights (MediaPipe): the values the model really holds, for the twin too
        return w.astype(np.float16).astype(np.float32) if self.fp16 else w

    def conv(self, x, cout, k, s=1, act="RELU", pad="SAME", dw=False):
        xv = self.v(x)
        N, H, W, C = xv.shape
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad == "SAME":
            oh, pt, pb = pad_same(H, kh, s)
            ow, pl, pr = pad_same(W, kw, s)
        else:
            oh, ow, pt, pb, pl, pr = (H - kh) // s + 1, (W - kw) // s + 1, 0, 0, 0, 0
        xp = np.pad(xv, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
        b = (self.rng.uniform(-0.1, 0.1, size=(cout,))).astype(np.float32)
        if self.fp16:
            b = b.astype(np.float16).astype(np.float32)
        if dw:
            w = self.weight((1, kh, kw, cout), kh * kw)
            y = np.zeros((N, oh, ow, cout), np.float32)
            for ky in range(kh):
                for kx in range(kw):
                    y += xp[:, ky:ky + s * oh:s, kx:kx + s * ow:s, :] * w[0, ky, kx, :]
        else:
            w = self.weight((cout, kh, kw, C), kh * kw * C)
            y = np.zeros((N, oh, ow, cout), np.float32)
            for ky in range(kh):
                for kx in range(kw):
                    y += np.tensordot(xp[:, ky:ky + s * oh:s, kx:kx + s * ow:s, :], w[:, ky, kx, :], axes=([3], [1]))
        y = act_np(y + b, act)
        wn, bn = self.tensor("w", w, True), self.tensor("b", b, True)
        op = "DEPTHWISE_CONV_2D" if dw else "CONV_2D"
        opt = {"padding": pad, "stride_w": s, "stride_h": s, "fused_activation_function": act}
        if dw:
            opt["depth_multiplier"] = cout // C
        return self.op(op, [x, wn, bn], y, opt)

    def fc(self, x, n, act="NONE"):
        xv = self.v(x)
        w = self.weight((n, xv.shape[-1]), xv.shape[-1])
        b = (self.rng.uniform(-0.1, 0.1, size=(n,))).astype(np.float32)
        y = act_np(xv @ w.T + b, act)
        return self.op("FULLY_CONNECTED", [x, self.tensor("w", w, True), self.tensor("b", b, True)], y,
                       {"fused_activation_function": act})

    def add(self, a, b, act="NONE"):
        return self.op("ADD", [a, b], act_np(self.v(a) + self.v(b), act), {"fused_activation_function": act})

    def pool(self, x, k, s, mx, pad="VALID"):
        xv = self.v(x)
        N, H, W, C = xv.shape
        oh, ow = ((H - k) // s + 1, (W - k) // s + 1) if pad == "VALID" else ((H + s - 1) // s, (W + s - 1) // s)
        y = np.zeros((N, oh, ow, C), np.float32)
        for i in range(oh):
            for j in range(ow):
                win = xv[:, i * s:i * s + k, j * s:j * s + k, :]
                y[:, i, j, :] = win.max(axis=(1, 2)) if mx else win.mean(axis=(1, 2))
        return self.op("MAX_POOL_2D" if mx else "AVERAGE_POOL_2D", [x], y,
                       {"padding": pad, "stride_w": s, "stride_h": s, "filter_width": k, "filter_height": k,
                        "fused_activation_function": "NONE"})

    def relu6(self, x):
        return self.op("RELU6", [x], np.clip(self.v(x), 0, 6), {})

    def reshape(self, x, shape):
        return self.op("RESHAPE", [x, self.tensor("shape", np.array(shape, np.int32), True)],
                       self.v(x).reshape((self.v(x).shape[0],) + tuple(shape[1:])), {"new_shape": shape})

    def mean_hw(self, x):
        y = self.v(x).mean(axis=(1, 2), keepdims=True)
        return self.op("MEAN", [x, self.tensor("axes", np.array([1, 2], np.int32), True)], y, {"keep_dims": True})

    def softmax(self, x):
        v = self.v(x)
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return self.op("SOFTMAX", [x], e / e.sum(axis=-1, keepdims=True), {"beta": 1.0}, out_q=(1.0 / 256, -128))

    def pad_c(self, x, extra):
        p = np.array([[0, 0], [0, 0], [0, 0], [0, extra]], np.int32)
        return self.op("PAD", [x, self.tensor("pads", p, True)], np.pad(self.v(x), p), {})

    def tconv(self, x, cout, k, s, pad="SAME"):
        """TRANSPOSE_CONV (inputs output_shape, filter [OC, KH, KW, IC], input, bias): TFLite's scatter
        with the padding of the forward conv over the output size."""
        xv = self.v(x)
        N, H, W, C = xv.shape
        oh, ow = (H * s, W * s) if pad == "SAME" else ((H - 1) * s + k, (W - 1) * s + k)
        pt = pad_same(oh, k, s)[1] if pad == "SAME" else 0
        pl = pad_same(ow, k, s)[1] if pad == "SAME" else 0
        w = self.weight((cout, k, k, C), k * k * C)
        b = (self.rng.uniform(-0.1, 0.1, size=(cout,))).astype(np.float32)
        y = np.zeros((N, oh, ow, cout), np.float32)
        for iy in range(H):
            for ix in range(W):
                for ky in range(k):
                    for kx in range(k):
                        oy, ox = iy * s - pt + ky, ix * s - pl + kx
                        if 0 <= oy < oh and 0 <= ox < ow:
                            y[:, oy, ox, :] += xv[:, iy, ix, :] @ w[:, ky, kx, :].T
        y += b
        os_ = self.tensor("os", np.array([1, oh, ow, cout], np.int32), True)
        o = self.op("TRANSPOSE_CONV", [os_, self.tensor("w", w, True), x, self.tensor("b", b, True)], y,
                    {"padding": pad, "stride_w": s, "stride_h": s}, out_q=None)
        self.ops[-1]["_data"] = 2  # the data input (the ONNX twin and the quantizer read it)
        self.ops[-1]["_pads"] = (pt, pl, (oh - 1 + k - pt) - ((H - 1) * s) - 0, 0)
        return o

    def resize(self, x, oh, ow, bilinear, align=False, half=False):
        xv = self.v(x)
        N, H, W, C = xv.shape

        def scale(i, o):
            return np.float32((i - 1) / (o - 1)) if align and o > 1 else np.float32(i / o)
        hs, ws = scale(H, oh), scale(W, ow)
        y = np.zeros((N, oh, ow, C), np.float32)
        for oy in range(oh):
            for ox in range(ow):
                if bilinear:
                    fy = (oy + 0.5) * hs - 0.5 if half else oy * hs
                    fx = (ox + 0.5) * ws - 0.5 if half else ox * ws
                    y0, y1 = max(int(np.floor(fy)), 0), min(int(np.ceil(fy)), H - 1)
                    x0, x1 = max(int(np.floor(fx)), 0), min(int(np.ceil(fx)), W - 1)
                    dy, dx = fy - y0, fx - x0
                    y[:, oy, ox, :] = (xv[:, y0, x0] * (1 - dy) * (1 - dx) + xv[:, y1, x0] * dy * (1 - dx) +
                                       xv[:, y0, x1] * (1 - dy) * dx + xv[:, y1, x1] * dy * dx)
                else:
                    def idx(o, sc, size):
                        v = (o + (0.5 if half else 0.0)) * sc
                        i = min(int(np.round(v)) if align else int(np.floor(v)), size - 1)
                        return max(0, i) if half else i
                    y[:, oy, ox, :] = xv[:, idx(oy, hs, H), idx(ox, ws, W)]
        op = "RESIZE_BILINEAR" if bilinear else "RESIZE_NEAREST_NEIGHBOR"
        return self.op(op, [x, self.tensor("size", np.array([oh, ow], np.int32), True)], y,
                       {"align_corners": align, "half_pixel_centers": half})

    def bmm(self, a, b):
        return self.op("BATCH_MATMUL", [a, b], self.v(a) @ self.v(b), {"adj_x": False, "adj_y": False})

    def gather(self, x, idx, axis):
        return self.op("GATHER", [x, self.tensor("idx", np.array(idx, np.int32), True)], np.take(self.v(x), idx, axis=axis),
                       {"axis": axis, "batch_dims": 0})

    def tile(self, x, mult):
        return self.op("TILE", [x, self.tensor("mult", np.array(mult, np.int32), True)], np.tile(self.v(x), [1] + mult[1:]))

    def minmax(self, a, b, mx):
        return self.op("MAXIMUM" if mx else "MINIMUM", [a, b], (np.maximum if mx else np.minimum)(self.v(a), self.v(b)))

    def reduce(self, op, x, axes):
        f = {"SUM": np.sum, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min}[op]
        return self.op(op, [x, self.tensor("axes", np.array(axes, np.int32), True)], f(self.v(x), axis=tuple(axes)),
                       {"keep_dims": False})

    def gelu(self, x):
        v = self.v(x).astype(np.float64)
        erf = np.vectorize(math.erf)
        return self.op("GELU", [x], (0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))).astype(np.float32), {"approximate": False})

    def concat(self, xs, axis):
        return self.op("CONCATENATION", xs, np.concatenate([self.v(x) for x in xs], axis=axis),
                       {"axis": axis, "fused_activation_function": "NONE"})


# ---------------------------------------------------------------- quantization (TFLite converter style)
def act_q(v):
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    s = max(hi - lo, 1e-6) / 255.0
    z = int(np.clip(np.round(-128 - lo / s), -128, 127))
    return np.float32(s), z


PASS_Q = {"MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE", "PAD", "CONCATENATION", "MEAN_SAME", "RESIZE_BILINEAR",
          "RESIZE_NEAREST_NEIGHBOR", "GATHER", "TILE", "MAXIMUM", "MINIMUM", "REDUCE_MAX", "REDUCE_MIN"}


def quantize_net(net):
    """Scale/zero point per activation; inputs of quantization-preserving ops pass theirs on."""
    q = {net.input: act_q(net.v(net.input))}
    for o in net.ops:
        if o["out_q"]:
            q[o["out"]] = (np.float32(o["out_q"][0]), o["out_q"][1])
        elif o["op"] in PASS_Q:
            q[o["out"]] = q[o["ins"][0]]
        else:
            q[o["out"]] = act_q(net.v(o["out"]))
    # CONCATENATION needs one quantization for all inputs: use the union range for all of them.
    for o in net.ops:
        if o["op"] == "CONCATENATION":
            vals = np.concatenate([net.v(x).ravel() for x in o["ins"]])
            sz = act_q(vals)
            for x in o["ins"] + [o["out"]]:
                q[x] = sz
    return q


def qweights(w, axis):
    red = tuple(i for i in range(w.ndim) if i != axis)
    s = (np.maximum(np.abs(w).max(axis=red), 1e-8) / 127.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8), s


# ---------------------------------------------------------------- TFLite (JSON for flatc)
def tflite_json(net, int8, int8_io, fp16_weights=False):
    tensors, buffers, ops, codes = [], [{}], [], []
    index = {}
    q = quantize_net(net) if int8 else {}

    def add_buffer(arr):
        buffers.append({"data": list(np.frombuffer(arr.tobytes(), np.uint8).tolist())})
        return len(buffers) - 1

    def add_tensor(name, shape, ttype, buf=0, quant=None):
        t = {"shape": list(int(d) for d in shape), "type": ttype, "buffer": buf, "name": name}
        if quant:
            t["quantization"] = quant
        tensors.append(t)
        index[name] = len(tensors) - 1
        return len(tensors) - 1

    def qparams(s, z, dim=0):
        s = np.atleast_1d(np.asarray(s, np.float32))
        z = np.atleast_1d(np.asarray(z, np.int64))
        return {"scale": [float(x) for x in s], "zero_point": [int(x) for x in z], "quantized_dimension": dim}

    def code(op):
        c = BUILTIN[op]
        for i, e in enumerate(codes):
            if e["builtin_code"] == c:
                return i
        codes.append({"deprecated_builtin_code": min(c, 127), "builtin_code": c, "version": 1})
        return len(codes) - 1

    def act_tensor(name):
        if name in index:
            return index[name]
        shape = net.v(name).shape[1:]
        shape = (1,) + tuple(shape)
        if int8:
            return add_tensor(name, shape, "INT8", 0, qparams(*q[name]))
        return add_tensor(name, shape, "FLOAT32")

    # graph input: int8 directly, or float + QUANTIZE
    if int8 and not int8_io:
        fin = add_tensor("input_f32", (1,) + net.v(net.input).shape[1:], "FLOAT32")
        xin = act_tensor(net.input)
        ops.append({"opcode_index": code("QUANTIZE"), "inputs": [fin], "outputs": [xin]})
        graph_in = fin
    else:
        graph_in = act_tensor(net.input)
    for o in net.ops:
        ins = []
        xq = q.get(o["ins"][o.get("_data", 0)]) if int8 else None
        for k, name in enumerate(o["ins"]):
            if not net.t[name]["const"]:
                ins.append(act_tensor(name))
                continue
            val = net.v(name)
            if val.dtype == np.int32:  # shapes, axes, paddings
                ins.append(add_tensor(name, val.shape, "INT32", add_buffer(val)))
                continue
            is_bias = k == (3 if o["op"] == "TRANSPOSE_CONV" else 2)
            if int8 and not is_bias:
                axis = 3 if o["op"] == "DEPTHWISE_CONV_2D" else 0
                wq, ws = qweights(val, axis)
                o["_ws"] = ws
                ins.append(add_tensor(name, val.shape, "INT8", add_buffer(wq), qparams(ws, np.zeros(len(ws)), axis)))
            elif int8 and is_bias:
                bs = (np.float64(xq[0]) * o["_ws"].astype(np.float64)).astype(np.float32)
                bq = np.round(val / bs).astype(np.int32)
                ins.append(add_tensor(name, val.shape, "INT32", add_buffer(bq), qparams(bs, np.zeros(len(bs)))))
            elif fp16_weights:
                h = add_tensor(name + "_fp16", val.shape, "FLOAT16", add_buffer(val.astype(np.float16)))
                f = add_tensor(name, val.shape, "FLOAT32")
                ops.append({"opcode_index": code("DEQUANTIZE"), "inputs": [h], "outputs": [f]})
                ins.append(f)
            else:
                ins.append(add_tensor(name, val.shape, "FLOAT32", add_buffer(val)))
        out = act_tensor(o["out"])
        e = {"opcode_index": code(o["op"]), "inputs": ins, "outputs": [out]}
        opt_type = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
                    "FULLY_CONNECTED": "FullyConnectedOptions", "ADD": "AddOptions", "MAX_POOL_2D": "Pool2DOptions",
                    "AVERAGE_POOL_2D": "Pool2DOptions", "RESHAPE": "ReshapeOptions", "SOFTMAX": "SoftmaxOptions",
                    "MEAN": "ReducerOptions", "CONCATENATION": "ConcatenationOptions", "TRANSPOSE_CONV": "TransposeConvOptions",
                    "RESIZE_BILINEAR": "ResizeBilinearOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
                    "BATCH_MATMUL": "BatchMatMulOptions", "GATHER": "GatherOptions", "SUM": "ReducerOptions",
                    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions", "GELU": "GeluOptions"}.get(o["op"])
        if opt_type:
            e["builtin_options_type"] = opt_type
            e["builtin_options"] = o["opt"]
        ops.append(e)
    graph_out = []
    for name in net.outputs:
        t = act_tensor(name)
        if int8 and not int8_io:
            f = add_tensor(name + "_f32", (1,) + net.v(name).shape[1:], "FLOAT32")
            ops.append({"opcode_index": code("DEQUANTIZE"), "inputs": [t], "outputs": [f]})
            t = f
        graph_out.append(t)
    return {"version": 3, "operator_codes": codes, "description": "npusim test model " + net.name,
            "subgraphs": [{"tensors": tensors, "inputs": [graph_in], "outputs": graph_out, "operators": ops,
                           "name": "main"}],
            "buffers": buffers}


# ---------------------------------------------------------------- ONNX twin (NCHW, QDQ for int8)
def onnx_twin(net, int8, int8_io):
    nodes, inits, names = [], [], {}
    q = quantize_net(net) if int8 else {}
    cnt = [0]

    def nm(p):
        cnt[0] += 1
        return "%s_%d" % (p, cnt[0])

    def init(arr, p):
        n = nm(p)
        inits.append(numpy_helper.from_array(arr, n))
        return n

    def qdq(x, s, z):
        sn, zn = init(np.array(s, np.float32), "s"), init(np.array(z, np.int8), "z")
        y, d = nm("q"), nm("dq")
        nodes.append(helper.make_node("QuantizeLinear", [x, sn, zn], [y]))
        nodes.append(helper.make_node("DequantizeLinear", [y, sn, zn], [d]))
        return d

    def out_of(name, y):
        if int8:
            y = qdq(y, *q[name])
        names[name] = y
        return y

    x0 = "input"
    shape = net.v(net.input).shape[1:]
    in_dtype = TensorProto.INT8 if int8 and int8_io else TensorProto.FLOAT
    if len(shape) == 3:
        in_shape = [1, shape[2], shape[0], shape[1]]
    else:
        in_shape = [1] + list(shape)
    if int8 and int8_io:
        s, z = q[net.input]
        d = nm("dq")
        nodes.append(helper.make_node("DequantizeLinear", [x0, init(np.array(s, np.float32), "s"),
                                                          init(np.array(z, np.int8), "z")], [d]))
        names[net.input] = d
    else:
        out_of(net.input, x0) if int8 else names.__setitem__(net.input, x0)
    layout = {net.input: "NCHW" if len(shape) == 3 else "ND"}

    def weight(val, axis, o):
        if not int8:
            return init(val, "w")
        wq, ws = qweights(val, axis)
        o["_ws_onnx"] = ws
        y = nm("wdq")
        nodes.append(helper.make_node("DequantizeLinear", [init(wq, "wq"), init(ws, "ws"), init(np.zeros(len(ws), np.int8), "wz")],
                                      [y], axis=axis))
        return y

    def bias(val, o, xname):
        if not int8:
            return init(val, "b")
        bs = (np.float64(q[xname][0]) * o["_ws_onnx"].astype(np.float64)).astype(np.float32)
        y = nm("bdq")
        nodes.append(helper.make_node("DequantizeLinear", [init(np.round(val / bs).astype(np.int32), "bq"), init(bs, "bs"),
                                                           init(np.zeros(len(bs), np.int32), "bz")], [y], axis=0))
        return y

    def act(y, a):
        if a == "RELU":
            r = nm("relu")
            nodes.append(helper.make_node("Relu", [y], [r]))
            return r
        if a == "RELU6":
            r = nm("clip")
            nodes.append(helper.make_node("Clip", [y, init(np.array(0, np.float32), "lo"), init(np.array(6, np.float32), "hi")], [r]))
            return r
        return y

    for o in net.ops:
        x = names[o["ins"][o.get("_data", 0)]]
        xv = net.v(o["ins"][o.get("_data", 0)])
        op, opt, y = o["op"], o["opt"], nm(o["op"].lower())
        if op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = net.v(o["ins"][1])
            H, W = xv.shape[1], xv.shape[2]
            s = opt["stride_h"]
            if op == "CONV_2D":
                kh, kw = w.shape[1], w.shape[2]
                wo = w.transpose(0, 3, 1, 2)
                wn = weight(np.ascontiguousarray(wo), 0, o)
                group = 1
            else:
                kh, kw = w.shape[1], w.shape[2]
                wo = w.transpose(3, 0, 1, 2)
                wn = weight(np.ascontiguousarray(wo), 0, o)
                group = xv.shape[3]
            if opt["padding"] == "SAME":
                _, pt, pb = pad_same(H, kh, s)
                _, pl, pr = pad_same(W, kw, s)
            else:
                pt = pb = pl = pr = 0
            bn = bias(net.v(o["ins"][2]), o, o["ins"][0])
            nodes.append(helper.make_node("Conv", [x, wn, bn], [y], strides=[s, s], pads=[pt, pl, pb, pr], group=group,
                                          kernel_shape=[kh, kw]))
            y = act(y, opt["fused_activation_function"])
            layout[o["out"]] = "NCHW"
        elif op == "FULLY_CONNECTED":
            wn = weight(net.v(o["ins"][1]), 0, o)
            bn = bias(net.v(o["ins"][2]), o, o["ins"][0])
            nodes.append(helper.make_node("Gemm", [x, wn, bn], [y], transB=1))
            y = act(y, opt["fused_activation_function"])
            layout[o["out"]] = "ND"
        elif op == "ADD":
            nodes.append(helper.make_node("Add", [x, names[o["ins"][1]]], [y]))
            y = act(y, opt["fused_activation_function"])
            layout[o["out"]] = layout[o["ins"][0]]
        elif op in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
            k, s = opt["filter_height"], opt["stride_h"]
            nodes.append(helper.make_node("MaxPool" if op == "MAX_POOL_2D" else "AveragePool", [x], [y], kernel_shape=[k, k],
                                          strides=[s, s]))
            layout[o["out"]] = "NCHW"
        elif op == "MEAN":
            nodes.append(helper.make_node("ReduceMean", [x], [y], axes=[2, 3], keepdims=1))
            layout[o["out"]] = "NCHW"
        elif op == "RESHAPE":
            src = x
            if layout[o["ins"][0]] == "NCHW":  # TFLite flattens NHWC order
                t = nm("nhwc")
                nodes.append(helper.make_node("Transpose", [x], [t], perm=[0, 2, 3, 1]))
                src = t
            nodes.append(helper.make_node("Reshape", [src, init(np.array(opt["new_shape"], np.int64), "shape")], [y]))
            layout[o["out"]] = "ND"
        elif op == "RELU6":
            y = act(x, "RELU6")
            layout[o["out"]] = layout[o["ins"][0]]
        elif op == "SOFTMAX":
            nodes.append(helper.make_node("Softmax", [x], [y], axis=-1))
            layout[o["out"]] = "ND"
        elif op == "PAD":
            p = net.v(o["ins"][1])  # NHWC [4,2]
            pads = [int(p[0, 0]), int(p[3, 0]), int(p[1, 0]), int(p[2, 0]), int(p[0, 1]), int(p[3, 1]), int(p[1, 1]), int(p[2, 1])]
            nodes.append(helper.make_node("Pad", [x, init(np.array(pads, np.int64), "pads")], [y]))
            layout[o["out"]] = "NCHW"
        elif op == "TRANSPOSE_CONV":
            w = net.v(o["ins"][1])  # [OC, KH, KW, IC] -> ONNX [IC, OC, KH, KW]
            k, s = w.shape[1], opt["stride_h"]
            H, W = xv.shape[1], xv.shape[2]
            oh, ow = net.v(o["out"]).shape[1], net.v(o["out"]).shape[2]
            pt, pl = o["_pads"][0], o["_pads"][1]
            pb, pr = (H - 1) * s + k - oh - pt, (W - 1) * s + k - ow - pl
            outpad = [max(0, -pb), max(0, -pr)]
            wn = weight(np.ascontiguousarray(w.transpose(3, 0, 1, 2)), 1, o)
            bn = bias(net.v(o["ins"][3]), o, o["ins"][2])
            nodes.append(helper.make_node("ConvTranspose", [x, wn, bn], [y], strides=[s, s], pads=[pt, pl, max(pb, 0), max(pr, 0)],
                                          output_padding=outpad, kernel_shape=[k, k]))
            layout[o["out"]] = "NCHW"
        elif op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
            oh, ow = net.v(o["out"]).shape[1], net.v(o["out"]).shape[2]
            a, h = opt["align_corners"], opt["half_pixel_centers"]
            if op == "RESIZE_BILINEAR":
                at = dict(mode="linear", coordinate_transformation_mode="align_corners" if a else "half_pixel" if h else "asymmetric")
            else:
                at = dict(mode="nearest", coordinate_transformation_mode="align_corners" if a else "tf_half_pixel_for_nearest" if h
                          else "asymmetric", nearest_mode="round_prefer_ceil" if a else "floor")
            sizes = init(np.array([1, xv.shape[3], oh, ow], np.int64), "sizes")
            nodes.append(helper.make_node("Resize", [x, "", "", sizes], [y], **at))
            layout[o["out"]] = "NCHW"
        elif op == "BATCH_MATMUL":
            nodes.append(helper.make_node("MatMul", [x, names[o["ins"][1]]], [y]))
            layout[o["out"]] = "ND"
        elif op == "CONCATENATION":
            ax = opt["axis"]
            ins = [names[i] for i in o["ins"]]
            if layout[o["ins"][0]] == "NCHW":
                ax = {3: 1, 1: 2, 2: 3, 0: 0}[ax]
            nodes.append(helper.make_node("Concat", ins, [y], axis=ax))
            layout[o["out"]] = layout[o["ins"][0]]
        else:
            raise SystemExit("no ONNX twin for " + op)
        out_of(o["out"], y)
    outs = []
    for name in net.outputs:
        y = names[name]
        if int8 and int8_io:  # back to the int8 codes
            s, z = q[name]
            yq = nm("yq")
            nodes.append(helper.make_node("QuantizeLinear", [y, init(np.array(s, np.float32), "s"), init(np.array(z, np.int8), "z")], [yq]))
            y = yq
        o = nm("out")
        nodes.append(helper.make_node("Identity", [y], [o]))
        outs.append(helper.make_tensor_value_info(o, TensorProto.INT8 if int8 and int8_io else TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, net.name, [helper.make_tensor_value_info(x0, in_dtype, in_shape)], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


# ---------------------------------------------------------------- the models
def cnn(rng):
    n = Net("tfl_cnn", (1, 16, 16, 3), rng)
    x = n.conv(n.input, 8, 3, act="RELU")
    a = n.relu6(n.conv(x, 8, 3, act="NONE", dw=True))
    b = n.conv(a, 8, 1, act="NONE")
    x = n.add(x, b, act="RELU")
    x = n.pool(x, 2, 2, mx=True)
    x = n.conv(x, 16, 3, s=2, act="RELU", pad="VALID")
    x = n.pool(x, 3, 3, mx=False)
    x = n.reshape(x, [1, 16])
    x = n.fc(x, 10)
    n.outputs = [n.softmax(x)]
    return n


def kws(rng):
    n = Net("tfl_kws", (1, 49, 10, 1), rng)
    x = n.conv(n.input, 32, (10, 4), s=2, act="RELU")
    for _ in range(2):
        x = n.conv(x, 32, 3, act="RELU", dw=True)
        x = n.conv(x, 32, 1, act="RELU")
    x = n.pool(x, 5, 5, mx=False)  # 25x5 -> 5x1
    x = n.reshape(x, [1, 5 * 1 * 32])
    x = n.fc(x, 12)
    n.outputs = [n.softmax(x)]
    return n


def mobilenet(rng):
    n = Net("tfl_mobilenet", (1, 32, 32, 3), rng)
    x = n.relu6(n.conv(n.input, 16, 3, s=2, act="NONE"))
    for cout, s, t in ((16, 1, 2), (24, 2, 3), (24, 1, 3)):
        cin = n.v(x).shape[3]
        h = n.relu6(n.conv(x, cin * t, 1, act="NONE"))
        h = n.relu6(n.conv(h, cin * t, 3, s=s, act="NONE", dw=True))
        h = n.conv(h, cout, 1, act="NONE")
        x = n.add(x, h) if s == 1 and cin == cout else h
    x = n.relu6(n.conv(x, 64, 1, act="NONE"))
    x = n.mean_hw(x)
    x = n.reshape(x, [1, 64])
    x = n.fc(x, 10)
    n.outputs = [n.softmax(x)]
    return n


def facedet(rng):
    n = Net("tfl_facedet", (1, 32, 32, 3), rng, fp16=True)
    x = n.conv(n.input, 8, 5, s=2, act="RELU")                      # 16x16x8
    h = n.conv(n.conv(x, 8, 3, act="NONE", dw=True), 8, 1, act="NONE")
    x = n.add(x, h, act="RELU")
    h = n.conv(n.conv(x, 8, 3, s=2, act="NONE", dw=True), 16, 1, act="NONE")  # 8x8x16
    skip = n.pad_c(n.pool(x, 2, 2, mx=True), 8)
    x = n.add(skip, h, act="RELU")
    r1 = n.reshape(n.conv(x, 4, 1, act="NONE"), [1, 64 * 2, 2])    # 8x8 anchors x 2, 2 coords
    c1 = n.reshape(n.conv(x, 2, 1, act="NONE"), [1, 64 * 2, 1])
    y = n.conv(x, 16, 3, s=2, act="RELU")                           # 4x4x16
    r2 = n.reshape(n.conv(y, 4, 1, act="NONE"), [1, 16 * 2, 2])
    c2 = n.reshape(n.conv(y, 2, 1, act="NONE"), [1, 16 * 2, 1])
    n.outputs = [n.concat([r1, r2], 1), n.concat([c1, c2], 1)]
    return n


def upsample(rng):
    """A small segmentation-style decoder: conv, TRANSPOSE_CONV x2 (SAME), RESIZE_BILINEAR (half pixel),
    RESIZE_NEAREST_NEIGHBOR, a pooled head with BATCH_MATMUL of two activations (a gram-like product)."""
    n = Net("tfl_upsample", (1, 6, 6, 3), rng)
    x = n.conv(n.input, 6, 3, s=2, act="RELU")         # 3x3x6
    x = n.tconv(x, 4, 3, 2)                              # 6x6x4
    x = n.resize(x, 9, 9, bilinear=True, half=True)      # 9x9x4
    x = n.resize(x, 12, 12, bilinear=False)              # 12x12x4
    x = n.conv(x, 4, 3, s=2, act="RELU")                 # 6x6x4
    x = n.pool(x, 3, 3, mx=False)                        # 2x2x4
    a = n.reshape(x, [1, 4, 4])                          # [1, 4 pixels, 4 channels]
    g = n.bmm(a, a)                                      # [1, 4, 4]
    f = n.reshape(g, [1, 16])
    n.outputs = [n.softmax(n.fc(f, 5))]
    return n


def misc(rng):
    """The data-movement and reduction builtins beyond the model families (no ONNX twin): GATHER of
    channels, MAXIMUM / MINIMUM of two gathers sharing a quantization, REDUCE_MAX / REDUCE_MIN, TILE, SUM,
    GELU, FULLY_CONNECTED, SOFTMAX."""
    n = Net("tfl_misc", (1, 6, 6, 4), rng)
    a = n.reshape(n.conv(n.input, 8, 3, act="NONE"), [1, 36, 8])   # seed 000 Gather: rank 2 or 3
    g1 = n.gather(a, [0, 2, 4, 6, 7, 1], 2)                        # [1, 36, 6]
    g2 = n.gather(a, [7, 5, 3, 1, 0, 2], 2)
    m = n.minmax(n.minmax(g1, g2, True), g1, False)                # min(max(g1, g2), g1)
    r = n.reduce("REDUCE_MAX", n.tile(m, [1, 1, 2]), [1])          # [1, 36, 12] -> [1, 12]
    n.outputs = [n.softmax(n.fc(n.gelu(r), 5)), n.reduce("SUM", g2, [2]), n.reduce("REDUCE_MIN", g1, [1])]
    return n


def main():
    out, flatc, schema = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    jobs = []
    for fn, seed in ((cnn, 21), (kws, 22), (mobilenet, 23), (upsample, 25)):
        for int8 in (False, True):
            net = fn(np.random.RandomState(seed))
            jobs.append((net, int8, net.name == "tfl_kws", False))
    jobs.append((facedet(np.random.RandomState(24)), False, False, True))
    for int8 in (False, True):
        jobs.append((misc(np.random.RandomState(26)), int8, False, False))
    for net, int8, int8_io, fp16 in jobs:
        base = os.path.join(out, "%s_%s" % (net.name, "int8" if int8 else "f32"))
        with open(base + ".json", "w") as f:
            json.dump(tflite_json(net, int8, int8_io, fp16), f)
        subprocess.check_call([flatc, "-b", "-o", out, schema, base + ".json"])
        if net.name != "tfl_misc":
            onnx.save(onnx_twin(net, int8, int8_io), base + "_twin.onnx")
        os.remove(base + ".json")
        print("wrote", base + ".tflite", "" if net.name == "tfl_misc" else "and " + base + "_twin.onnx")


if __name__ == "__main__":
    main()
