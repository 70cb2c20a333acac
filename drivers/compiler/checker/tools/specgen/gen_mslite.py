# SPDX-License-Identifier: MIT
"""Generates the MindSpore Lite Enterprise Micro v106 spec files (seed 000) for the HiSpark MCUs
ws63 (with the on-device training tables) and 3066H (no on-device training, seed 000 preface).
TFLite operators match IR nodes with domain "tflite" and op_type = the seed heading; ONNX operators
match domain "" by ONNX op name. Free-text constraints that cannot be checked on a graph become
'note' rules."""
import re

from common import load_extraction, rule, seed_lines, write
from tflite_builtins import BUILTIN

SEED = "000_56048b4cdc8af632.txt"
DTYPES = {"float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool", "uint16"}
ONNX_NAME = {"Matmul": "MatMul", "Conv3D": "Conv"}
TFL_NAME = {"Logistic (Sigmoid)": "Logistic"}
CONV_LIKE = {"Conv", "Conv3D", "Conv2D", "DepthwiseConv2D", "ConvTranspose", "TransposeConv", "QLinearConv",
             "ConvInteger", "FullyConnected", "Gemm"}


def tensor_index(op, name):
    name = name.strip().lower()
    if name in ("x", "a", "input", "data", "input_tensor", "params", "x/y"):
        return "in0"
    if name in ("y", "output"):
        return "out0"
    if name in ("w", "filter", "weight", "weights"):
        return "in1"
    if name == "bias":
        return "in2"
    if name == "b":
        return "in2" if op in CONV_LIKE - {"Gemm", "FullyConnected"} else "in1"
    if name == "c":
        return "in2"
    return None


def parse_rank(op, what):
    m = re.match(r"^([A-Za-z_/]+)\s+(\d)D\s*(?:\.\.|～|~)\s*(\d)D", what)
    if m:
        ranks = list(range(int(m.group(2)), int(m.group(3)) + 1))
        return [rule("rank", what, tensor=t, ranks=ranks, param="rank")
                for t in (tensor_index(op, n) for n in m.group(1).split("/")) if t]
    m = re.match(r"^(input/output|input|output) rank ((?:\d)D(?:\s*(?:/|-|or|,)\s*\d?D?)*)\s*$", what)
    if m:
        nums = [int(x) for x in re.findall(r"(\d)D", m.group(2))]
        ranks = list(range(min(nums), max(nums) + 1)) if "-" in m.group(2) else nums
        ts = {"input/output": ["in0", "out0"], "input": ["in0"], "output": ["out0"]}[m.group(1)]
        return [rule("rank", what, tensor=t, ranks=ranks, param="rank") for t in ts]
    m = re.match(r"^([A-Za-z_/]+)\s+(?:float32\s+)?(\d)D\s*-\s*(\d)D\b", what)
    if m:
        lo, hi = int(m.group(2)), int(m.group(3))
        ranks = list(range(lo, hi + 1))
    else:
        m = re.match(r"^([A-Za-z_/]+)\s+(?:float32\s+)?(\d)D(?:\s+or\s+(\d)D|/(\d)D)?\b", what)
        if not m:
            return None
        ranks = [int(m.group(2))] + [int(g) for g in (m.group(3), m.group(4)) if g]
    names = m.group(1).split("/")
    out = []
    for n in names:
        t = tensor_index(op, n)
        if t:
            out.append(rule("rank", what, tensor=t, ranks=ranks, param="rank"))
    return out or None


def parse_enum_values(txt):
    vals = []
    for v in txt.split(","):
        v = re.sub(r"\(.*?\)", "", v).strip().strip('"').strip("'")
        if not v:
            continue
        if re.fullmatch(r"-?\d+(\.\d+)?", v):
            vals.append(float(v) if "." in v else int(v))
        elif v in ("true", "false"):  # TFLite bool options reach the IR as 1/0 (the importer's ints)
            vals += [v, 1 if v == "true" else 0]
        else:
            vals.append(v)
            if v.lower() != v:
                vals.append(v.lower())
    return vals


