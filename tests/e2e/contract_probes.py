#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One-operator probe models for the lowering contract (drivers/compiler/rknpu/COMPILER.md, "Operator contract").

Each probe is a small graph in the form onnxruntime's quantize_static (QDQ format, uint8 activations,
per-channel int8 weights, int32 biases) writes it: the graph input -> QuantizeLinear ->
DequantizeLinear -> the operator (name "probe"; fused forms: the conv "probe" and its activation) ->
QuantizeLinear -> DequantizeLinear -> graph output. Calibration ranges are the float values of a
seeded random input run through numpy, so scales and zero points are those quantize_static's MinMax
calibration would give for that input. Second activation inputs (two-tensor eltwise) are graph
inputs of their own shape; constants (a scalar, a [1,C,1,1] operand) are float initializers behind
their own Q/DQ as quantize_static writes them.
    PROBES[name]() -> onnx.ModelProto
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
C, H, W = 32, 8, 12


class Probe:
    def __init__(self, seed=11):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.inputs, self.vals = [], [], [], {}
        self.k = 0

    def init(self, name, a):
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(self, op, ins, outs, name=None, domain=None, **attrs):
        self.k += 1
        kw = {"domain": domain} if domain else {}
        self.nodes.append(helper.make_node(op, ins, outs, name=name or "%s_%d" % (op.lower(), self.k), **kw, **attrs))
        return outs[0]

    def qparams(self, v):
        lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
        s = np.float32(max(hi - lo, 1e-3) / 255.0)
        return s, int(np.clip(np.round(-lo / s), 0, 255))

    def qdq(self, x, v, tag):
        """QuantizeLinear -> DequantizeLinear of tensor x (float values v); returns the DQ output."""
        s, z = self.qparams(v)
        self.init(tag + "_s", np.array(s, np.float32))
        self.init(tag + "_z", np.array(z, np.uint8))
        self.node("QuantizeLinear", [x, tag + "_s", tag + "_z"], [tag + "_q"])
        self.vals[tag + "_dq"] = v
        return self.node("DequantizeLinear", [tag + "_q", tag + "_s", tag + "_z"], [tag + "_dq"])

    def input(self, name, shape, lo=-1.0, hi=1.0):
        v = self.rng.uniform(lo, hi, shape).astype(np.float32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        return self.qdq(name, v, name)

    def const(self, name, v):
        """A float constant behind Q/DQ (quantize_static quantizes constant activations' inputs)."""
        v = np.asarray(v, np.float32)
        self.init(name, v)
        return self.qdq(name, v, name + "c")

    def weight_const(self, name, v):
        """A constant input of Add / Mul as quantize_static writes an initializer input with its default
        types: a weight, int8 symmetric per tensor, behind its DequantizeLinear (uint8 activations:
        onnxruntime runs the unit in float)."""
        v = np.asarray(v, np.float32)
        s = np.float32(max(float(np.abs(v).max()), 1e-8) / 127.0)
        self.init(name + "_wq", np.clip(np.round(v / s), -127, 127).astype(np.int8))
        self.init(name + "_ws", np.array(s, np.float32))
        self.init(name + "_wz", np.array(0, np.int8))
        self.vals[name + "_w"] = (np.clip(np.round(v / s), -127, 127) * s).astype(np.float32)
        return self.node("DequantizeLinear", [name + "_wq", name + "_ws", name + "_wz"], [name + "_w"])

    def weights(self, name, w, axis=0):
        """Per-channel symmetric int8 weights along `axis` (Conv 0, ConvTranspose 1)."""
        wm = np.moveaxis(w, axis, 0)
        amax = np.maximum(np.abs(wm).reshape(wm.shape[0], -1).max(axis=1), 1e-8)
        ws = (amax / 127.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / ws.reshape(shape)), -127, 127).astype(np.int8)
        self.init(name + "_wq", wq)
        self.init(name + "_ws", ws)
        self.init(name + "_wz", np.zeros(ws.shape, np.int8))
        self.node("DequantizeLinear", [name + "_wq", name + "_ws", name + "_wz"], [name + "_w"], axis=axis)
        return name + "_w", ws

    def bias(self, name, b, bs):
        self.init(name + "_bq", np.round(b / bs).astype(np.int32))
        self.init(name + "_bs", bs.astype(np.float32))
        self.init(name + "_bz", np.zeros(bs.shape, np.int32))
        self.node("DequantizeLinear", [name + "_bq", name + "_bs", name + "_bz"], [name + "_b"], axis=0)
        return name + "_b"

    def output(self, x, v, same_as=None):
        """The output Q/DQ; `same_as` (a DQ output) shares its parameters, as quantize_static gives the
        data-movement ops it quantizes directly (MaxPool, Resize, Slice, Transpose, Reshape, ...)."""
        if same_as is not None:
            base = same_as[:-3]
            self.node("QuantizeLinear", [x, base + "_s", base + "_z"], ["y_q"])
            self.node("DequantizeLinear", ["y_q", base + "_s", base + "_z"], ["output"])
            y = "output"
        else:
            y = self.qdq(x, v, "y")
        self.nodes[-1].output[0] = "output"
        outs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, list(v.shape))]
        g = helper.make_graph(self.nodes, "probe", self.inputs, outs, self.inits)
        m = helper.make_model(g, producer_name="npusim-contract", producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 7
        del y
        return m


# numpy reference of the float ops, for calibration ranges only ---------------------------------
def np_conv(x, w, b, stride=1, pad=0, dilation=1, group=1):
    m, cg, kh, kw = w.shape
    if dilation > 1:
        wd = np.zeros((m, cg, (kh - 1) * dilation + 1, (kw - 1) * dilation + 1), np.float32)
        wd[:, :, ::dilation, ::dilation] = w
        w, kh, kw = wd, wd.shape[2], wd.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (xp.shape[2] - kh) // stride + 1, (xp.shape[3] - kw) // stride + 1
    y = np.zeros((1, m, oh, ow), np.float32)
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(kh):
            for j in range(kw):
                patch = xp[0, g * cg:(g + 1) * cg, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[0, o] += np.tensordot(w[o, :, i, j], patch, axes=(0, 0))
    return y + b.reshape(1, -1, 1, 1)


def conv_probe(act=None, dilation=1, depthwise=False, k=3, add=False, transpose=False, tpad=0):
    p = Probe()
    x = p.input("x", (1, C, H, W))
    cout = C
    group = C if depthwise else 1
    w = (p.rng.standard_normal((cout, 1 if depthwise else C, k, k)) * 0.2).astype(np.float32)
    b = (p.rng.standard_normal(cout) * 0.1).astype(np.float32)
    if transpose:
        wt = (p.rng.standard_normal((C, cout, 2, 2)) * 0.2).astype(np.float32)
        wn, ws = p.weights("ct", wt, axis=1)
        xs = p.qparams(p.vals[x])[0]
        bn = p.bias("ct", b, ws * xs)
        v = np.zeros((1, cout, 2 * H, 2 * W), np.float32)
        for i in range(2):
            for j in range(2):
                v[0, :, i::2, j::2] = np.tensordot(wt[:, :, i, j], p.vals[x][0], axes=(0, 0))
        v = v[:, :, :2 * H - tpad, :2 * W - tpad] + b.reshape(1, -1, 1, 1)
        y = p.node("ConvTranspose", [x, wn, bn], ["ct_f"], name="probe", kernel_shape=[2, 2], strides=[2, 2],
                   pads=[0, 0, tpad, tpad])
    else:
        wn, ws = p.weights("cv", w)
        xs = p.qparams(p.vals[x])[0]
        bn = p.bias("cv", b, ws * xs)
        pad = k // 2 * dilation
        v = np_conv(p.vals[x], w, b, 1, pad, dilation, group)
        attrs = dict(kernel_shape=[k, k], pads=[pad] * 4, group=group)
        if dilation > 1:
            attrs["dilations"] = [dilation, dilation]
        y = p.node("Conv", [x, wn, bn], ["cv_f"], name="probe", **attrs)
    if add:
        y = p.qdq(y, v, "cv_out")
        o = p.input("o", v.shape)
        v = v + p.vals[o]
        y = p.node("Add", [y, o], ["add_f"], name="probe_add")
    y, v = activation(p, y, v, act)
    return p.output(y, v)


def activation(p, y, v, act):
    """Appends the float activation `act` (onnxruntime fuses it into the op's output Q)."""
    if act is None:
        return y, v
    if act not in ("Relu", "Clip", "LeakyRelu", "PRelu", "Swish"):  # these fuse into the op's output Q
        y = p.qdq(y, v, "pre")
    f = {"Relu": lambda t: np.maximum(t, 0), "Clip": lambda t: np.clip(t, 0, 6),
         "LeakyRelu": lambda t: np.where(t > 0, t, 0.1 * t), "Sigmoid": lambda t: 1 / (1 + np.exp(-t)),
         "Tanh": np.tanh, "Softplus": lambda t: np.log1p(np.exp(t)), "Elu": lambda t: np.where(t > 0, t, np.expm1(t)),
         "HardSigmoid": lambda t: np.clip(t / 6 + 0.5, 0, 1), "HardSwish": lambda t: t * np.clip(t / 6 + 0.5, 0, 1),
         "PRelu": lambda t: np.where(t > 0, t, 0.25 * t)}
    if act == "Clip":
        ins = [y, p.init("clip_lo", np.array(0, np.float32)), p.init("clip_hi", np.array(6, np.float32))]
        return p.node("Clip", ins, ["act_f"], name="probe_act"), f[act](v)
    if act == "PRelu":
        ins = [y, p.init("slope", np.full((C, 1, 1), 0.25, np.float32))]
        return p.node("PRelu", ins, ["act_f"], name="probe_act"), f[act](v)
    if act == "Swish":  # x * sigmoid(x), each with its Q/DQ as quantize_static writes SiLU
        yq = p.qdq(y, v, "pre")
        s = p.node("Sigmoid", [yq], ["sig_f"], name="probe_sig")
        sq = p.qdq(s, 1 / (1 + np.exp(-v)), "sig")
        return p.node("Mul", [yq, sq], ["act_f"], name="probe_act"), v / (1 + np.exp(-v))
    if act == "Mish":
        sp = p.node("Softplus", [y], ["sp_f"], name="probe_sp")
        th = p.node("Tanh", [sp], ["th_f"], name="probe_th")
        return p.node("Mul", [y, th], ["act_f"], name="probe_act"), v * np.tanh(np.log1p(np.exp(v)))
    attrs = {"alpha": 0.1} if act == "LeakyRelu" else {}
    if act == "HardSigmoid":
        attrs = {"alpha": 1 / 6, "beta": 0.5}
    return p.node(act, [y], ["act_f"], name="probe_act", **attrs), f[act](v)


def unary(op, fv, shape=(1, C, H, W), extra=(), lo=-3.0, hi=3.0, same=False, **attrs):
    def build():
        p = Probe()
        x = p.input("x", shape, lo, hi)
        ins = [x] + [p.init(n, a) for n, a in extra]
        y = p.node(op, ins, ["probe_f"], name="probe", **attrs)
        return p.output(y, np.asarray(fv(p.vals[x]), np.float32), x if same else None)
    return build


def binary(op, fv, bshape, const=False, act=None):
    def build():
        p = Probe()
        a = p.input("a", (1, C, H, W))
        if const == "weight":
            b = p.weight_const("b", p.rng.uniform(0.5, 1.5, bshape))
        elif const:
            b = p.const("b", p.rng.uniform(0.5, 1.5, bshape))
        else:
            b = p.input("b", bshape)
        v = fv(p.vals[a], p.vals[b])
        y = p.node(op, [a, b], ["probe_f"], name="probe")
        y, v = activation(p, y, v, act)
        return p.output(y, v)
    return build


def ints(name, v):
    return (name, np.array(v, np.int64))


def resize(mode, coord, f=(2, 2), nearest_mode=None):
    def build():
        p = Probe()
        x = p.input("x", (1, C, H, W))
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if nearest_mode:
            attrs["nearest_mode"] = nearest_mode
        sc = p.init("scales", np.array([1, 1, f[0], f[1]], np.float32))
        y = p.node("Resize", [x, "", sc], ["probe_f"], name="probe", **attrs)
        return p.output(y, p.vals[x].repeat(f[0], 2).repeat(f[1], 3), x)
    return build


def pool(op, **attrs):
    def build():
        p = Probe()
        shape = attrs.pop("shape", (1, C, H, W))
        x = p.input("x", shape)
        y = p.node(op, [x], ["probe_f"], name="probe", **attrs)
        v = p.vals[x]
        if op.startswith("Global"):
            v = v.max(axis=(2, 3), keepdims=True) if "Max" in op else v.mean(axis=(2, 3), keepdims=True)
        else:
            k, s = attrs["kernel_shape"], attrs.get("strides", [1, 1])
            v = v[:, :, :(H - k[0]) // s[0] * s[0] + 1:s[0], :(W - k[1]) // s[1] * s[1] + 1:s[1]]
        return p.output(y, v, x if "Max" in op else None)
    return build


def concat(axis, n=2):
    def build():
        p = Probe()
        xs = [p.input("x%d" % i, (1, C, H, W)) for i in range(n)]
        y = p.node("Concat", xs, ["probe_f"], name="probe", axis=axis)
        return p.output(y, np.concatenate([p.vals[x] for x in xs], axis=axis))
    return build


def batchnorm():
    p = Probe()
    x = p.input("x", (1, C, H, W))
    prm = [p.init("bn_" + k, p.rng.uniform(0.5, 1.5, C).astype(np.float32)) for k in ("g", "b", "m", "v")]
    y = p.node("BatchNormalization", [x] + prm, ["probe_f"], name="probe", epsilon=1e-5)
    return p.output(y, p.vals[x] * 1.5 + 1.5)


def slice_probe(starts, ends, axes, steps=None):
    ex = [ints("st", starts), ints("en", ends), ints("ax", axes)] + ([ints("sp", steps)] if steps else [])

    def fv(v):
        sl = [slice(None)] * 4
        for i, a in enumerate(axes):
            sl[a] = slice(starts[i], ends[i], steps[i] if steps else 1)
        return v[tuple(sl)]
    return unary("Slice", fv, extra=ex, same=True)


def split_probe():
    p = Probe()
    x = p.input("x", (1, C, H, W))
    sz = p.init("split", np.array([16, 16], np.int64))
    p.node("Split", [x, sz], ["s0", "s1"], name="probe", axis=1)
    q0 = p.node("DequantizeLinear", [p.node("QuantizeLinear", ["s0", "x_s", "x_z"], ["s0_q"]), "x_s", "x_z"], ["s0_dq"])
    q1 = p.node("DequantizeLinear", [p.node("QuantizeLinear", ["s1", "x_s", "x_z"], ["s1_q"]), "x_s", "x_z"], ["s1_dq"])
    y = p.node("Add", [q0, q1], ["sum_f"], name="probe_sum")
    return p.output(y, p.vals[x][:, :16] + p.vals[x][:, 16:])


def matmul_two():
    p = Probe()
    a = p.input("a", (1, 1, 16, 32))
    b = p.input("b", (1, 1, 32, 24))
    y = p.node("MatMul", [a, b], ["probe_f"], name="probe")
    return p.output(y, p.vals[a] @ p.vals[b])


def channel_shuffle():
    """ShuffleNet's channel shuffle as torch.onnx exports torchvision's channel_shuffle (view, transpose(1, 2),
    view), each tensor Q -> DQ with its input's parameters (quantize_static's data movement)."""
    p = Probe()
    x = p.input("x", (1, C, H, W))
    v = p.vals[x]
    r5 = p.node("Reshape", [x, p.init("s5", np.array([1, 2, C // 2, H, W], np.int64))], ["r5"], name="probe_view")
    base = x[:-3]

    def same(t):
        p.node("QuantizeLinear", [t, base + "_s", base + "_z"], [t + "_q"])
        return p.node("DequantizeLinear", [t + "_q", base + "_s", base + "_z"], [t + "_dq"])

    t5 = p.node("Transpose", [same(r5)], ["t5"], name="probe_transpose", perm=[0, 2, 1, 3, 4])
    y = p.node("Reshape", [same(t5), p.init("s4", np.array([1, C, H, W], np.int64))], ["probe_f"], name="probe")
    return p.output(y, v.reshape(1, 2, C // 2, H, W).transpose(0, 2, 1, 3, 4).reshape(1, C, H, W), x)


def gather():
    return unary("Gather", lambda v: v[:, [0, 3, 5]], extra=[ints("idx", [0, 3, 5])], same=True, axis=1)()


def layernorm():
    def fv(v):
        m = v.mean(axis=1, keepdims=True)
        return (v - m) / np.sqrt(v.var(axis=1, keepdims=True) + 1e-5)
    return unary("LayerNormalization", fv, extra=[("ln_g", np.ones((C, 1, 1), np.float32)),
                                                 ("ln_b", np.zeros((C, 1, 1), np.float32))], axis=1)()


def where():
    p = Probe()
    a = p.input("a", (1, C, H, W))
    b = p.input("b", (1, C, H, W))
    m = p.init("mask", p.rng.uniform(0, 1, (1, C, H, W)) > 0.5)
    y = p.node("Where", [m, a, b], ["probe_f"], name="probe")
    return p.output(y, np.where(numpy_helper.to_array(p.inits[-1]), p.vals[a], p.vals[b]))


def lstm():
    p = Probe()
    seq, inp, hid = 4, 16, 8
    x = p.input("x", (seq, 1, inp))
    wr = lambda n, s: p.init(n, (p.rng.standard_normal(s) * 0.2).astype(np.float32))
    y = p.node("LSTM", [x, wr("W", (1, 4 * hid, inp)), wr("R", (1, 4 * hid, hid))], ["probe_f"], name="probe",
               hidden_size=hid)
    return p.output(y, np.zeros((seq, 1, 1, hid), np.float32) + np.linspace(-0.7, 0.7, hid, dtype=np.float32))


def gru():
    p = Probe()
    seq, inp, hid = 4, 16, 8
    x = p.input("x", (seq, 1, inp))
    wr = lambda n, s: p.init(n, (p.rng.standard_normal(s) * 0.2).astype(np.float32))
    y = p.node("GRU", [x, wr("W", (1, 3 * hid, inp)), wr("R", (1, 3 * hid, hid))], ["probe_f"], name="probe",
               hidden_size=hid)
    return p.output(y, np.zeros((seq, 1, 1, hid), np.float32) + np.linspace(-0.7, 0.7, hid, dtype=np.float32))


def gelu():
    """GELU in its erf form as PyTorch exports it (x * 0.5 * (1 + erf(x / sqrt 2))), one float region."""
    from math import erf, sqrt
    p = Probe()
    x = p.input("x", (1, C, H, W), -3.0, 3.0)
    d = p.node("Div", [x, p.init("sqrt2", np.array(sqrt(2.0), np.float32))], ["g_div"], name="probe")
    e = p.node("Erf", [d], ["g_erf"], name="probe_erf")
    a = p.node("Add", [e, p.init("one", np.array(1.0, np.float32))], ["g_add"], name="probe_add")
    m = p.node("Mul", [x, a], ["g_mul"], name="probe_mul")
    y = p.node("Mul", [m, p.init("half", np.array(0.5, np.float32))], ["g_y"], name="probe_half")
    v = p.vals[x]
    return p.output(y, (v * 0.5 * (1 + np.vectorize(erf)(v / sqrt(2.0)))).astype(np.float32))


SIG = lambda t: 1 / (1 + np.exp(-t))
BC = {"same": (1, C, H, W), "bc11": (1, C, 1, 1), "bc1w": (1, C, 1, W), "b11w": (1, 1, 1, W),
      "bch1": (1, C, H, 1), "b1h1": (1, 1, H, 1), "b1hw": (1, 1, H, W)}

PROBES = {
    "conv": lambda: conv_probe(), "conv_dilated": lambda: conv_probe(dilation=2),
    "depthwise": lambda: conv_probe(depthwise=True), "depthwise_dilated": lambda: conv_probe(depthwise=True, dilation=3),
    "conv_add": lambda: conv_probe(add=True), "conv_add_relu": lambda: conv_probe(add=True, act="Relu"),
    "convtranspose": lambda: conv_probe(transpose=True),
    "convtranspose_relu": lambda: conv_probe(transpose=True, act="Relu"),
    "batchnorm": batchnorm,
    "concat_c": concat(1), "concat_h": concat(2), "concat_w": concat(3), "concat_n": concat(0),
    "div_const": binary("Div", lambda a, b: a / b, (), const=True),
    "div_two": binary("Div", lambda a, b: a / (np.abs(b) + 1), BC["same"]),
    "expand": unary("Expand", lambda v: np.broadcast_to(v, (1, C, H, W)), shape=(1, C, 1, W),
                    extra=[ints("shape", [1, C, H, W])], same=True),
    "tile": unary("Tile", lambda v: np.tile(v, (1, 1, 2, 2)), extra=[ints("reps", [1, 1, 2, 2])], same=True),
    "gather": gather, "hardmax": unary("Hardmax", lambda v: v, axis=1),
    "lstm": lstm, "gru": gru, "gelu": gelu, "matmul_two": matmul_two, "layernorm": layernorm, "where": where,
    "pad_const": unary("Pad", lambda v: np.pad(v, ((0, 0), (0, 0), (1, 2), (2, 1))),
                       extra=[ints("pads", [0, 0, 1, 2, 0, 0, 2, 1])], same=True),
    "pad_reflect": unary("Pad", lambda v: np.pad(v, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"),
                         extra=[ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])], mode="reflect", same=True),
    "pad_edge": unary("Pad", lambda v: np.pad(v, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="edge"),
                      extra=[ints("pads", [0, 0, 1, 2, 0, 0, 2, 1])], mode="edge", same=True),
    "maxpool": pool("MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
    "averagepool": pool("AveragePool", kernel_shape=[2, 2], strides=[2, 2]),
    "globalmaxpool": pool("GlobalMaxPool", shape=(1, C, 6, 7)),
    "globalaveragepool": pool("GlobalAveragePool", shape=(1, C, 7, 7)),
    "globalaveragepool_8x8": pool("GlobalAveragePool", shape=(1, C, 8, 8)),
    "pow2": unary("Pow", np.square, extra=[("e", np.array(2.0, np.float32))]),
    "relu": unary("Relu", lambda v: np.maximum(v, 0), same=True),
    "clip": unary("Clip", lambda v: np.clip(v, 0, 6), extra=[("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32))], same=True),
    "prelu_scalar": unary("PRelu", lambda v: np.where(v > 0, v, 0.2 * v), extra=[("sl", np.array([0.2], np.float32))]),
    "prelu_channel": unary("PRelu", lambda v: np.where(v > 0, v, 0.2 * v), extra=[("sl", np.full((C, 1, 1), 0.2, np.float32))]),
    "leakyrelu": unary("LeakyRelu", lambda v: np.where(v > 0, v, 0.1 * v), alpha=0.1),
    "reshape_flat": unary("Reshape", lambda v: v.reshape(1, C), shape=(1, C, 1, 1), extra=[ints("shp", [1, C])], same=True),
    "channel_shuffle": channel_shuffle,
    "reshape_4d": unary("Reshape", lambda v: v.reshape(1, C // 2, 2 * H, W), extra=[ints("shp", [1, C // 2, 2 * H, W])], same=True),
    "resize_nearest": resize("nearest", "half_pixel"),
    "resize_nearest_asymmetric": resize("nearest", "asymmetric", nearest_mode="floor"),
    "resize_nearest_asymmetric_round": resize("nearest", "asymmetric", (3, 3), nearest_mode="round_prefer_floor"),
    "resize_bilinear": resize("linear", "half_pixel"),
    "resize_bilinear_x4": resize("linear", "half_pixel", (4, 4)),
    "resize_bilinear_align_corners": resize("linear", "align_corners"),
    "slice_c": slice_probe([16], [32], [1]), "slice_hw": slice_probe([1, 2], [H - 1, W], [2, 3]),
    "slice_step": slice_probe([0], [H], [2], [2]),
    "softmax": unary("Softmax", lambda v: np.exp(v) / np.exp(v).sum(axis=1, keepdims=True), axis=1),
    "split_c": split_probe,
    "transpose_0231": unary("Transpose", lambda v: v.transpose(0, 2, 3, 1), perm=[0, 2, 3, 1], same=True),
    "transpose_0132": unary("Transpose", lambda v: v.transpose(0, 1, 3, 2), perm=[0, 1, 3, 2], same=True),
    "sigmoid": unary("Sigmoid", SIG), "tanh": unary("Tanh", np.tanh),
    "softplus": unary("Softplus", lambda v: np.log1p(np.exp(v))),
    "hardsigmoid": unary("HardSigmoid", lambda v: np.clip(v / 6 + 0.5, 0, 1), alpha=1 / 6, beta=0.5),
    "hardswish": unary("HardSwish", lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
    "elu": unary("Elu", lambda v: np.where(v > 0, v, np.expm1(v))),
}
for _bc in ("same", "bc11", "bc1w", "b11w", "bch1", "b1h1", "b1hw"):
    PROBES["add_" + _bc] = binary("Add", np.add, BC[_bc])
    PROBES["mul_" + _bc] = binary("Mul", np.multiply, BC[_bc])
for _bc in ("same", "bc11", "bc1w"):
    PROBES["sub_" + _bc] = binary("Sub", np.subtract, BC[_bc])
    PROBES["max_" + _bc] = binary("Max", np.maximum, BC[_bc])
    PROBES["min_" + _bc] = binary("Min", np.minimum, BC[_bc])
# A [1,C,1,1] constant: int8 as a weight (quantize_static's default types; onnxruntime runs the unit
# in float) or behind Q/DQ of the activation's type (onnxruntime forms QLinearAdd / QLinearMul).
for _op, _f in (("add", np.add), ("mul", np.multiply), ("sub", np.subtract)):
    PROBES[_op + "_const_bc11"] = binary(_op.capitalize(), _f, BC["bc11"], const="weight")
    PROBES[_op + "_constq_bc11"] = binary(_op.capitalize(), _f, BC["bc11"], const=True)
PROBES["add_scalar"] = binary("Add", np.add, (), const=True)
PROBES["mul_scalar"] = binary("Mul", np.multiply, (), const=True)
PROBES["sub_scalar"] = binary("Sub", np.subtract, (), const=True)
PROBES["max_scalar"] = binary("Max", np.maximum, (), const=True)
PROBES["add_relu"] = binary("Add", np.add, BC["same"], act="Relu")
PROBES["mul_relu"] = binary("Mul", np.multiply, BC["same"], act="Relu")
for _a in ("Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Softplus", "HardSigmoid", "HardSwish", "Elu",
           "Swish", "Mish"):
    PROBES["conv_" + _a.lower()] = (lambda a: lambda: conv_probe(act=a))(_a)
    PROBES["convtranspose_" + _a.lower()] = (lambda a: lambda: conv_probe(transpose=True, act=a, tpad=1))(_a)
PROBES["convtranspose_p1"] = lambda: conv_probe(transpose=True, tpad=1)
