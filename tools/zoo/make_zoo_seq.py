#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sequence models of the zoo (issue 15): keyword spotting with attention, a CRNN text recogniser
and keyword spotting with a GRU.

Both are written from their architectures with make_zoo's Net / Emitter (seeded weights, BatchNorm
folded into the convolutions, one calibration input, uint8 per-tensor activations and 7-bit int8
per-channel weights as onnxruntime's quantize_static QDQ form), opset 13, with the sequence part as
a PyTorch export of [batch, channels, time] code writes it:

  attention (single head, d = channels; 1/sqrt(d) folded into the query projection):
    q, k, v = Conv1x1(x) each                              [1, d, 1, T]
    s = MatMul(Transpose(Reshape(q, [1, d, T]), [0, 2, 1]), Reshape(k, [1, d, T]))   [1, T, T]
    p = Softmax(s, axis=-1)                                (onnxruntime: output 1/256, zero point 0)
    o = Reshape(MatMul(Reshape(v, [1, d, T]), Transpose(p, [0, 2, 1])), [1, d, 1, T])
    x = x + Conv1x1(o)
  layer norm over channels (torch.nn.LayerNorm exported before opset 17, axis 1 of [1, d, 1, T]):
    m = ReduceMean(x, [1]); c = x - m; y = c / Sqrt(ReduceMean(Pow(c, 2), [1]) + 1e-5) * gamma + beta
    (onnxruntime's QDQ quantizer quantizes the Div output, the Mul and the Add; ReduceMean, Sub, Pow,
    Sqrt and Div stay float between them).

kws_convattn (1x1x40x64 log-mel, 12 keywords): conv 3x3/2 (32), depthwise-separable 3x3/2 (64),
a (10, 1) convolution collapsing frequency -> [1, 64, 1, 16], one attention block, layer norm,
conv 1x1 (64) ReLU, the last frame (Gather along time, indices [T - 1]), Gemm 12, Softmax.
crnn (1x1x32x128 grey text line, 37 classes: CTC blank, 0-9, a-z): VGG-style backbone
64-M-128-M-256-256 with (2, 1) poolings as strided (2, 1) convolutions, a (4, 1) convolution to
[1, 256, 1, 32], conv 1x1 (128), two attention blocks with layer norm, conv 1x1 to 37 classes,
Softmax over the classes (axis 1).

kws_gru (1x1x40x49 log-mel, 12 keywords; a conv front end + GRU keyword spotter): conv 3x3/2 (32),
depthwise-separable 3x3 (64), a (20, 1) convolution collapsing frequency -> [1, 64, 1, 25],
Reshape / Transpose / Reshape to [25, 1, 64] (time, batch, features), GRU 64 (torch.nn.GRU's
export: linear_before_reset 1; Y_h read), Reshape [1, 64], Gemm 12, Softmax.

Writes <name>.onnx (float) and <name>_qdq.onnx. Same arguments, same bytes:
    /usr/bin/python3 tools/zoo/make_zoo_seq.py OUT_DIR [--models kws_convattn,crnn,kws_gru]