def translate(fw, op, c):
    w, k = c["what"], c["kind"]
    if k == "rank":
        r = parse_rank(op, w)
        if r:
            return r
    if k == "const_input":
        m = re.match(r"^([A-Za-z_]+)\b.*(offline constant|initializer|constant)", w)
        if m and "optional" not in w.split(",")[0] or (m and "constant" in w):
            t = tensor_index(op, m.group(1))
            if t:
                return [rule("constant", w, tensor=t)]
    if k == "fused_activation":
        if "not enabled" in w or "NONE only" in w:
            return [rule("fused", w, values=["NONE"])]
        m = re.search(r"\{([^}]*)\}", w)
        if m:
            return [rule("fused", w, values=[v.strip() for v in m.group(1).split(",")])]
    if k == "padding_mode":
        m = re.match(r"^(auto_pad|padding)\s*==\s*(\w+) only", w)
        if m:
            return [rule("set", w, param=m.group(1), value="attr." + m.group(1), values=[m.group(2)])]
        m = re.match(r"^(?:padding required, )?(auto_pad|padding) in \{([^}]*)\}", w)
        if m:
            return [rule("set", w, param=m.group(1), value="attr." + m.group(1),
                         values=parse_enum_values(m.group(2)))]
    if k == "opset":
        m = re.search(r"opset (\d+) and (\d+) only", w)
        if m:
            return [rule("opset", w, min=int(m.group(1)), max=int(m.group(2)))]
        m = re.search(r"opset\s*>=\s*(\d+)|opset (\d+)\+", w)
        if m:
            return [rule("opset", w, min=int(m.group(1) or m.group(2)))]
    if k == "target" and "RISCV Micro" in w:
        return [rule("target", w, targets=["riscv_micro"])]
    if fw == "onnx" and op == "Cast" and w.startswith("to in {"):
        # ONNX 'to' is a TensorProto.DataType number: FLOAT=1, UINT8=2, INT8=3, INT32=6
        return [rule("set", w + " (ONNX DataType codes 1, 2, 3, 6)", param="to", value="attr.to",
                     values=[1, 2, 3, 6])]
    if k == "attr_fixed" and re.match(r"^(dilations|strides|kernel_shape) == (\d+) only", w):
        m = re.match(r"^(\w+) == (\d+) only", w)
        return [rule("set", w, param="%s[%d]" % (m.group(1), i), value="attr.%s.%d" % (m.group(1), i),
                     values=[int(m.group(2))]) for i in range(3)]
    if fw == "onnx" and op == "Gemm" and w.startswith("beta == 0.0 only"):
        # Re-read (issue 21): the seed says beta "仅支持0.0" but documents C as the bias (1-D offline
        # constant) and its FP32 training row needs "bias count = output channels". Under ONNX
        # semantics beta = 0 discards C, so the only reading in which C is a bias is beta = 1.0 (the
        # ONNX default, every exported Linear layer); beta = 0.0 (C ignored) stays accepted.
        return [rule("set", "beta in {0.0, 1.0}: the seed writes 'only 0.0' yet documents C as the 1-D bias (read as "
                     "beta = 1 with a bias, beta = 0 without)", param="beta", value="attr.beta", values=[0.0, 1.0])]
    if k == "attr_fixed":
        m = re.match(r"^(\w+)\s*==\s*(-?[\d.]+) only", w)
        if m:
            v = m.group(2)
            return [rule("set", w, param=m.group(1), value="attr." + m.group(1),
                         values=[float(v) if "." in v else int(v)])]
        m = re.match(r"^(\w+)\s*==\s*(\w+) only", w)
        if m:
            return [rule("set", w, param=m.group(1), value="attr." + m.group(1),
                         values=parse_enum_values(m.group(2)))]
    if k == "attr_enum":
        m = re.match(r"^(\w+) in \{([^}]*)\}$", w)
        if m and "default" not in m.group(2):
            return [rule("set", w, param=m.group(1), value="attr." + m.group(1),
                         values=parse_enum_values(m.group(2)))]
    if k == "attr_range":
        m = re.match(r"^(\w+)\s*(>=|>)\s*(-?\d+)$", w)
        if m:
            return [rule("interval", w, param=m.group(1), value="attr." + m.group(1), min=int(m.group(3)),
                         min_open=(m.group(2) == ">"))]
    if w == "axes is an offline constant":
        return [rule("constant", w, tensor="in1")]
    if w in ("float only, int8 not supported", "FP32 only"):
        return [rule("dtype", w, tensor="in0", dtypes=["float32"])]
    if w == "no broadcast" and op in ("Matmul", "BatchMatmul"):
        # matrix ops: batch (leading) dims must match exactly
        return [rule("formula", w + " (leading dims of A and B identical)", param="leading dims",
                     expr="in0.rank == in1.rank && (in0.rank < 3 || in0.d0 == in1.d0) && "
                          "(in0.rank < 4 || in0.d1 == in1.d1)")]
    if w == "no broadcast":
        return [rule("broadcast", w, tensor="in*", patterns=["none"])]
    if w == "empty axes list not supported":
        return [rule("formula", w, param="axes", expr="(attr.axes.len ?? data.in1.len ?? 1) > 0")]
    return [rule("note", w)]


