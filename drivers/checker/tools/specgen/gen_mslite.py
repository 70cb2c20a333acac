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
    for c in o["constraints"]:
        if c["kind"] == "target" and "riscv_micro" in o["targets"]:
            continue
        rules += translate(fw, name, c)
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