"""
import argparse
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_zoo  # noqa: E402  (the zoo's network builder and ONNX emitter, used as a library)


def conv_rect(x, w, b, stride, pad):
    """Cross-correlation with a (kh, kw) kernel, strides (sh, sw), pads (ph, pw) (numpy, calibration)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh, ow = (h + 2 * pad[0] - kh) // stride[0] + 1, (wd + 2 * pad[1] - kw) // stride[1] + 1
    y = np.zeros((n, o, oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return (y + b.reshape(1, -1, 1, 1)).astype(np.float32)


def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


class SeqNet(make_zoo.Net):
    """make_zoo.Net plus rectangular convolutions, MatMul of two activations, Softmax, Gather and
    the decomposed layer norm."""

    def conv_rect(self, x, cout, k, s, pad, act="relu", scale=1.0):
        cin = self.vals[x].shape[1]
        w = (self.rng.standard_normal((cout, cin, k[0], k[1])) * np.sqrt(2.0 / (cin * k[0] * k[1])) * scale)
        w = w.astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.05 * scale).astype(np.float32)
        y = self.fresh("conv")
        v = conv_rect(self.vals[x], w, b, s, pad)
        self.params += w.size + b.size
        self.macs += v.size * cin * k[0] * k[1]
        if act == "relu":
            v = np.maximum(v, 0)
        self.vals[y] = v
        self.ops.append(("conv", [x], y, dict(w=w, b=b, s=list(s), pad=list(pad), group=1, act=act)))
        return y

    def matmul(self, a, b):
        y = self.fresh("matmul")
        va, vb = self.vals[a], self.vals[b]
        self.vals[y] = np.matmul(va, vb).astype(np.float32)
        self.macs += int(np.prod(self.vals[y].shape)) * va.shape[-1]
        self.ops.append(("matmul", [a, b], y, {}))
        return y

    def softmax(self, x, axis):
        y = self.fresh("softmax")
        self.vals[y] = softmax(self.vals[x], axis)
        self.ops.append(("softmax", [x], y, dict(axis=axis)))
        return y

    def gather(self, x, axis, indices):
        y = self.fresh("gather")
        self.vals[y] = np.take(self.vals[x], indices, axis=axis)
        self.ops.append(("gather", [x], y, dict(axis=axis, indices=list(indices))))
        return y

    def layernorm(self, x):
        c = self.vals[x].shape[1]
        gamma = self.rng.uniform(0.8, 1.2, (1, c, 1, 1)).astype(np.float32)
        beta = (self.rng.standard_normal((1, c, 1, 1)) * 0.05).astype(np.float32)
        self.params += 2 * c
        y = self.fresh("layernorm")
        v = self.vals[x]
        d = v - v.mean(axis=1, keepdims=True)
        norm = (d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)).astype(np.float32)
        self.vals[y + "_norm"] = norm
        self.vals[y + "_mul"] = (norm * gamma).astype(np.float32)
        self.vals[y] = (self.vals[y + "_mul"] + beta).astype(np.float32)
        self.ops.append(("layernorm", [x], y, dict(gamma=gamma, beta=beta)))
        return y

    def gru(self, x, hidden):
        """ONNX GRU over x [T, 1, C] as torch.nn.GRU exports it (gates z r h, linear_before_reset 1,
        Wb and Rb separate); the node's output is Y_h [1, 1, hidden] (Y, also written, is unread)."""
        t, _, c = self.vals[x].shape
        s = 1.0 / np.sqrt(hidden)  # torch.nn.GRU's uniform(-1/sqrt(H), 1/sqrt(H)) initialisation
        W = self.rng.uniform(-s, s, (1, 3 * hidden, c)).astype(np.float32)
        R = self.rng.uniform(-s, s, (1, 3 * hidden, hidden)).astype(np.float32)
        B = self.rng.uniform(-s, s, (1, 6 * hidden)).astype(np.float32)
        self.params += W.size + R.size + B.size
        self.macs += t * 3 * hidden * (c + hidden)
        sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
        h = np.zeros(hidden)
        wb, rb = B[0, :3 * hidden].astype(np.float64), B[0, 3 * hidden:].astype(np.float64)
        for k in range(t):
            xw = W[0].astype(np.float64) @ self.vals[x][k, 0] + wb
            hr = R[0].astype(np.float64) @ h + rb
            z, r = sig(xw[:hidden] + hr[:hidden]), sig(xw[hidden:2 * hidden] + hr[hidden:2 * hidden])
            n = np.tanh(xw[2 * hidden:] + r * hr[2 * hidden:])
            h = (1 - z) * n + z * h
        y = self.fresh("gru")
        self.vals[y] = h.reshape(1, 1, hidden).astype(np.float32)
        self.ops.append(("gru", [x], y, dict(W=W, R=R, B=B, hidden=hidden)))
        return y

    def attention(self, x):
        d, t = self.vals[x].shape[1], self.vals[x].shape[3]
        q = self.conv(x, d, 1, 1, None, bias_init=0.05)
        self.ops[-1][3]["w"] *= np.float32(1.0 / np.sqrt(d))  # 1/sqrt(d) folded into the query
        self.ops[-1][3]["b"] *= np.float32(1.0 / np.sqrt(d))
        self.vals[q] = (self.vals[q] / np.sqrt(d)).astype(np.float32)
        k = self.conv(x, d, 1, 1, None)
        v = self.conv(x, d, 1, 1, None)
        qt = self.transpose(self.reshape(q, [1, d, t]), [0, 2, 1])
        s = self.matmul(qt, self.reshape(k, [1, d, t]))
        p = self.softmax(s, -1)
        o = self.matmul(self.reshape(v, [1, d, t]), self.transpose(p, [0, 2, 1]))
        o = self.conv(self.reshape(o, [1, d, 1, t]), d, 1, 1, None)
        return self.add(x, o)


