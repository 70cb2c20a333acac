# SPDX-License-Identifier: MIT
"""Quantized ONNX in other producers' conventions (issue 13), from the same recorded nets as the zoo.

Each emitter writes what that producer's public description says its export looks like; the
default `ort_qdq` stays make_zoo.Emitter (onnxruntime quantize_static, QDQ format).

  ort_qdq_s8     onnxruntime quantize_static QDQ, int8 activations (activation_type=QInt8): as
                 ort_qdq, zero points shifted by -128.
  ort_qoperator  onnxruntime quantize_static QOperator format (seed 002 ops): QuantizeLinear at the
                 input, QLinearConv / com.microsoft QLinearAdd, QLinearGlobalAveragePool,
                 QLinearConcat, QGemm; MaxPool, Reshape and Resize on the uint8 tensor;
                 DequantizeLinear -> BatchNormalization -> Relu -> QuantizeLinear where no
                 quantized op exists; DequantizeLinear at the output. int32 biases.
  pytorch_fx     torch.onnx export of an FX-quantized (QAT/PTQ, x86 qconfig) model: every observed
                 tensor becomes QuantizeLinear -> DequantizeLinear; activations quint8 with
                 reduce_range (scale = (max - min) / 127); weights float initializers ->
                 QuantizeLinear -> DequantizeLinear per-channel symmetric qint8
                 (scale = max|w| / 127.5, zero point 0, axis 0); biases stay float; Conv+ReLU /
                 ReLU6 fused modules export as Conv -> Relu / Clip -> Q; ops that share their input's
                 observer (max pool, adaptive avg pool, flatten, nearest upsample, cat) carry one set of
                 parameters for all their inputs and their output; nn.Linear is Gemm(transB=1);
                 torch.flatten is Flatten; nn.Upsample(nearest) is Resize asymmetric/floor.
  tensorrt       TensorRT explicit quantization as NVIDIA pytorch-quantization exports it: symmetric
                 int8 (zero point 0, scale = amax / 127), a QuantizeLinear -> DequantizeLinear pair on
                 every input of every quantized op (one pair per consumer) and none on op outputs,
                 so Conv -> Relu / Clip feed the next op's input quantizer directly; weights float
                 initializers with per-channel Q/DQ (axis 0); biases float; the network outputs float.

Deterministic: same net, same bytes."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
CONVENTIONS = ("ort_qdq", "ort_qdq_s8", "ort_qoperator", "pytorch_fx", "tensorrt")


def _range(v, relu=False):
    lo, hi = float(min(v.min(), 0.0)), float(max(v.max(), 0.0))
    if relu:
        lo = 0.0
    if hi - lo < 1e-6:
        hi = lo + 1e-3
    return lo, hi


class _Base:
    """Shared bookkeeping: nodes, initializers, unique names, the final model."""

    def __init__(self, net, suffix):
        self.net = net
        self.suffix = suffix
        self.nodes, self.inits, self.k = [], [], 0

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, domain=None, **attrs):
        self.k += 1
        self.nodes.append(helper.make_node(op, ins, outs, name="%s_n%d" % (op.lower(), self.k), domain=domain, **attrs))

    def rename(self, old, new):
        for nd in self.nodes:
            nd.output[:] = [new if o == old else o for o in nd.output]
            nd.input[:] = [new if i == old else i for i in nd.input]

    def model(self, out_names, domains=()):
        outs = []
        for i, o in enumerate(out_names):
            name = "output" if len(out_names) == 1 else "output%d" % i
            self.rename(o, name)
            outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(self.net.vals[self.net.outputs[i]].shape)))
        g = helper.make_graph(self.nodes, self.net.name + "_" + self.suffix,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(self.net.input_shape))],
                              outs, self.inits)
        ops = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in domains]
        m = helper.make_model(g, producer_name="npusim-zoo", producer_version="1", opset_imports=ops)
        m.ir_version = 7
        return m


# ----------------------------------------------------------------------------------------------
class FakeQuantEmitter(_Base):
    """pytorch_fx and tensorrt: float weights with Q/DQ, float biases, fake-quantized activations."""

    def __init__(self, net, style):
        super().__init__(net, style)
        self.style = style
        self.float_name = {"input": "input"}  # recorded activation -> float tensor name
        self.dq_of = {}  # pytorch_fx: activation -> its (shared) DequantizeLinear output
        self.groups = self._share_groups() if style == "pytorch_fx" else {}

    # -- quantization parameters ------------------------------------------------------------
    def _share_groups(self):
        """FX ops whose output shares its input's observer: union-find over their tensors; each group
        is calibrated over all its members (cat requantizes its inputs to the common parameters)."""
        parent = {}

        def find(a):
            parent.setdefault(a, a)
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for kind, ins, y, _ in self.net.ops:
            if kind in ("maxpool", "gap", "reshape", "resize", "concat"):
                for x in ins:
                    parent[find(x)] = find(y)
        groups = {}
        for t in list(parent):
            groups.setdefault(find(t), []).append(t)
        return {t: members for members in groups.values() for t in members}

    def act_params(self, name, relu=False):
        if self.style == "tensorrt":
            amax = max(float(np.abs(self.net.vals[name]).max()), 1e-6)
            return np.float32(amax / 127.0), np.int8(0)
        members = self.groups.get(name, [name])
        lo = min(_range(self.net.vals[m])[0] for m in members)
        hi = max(_range(self.net.vals[m])[1] for m in members)
        if relu and len(members) == 1:
            lo = 0.0
        scale = np.float32((hi - lo) / 127.0)  # x86 qconfig: quint8 with reduce_range
        zp = int(np.clip(np.round(-lo / scale), 0, 127))
        return scale, np.uint8(zp)

    def qdq(self, float_name, tag, params):
        s, z = params
        sn = self.init(tag + "_scale", np.array(s, dtype=np.float32))
        zn = self.init(tag + "_zp", np.array(z))
        self.node("QuantizeLinear", [float_name, sn, zn], [tag + "_q"])
        self.node("DequantizeLinear", [tag + "_q", sn, zn], [tag + "_dq"])
        return tag + "_dq"

    def src(self, act, consumer):
        """The tensor an op reads for recorded activation `act`."""
        if self.style == "tensorrt":  # one input quantizer per consumer
            return self.qdq(self.float_name[act], "%s_in_%s" % (consumer, act), self.act_params(act))
        return self.dq_of[act]

    def produced(self, act, float_name, relu=False):
        self.float_name[act] = float_name
        if self.style == "pytorch_fx":
            self.dq_of[act] = self.qdq(float_name, act, self.act_params(act, relu))

    def weight(self, base, w):
        """Float initializer -> per-channel QuantizeLinear -> DequantizeLinear (axis 0)."""
        amax = np.maximum(np.abs(w).reshape(w.shape[0], -1).max(axis=1), 1e-8)
        ws = (amax / (127.5 if self.style == "pytorch_fx" else 127.0)).astype(np.float32)
        self.init(base + "_wf", w)
        self.init(base + "_ws", ws)
        self.init(base + "_wz", np.zeros(ws.shape, np.int8))
        self.node("QuantizeLinear", [base + "_wf", base + "_ws", base + "_wz"], [base + "_wq"], axis=0)
        self.node("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"], [base + "_w"], axis=0)
        return base + "_w"

    def act(self, kind, raw, y):
        if kind == "relu":
            self.node("Relu", [raw], [y + "_f"])
            return y + "_f"
        if kind == "relu6":
            self.node("Clip", [raw, self.init(y + "_lo", np.array(0, np.float32)),
                               self.init(y + "_hi", np.array(6, np.float32))], [y + "_f"])
            return y + "_f"
        return raw

    # -- ops ----------------------------------------------------------------------------------
    def op_conv(self, ins, y, p):
        w = self.weight(y, p["w"])
        b = self.init(y + "_b", p["b"])
        attrs = dict(kernel_shape=list(p["w"].shape[2:]), strides=[p["s"]] * 2, pads=[p["pad"]] * 4, group=p["group"])
        self.node("Conv", [self.src(ins[0], y), w, b], [y + "_conv"], **attrs)
        self.produced(y, self.act(p["act"], y + "_conv", y), relu=p["act"] is not None)

    def op_add(self, ins, y, p):
        self.node("Add", [self.src(ins[0], y), self.src(ins[1], y)], [y + "_add"])
        self.produced(y, self.act(p["act"], y + "_add", y), relu=p["act"] == "relu")

    def op_bnrelu(self, ins, y, p):
        names = [self.init(y + "_bn_" + k, p[k]) for k in ("scale", "bias", "mean", "var")]
        self.node("BatchNormalization", [self.src(ins[0], y)] + names, [y + "_bn"], epsilon=1e-5)
        self.produced(y, self.act("relu", y + "_bn", y), relu=True)

    def op_maxpool(self, ins, y, p):
        self.node("MaxPool", [self.src(ins[0], y)], [y + "_mp"], kernel_shape=[p["k"]] * 2, strides=[p["s"]] * 2,
                  pads=[p["p"]] * 4)
        self.produced(y, y + "_mp")

    def op_gap(self, ins, y, p):
        self.node("GlobalAveragePool", [self.src(ins[0], y)], [y + "_gap"])
        self.produced(y, y + "_gap")

    def op_reshape(self, ins, y, p):
        self.node("Flatten", [self.src(ins[0], y)], [y + "_flat"], axis=1)
        self.produced(y, y + "_flat")

    def op_gemm(self, ins, y, p):
        w = self.weight(y, p["w"])
        self.node("Gemm", [self.src(ins[0], y), w, self.init(y + "_b", p["b"])], [y + "_gemm"], transB=1)
        self.produced(y, y + "_gemm")

    def op_concat(self, ins, y, p):
        self.node("Concat", [self.src(i, y) for i in ins], [y + "_cat"], axis=1)
        self.produced(y, y + "_cat")

    def op_resize(self, ins, y, p):
        scales = self.init(y + "_scales", np.array([1, 1, 2, 2], np.float32))
        self.node("Resize", [self.src(ins[0], y), "", scales], [y + "_up"], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        self.produced(y, y + "_up")

    def emit(self):
        if self.style == "pytorch_fx":
            self.dq_of["input"] = self.qdq("input", "input", self.act_params("input"))
        for kind, ins, y, p in self.net.ops:
            getattr(self, "op_" + kind)(ins, y, p)
        if self.style == "pytorch_fx":
            outs = [self.dq_of[o] for o in self.net.outputs]  # DeQuantStub: the output's DQ
        else:
            outs = [self.float_name[o] for o in self.net.outputs]
        return self.model(outs)


# ----------------------------------------------------------------------------------------------
class QOperatorEmitter(_Base):
    """onnxruntime QOperator format: the quantized ops themselves (seed 002)."""

    def __init__(self, net):
        super().__init__(net, "qop")
        self.q = {}  # activation -> (uint8 tensor name, scale name, zp name, scale, zp)

    def params(self, name, relu=False, same_as=None):
        if same_as is not None:
            return self.q[same_as][3], self.q[same_as][4]
        lo, hi = _range(self.net.vals[name], relu)
        scale = np.float32((hi - lo) / 255.0)
        return scale, int(np.clip(np.round(-lo / scale), 0, 255))

    def qparams(self, name, scale, zp, tensor):
        sn = self.init(name + "_scale", np.array(scale, np.float32))
        zn = self.init(name + "_zp", np.array(zp, np.uint8))
        self.q[name] = (tensor, sn, zn, scale, zp)
        return sn, zn

    def t(self, name):
        return list(self.q[name][:3])

    def weight(self, base, w, per_channel):
        axes = tuple(range(1, w.ndim))
        amax = np.abs(w).max(axis=axes) if per_channel else np.array(np.abs(w).max())
        ws = (np.maximum(amax, 1e-8) / 63.0).astype(np.float32)  # 7-bit weights (reduce_range)
        shape = (-1,) + (1,) * (w.ndim - 1) if per_channel else ()
        wq = np.clip(np.round(w / ws.reshape(shape)), -63, 63).astype(np.int8)
        return [self.init(base + "_wq", wq), self.init(base + "_ws", ws),
                self.init(base + "_wz", np.zeros(ws.shape, np.int8))], ws

    def bias(self, base, b, x, ws):
        bs = (ws * np.float32(self.q[x][3])).astype(np.float32)
        return self.init(base + "_bq", np.round(b / bs).astype(np.int32))

    def op_conv(self, ins, y, p):
        x = ins[0]
        w, ws = self.weight(y, p["w"], True)
        b = self.bias(y, p["b"], x, ws)
        s, z = self.params(y, relu=p["act"] is not None)
        sn, zn = self.qparams(y, s, z, y + "_q")
        attrs = dict(kernel_shape=list(p["w"].shape[2:]), strides=[p["s"]] * 2, pads=[p["pad"]] * 4, group=p["group"])
        self.node("QLinearConv", self.t(x) + w + [sn, zn, b], [y + "_q"], **attrs)

    def op_add(self, ins, y, p):
        s, z = self.params(y, relu=p["act"] == "relu")
        sn, zn = self.qparams(y, s, z, y + "_q")
        self.node("QLinearAdd", self.t(ins[0]) + self.t(ins[1]) + [sn, zn], [y + "_q"], domain="com.microsoft")

    def op_bnrelu(self, ins, y, p):
        x = ins[0]
        self.node("DequantizeLinear", self.t(x), [y + "_in"])
        names = [self.init(y + "_bn_" + k, p[k]) for k in ("scale", "bias", "mean", "var")]
        self.node("BatchNormalization", [y + "_in"] + names, [y + "_bn"], epsilon=1e-5)
        self.node("Relu", [y + "_bn"], [y + "_f"])
        s, z = self.params(y, relu=True)
        sn, zn = self.qparams(y, s, z, y + "_q")
        self.node("QuantizeLinear", [y + "_f", sn, zn], [y + "_q"])

    def op_maxpool(self, ins, y, p):
        x = ins[0]
        self.q[y] = (y + "_q",) + self.q[x][1:]
        self.node("MaxPool", [self.q[x][0]], [y + "_q"], kernel_shape=[p["k"]] * 2, strides=[p["s"]] * 2, pads=[p["p"]] * 4)

    def op_gap(self, ins, y, p):
        s, z = self.params(y)
        sn, zn = self.qparams(y, s, z, y + "_q")
        self.node("QLinearGlobalAveragePool", self.t(ins[0]) + [sn, zn], [y + "_q"], domain="com.microsoft", channels_last=0)

    def op_reshape(self, ins, y, p):
        x = ins[0]
        self.q[y] = (y + "_q",) + self.q[x][1:]
        self.node("Reshape", [self.q[x][0], self.init(y + "_shape", np.array(p["shape"], np.int64))], [y + "_q"])

    def op_gemm(self, ins, y, p):
        x = ins[0]
        w, ws = self.weight(y, p["w"], False)
        b = self.bias(y, p["b"], x, ws)
        s, z = self.params(y)
        sn, zn = self.qparams(y, s, z, y + "_q")
        self.node("QGemm", self.t(x) + w + [b, sn, zn], [y + "_q"], domain="com.microsoft", transB=1)

    def op_concat(self, ins, y, p):
        s, z = self.params(y)
        sn, zn = self.qparams(y, s, z, y + "_q")
        ins_q = sum((self.t(i) for i in ins), [])
        self.node("QLinearConcat", [sn, zn] + ins_q, [y + "_q"], domain="com.microsoft", axis=1)

    def op_resize(self, ins, y, p):
        x = ins[0]
        self.q[y] = (y + "_q",) + self.q[x][1:]
        scales = self.init(y + "_scales", np.array([1, 1, 2, 2], np.float32))
        self.node("Resize", [self.q[x][0], "", scales], [y + "_q"], mode="nearest")

    def emit(self):
        s, z = self.params("input")
        sn, zn = self.qparams("input", s, z, "input_q")
        self.node("QuantizeLinear", ["input", sn, zn], ["input_q"])
        for kind, ins, y, p in self.net.ops:
            getattr(self, "op_" + kind)(ins, y, p)
        outs = []
        for o in self.net.outputs:
            self.node("DequantizeLinear", self.t(o), [o + "_out"])
            outs.append(o + "_out")
        return self.model(outs, domains=("com.microsoft",))


def emit(net, convention, default_emitter):
    """The ONNX model of `net` in `convention`; default_emitter(net, act_type) builds ort_qdq."""
    if convention == "ort_qdq":
        return default_emitter(net, np.uint8)
    if convention == "ort_qdq_s8":
        return default_emitter(net, np.int8)
    if convention == "ort_qoperator":
        return QOperatorEmitter(net).emit()
    if convention in ("pytorch_fx", "tensorrt"):
        return FakeQuantEmitter(net, convention).emit()
    raise ValueError("unknown convention '%s' (known: %s)" % (convention, ", ".join(CONVENTIONS)))