# Rules re-read against the seed text (issue 21: rules that real models contradict, and free text the
# generic translation leaves as notes although it is precise). Keyed by (framework, op, constraint
# text); each gives the rules that replace the generic translation of that constraint.
ABSENT = "'absent'"


def _absent(attr):
    return "(attr.%s ?? %s) == %s" % (attr, ABSENT, ABSENT)


def _no_list(attr):
    return "(attr.%s.len ?? 0) == 0" % attr


REREAD = {
    # ONNX ConvTranspose (seed line ~13479): "支持group=1的标准反卷积，包括任意对称或非对称pads、步长 >= 1、膨胀 >= 1、
    # auto_pad、output_padding以及可选偏置 ... 不支持output_shape属性、group大于1、int8模式下batch大于1以及非4D输入".
    ("onnx", "ConvTranspose", "dilations 2 elements >= 1; strides 2 elements >= 1; defaults [1,1]"): [
        rule("formula", "strides and dilations: 2 elements, each >= 1 (seed: 步长 >= 1、膨胀 >= 1)", param="strides, dilations",
             expr="(attr.strides.len ?? 2) == 2 && (attr.dilations.len ?? 2) == 2 && (attr.strides.0 ?? 1) >= 1 && "
                  "(attr.strides.1 ?? 1) >= 1 && (attr.dilations.0 ?? 1) >= 1 && (attr.dilations.1 ?? 1) >= 1")],
    ("onnx", "ConvTranspose", "output_padding 2 elements, each < stride of that dim; default [0,0]"): [
        rule("formula", "output_padding: 2 elements, each smaller than the stride of its axis (seed: 每个元素小于对应维度的stride)",
             param="output_padding",
             expr="(attr.output_padding.len ?? 2) == 2 && (attr.output_padding.0 ?? 0) >= 0 && (attr.output_padding.1 ?? 0) >= 0 && "
                  "(attr.output_padding.0 ?? 0) < (attr.strides.0 ?? 1) && (attr.output_padding.1 ?? 0) < (attr.strides.1 ?? 1)")],
    ("onnx", "ConvTranspose", "output_shape attribute unsupported -> parse-time error (export with explicit pads)"): [
        rule("formula", "output_shape attribute not supported (export with explicit pads)", param="output_shape",
             expr=_no_list("output_shape"))],
    ("onnx", "ConvTranspose", "auto_pad in {NOTSET (default), VALID, SAME_UPPER, SAME_LOWER}; pads not allowed when auto_pad != NOTSET"): [
        rule("set", "auto_pad in {NOTSET (default), VALID, SAME_UPPER, SAME_LOWER}", param="auto_pad", value="attr.auto_pad",
             values=["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]),
        rule("formula", "pads not allowed when auto_pad != NOTSET (seed: 非NOTSET时不支持同时配置pads)", param="pads",
             expr="(attr.auto_pad ?? 'NOTSET') == 'NOTSET' || " + _no_list("pads"))],
    ("onnx", "ConvTranspose", "kernel_shape 2 elements == W spatial dims"): [
        rule("formula", "kernel_shape: 2 elements equal to W's spatial dims", param="kernel_shape",
             expr="(attr.kernel_shape.len ?? 2) == 2 && (attr.kernel_shape.0 ?? in1.d2) == in1.d2 && "
                  "(attr.kernel_shape.1 ?? in1.d3) == in1.d3")],
    ("onnx", "ConvTranspose", "pads 4 non-negative [top, left, bottom, right], symmetric or asymmetric"): [
        rule("formula", "pads: 4 non-negative elements [top, left, bottom, right]", param="pads",
             expr="(attr.pads.len ?? 4) == 4 && (attr.pads.0 ?? 0) >= 0 && (attr.pads.1 ?? 0) >= 0 && (attr.pads.2 ?? 0) >= 0 && "
                  "(attr.pads.3 ?? 0) >= 0")],
    ("onnx", "ConvTranspose", "B optional [C_out] (3-input form)"): [
        rule("formula", "B optional, [C_out]", param="B", expr="!in2.present || in2.numel == in1.d1 * (attr.group ?? 1)")],
    # The X row says "batch=1", the summary note narrows it: "int8模式下batch大于1 ... 不支持" (int8 only).
    ("onnx", "ConvTranspose", "FP32 and full-quant INT8; weights per-output-channel; int8 batch > 1 unsupported"): [
        rule("formula", "int8 mode: batch 1 (seed: int8模式下batch大于1不支持)", param="batch",
             expr="in0.dtype != 'int8' || in0.d0 == 1")],
    # ONNX Conv (seed line ~5697): group "仅支持输入为1的情况", yet the same entry's FP32 training row
    # (line ~5836) requires "depthwise等价卷积；要求group=input_channel=output_channel，权重为OHWI格式且I=1":
    # a model trained on the device must also run its forward pass, and every exported MobileNet /
    # DS-CNN has such convolutions. Read as group 1, or the depthwise-equivalent form of the training row.
    ("onnx", "Conv", "group == 1 only"): [
        rule("formula", "group == 1, or depthwise-equivalent (group = input channels = output channels, W [C, 1, kH, kW]; the "
                        "entry's FP32 training row)", param="group",
             expr="(attr.group ?? 1) == 1 || ((attr.group ?? 1) == in0.d1 && in1.d0 == in0.d1 && in1.d1 == 1)")],
    # TFLite TransposeConv (seed line ~5593); its inputs are output_shape, filter, input, bias.
    ("tflite", "TransposeConv", "output_shape input int32 constant of shape [4], required, consumed by converter"): [
        rule("constant", "output_shape: an int32 constant", tensor="in0"),
        rule("formula", "output_shape has 4 elements", param="output_shape", expr="in0.numel == 4")],
    ("tflite", "TransposeConv", "output size: SAME o = i*s; VALID o = (i-1)*s + k"): [
        rule("formula", "output size: SAME o = i*s; VALID o = (i-1)*s + k", param="output size",
             expr="((attr.padding ?? 'SAME') == 'SAME' && out0.d1 == in2.d1 * attr.stride_h && out0.d2 == in2.d2 * attr.stride_w) || "
                  "((attr.padding ?? 'SAME') == 'VALID' && out0.d1 == (in2.d1 - 1) * attr.stride_h + in1.d1 && "
                  "out0.d2 == (in2.d2 - 1) * attr.stride_w + in1.d2)")],
    ("tflite", "TransposeConv", "input float32 4D NHWC, static shape, batch == 1 (int8 mode batch fixed to 1)"): [
        rule("rank", "input 4D NHWC", tensor="in2", ranks=[4], param="rank"),
        rule("formula", "int8 mode: batch 1 (seed: int8模式batch固定为1)", param="batch", expr="in2.dtype != 'int8' || in2.d0 == 1")],
    ("tflite", "TransposeConv", "stride_h/stride_w required, >= 1; kernel KH x KW each >= 1, non-square allowed"): [
        rule("formula", "stride_h, stride_w >= 1", param="stride", expr="attr.stride_h >= 1 && attr.stride_w >= 1")],
    ("tflite", "TransposeConv", "bias optional, shape [OC] (4-input form)"): [
        rule("formula", "bias optional, [OC]", param="bias", expr="!in3.present || in3.numel == in1.d0")],
    # ONNX LSTM / GRU / RNN (seed lines ~7275, ~11205, ~13621): what the tables mark unsupported or not
    # configurable is refused, not left as a note.
    ("onnx", "LSTM", "sequence_lens and P (peephole) inputs not supported"): [
        rule("formula", "sequence_lens and P (peephole) inputs not supported", param="inputs", expr="!in4.present && !in7.present")],
    ("onnx", "LSTM", "activations, clip, direction (forward only), input_forget, layout not configurable"): [
        rule("formula", "activations, clip, direction (forward only), input_forget, layout not configurable", param="attributes",
             expr=" && ".join([_no_list("activations"), _absent("clip"), "(attr.direction ?? 'forward') == 'forward'",
                               "(attr.input_forget ?? 0) == 0", "(attr.layout ?? 0) == 0"]))],
    ("onnx", "GRU", "sequence_lens not supported"): [
        rule("formula", "sequence_lens not supported", param="inputs", expr="!in4.present")],
    ("onnx", "GRU", "activation_alpha, activation_beta, activations, clip, layout not configurable"): [
        rule("formula", "activation_alpha, activation_beta, activations, clip, layout not configurable", param="attributes",
             expr=" && ".join([_no_list("activation_alpha"), _no_list("activation_beta"), _no_list("activations"), _absent("clip"),
                               "(attr.layout ?? 0) == 0"]))],
    ("onnx", "GRU", "direction in {forward (default), reverse, bidirectional}"): [
        rule("set", "direction in {forward (default), reverse, bidirectional}", param="direction", value="attr.direction",
             values=["forward", "reverse", "bidirectional"])],
    ("onnx", "RNN", "layout == 0 (time-major) only"): [
        rule("formula", "layout == 0 (time-major) only", param="layout", expr="(attr.layout ?? 0) == 0")],
    ("onnx", "RNN", "Y and Y_h must both be output"): [
        rule("formula", "Y and Y_h must both be output", param="outputs", expr="out0.present && out1.present")],
    ("onnx", "RNN", "direction in {forward (default), reverse, bidirectional}"): [
        rule("set", "direction in {forward (default), reverse, bidirectional}", param="direction", value="attr.direction",
             values=["forward", "reverse", "bidirectional"])],
    ("onnx", "RNN", "activations per direction in {Tanh (default), Relu, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                    "HardSigmoid, Elu, Softsign, Softplus}"): [
        rule("formula", "activations: one per direction from {Tanh, Relu, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                        "HardSigmoid, Elu, Softsign, Softplus}", param="activations",
             expr="((attr.activations.len ?? 1) == 1 || ((attr.direction ?? 'forward') == 'bidirectional' && "
                  "(attr.activations.len ?? 1) == 2)) && ((attr.activations.0 ?? 'Tanh') == 'Tanh' || (attr.activations.0 ?? 'Tanh') == 'Relu' || (attr.activations.0 ?? 'Tanh') == 'Sigmoid' || (attr.activations.0 ?? 'Tanh') == 'Affine' || (attr.activations.0 ?? 'Tanh') == 'LeakyRelu' || (attr.activations.0 ?? 'Tanh') == 'ThresholdedRelu' || (attr.activations.0 ?? 'Tanh') == 'ScaledTanh' || (attr.activations.0 ?? 'Tanh') == 'HardSigmoid' || (attr.activations.0 ?? 'Tanh') == 'Elu' || (attr.activations.0 ?? 'Tanh') == 'Softsign' || (attr.activations.0 ?? 'Tanh') == 'Softplus') && ((attr.activations.1 ?? 'Tanh') == 'Tanh' || (attr.activations.1 ?? 'Tanh') == 'Relu' || (attr.activations.1 ?? 'Tanh') == 'Sigmoid' || (attr.activations.1 ?? 'Tanh') == 'Affine' || (attr.activations.1 ?? 'Tanh') == 'LeakyRelu' || (attr.activations.1 ?? 'Tanh') == 'ThresholdedRelu' || (attr.activations.1 ?? 'Tanh') == 'ScaledTanh' || (attr.activations.1 ?? 'Tanh') == 'HardSigmoid' || (attr.activations.1 ?? 'Tanh') == 'Elu' || (attr.activations.1 ?? 'Tanh') == 'Softsign' || (attr.activations.1 ?? 'Tanh') == 'Softplus')")],
}
# Tensor positions where a TFLite builtin's data input is not input 0 (the generic rules name in0).
DATA_INPUT = {("tflite", "TransposeConv"): "in2", ("tflite", "Split"): "in1"}


