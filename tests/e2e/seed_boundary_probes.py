#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Boundary probes of seed 001's operator tables for `npusim check` (issue 13, acceptance 3).

Every probe is a one-operator ONNX model at a limit of an RK3588 (seed 001 section 3.2) or
RK3566/RK3568 (section 3.1) table: a value just inside the limit (the vendor rule keeps the node on
the NPU) and one just outside (the vendor rule sends it to the CPU). The probes, their limits and
expected verdicts were written from the seed TEXT (the Chinese operator tables, quoted in each probe,
docs: drivers/compiler/specs/README.md names the seed), not from the project's spec JSON, so they
test the spec DB and the checker against the seed, not the DB against itself.

Each probe is written three times: a float model (RKNN's float16 path) and two QDQ models in the form
onnxruntime's quantize_static writes (uint8 activations, the default, and int8 activations behind
QuantizeLinear/DequantizeLinear; per-channel symmetric int8 weights, int32 bias). The probed node is named "probe"; its verdict is
the vendor verdict `npusim check --json` gives it (NPU / CPU fallback; a node folded into another
takes that node's verdict). "npusim has no NPU lowering yet" is npusim's own placement, not the
vendor verdict, and is not scored.

Rules of the tables not probed here, and why:
- cannot be decided from the graph: the first-layer input width ("详见模型输入说明", the notes are not in the
  seed), Slice's "subc" (never defined, so steps != 1 with height*width == 1 is not probed), the recommended
  GRU/LSTM alignments ("建议"), the layouts of the custom ex* operators and the multi-core flags;
- cannot be written as a valid ONNX model on the outside side: pool pads 8 (ONNX wants pad < kernel and the
  kernel is at most 7 inside), epsilon <= 0;
- ambiguous in the text: Transpose RK3566 [2,1,0,3]/[2,1,3,0] second case "(n1=h1=1,h1%4=0)", ranks below 4,
  AveragePool count_include_pad = 0 ("count_include_pad: 1" may be the value RKNN computes with or a limit),
  a Resize factor of 1 on one of H/W;
- custom RKNN operators with no ONNX form (exGlu, exMatMul, exNorm, exWindow, exSDPAttention, exSoftmaxMask,
  exSwooshR/L).

usage: seed_boundary_probes.py NPUSIM [--list] [--keep DIR]
Prints a table per SoC (probes, right, wrong with the rule) and exits 1 unless every probe is right.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 17
PLATFORMS = {"RK3588": "3.2", "RK3566_RK3568": "3.1"}
# Seed 001 headings: section number of each operator in 3.1 (RK3566/RK3568) and 3.2 (RK3588).
SECTION = {
    "Add": (1, 1), "BatchNormalization": (3, 3), "Concat": (4, 4), "Convolution": (5, 5),
    "DepthwiseConvolution": (6, 6), "ConvolutionRelu": (7, 7), "ConvTranspose": (20, 20), "Div": (33, 33),
    "Expand": (34, 34), "GRU": (35, 35), "Gather": (36, 36), "Hardmax": (None, 37), "LSTM": (37, 38),
    "Max": (38, 39), "Min": (39, 40), "Mul": (40, 41), "Pad": (42, 43), "MaxPool": (43, 44),
    "GlobalMaxPool": (44, 45), "AveragePool": (45, 46), "GlobalAveragePool": (46, 47), "Pow": (47, 48),
    "Relu": (48, 49), "Clip/ReLU6": (49, 50), "PRelu": (50, 51), "LeakyRelu": (51, 52), "Reshape": (52, 53),
    "Resize": (53, 54), "Slice": (54, 55), "Softmax": (None, 56), "Split": (55, 59), "Sub": (56, 60),
    "Tile": (57, 61), "Transpose": (58, 62), "Sigmoid": (59, 63), "Where": (70, 74), "HardSigmoid": (62, 66), "Elu": (64, 68),
}


def section(op, plat):
    i = SECTION[op][0 if plat == "RK3566_RK3568" else 1]
    return "%s.%d %s" % (PLATFORMS[plat], i, op) if i else "%s (no %s heading)" % (PLATFORMS[plat], op)


class Graph:
    """One-operator model builder: float, or QDQ as onnxruntime's quantize_static writes it."""

    def __init__(self, qdq, signed=False):
        """signed: int8 activations (quantize_static activation_type=QInt8, zero point 0), else uint8."""
        self.qdq, self.signed, self.nodes, self.inits, self.inputs, self.k = qdq, signed, [], [], [], 0
        self.rng = np.random.RandomState(7)

    def init(self, name, a):
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(self, op, ins, outs, name=None, **attrs):
        self.k += 1
        self.nodes.append(helper.make_node(op, ins, outs, name=name or "n%d_%s" % (self.k, op.lower()), **attrs))
        return outs[0]

    def act_qdq(self, x, tag, scale=0.02, zp=128):
        if not self.qdq:
            return x
        zpa = np.array(0, np.int8) if self.signed else np.array(zp, np.uint8)
        s, z = self.init(tag + "_s", np.array(scale, np.float32)), self.init(tag + "_z", zpa)
        q = self.node("QuantizeLinear", [x, s, z], [tag + "_q"])
        return self.node("DequantizeLinear", [q, s, z], [tag + "_dq"])

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        return self.act_qdq(name, name)

    def const(self, name, a):
        """A float constant operand (behind its own Q/DQ in the QDQ model, as quantize_static does)."""
        self.init(name, np.asarray(a, np.float32))
        return self.act_qdq(name, name + "c", scale=max(float(np.abs(a).max()), 1e-3) / 127.0, zp=128)

    def weight(self, name, shape, axis=0):
        w = (self.rng.standard_normal(shape) * 0.1).astype(np.float32)
        if not self.qdq:
            return self.init(name, w)
        wm = np.moveaxis(w, axis, 0).reshape(shape[axis], -1)
        ws = np.maximum(np.abs(wm).max(axis=1), 1e-6) / 127.0
        bshape = [1] * len(shape)
        bshape[axis] = -1
        self.init(name + "_q", np.clip(np.round(w / ws.reshape(bshape)), -127, 127).astype(np.int8))
        self.init(name + "_s", ws.astype(np.float32))
        self.init(name + "_z", np.zeros(ws.shape, np.int8))
        return self.node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name + "_dq"], axis=axis)

    def bias(self, name, n, wscale=0.001):
        if not self.qdq:
            return self.init(name, np.zeros(n, np.float32))
        self.init(name + "_q", np.zeros(n, np.int32))
        self.init(name + "_s", np.full(n, 0.02 * wscale, np.float32))
        self.init(name + "_z", np.zeros(n, np.int32))
        return self.node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name + "_dq"], axis=0)

    def finish(self, y):
        y = self.act_qdq(y, "y")
        self.nodes[-1].output[0] = "output"  # y is the last node's output (the probe op's in a float model)
        g = helper.make_graph(self.nodes, "probe", self.inputs,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(g, producer_name="npusim-seed-probe", opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        try:  # the output's shape, as an exporter writes it (left open where inference cannot tell)
            inf = shape_inference.infer_shapes(m)
            for vi in list(inf.graph.value_info) + list(inf.graph.output):
                if vi.name == "output" and vi.type.tensor_type.HasField("shape"):
                    m.graph.output[0].CopyFrom(vi)
        except Exception:  # noqa: BLE001 - an outside-the-limits attribute ONNX itself rejects
            pass
        return m


PROBES = []  # (name, op heading key, quote, {platform: "NPU"|"CPU"}, builder(g) -> output name)


def probe(name, op, quote, expect, build, qdq=(False, True), plats=("RK3588", "RK3566_RK3568")):
    """expect: "NPU" / "CPU", or a dict per platform."""
    if isinstance(expect, str):
        expect = {p: expect for p in plats}
    PROBES.append((name, op, quote, expect, build, qdq))


# -- Convolution (3.1.5 / 3.2.5) -----------------------------------------------------------------------
def conv(cin, h, w, cout, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1, act=None):
    def b(g):
        x = g.input("x", (1, cin, h, w))
        wt = g.weight("w", (cout, cin // group, k[0], k[1]))
        y = g.node("Conv", [x, wt, g.bias("b", cout)], ["conv_y"], name="probe", kernel_shape=list(k),
                   strides=list(stride), pads=list(pads), dilations=list(dil), group=group)
        if act:
            y = g.node(act, [g.act_qdq(y, "pre") if act != "Relu" else y], ["act_y"], name="probe_act")
        return y
    return b


CV = "Convolution"
for kk, ex in ((31, "NPU"), (32, "CPU")):
    probe("conv_kh%d" % kk, CV, "kernel_h∈[1,31]", ex, conv(4, kk + 1, 6, 4, (kk, 1)))
    probe("conv_kw%d" % kk, CV, "kernel_w∈[1,31]", ex, conv(4, 6, kk + 1, 4, (1, kk)))
for s, ex in ((7, "NPU"), (8, "CPU")):
    probe("conv_sh%d" % s, CV, "stride_h∈[1,7]", ex, conv(4, 17, 9, 4, (1, 1), (s, 1)))
    probe("conv_sw%d" % s, CV, "stride_w∈[1,7]", ex, conv(4, 9, 17, 4, (1, 1), (1, s)))
for p, ex in ((15, "NPU"), (16, "CPU")):
    for i, side in enumerate(("top", "left", "bottom", "right")):
        pads = [0, 0, 0, 0]
        pads[(0, 1, 2, 3)[i] if i < 2 else i] = p
        onnx_pads = [pads[0], pads[1], pads[2], pads[3]]  # ONNX order: top, left, bottom, right
        probe("conv_pad_%s%d" % (side, p), CV, "pads_%s∈[0,15]" % side, ex, conv(4, 6, 6, 4, (3, 3), pads=onnx_pads))
for d, ex in ((31, "NPU"), (32, "CPU")):
    probe("conv_dh%d" % d, CV, "dilations_h∈[1,31]", ex, conv(4, d + 2, 5, 4, (2, 1), dil=(d, 1)))
    probe("conv_dw%d" % d, CV, "dilations_w∈[1,31]", ex, conv(4, 5, d + 2, 4, (1, 2), dil=(1, d)))
for wd, ex in ((16382, "NPU"), (16383, "CPU")):
    probe("conv_dilated_width%d" % wd, CV, "当dilated_kernel_h>1时,width<16383", ex, conv(1, 3, wd, 1, (3, 1)))
probe("conv_kh1_width16383", CV, "当dilated_kernel_h>1时,width<16383 (kernel_h 1: no limit)", "NPU",
      conv(1, 2, 16383, 1, (1, 1)))
probe("conv_relu_k32", "ConvolutionRelu", "说明及规格限制同Convolution: kernel_h∈[1,31]", "CPU",
      conv(4, 33, 6, 4, (32, 1), act="Relu"))
probe("conv_relu_k31", "ConvolutionRelu", "说明及规格限制同Convolution: kernel_h∈[1,31]", "NPU",
      conv(4, 32, 6, 4, (31, 1), act="Relu"))

# -- DepthwiseConvolution (3.1.6 / 3.2.6) --------------------------------------------------------------
DW = "DepthwiseConvolution"
for kk, ex in ((8, "NPU"), (9, "CPU")):
    probe("dw_kh%d" % kk, DW, "kernel_h∈[1,8]", ex, conv(4, kk + 1, 5, 4, (kk, 1), group=4))
    probe("dw_kw%d" % kk, DW, "kernel_w∈[1,8]", ex, conv(4, 5, kk + 1, 4, (1, kk), group=4))
for s, ex in ((7, "NPU"), (8, "CPU")):
    probe("dw_sh%d" % s, DW, "stride_h∈[1,7]", ex, conv(4, 17, 9, 4, (3, 3), (s, 1), group=4))
for p, ex in ((15, "NPU"), (16, "CPU")):
    probe("dw_pad%d" % p, DW, "pads_top∈[0,15]", ex, conv(4, 6, 6, 4, (3, 3), pads=(p, 0, 0, 0), group=4))
for d, ex in ((32, "NPU"), (33, "CPU")):
    probe("dw_dh%d" % d, DW, "dilations_h∈[1,32]", ex, conv(4, d + 2, 5, 4, (2, 1), dil=(d, 1), group=4))
    probe("dw_dw%d" % d, DW, "dilations_w∈[1,32]", ex, conv(4, 5, d + 2, 4, (1, 2), dil=(1, d), group=4))


# -- ConvTranspose (3.1.20 / 3.2.20) -------------------------------------------------------------------
def convt(cin, h, w, cout, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1):
    def b(g):
        x = g.input("x", (1, cin, h, w))
        wt = g.weight("w", (cin, cout // group, k[0], k[1]), axis=1)
        return g.node("ConvTranspose", [x, wt, g.bias("b", cout)], ["ct_y"], name="probe", kernel_shape=list(k),
                      strides=list(stride), pads=list(pads), dilations=list(dil), group=group)
    return b


CT = "ConvTranspose"
for kk, ex in ((31, "NPU"), (32, "CPU")):
    probe("convt_kh%d" % kk, CT, "kernel_h∈[1,31]", ex, convt(4, 3, 3, 4, (kk, 1)))
    probe("convt_kw%d" % kk, CT, "kernel_w∈[1,31]", ex, convt(4, 3, 3, 4, (1, kk)))
for s in (1, 2, 3, 4, 5, 6, 7, 8, 9):
    ex = "NPU" if s in (1, 2, 4, 8) else "CPU"
    probe("convt_sh%d" % s, CT, "strides_h: 仅支持1,2,4,8", ex, convt(4, 3, 3, 4, (s, 1), (s, 1)))
    probe("convt_sw%d" % s, CT, "strides_w: 仅支持1,2,4,8", ex, convt(4, 3, 3, 4, (1, s), (1, s)))
# "设置pad时注意: 不支持kernel_h*dilations_h-dilations_h-pads_top<0 ... 不支持stride_h*(height-1)-pads_top+1<output_h
# 不支持stride_w*(width-1)-pads_left+1<output_w": once pads are set, all four hold. With output_h = stride_h*(h-1)
# + kernel_h - pads_top - pads_bottom the last two ask pads_bottom >= kernel_h - 1 (and the same across W), so
# an inside probe sets every pad to kernel - 1. (First written with only pads_top set: npusim's CPU verdict
# was the seed's, the W relation fails when only H pads are set.)
for p, ex in ((15, "NPU"), (16, "CPU")):  # kernel p+1: kh*dh-dh-pad_top = 0
    probe("convt_pad_top%d" % p, CT, "pads_top∈[0,15]", ex, convt(4, 20, 3, 4, (p + 1, 1), pads=(p, 0, p, 0)))
    probe("convt_pad_left%d" % p, CT, "pads_left∈[0,15]", ex, convt(4, 3, 20, 4, (1, p + 1), pads=(0, p, 0, p)))
probe("convt_pad_top_only", CT, "不支持stride_w*(width-1)-pads_left+1<output_w (pads set, 2x2 s2, W pads 0)", "CPU",
      convt(4, 6, 6, 4, (2, 2), (2, 2), (1, 0, 1, 0)))
probe("convt_pad_bottom0", CT, "不支持stride_h*(height-1)-pads_top+1<output_h", "CPU",
      convt(4, 6, 6, 4, (2, 2), (2, 2), (1, 1, 0, 1)))
for p, ex in ((1, "NPU"), (2, "CPU")):
    probe("convt_kh2_padtop%d" % p, CT, "kh*dh-dh-pad_top<0 不支持", ex, convt(4, 6, 6, 4, (2, 2), (2, 2), (p, 1, p, 1)))
    probe("convt_kw2_padleft%d" % p, CT, "kw*dw-dw-pad_left<0 不支持", ex, convt(4, 6, 6, 4, (2, 2), (2, 2), (1, p, 1, p)))
probe("convt_group1", CT, "group:仅支持1或者num_input=num_output时group=num_output", "NPU", convt(4, 3, 3, 8, (2, 2), (2, 2)))
probe("convt_group_dw", CT, "group:仅支持1或者num_input=num_output时group=num_output", "NPU",
      convt(4, 3, 3, 4, (2, 2), (2, 2), group=4))
probe("convt_group2", CT, "group:仅支持1或者num_input=num_output时group=num_output", "CPU",
      convt(4, 3, 3, 4, (2, 2), (2, 2), group=2))
probe("convt_dil2_k1", CT, "dilation!=(1,1)时 kernel仅支持(1,1)", "NPU", convt(4, 3, 3, 4, (1, 1), dil=(2, 2)))
probe("convt_dil2_k2", CT, "dilation!=(1,1)时 kernel仅支持(1,1)", "CPU", convt(4, 3, 3, 4, (2, 2), (2, 2), dil=(2, 2)))
probe("convt_dil33_k1", CT, "dilations∈[1,32]", "CPU", convt(4, 3, 3, 4, (1, 1), dil=(33, 33)))


# -- pools (3.1.43-46 / 3.2.44-47) ---------------------------------------------------------------------
def pool(op, c, h, w, k=None, s=None, pads=None, **attrs):
    def b(g):
        x = g.input("x", (1, c, h, w))
        a = dict(attrs)
        if k:
            a["kernel_shape"] = list(k)
        if s:
            a["strides"] = list(s)
        if pads:
            a["pads"] = list(pads)
        return g.node(op, [x], ["pool_y"], name="probe", **a)
    return b


for op in ("MaxPool", "AveragePool"):
    t = op.lower()
    for kk, ex in ((7, "NPU"), (8, "CPU")):
        probe("%s_kh%d" % (t, kk), op, "kernel_h∈(0,7]", ex, pool(op, 4, 9, 9, (kk, 1), (1, 1)))
        probe("%s_kw%d" % (t, kk), op, "kernel_w∈(0,7]", ex, pool(op, 4, 9, 9, (1, kk), (1, 1)))
    for s, ex in ((8, "NPU"), (9, "CPU")):
        probe("%s_sh%d" % (t, s), op, "strides_h∈(0,8]", ex, pool(op, 4, 19, 5, (2, 2), (s, 1)))
        probe("%s_sw%d" % (t, s), op, "strides_w∈(0,8]", ex, pool(op, 4, 5, 19, (2, 2), (1, s)))
    # pad 7 / 8: ONNX wants pad < kernel and kernel_h∈(0,7], so the outside side (pad 8) cannot be written alone
    probe("%s_pad_top3" % t, op, "pad_top∈[0,7]", "NPU", pool(op, 4, 8, 8, (7, 7), (1, 1), (3, 0, 0, 0),
                                                                 **({"count_include_pad": 1} if op == "AveragePool" else {})))
    probe("%s_pad_all6" % t, op, "pad_top/left/bottom/right∈[0,7]", "NPU",
          pool(op, 4, 6, 6, (7, 7), (1, 1), (6, 6, 6, 6), **({"count_include_pad": 1} if op == "AveragePool" else {})))
    probe("%s_ceil1" % t, op, "ceil_mode: 不支持", "CPU", pool(op, 4, 7, 7, (2, 2), (2, 2), ceil_mode=1))
    probe("%s_ceil0" % t, op, "ceil_mode: 不支持", "NPU", pool(op, 4, 8, 8, (2, 2), (2, 2), ceil_mode=0))
    probe("%s_same_upper" % t, op, "auto_pad: 仅支持NOTSET", "CPU", pool(op, 4, 8, 8, (3, 3), (1, 1), auto_pad="SAME_UPPER"))
    for c, ex in ((8192, "NPU"), (8193, "CPU")):
        probe("%s_c%d" % (t, c), op, "channel∈(0,8192]", ex, pool(op, c, 2, 2, (2, 2), (2, 2)))
    for hh, ex in ((8192, "NPU"), (8193, "CPU")):
        probe("%s_h%d" % (t, hh), op, "height∈(0,8192]", ex, pool(op, 1, hh, 2, (2, 2), (2, 2)))
        probe("%s_w%d" % (t, hh), op, "width∈(0,8192]", ex, pool(op, 1, 2, hh, (2, 2), (2, 2)))
probe("maxpool_storage1", "MaxPool", "storage_order: 0", "CPU", pool("MaxPool", 4, 8, 8, (2, 2), (2, 2), storage_order=1))
probe("averagepool_cip1", "AveragePool", "count_include_pad: 1", "NPU",
      pool("AveragePool", 4, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), count_include_pad=1))

for op in ("GlobalMaxPool", "GlobalAveragePool"):
    t = op.lower()
    for hw, ex in ((7, "NPU"), (8, "CPU")):
        probe("%s_h%d" % (t, hw), op, "height∈(0,7]", ex, pool(op, 4, hw, 3))
        probe("%s_w%d" % (t, hw), op, "width∈(0,7]", ex, pool(op, 4, 3, hw))
    for c, ex in ((8192, "NPU"), (8193, "CPU")):
        probe("%s_c%d" % (t, c), op, "channel∈(0,8192]", ex, pool(op, c, 2, 2))
# RK3566/RK3568 GlobalMaxPool: "height∈(1,7]" / "width∈(1,7]" (RK3588: (0,7]); the seed wins.
probe("globalmaxpool_h1", "GlobalMaxPool", "RK3566 height∈(1,7], RK3588 height∈(0,7]",
      {"RK3588": "NPU", "RK3566_RK3568": "CPU"}, pool("GlobalMaxPool", 4, 1, 3))
probe("globalmaxpool_h2", "GlobalMaxPool", "RK3566 height∈(1,7]", "NPU", pool("GlobalMaxPool", 4, 2, 3))


# -- Resize (3.1.53 / 3.2.54) --------------------------------------------------------------------------
def resize(shape, scales=None, sizes=None, **attrs):
    def b(g):
        x = g.input("x", shape)
        ins = [x, ""]
        if scales is not None:
            ins.append(g.init("scales", np.array(scales, np.float32)))
        else:
            ins += ["", g.init("sizes", np.array(sizes, np.int64))]
        return g.node("Resize", ins, ["rs_y"], name="probe", **attrs)
    return b


RS = "Resize"
RQ = "仅支持宽高方向的整数倍缩放,且缩放倍数为2-8的整数倍"
for f in (2, 3, 8):
    probe("resize_nearest_x%d" % f, RS, RQ, "NPU", resize((1, 4, 3, 3), [1, 1, f, f], mode="nearest"))
    probe("resize_linear_x%d" % f, RS, RQ, "NPU", resize((1, 4, 3, 3), [1, 1, f, f], mode="linear"))
probe("resize_nearest_h2w4", RS, RQ, "NPU", resize((1, 4, 3, 3), [1, 1, 2, 4], mode="nearest"))
for f in (9, 1.5, 0.5):
    probe("resize_nearest_x%s" % str(f).replace(".", "p"), RS, RQ, "CPU", resize((1, 4, 4, 4), [1, 1, f, f], mode="nearest"))
probe("resize_nearest_c2", RS, RQ + " (宽高方向)", "CPU", resize((1, 4, 3, 3), [1, 2, 2, 2], mode="nearest"))
probe("resize_sizes_x2", RS, RQ, "NPU", resize((1, 4, 3, 5), sizes=[1, 4, 6, 10], mode="nearest"))
probe("resize_sizes_x1p5", RS, RQ, "CPU", resize((1, 4, 4, 4), sizes=[1, 4, 6, 6], mode="nearest"))
probe("resize_1c11_any", RS, "如果是(1,c,1,1)则支持放大到(1,c,h,w)", "NPU", resize((1, 4, 1, 1), sizes=[1, 4, 13, 7], mode="nearest"))
probe("resize_1c11_scales13", RS, "如果是(1,c,1,1)则支持放大到(1,c,h,w)", "NPU", resize((1, 4, 1, 1), [1, 1, 13, 7], mode="nearest"))
probe("resize_1c11_linear", RS, "如果是(1,c,1,1)则支持放大到(1,c,h,w)", "NPU", resize((1, 4, 1, 1), sizes=[1, 4, 9, 9], mode="linear"))
probe("resize_2c11_x9", RS, "缩放倍数为2-8 (9 outside; (1,4,2,1) is not (1,c,1,1))", "CPU", resize((1, 4, 2, 1), [1, 1, 9, 9], mode="nearest"))
probe("resize_cubic", RS, "mode: 目前仅支持nearest和linear两种", "CPU", resize((1, 4, 3, 3), [1, 1, 2, 2], mode="cubic"))
# (tf_crop_and_resize is not probed: it needs roi, which is "目前暂不支持" anyway)
for cm, ex in (("half_pixel", "NPU"), ("pytorch_half_pixel", "NPU"), ("align_corners", "NPU"), ("asymmetric", "CPU")):
    probe("resize_linear_%s" % cm, RS, "coordinate_transformation_mode: 目前仅支持half_pixel,pytorch_half_pixel,align_corners",
          ex, resize((1, 4, 3, 3), [1, 1, 2, 2], mode="linear", coordinate_transformation_mode=cm))
probe("resize_nearest_mode_floor", RS, "nearest_mode: 目前不支持设置", "CPU",
      resize((1, 4, 3, 3), [1, 1, 2, 2], mode="nearest", nearest_mode="floor"))
probe("resize_cubic_coeff", RS, "cubic_coeff_a: 目前不支持设置", "CPU",
      resize((1, 4, 3, 3), [1, 1, 2, 2], mode="linear", cubic_coeff_a=-0.5))
probe("resize_exclude_outside", RS, "exclude_outside: 目前不支持设置", "CPU",
      resize((1, 4, 3, 3), [1, 1, 2, 2], mode="linear", exclude_outside=1))


# -- Concat / Split / Gather / Slice -------------------------------------------------------------------
def concat(axis, rank=4):
    def b(g):
        sh = (1, 4, 3, 5) if rank == 4 else (1, 4, 3, 5, 2)
        a, c = g.input("a", sh), g.input("c", sh)
        return g.node("Concat", [a, c], ["cc_y"], name="probe", axis=axis)
    return b


for ax in (0, 1, 2, 3, -1):
    probe("concat_axis%s" % str(ax).replace("-", "m"), "Concat", "axis∈{0,1,2,3}", "NPU", concat(ax))


def gather(shape, idx, axis):
    def b(g):
        x = g.input("x", shape)
        return g.node("Gather", [x, g.init("idx", np.array(idx, np.int64))], ["g_y"], name="probe", axis=axis)
    return b


for ax in (0, 1, 2, 3):
    probe("gather_axis%d" % ax, "Gather", "axis∈{0,1,2,3}; Indices 秩rank=1", "NPU", gather((2, 4, 3, 5), [1, 0], ax))
probe("gather_axis_m1", "Gather", "axis∈{0,1,2,3} (-1 = 3)", "NPU", gather((1, 4, 3, 5), [1, 0], -1))
probe("gather_idx_rank2", "Gather", "Indices: 秩rank=1", "CPU", gather((1, 4, 3, 5), [[1, 0], [2, 3]], 1))
probe("gather_idx_rank0", "Gather", "Indices: 秩rank=1", "CPU", gather((1, 4, 3, 5), 1, 1))


def slice_(shape, starts, ends, axes, steps):
    def b(g):
        x = g.input("x", shape)
        ins = [x] + [g.init(n, np.array(v, np.int64)) for n, v in (("st", starts), ("en", ends), ("ax", axes), ("sp", steps))]
        return g.node("Slice", ins, ["sl_y"], name="probe")
    return b


SQ = "当height*width==1&&...时,steps可以不为1，否则只有steps==[1,1,1,1]时，才可通过NPU运行"
probe("slice_step1_w", "Slice", SQ, "NPU", slice_((1, 4, 3, 8), [1], [7], [3], [1]))
probe("slice_step1_multi", "Slice", "axes: 支持任意0~3轴，支持同时多轴选择", "NPU", slice_((1, 8, 6, 8), [0, 1, 2], [4, 5, 7], [1, 2, 3], [1, 1, 1]))
probe("slice_step2_w", "Slice", SQ, "CPU", slice_((1, 4, 3, 8), [0], [8], [3], [2]))
probe("slice_step2_h", "Slice", SQ, "CPU", slice_((1, 4, 6, 3), [0], [6], [2], [2]))


def split(axis, parts):
    def b(g):
        x = g.input("x", (1, 4, 6, 8))
        outs = ["sp%d" % i for i in range(len(parts))]
        g.node("Split", [x, g.init("split", np.array(parts, np.int64))], outs, name="probe", axis=axis)
        return g.node("Concat", outs, ["sp_cat"], axis=axis)
    return b


for ax, parts in ((1, [2, 2]), (2, [2, 4]), (3, [3, 5])):
    probe("split_axis%d" % ax, "Split", "axis∈{0,1,2,3}", "NPU", split(ax, parts))


# -- Softmax (3.2.56; RK3566/RK3568: no Softmax heading) / Hardmax (3.2.37) ----------------------------
def unary(op, shape=(1, 4, 3, 5), extra=(), **attrs):
    def b(g):
        x = g.input("x", shape)
        return g.node(op, [x] + [g.init(n, v) for n, v in extra], ["u_y"], name="probe", **attrs)
    return b


for ax, ex in ((1, "NPU"), (3, "NPU"), (-1, "NPU")):
    probe("softmax_axis%d" % ax, "Softmax", "axis: 仅支持1,3", {"RK3588": ex, "RK3566_RK3568": "CPU"}, unary("Softmax", axis=ax))
probe("softmax_axis2", "Softmax", "axis: 做softmax的轴:1,3，即channel和width方向", "CPU", unary("Softmax", axis=2))
probe("softmax_axis0", "Softmax", "axis: 做softmax的轴:1,3", "CPU", unary("Softmax", axis=0))
probe("hardmax_axis1_hw16383", "Hardmax", "axis=1,height*width<16384", {"RK3588": "NPU", "RK3566_RK3568": "CPU"},
      unary("Hardmax", (1, 4, 1, 16383), axis=1), qdq=(False,))
probe("hardmax_axis1_hw16384", "Hardmax", "axis=1,height*width<16384", "CPU", unary("Hardmax", (1, 4, 1, 16384), axis=1), qdq=(False,))
probe("hardmax_axis3_ch16384", "Hardmax", "axis=3/-1,channel*height<16384", "CPU", unary("Hardmax", (1, 128, 128, 2), axis=3),
      qdq=(False,))


# -- Pad (3.1.42 / 3.2.43) -----------------------------------------------------------------------------
def pad(shape, pads, mode="constant"):
    def b(g):
        x = g.input("x", shape)
        return g.node("Pad", [x, g.init("pads", np.array(pads, np.int64))], ["pd_y"], name="probe", mode=mode)
    return b


probe("pad_constant", "Pad", "mode: constant 无限制", "NPU", pad((1, 4, 3, 5), [0, 0, 1, 2, 0, 0, 3, 4]))
for wd, ex in ((8176, "NPU"), (8177, "CPU")):
    probe("pad_reflect_w%d" % wd, "Pad", "reflect: width∈(0,8176]", ex, pad((1, 1, 2, wd), [0, 0, 0, 1, 0, 0, 0, 1], "reflect"))
for hh, ex in ((8192, "NPU"), (8193, "CPU")):
    probe("pad_reflect_h%d" % hh, "Pad", "reflect: height∈(0,8192]", ex, pad((1, 1, hh, 2), [0, 0, 1, 0, 0, 0, 1, 0], "reflect"))
    probe("pad_reflect_c%d" % hh, "Pad", "reflect: channel∈(0,8192]", ex, pad((1, hh, 2, 2), [0, 0, 1, 0, 0, 0, 1, 0], "reflect"))
probe("pad_edge", "Pad", "mode: constant / reflect", "CPU", pad((1, 4, 3, 5), [0, 0, 1, 1, 0, 0, 1, 1], "edge"))


# -- Pow (3.1.47 / 3.2.48) -----------------------------------------------------------------------------
def powp(e):
    def b(g):
        x = g.input("x", (1, 4, 3, 5))
        return g.node("Pow", [x, g.init("e", np.array([e], np.float32))], ["pw_y"], name="probe")
    return b


for e in (2, 3, 0.5, -0.5):
    probe("pow_%s" % str(e).replace(".", "p").replace("-", "m"), "Pow", "Y: 仅支持0,1,2,3,0.5,-0.5", "NPU", powp(e))
for e in (4, 1.5, -1):
    probe("pow_%s" % str(e).replace(".", "p").replace("-", "m"), "Pow", "Y: 仅支持0,1,2,3,0.5,-0.5", "CPU", powp(e))


# -- activations with fixed parameters ----------------------------------------------------------------
probe("prelu_scalar", "PRelu", "slope: 单个标量或per-channel", "NPU",
      unary("PRelu", extra=(("slope", np.array([0.25], np.float32)),)))
probe("prelu_channel", "PRelu", "slope: 单个标量或per-channel", "NPU",
      unary("PRelu", extra=(("slope", np.full((4, 1, 1), 0.25, np.float32)),)))
probe("prelu_chw", "PRelu", "slope: 单个标量或per-channel", "CPU",
      unary("PRelu", extra=(("slope", np.full((4, 3, 5), 0.25, np.float32)),)))
probe("hardsigmoid_std", "HardSigmoid", "alpha=1/6, beta=0.5", "NPU", unary("HardSigmoid", alpha=1 / 6, beta=0.5))
probe("hardsigmoid_onnx_default", "HardSigmoid", "alpha=1/6, beta=0.5 (ONNX default alpha 0.2)", "CPU", unary("HardSigmoid"))
probe("elu_alpha1", "Elu", "alpha=1", "NPU", unary("Elu", alpha=1.0))
probe("elu_alpha0p5", "Elu", "alpha=1", "CPU", unary("Elu", alpha=0.5))
probe("leakyrelu", "LeakyRelu", "LeakyRelu (4-D)", "NPU", unary("LeakyRelu", alpha=0.1))
probe("sigmoid", "Sigmoid", "Sigmoid (4-D)", "NPU", unary("Sigmoid"))


# -- Transpose (3.1.58 / 3.2.62) -----------------------------------------------------------------------
def transpose(shape, perm):
    return unary("Transpose", shape, perm=list(perm))


# RK3566: besides the identity, only [2,1,0,3],[2,1,3,0],[3,1,0,2],[3,1,2,0]; every other perm "不支持".
for perm in ([0, 2, 3, 1], [0, 1, 3, 2], [0, 3, 1, 2], [1, 0, 2, 3]):
    probe("transpose_%s_rk3566" % "".join(map(str, perm)), "Transpose", "RK3566: 其他perm 不支持; RK3588: 支持",
          {"RK3588": "NPU", "RK3566_RK3568": "CPU"},
          transpose((1, 16, 16, 16), perm))
# RK3588 [0,2,3,1] T1 (int8): c1<8192, h1*w1%8==0, w1*c1<16p (p = 8192).
probe("transpose_0231_c8191", "Transpose", "[0,2,3,1]: c1<8192, h1*w1%8=0", {"RK3588": "NPU", "RK3566_RK3568": "CPU"},
      transpose((1, 8191, 1, 8), [0, 2, 3, 1]))
probe("transpose_0231_c8192", "Transpose", "[0,2,3,1]: c1<8192", "CPU", transpose((1, 8192, 1, 8), [0, 2, 3, 1]))
probe("transpose_0231_hw12", "Transpose", "[0,2,3,1]: h1*w1%8=0", "CPU", transpose((1, 16, 3, 4), [0, 2, 3, 1]))


# -- elementwise broadcast (Add 3.x.1, Mul, Sub, Max, Min: "广播约束同Expand") --------------------------
def binary(op, sa, sb):
    def b(g):
        a, c = g.input("a", sa), g.input("c", sb)
        return g.node(op, [a, c], ["bin_y"], name="probe")
    return b


EXP = "广播约束同Expand: [b,c,1,w],[b,1,1,w],[b,c,h,1],[b,1,h,1],[b,c,1,1] -> [b,c,h,w]"
FULL = (1, 4, 6, 8)
PATTERNS = {"same": (FULL, "NPU"), "bc1w": ((1, 4, 1, 8), "NPU"), "b11w": ((1, 1, 1, 8), "NPU"),
            "bch1": ((1, 4, 6, 1), "NPU"), "b1h1": ((1, 1, 6, 1), "NPU"), "bc11": ((1, 4, 1, 1), "NPU"),
            "b1hw": ((1, 1, 6, 8), "CPU"), "b111": ((1, 1, 1, 1), "CPU")}
for op in ("Add", "Mul", "Max", "Min"):
    for pat, (sb, ex) in PATTERNS.items():
        if pat == "b111":
            continue  # a [1,1,1,1] operand is a scalar broadcast: not decided by the listed patterns
        probe("%s_%s" % (op.lower(), pat), op, EXP, ex, binary(op, FULL, sb))
for pat, ex in (("same", "NPU"), ("bc11", "NPU"), ("bc1w", "CPU"), ("b1hw", "CPU")):
    probe("sub_%s" % pat, "Sub", "广播: 仅支持[b,c,1,1]或[scalar]", ex, binary("Sub", FULL, PATTERNS[pat][0]))
probe("div_same", "Div", "T1: float16", {"RK3588": "NPU", "RK3566_RK3568": "NPU"}, binary("Div", FULL, FULL), qdq=(False,))


# -- GRU (3.1.35 / 3.2.35): float16 only; batch_size∈(0,8192], "大于1时仅支持4的倍数" ---------------------
def gru(batch, hidden=8, inp=8, seq=3, direction="forward"):
    def b(g):
        nd = 2 if direction == "bidirectional" else 1
        x = g.input("x", (seq, batch, inp))
        w = g.init("W", (g.rng.standard_normal((nd, 3 * hidden, inp)) * 0.1).astype(np.float32))
        r = g.init("R", (g.rng.standard_normal((nd, 3 * hidden, hidden)) * 0.1).astype(np.float32))
        return g.node("GRU", [x, w, r], ["gru_y"], name="probe", hidden_size=hidden, direction=direction)
    return b


for bt, ex in ((1, "NPU"), (2, "CPU"), (4, "NPU"), (6, "CPU"), (8, "NPU")):
    probe("gru_batch%d" % bt, "GRU", "batch_size∈(0,8192],大于1时仅支持4的倍数", ex, gru(bt), qdq=(False,))
probe("gru_bidirectional", "GRU", "num_directions: forward/reverse/bidirectional", "NPU", gru(1, direction="bidirectional"),
      qdq=(False,))


# RK3566/RK3568 perm=[3,1,0,2]/[3,1,2,0]: "c1<8192,n<8192,h1*w1<8192,(h1=w1=1,n1%4=0)or(n1=h1=1,w1%4=0)";
# [2,1,0,3]/[2,1,3,0] read "(n1=h1=1,h1%4=0)" for the second case (h1=1 and h1%4=0 cannot both hold: only the
# first case is probed). RK3588 (3.2.62) allows these shapes ([3,1,0,2]: h1*w1<p, c1*w1<8192, n1*h1<p).
T66 = "RK3566: (h1=w1=1,n1%4=0)or(n1=h1=1,w1%4=0)"
for perm in ([3, 1, 0, 2], [3, 1, 2, 0]):
    tag = "".join(map(str, perm))
    probe("transpose_%s_n4" % tag, "Transpose", T66, "NPU", transpose((4, 8, 1, 1), perm))
    probe("transpose_%s_n2" % tag, "Transpose", T66, {"RK3588": "NPU", "RK3566_RK3568": "CPU"}, transpose((2, 8, 1, 1), perm))
    probe("transpose_%s_w8" % tag, "Transpose", T66, "NPU", transpose((1, 8, 1, 8), perm))
    probe("transpose_%s_w6" % tag, "Transpose", T66, {"RK3588": "NPU", "RK3566_RK3568": "CPU"}, transpose((1, 8, 1, 6), perm))
    probe("transpose_%s_h2" % tag, "Transpose", T66, {"RK3588": "NPU", "RK3566_RK3568": "CPU"}, transpose((1, 8, 2, 8), perm))
# RK3588 [2,1,3,0] also asks "n1*w1%4=0" (T1 and T2 rows), so n1=2, w1=1 is CPU there too (first written
# as NPU on RK3588 from [2,1,0,3]'s row: npusim's verdict was the seed's).
for perm, n2_3588 in (([2, 1, 0, 3], "NPU"), ([2, 1, 3, 0], "CPU")):
    tag = "".join(map(str, perm))
    probe("transpose_%s_n4" % tag, "Transpose", T66, "NPU", transpose((4, 8, 1, 1), perm))
    probe("transpose_%s_n2" % tag, "Transpose", T66 + "; RK3588 [2,1,3,0]: n1*w1%4=0",
          {"RK3588": n2_3588, "RK3566_RK3568": "CPU"}, transpose((2, 8, 1, 1), perm))


# RK3588 (3.2.62) alignment rules, T1 = int8 (the QDQ probe), T2 = int16/float16 (the float probe, RKNN's
# float16 path): the quantity is 16 (aligned for both), 8 (T1 %16 fails, T2 %8 holds) or 4 (both fail).
# RK3566/RK3568 (3.1.58): every one of these perms is "不支持".
ALIGN = [([0, 1, 3, 2], "h1", 16, 8), ([0, 2, 3, 1], "h1*w1", 8, 8), ([0, 2, 1, 3], "h1", 16, 8),
         ([0, 3, 2, 1], "h1", 16, 8), ([1, 0, 3, 2], "h1", 16, 8), ([1, 2, 0, 3], "w1", 16, 8),
         ([1, 3, 0, 2], "w1", 16, 8), ([1, 3, 2, 0], "w1", 16, 8), ([2, 0, 1, 3], "h1*w1", 16, 8),
         ([2, 3, 1, 0], "h1*w1", 16, 8), ([3, 0, 2, 1], "n1*w1", 16, 8), ([3, 0, 1, 2], "n1*h1*w1", 16, 8),
         ([3, 2, 1, 0], "h1", 16, 8)]
for perm, qty, m1, m2 in ALIGN:
    tag = "".join(map(str, perm))
    for val in (16, 8, 4):
        # the probed quantity equals val: h1 = val, or w1 = val (h1 = 1 where h1 is a factor of it)
        shape = (1, 4, val, 2) if qty == "h1" else (1, 4, 1 if "h1" in qty else 2, val)
        for qdq, m, tt in ((True, m1, "T1"), (False, m2, "T2")):
            quote = "perm=%s %s: %s%%%d=0" % (perm, tt, qty, m)
            probe("transpose_%s_%s%d" % (tag, qty.replace("*", ""), val), "Transpose", quote,
                  {"RK3588": "NPU" if val % m == 0 else "CPU", "RK3566_RK3568": "CPU"}, transpose(shape, perm),
                  qdq=(qdq,))


# -- more limits --------------------------------------------------------------------------------------
probe("hardmax_axis3_ch12", "Hardmax", "axis=3/-1,channel*height<16384", {"RK3588": "NPU", "RK3566_RK3568": "CPU"},
      unary("Hardmax", (1, 4, 3, 16), axis=3), qdq=(False,))
probe("hardmax_axis2", "Hardmax", "axis: 1 或 3/-1", "CPU", unary("Hardmax", (1, 4, 3, 16), axis=2), qdq=(False,))
probe("dw_dilated_width16383", DW, "当dilated_kernel_h>1时,width<16383", "CPU", conv(2, 3, 16383, 2, (3, 1), group=2))
probe("dw_dilated_width16382", DW, "当dilated_kernel_h>1时,width<16383", "NPU", conv(2, 3, 16382, 2, (3, 1), group=2))
probe("convt_dilated_width16383", CT, "当dilated_kernel_h>1时,width<16383", "CPU", convt(1, 2, 16383, 1, (2, 1), (2, 1)))
probe("convt_dilated_width16382", CT, "当dilated_kernel_h>1时,width<16383", "NPU", convt(1, 2, 16382, 1, (2, 1), (2, 1)))
probe("conv_group2", CV, "group:int (无限制)", "NPU", conv(8, 6, 6, 8, (3, 3), group=2))
probe("batchnorm", "BatchNormalization", "BatchNormalization (4-D, epsilon∈(0,∞])", "NPU", lambda g: g.node(
    "BatchNormalization", [g.input("x", (1, 4, 3, 5))] + [g.init(n, np.full(4, v, np.float32)) for n, v in
                                                           (("sc", 1.5), ("bi", 0.1), ("mu", 0.2), ("va", 2.0))],
    ["bn_y"], name="probe", epsilon=1e-5))
probe("clip_0_6", "Clip/ReLU6", "将输入张量的值裁剪到[0,6]范围内", "NPU",
      unary("Clip", extra=(("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32)))))
probe("add_const_bc11", "Add", "T2: float const tensor; 广播约束同Expand", "NPU",
      lambda g: g.node("Add", [g.input("x", FULL), g.const("k", np.full((1, 4, 1, 1), 0.5, np.float32))], ["ad_y"],
                       name="probe"))
probe("mul_const_b1hw", "Mul", EXP + " ([1,1,h,w] is not one)", "CPU",
      lambda g: g.node("Mul", [g.input("x", FULL), g.const("k", np.full((1, 1, 6, 8), 0.5, np.float32))], ["mu_y"],
                       name="probe"))


# explicit pads written by auto_pad: Convolution has no auto_pad entry, so the pads it implies are checked
def conv_auto(k, h, w, auto_pad, stride=1):
    def b(g):
        x = g.input("x", (1, 4, h, w))
        return g.node("Conv", [x, g.weight("w", (4, 4, k, k)), g.bias("b", 4)], ["conv_y"], name="probe",
                      kernel_shape=[k, k], strides=[stride, stride], auto_pad=auto_pad)
    return b


probe("conv_same_upper_k3", CV, "pads_*∈[0,15] (auto_pad SAME_UPPER, pads 1)", "NPU", conv_auto(3, 8, 8, "SAME_UPPER"))
probe("conv_same_upper_k31", CV, "pads_*∈[0,15] (auto_pad SAME_UPPER, pads 15)", "NPU", conv_auto(31, 32, 32, "SAME_UPPER"))
probe("conv_valid_k5", CV, "pads_*∈[0,15] (auto_pad VALID)", "NPU", conv_auto(5, 8, 8, "VALID"))


# rank: every table writes its tensors "shape:[batch,channel,height,width]" (4-D); a 5-D tensor is outside.
# (Ranks below 4 are not probed: the seed does not say whether they count as [1,...] padded 4-D tensors.)
probe("relu_rank5", "Relu", "shape:[batch,channel,height,width]", "CPU", unary("Relu", (1, 2, 4, 3, 5)))
probe("sigmoid_rank5", "Sigmoid", "shape:[batch,channel,height,width]", "CPU", unary("Sigmoid", (1, 2, 4, 3, 5)))
probe("concat_rank5", "Concat", "shape:[batch,channel,height,width]; axis∈{0,1,2,3}", "CPU", concat(1, rank=5))
probe("add_rank5", "Add", "A,B shape:[batch,channel,height,width]", "CPU", binary("Add", (1, 2, 4, 3, 5), (1, 2, 4, 3, 5)))
probe("maxpool_rank5", "MaxPool", "shape:[batch,channel,height,width]", "CPU",
      lambda g: g.node("MaxPool", [g.input("x", (1, 2, 4, 4, 4))], ["mp_y"], name="probe", kernel_shape=[2, 2, 2],
                       strides=[2, 2, 2]))


# -- Expand (3.1.34 / 3.2.34) and Where (3.1.70 / 3.2.74: "广播约束同Expand") ------------------------------
def expand(src, dst):
    def b(g):
        x = g.input("x", src)
        return g.node("Expand", [x, g.init("shape", np.array(dst, np.int64))], ["ex_y"], name="probe")
    return b


for pat, (sb, ex) in PATTERNS.items():
    if pat in ("same", "b111"):
        continue
    probe("expand_%s" % pat, "Expand", EXP, ex, expand(sb, FULL))


def where(sy):
    def b(g):
        x, y = g.input("x", FULL), g.input("yy", sy)
        cond = g.init("cond", (np.arange(np.prod(FULL)) % 3 == 0).reshape(FULL))
        return g.node("Where", [cond, x, y], ["wh_y"], name="probe")
    return b


for pat in ("same", "bc11", "b1h1", "b1hw"):
    probe("where_%s" % pat, "Where", "x,y: " + EXP, PATTERNS[pat][1], where(PATTERNS[pat][0]))


# -- Div (3.1.33 / 3.2.33): "T1:float16(Tensor)" - an int8 (QDQ) Div of two activations is not in the table --
probe("div_same_int8", "Div", "T1: float16", "CPU", binary("Div", FULL, FULL), qdq=(True,))


# -- LSTM (3.1.37 / 3.2.38): input_forget 0; batch_size "大于1时仅支持4的倍数" --------------------------------
def lstm(batch, hidden=8, inp=8, seq=3, **attrs):
    def b(g):
        x = g.input("x", (seq, batch, inp))
        w = g.init("W", (g.rng.standard_normal((1, 4 * hidden, inp)) * 0.1).astype(np.float32))
        r = g.init("R", (g.rng.standard_normal((1, 4 * hidden, hidden)) * 0.1).astype(np.float32))
        return g.node("LSTM", [x, w, r], ["lstm_y"], name="probe", hidden_size=hidden, **attrs)
    return b


probe("lstm_batch1", "LSTM", "batch_size∈(0,8192]", "NPU", lstm(1), qdq=(False,))
probe("lstm_batch4", "LSTM", "batch_size 大于1时仅支持4的倍数", "NPU", lstm(4), qdq=(False,))
probe("lstm_batch3", "LSTM", "batch_size 大于1时仅支持4的倍数", "CPU", lstm(3), qdq=(False,))
probe("lstm_input_forget1", "LSTM", "input_forget: 0", "CPU", lstm(1, input_forget=1), qdq=(False,))


def run_check(npusim, plat, path):
    r = subprocess.run([npusim, "check", "--platform", plat, path, "--json"], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:] or ["exit %d" % r.returncode]}


def node_verdict(rep, name="probe"):
    nodes = {n["name"]: n for n in rep.get("nodes", [])}
    n = nodes.get(name)
    seen = 0
    while n is not None and n["verdict"] == "fused" and n.get("fused_into") and seen < 8:
        n, seen = nodes.get(n["fused_into"]), seen + 1
    if n is None:
        return None, ""
    why = "; ".join(v.get("text", v.get("rule", "")) if isinstance(v, dict) else str(v) for v in n.get("violations", []))
    return n["verdict"], why or n.get("reason", "")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    npusim = sys.argv[1]
    if "--list" in sys.argv:
        for name, op, quote, expect, _, qdq in PROBES:
            print(name, op, quote, expect, qdq)
        return 0
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    tmp = keep or tempfile.mkdtemp(prefix="seedprobe_")
    os.makedirs(tmp, exist_ok=True)
    stats = {p: [0, 0, []] for p in PLATFORMS}
    jobs = []
    for name, op, quote, expect, build, qdqs in PROBES:
        for qdq in qdqs:
            for signed in ((False, True) if qdq else (False,)):  # QDQ: uint8 and int8 activations
                g = Graph(qdq, signed)
                m = g.finish(build(g))
                kind = ("qdq_s8" if signed else "qdq") if qdq else "float"
                path = os.path.join(tmp, "%s_%s.onnx" % (name, kind))
                onnx.save(m, path)
                jobs += [(name, op, quote, kind, path, plat, want) for plat, want in expect.items()]

    def verdict(rep):
        if "error" in rep:
            return "error", " ".join(rep["error"])
        v, why = node_verdict(rep)
        return {"NPU": "NPU", "CPU fallback": "CPU", "unsupported": "CPU"}.get(v, str(v)), why

    def chunk(batch):
        """One `npusim check` over several models (a JSON list); one by one when a model fails to load."""
        plat, paths = batch
        r = subprocess.run([npusim, "check", "--platform", plat, "--json"] + paths, capture_output=True, text=True,
                           timeout=300)
        try:
            reps = json.loads(r.stdout)
            if isinstance(reps, dict):
                reps = [reps]
            by = {rp["model"]: rp for rp in reps}
            if len(by) == len(paths):
                return {(plat, pth): verdict(by[pth]) for pth in paths}
        except (json.JSONDecodeError, KeyError, TypeError):
            pass
        return {(plat, pth): verdict(run_check(npusim, plat, pth)) for pth in paths}

    batches = []
    for plat in PLATFORMS:
        paths = sorted({j[4] for j in jobs if j[5] == plat})
        batches += [(plat, paths[i:i + 40]) for i in range(0, len(paths), 40)]
    got_by = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool_:
        for d in pool_.map(chunk, batches):
            got_by.update(d)
    results = [got_by[(j[5], j[4])] for j in jobs]
    for (name, op, quote, qdq, path, plat, want), (got, why) in zip(jobs, results):
        st = stats[plat]
        st[0] += 1
        if got == want:
            st[1] += 1
        else:
            st[2].append("%s %s [%s, %s \"%s\"]: expected %s, got %s (%s)" % (
                name, qdq, section(op, plat), op, quote, want, got, why))
    if not keep:
        for path in sorted({j[4] for j in jobs}):
            os.remove(path)
    ok = True
    for plat, (n, right, wrong) in stats.items():
        print("%-14s probes %4d  right %4d  wrong %3d  %.1f %% right" % (plat, n, right, len(wrong), 100.0 * right / max(n, 1)))
        for w in wrong:
            print("   WRONG " + w)
        ok &= not wrong
    if not keep:
        os.rmdir(tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