class SeqEmitter(make_zoo.Emitter):
    """make_zoo.Emitter for SeqNet's layer kinds, quantized as onnxruntime's quantize_static (QDQ)."""

    def op_conv(self, ins, y, p):
        if isinstance(p["s"], list):  # rectangular: write the attributes per axis
            attrs_p = dict(p, s=1, pad=0)
            super().op_conv(ins, y, attrs_p)
            conv = next(n for n in reversed(self.nodes) if n.op_type == "Conv")
            del conv.attribute[:]
            conv.attribute.extend([helper.make_attribute("kernel_shape", list(p["w"].shape[2:])),
                                   helper.make_attribute("strides", p["s"]),
                                   helper.make_attribute("pads", p["pad"] * 2),
                                   helper.make_attribute("group", 1)])
            return
        super().op_conv(ins, y, p)

    def op_matmul(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("MatMul", [self.src(ins[0]), self.src(ins[1])], [out])
        self.finish(out, y)

    def op_softmax(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        self.node("Softmax", [self.src(ins[0])], [out], axis=p["axis"])
        # onnxruntime's QDQ Softmax: the output's range is [0, 1] whatever the calibration saw.
        self.finish(out, y, params=(np.float32(1.0 / 256.0), 0))

    def finish(self, y_float, y, relu=False, same_as=None, params=None):
        if params is None:
            return super().finish(y_float, y, relu, same_as)
        if self.qdq:
            self.quantize(y_float, y, params)

    def op_gather(self, ins, y, p):
        out = y if not self.qdq else y + "_f"
        idx = self.init(y + "_idx", np.array(p["indices"], np.int64))
        self.node("Gather", [self.src(ins[0]), idx], [out], axis=p["axis"])
        self.finish(out, y, same_as=ins[0])

    def op_gru(self, ins, y, p):
        # onnxruntime's quantize_static leaves GRU float: it reads the DequantizeLinear of its input
        # and its Y_h is quantized for the next quantized op, as any float output.
        out = y if not self.qdq else y + "_f"
        self.node("GRU", [self.src(ins[0]), self.init(y + "_W", p["W"]), self.init(y + "_R", p["R"]),
                          self.init(y + "_B", p["B"])], [y + "_seq", out], hidden_size=p["hidden"],
                  linear_before_reset=1)
        self.finish(out, y)

    def op_layernorm(self, ins, y, p):
        x = self.src(ins[0])
        f = lambda s: y + "_" + s  # noqa: E731
        self.node("ReduceMean", [x], [f("mean")], axes=[1], keepdims=1)
        self.node("Sub", [x, f("mean")], [f("sub")])
        self.node("Pow", [f("sub"), self.init(f("two"), np.array(2.0, np.float32))], [f("pow")])
        self.node("ReduceMean", [f("pow")], [f("var")], axes=[1], keepdims=1)
        self.node("Add", [f("var"), self.init(f("eps"), np.array(1e-5, np.float32))], [f("vare")])
        self.node("Sqrt", [f("vare")], [f("std")])
        norm = f("norm") if not self.qdq else f("norm_f")
        self.node("Div", [f("sub"), f("std")], [norm])
        self.finish(norm, f("norm"))
        # gamma and beta: constant second inputs, quantized by onnxruntime as (per-tensor) weights.
        if self.qdq:
            g, _ = self.weight(f("gamma"), p["gamma"], False, f("norm"))
            bt, _ = self.weight(f("beta"), p["beta"], False, f("norm"))
        else:
            g, bt = self.init(f("gamma"), p["gamma"]), self.init(f("beta"), p["beta"])
        mul = f("mul") if not self.qdq else f("mul_f")
        self.node("Mul", [self.src(f("norm")), g], [mul])
        self.finish(mul, f("mul"))
        out = y if not self.qdq else y + "_f"
        self.node("Add", [self.src(f("mul")), bt], [out])
        self.finish(out, y)


def kws_convattn(seed=21):
    n = SeqNet("kws_convattn", seed, (1, 1, 40, 64))
    x = n.conv("input", 32, 3, 2)
    x = n.conv(x, 32, 3, 1, group=32)
    x = n.conv(x, 64, 1, 1)
    x = n.conv(x, 64, 3, 2, group=64)
    x = n.conv(x, 64, 1, 1)
    x = n.conv_rect(x, 64, (10, 1), (1, 1), (0, 0))  # frequency collapsed: [1, 64, 1, 16]
    x = n.layernorm(n.attention(x))
    x = n.conv(x, 64, 1, 1)
    t = n.vals[x].shape[3]
    x = n.gather(x, 3, [t - 1])  # the last frame
    x = n.gemm(n.flatten(x), 12)
    n.output(n.softmax(x, 1))
    return n


def crnn(seed=22):
    n = SeqNet("crnn", seed, (1, 1, 32, 128))
    x = n.conv("input", 64, 3, 1)
    x = n.maxpool(x, 2, 2, 0)  # 16 x 64
    x = n.conv(x, 128, 3, 1)
    x = n.maxpool(x, 2, 2, 0)  # 8 x 32
    x = n.conv(x, 256, 3, 1)
    x = n.conv(x, 256, 3, 1)
    x = n.conv_rect(x, 256, (3, 3), (2, 1), (1, 1))  # (2, 1) pooling as a strided conv: 4 x 32
    x = n.conv_rect(x, 256, (4, 1), (1, 1), (0, 0))  # height collapsed: [1, 256, 1, 32]
    x = n.conv(x, 128, 1, 1)
    for _ in range(2):
        x = n.layernorm(n.attention(x))
    x = n.conv(x, 37, 1, 1, None)
    n.output(n.softmax(x, 1))
    return n


def kws_gru(seed=23):
    n = SeqNet("kws_gru", seed, (1, 1, 40, 49))
    x = n.conv("input", 32, 3, 2)  # [1, 32, 20, 25]
    x = n.conv(x, 32, 3, 1, group=32)
    x = n.conv(x, 64, 1, 1)
    x = n.conv_rect(x, 64, (20, 1), (1, 1), (0, 0))  # frequency collapsed: [1, 64, 1, 25]
    x = n.reshape(n.transpose(n.reshape(x, [64, 25]), [1, 0]), [25, 1, 64])  # [time, batch, features]
    x = n.gemm(n.reshape(n.gru(x, 64), [1, 64]), 12)
    n.output(n.softmax(x, 1))
    return n


BUILDERS = {"kws_convattn": kws_convattn, "crnn": crnn, "kws_gru": kws_gru}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", default="kws_convattn,crnn,kws_gru")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.models.split(","):
        if name not in BUILDERS:
            print("make_zoo_seq: unknown model '%s' (known: %s)" % (name, ", ".join(BUILDERS)), file=sys.stderr)
            return 2
        net = BUILDERS[name]()
        make_zoo.save(SeqEmitter(net, False).emit(), os.path.join(args.out_dir, name + ".onnx"))
        make_zoo.save(SeqEmitter(net, True).emit(), os.path.join(args.out_dir, name + "_qdq.onnx"))
        print("%-13s params %10d  MACs %13d  (no cited figure)" % (name, net.params, net.macs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