def heading_of(o):
    fw = "TFLite" if o["framework"] == "tflite" else "ONNX"
    return "%s %s (line %d)" % (fw, o["op"], o["seed_line"])


def op_entry(o, training):
    fw, name = o["framework"], o["op"]
    e = {"name": name, "heading": heading_of(o), "framework": fw}
    if fw == "onnx":
        m = {"op_type": ONNX_NAME.get(name, name)}
        if name == "Conv3D":
            m["when"] = "in0.rank == 5"
        e["match"] = [m]
    else:
        # The builtin name (what the TFLite importer produces) first; the seed heading stays an alias.
        e["match"] = [{"op_type": BUILTIN[name], "domain": "tflite"},
                      {"op_type": TFL_NAME.get(name, name), "domain": "tflite"}]
    rules = []
    dts = [d for d in o["dtypes"] if d in DTYPES]
    if dts and "(default)" not in o.get("dtypes_source", "") and name not in ("Cast",):
        rules.append(rule("dtype", "data types %s" % ", ".join(o["dtypes"]), tensor="in0", dtypes=dts))
    elif dts:
        rules.append(rule("dtype", "doc-wide data types int8 and fp32 (seed 000 chapter intro)", tensor="in0",
                          dtypes=dts, source={"section": "算子规格参考 (intro)"}))
    if "riscv_micro" in o["targets"]:
        rules.append(rule("target", "only on the RISCV Micro target", targets=["riscv_micro"]))
    data_in = DATA_INPUT.get((fw, name))
    if data_in:
        for r in rules:
            if r.get("tensor") == "in0":
                r["tensor"] = data_in
    for c in o["constraints"]:
        if c["kind"] == "target" and "riscv_micro" in o["targets"]:
            continue
        if (fw, name, c["what"]) in REREAD:
            rules += REREAD[(fw, name, c["what"])]
            continue
        tr = translate(fw, name, c)
        if data_in:
            for r in tr:
                if r.get("tensor") == "in0":
                    r["tensor"] = data_in
        rules += tr
    e["rules"] = rules
    t = o.get("training")
    if training and t:
        rows = []
        for mode, label in (("qas_int8", "QAS INT8"), ("fp32", "FP32")):
            row = t.get(mode) or {}
            txt = "%s training %s: %s" % (label, "supported" if row.get("supported") else "not supported",
                                          row.get("constraints") or "-")
            rows.append(rule("note", txt, source={"section": heading_of(o) + " 训练支持规格 (%s)" % t["profile"]}))
        e["training"] = rows
    return e


def main():
    ext = load_extraction(0)
    for pid, training in (("ws63", True), ("3066H", False)):
        doc = {
            "schema_version": 1, "platform": pid, "aliases": ["hispark-" + pid.lower()],
            "toolchain": "MindSpore Lite Enterprise Micro v106", "seed": SEED, "section": "算子规格参考",
            "engine": "MCU", "cpu_fallback": False, "static_shapes": True, "targets": ["riscv_micro"],
            "note": "HiSpark RISC-V MCU: every operator runs as a Micro-generated CPU kernel; an operator outside "
                    "the tables is unsupported" + ("" if training else "; 3066H has no on-device training "
                                                   "(seed 000 preface)"),
            "ops": [op_entry(o, training) for o in ext],
        }
        unc = []
        if not training:
            for o in ext:
                if o.get("training"):
                    unc.append({"heading": heading_of(o) + " 训练支持规格",
                                "reason": "on-device training tables apply to ws63 only; seed 000 preface: "
                                          "3066H does not support on-device training"})
        doc["uncovered"] = unc
        write("mslite_micro_v106_%s.json" % pid.lower(), doc)


if __name__ == "__main__":
    main()
