# SPDX-License-Identifier: MIT
"""Generates the RKNN spec-DB files: seed 001 (RKNN Compiler V2.3.2: RK3566/RK3568, RK3588, RK3562,
RV1103/RV1106 partial; RK3576/RV1126B and RK2118 as "not in the seed"), and seed 004 (RKNN2 V2.5.0,
RV1103B/RV1106B). Free-text rules of the extraction are translated into rule-engine kinds; anything
that cannot be checked on a graph becomes a 'note' rule (listed by `npusim specs`, never checked)."""
import re

from common import interval_from_text, load_extraction, rule, seed_lines, write

SEED1 = "001_71dfb7df9d32e489.txt"
SEED4 = "004_6c5fbe0b74d192f2.txt"

PLATFORMS = [  # (extraction key, id, aliases, section number, file)
    ("RK3566/RK3568", "RK3566_RK3568", ["RK3566", "RK3568"], "3.1", "rknn_v2.3.2_rk3566_rk3568.json"),
    ("RK3588", "RK3588", [], "3.2", "rknn_v2.3.2_rk3588.json"),
    ("RK3562", "RK3562", [], "3.3", "rknn_v2.3.2_rk3562.json"),
    ("RV1103/RV1106", "RV1103_RV1106", ["RV1103", "RV1106"], "3.4", "rknn_v2.3.2_rv1103_rv1106.json"),
]

BIND = {
    "batch": "in0.d0", "channel": "in0.d1", "height": "in0.d2", "width": "in0.d3",
    "kernel_h": "in1.d2", "kernel_w": "in1.d3",
    "stride_h": "attr.strides.0 ?? 1", "stride_w": "attr.strides.1 ?? 1",
    "pads_top": "attr.pads.0 ?? 0", "pads_left": "attr.pads.1 ?? 0",
    "pads_bottom": "attr.pads.2 ?? 0", "pads_right": "attr.pads.3 ?? 0",
    "dilation_h": "attr.dilations.0 ?? 1", "dilation_w": "attr.dilations.1 ?? 1",
    "group": "attr.group ?? 1", "output_h": "out0.d2", "output_w": "out0.d3",
    "axis": "(attr.axis ?? 1) + ((attr.axis ?? 1) < 0) * in0.rank",
    "n1": "in0.d0", "c1": "in0.d1", "h1": "in0.d2", "w1": "in0.d3", "n": "in0.d0",
    "perm_code": "attr.perm.0*1000 + attr.perm.1*100 + attr.perm.2*10 + attr.perm.3",
}
POOL_BIND = {"kernel_h": "attr.kernel_shape.0", "kernel_w": "attr.kernel_shape.1"}
RNN_BIND = {"seq_length": "in0.d0", "batch_size": "in0.d1", "input_size": "in0.d2",
            "hidden_size": "attr.hidden_size"}

ACT_SUFFIX = {  # fused op suffix -> ONNX successor op types
    "Relu": ["Relu"], "Clip": ["Clip"], "PRelu/LeakyRelu": ["PRelu", "LeakyRelu"], "Add": ["Add"],
    "Sigmoid": ["Sigmoid"], "Tanh": ["Tanh"], "Softplus": ["Softplus"], "HardSigmoid": ["HardSigmoid"],
    "HardSwish": ["HardSwish"], "Elu": ["Elu"], "Swish": ["Swish"], "Mish": ["Mish"],
}
DIRECT = {  # spec op -> ONNX op_type (same name unless listed)
    "Clip/ReLU6": "Clip", "exMish": "Mish", "exGelu": "Gelu", "exMatMul": "MatMul",
    "exNorm": "LayerNormalization", "exSwish": "Swish", "Convolution": "Conv",
}
NO_ONNX = {"exSwooshR", "exSwooshL", "exGlu", "exWindow", "exSDPAttention", "exSoftmax13", "exSoftmaxMask",
           "ConvolutionAddRelu", "ConvTranposeAddRelu"}
TENSOR = {"input": "in0", "A": "in0", "X": "in0", "data": "in0", "B": "in1", "weight": "in1", "mask,x,y": "in*",
          "query,key,value,mask": "in*", "Indices": "in1"}
EXPAND_PATTERNS = ["bc1w", "b11w", "bch1", "b1h1", "bc11"]


def headings(section):
    pat = re.compile(r"^" + re.escape(section) + r"\.(\d+) (.+)$")
    out = []
    for ln in seed_lines(SEED1):
        m = pat.match(ln.strip())
        if m:
            out.append((int(m.group(1)), m.group(2).strip(), ln.strip()))
    return out


def match_for(name):
    if name in NO_ONNX:
        return []
    if name == "Convolution":
        return [{"op_type": "Conv", "when": "!(group > 1 && group == channel)"}]
    if name == "DepthwiseConvolution":
        return [{"op_type": "Conv", "when": "group > 1 && group == channel"}]
    for base, onnx in (("Convolution", "Conv"), ("ConvTranpose", "ConvTranspose")):
        if name.startswith(base) and name != "ConvTranspose":
            act = ACT_SUFFIX.get(name[len(base):])
            if act is None:
                return []
            m = {"op_type": onnx, "then": act}
            if onnx == "Conv":
                m["when"] = "!(group > 1 && group == channel)"
            return [m]
    if name in ("AddRelu", "MulRelu"):
        return [{"op_type": name[:-4], "then": ["Relu"]}]
    return [{"op_type": DIRECT.get(name, name)}]


def formula_from_text(t):
    """'h1%16=0,h1*w1<16*p' -> 'h1 % 16 == 0 && h1*w1 < 16*p'; handles '(a=b=1,x)or(...)'."""
    t = t.replace("c1*h1*w1p", "c1*h1*w1<p")  # seed typo, read as '<p' (RK3588 perm=[1,2,0,3])
    t = re.sub(r"\b(\w+)=(\w+)=1\b", r"\1==1&&\2==1", t)
    t = re.sub(r"(?<![<>=!])=(?!=)", "==", t)
    t = re.sub(r"\(([^()]*)\)\s*or\s*\(([^()]*)\)", r"((\1) || (\2))", t)
    # commas at depth 0 and inside parentheses are conjunctions
    return t.replace(",", " && ")


def transpose_rules(c, p, q):
    perm = c["param"].split("=", 1)[1]
    digits = [int(x) for x in perm.strip("[]").split(",")]
    code = digits[0] * 1000 + digits[1] * 100 + digits[2] * 10 + digits[3]
    text = c["rule"]
    if text.strip() in ("no limit",):
        return [], code
    if "not supported" in text:
        return None, code
    rules = []
    parts = [s.strip() for s in text.split(";")]
    for part in parts:
        who, cond = part.split(":", 1)
        expr = formula_from_text(cond.strip()).replace("p", "P").replace("q", "Q")
        expr = expr.replace("P", str(p)).replace("Q", str(q))
        when = "perm_code == %d" % code
        if who.strip() == "int8":
            when += " && in0.dtype == 'int8'"
        elif who.strip().startswith("int16"):
            when += " && in0.dtype != 'int8'"
        rules.append(rule("formula", "perm=%s (%s): %s" % (perm, who.strip(), cond.strip()), expr=expr, when=when,
                          param="perm"))
    return rules, code


def translate(op, c):
    """One extraction constraint -> list of rules (or 'ALIAS:<base>')."""
    k, prm, t = c["kind"], c.get("param"), c["rule"]
    eng = "%s: %s" % (prm, t) if prm else t
    if k == "alias":
        return "ALIAS:" + t.split("as ", 1)[1].strip()
    if k == "rank" and "4-D" in t and prm in TENSOR:
        return [rule("rank", "%s is 4-D [batch,channel,height,width]" % prm, tensor=TENSOR[prm], ranks=[4],
                     param="rank")]
    if k == "rank" and prm == "weight":
        return [rule("rank", "weight shape [output_channel,input_channel,kernel_h,kernel_w]", tensor="in1",
                     ranks=[4])]
    if k == "range" and prm == "pads":
        iv = interval_from_text(t)
        return [rule("interval", "pads_%s %s" % (s, t.split("each ")[1]), param="pads_" + s, value="pads_" + s, **iv)
                for s in ("top", "left", "bottom", "right")]
    if k == "range" and prm in ("kernel_h", "kernel_w", "stride_h", "stride_w", "dilation_h", "dilation_w"):
        iv = interval_from_text(t)
        return [rule("interval", eng, param=prm, value=prm, **iv)]
    if k == "range" and prm == "epsilon":
        return [rule("interval", eng, param="epsilon", value="attr.epsilon ?? 0.00001", min=0, min_open=True)]
    if k == "dim_max" and prm in ("channel", "height", "width", "seq_length", "input_size", "hidden_size"):
        iv = interval_from_text(t)
        return [rule("interval", eng, param=prm, value=prm, **iv)]
    if k == "enum" and prm in ("stride_h", "stride_w") and t.startswith("only"):
        vals = [int(x) for x in re.findall(r"\d+", t)]
        return [rule("set", eng, param=prm, value=prm, values=vals)]
    if k == "enum" and prm == "axis" and t.startswith("in {"):
        vals = [int(x) for x in re.findall(r"\d+", t)]
        return [rule("set", eng, param="axis", value="axis", values=vals)]
    if k == "enum" and prm == "axis" and t.startswith("1 or 3"):
        return [rule("set", eng, param="axis", value="axis", values=[1, 3])]
    if k == "enum" and prm == "auto_pad":
        return [rule("set", eng, param="auto_pad", value="attr.auto_pad ?? 'NOTSET'", values=["NOTSET"])]
    if k == "unsupported_attr" and prm == "ceil_mode":
        return [rule("set", eng, param="ceil_mode", value="attr.ceil_mode ?? 0", values=[0])]
    if k == "fixed_value":
        v = int(re.search(r"must be (\d+)", t).group(1))
        dflt = {"count_include_pad": 0, "storage_order": 0}.get(prm, 0)
        when = None
        value = "attr.%s ?? %d" % (prm, dflt)
        if prm == "count_include_pad":
            # Only observable with padding: the pads are what count_include_pad counts. ONNX MaxPool has no
            # such attribute, so there the rule applies only when a model sets it.
            when = "pads_top + pads_left + pads_bottom + pads_right > 0"
            if op["op"] != "AveragePool":
                value = "attr.count_include_pad"
        return [rule("set", eng, param=prm, value=value, values=[v], when=when)]
    if k == "enum" and prm == "mode" and t.startswith("nearest or linear"):
        return [rule("set", eng, param="mode", value="attr.mode ?? 'nearest'", values=["nearest", "linear"])]
    if k == "enum" and prm == "mode" and t.startswith("constant"):
        return [rule("set", eng, param="mode", value="attr.mode ?? 'constant'", values=["constant", "reflect"])]
    if k == "enum" and prm == "coordinate_transformation_mode":
        return [rule("set", eng, param=prm, value="attr.%s ?? 'half_pixel'" % prm,
                     values=["half_pixel", "pytorch_half_pixel", "align_corners"])]
    if k == "enum" and prm == "Y" and "exponent" in t:
        return [rule("set", eng, param="exponent", value="data.in1.0", values=[0, 1, 2, 3, 0.5, -0.5])]
    if k == "enum" and prm == "group":
        return [rule("formula", eng, param="group", expr="group == 1 || (in0.d1 == out0.d1 && group == out0.d1)")]
    if k == "enum" and prm == "linear_before_reset":
        return [rule("set", eng, param=prm, value="attr.linear_before_reset ?? 0", values=[0, 1])]
    if k == "conditional" and prm == "dilation":
        return [rule("formula", eng, param="dilation",
                     expr="(dilation_h == 1 && dilation_w == 1) || (kernel_h == 1 && kernel_w == 1)")]
    if k == "conditional" and prm == "input.width":
        return [rule("interval", "width < 16383 when dilated_kernel_h > 1", param="width", value="width", max=16383,
                     max_open=True, when="(kernel_h - 1) * dilation_h + 1 > 1"),
                rule("note", "first-layer input width further limited (model input notes are absent from the seed)")]
    if k == "quant" and prm == "quant":
        return [rule("quant", "input per-layer", tensor="in0", granularity=["per-layer"]),
                rule("quant", "weight per-layer or per-channel", tensor="in1",
                     granularity=["per-layer", "per-channel"]),
                rule("quant", "output per-layer", tensor="out0", granularity=["per-layer"])]
    if k == "relation":
        # ConvTranspose's pads notes are headed "设置pad时注意" (when setting pads, note): they bind
        # a model that sets pads, not the unpadded kernel-2 stride-2 upsampler (whose output,
        # stride*(h-1)+k, always exceeds stride*(h-1)+1).
        m = re.match(r"unsupported if (.+) < (\w+)$", t)
        return [rule("formula", eng + " (when pads are set)", param="pads", expr="%s >= %s" % (m.group(1), m.group(2)),
                     when="pads_top + pads_left + pads_bottom + pads_right > 0")]
    if k == "alignment" and prm == "batch_size":
        return [rule("interval", "batch_size in (0,8192]", param="batch_size", value="batch_size", min=0,
                     min_open=True, max=8192),
                rule("alignment", "batch_size must be a multiple of 4 when > 1", param="batch_size",
                     value="batch_size", multiple=4, when="batch_size > 1")]
    if k == "broadcast" and "same as Expand" in t:
        return [rule("broadcast", "broadcast on any dim, constraints same as Expand "
                     "([b,c,1,w], [b,1,1,w], [b,c,h,1], [b,1,h,1], [b,c,1,1] -> [b,c,h,w])",
                     tensor="in*", patterns=EXPAND_PATTERNS, dims="bchw")]
    if k == "broadcast" and t.startswith("broadcast only [b,c,1,1] or [scalar]"):
        return [rule("broadcast", eng, tensor="in*", patterns=["bc11", "scalar"], dims="bchw")]
    if k == "broadcast" and t == "no broadcast":
        # The seed lists "no broadcast" under the data input; PRelu's slope has its own note.
        return [rule("broadcast", eng, tensor="in0" if op["op"] == "PRelu" else "in*", patterns=["none"], dims="bchw")]
    if k == "broadcast" and prm == "broadcast" and "->" in t:
        return []  # Expand patterns: encoded once as the Expand broadcast rule below
    # Support notes that can be checked on a graph (issue 13): each becomes a rule citing the op's heading.
    if k == "dtype" and prm == "A,B" and "float constant" in t:
        return [rule("dtype", "B: T1 unless it is a constant tensor (T2 = float constant allowed)", tensor="in1",
                     dtypes=op.get("dtypes") or ["int8", "float16"], when="!in1.const")]
    if k == "dtype" and prm == "shape" and op["op"] == "Expand":
        return [rule("dtype", eng, tensor="in1", dtypes=["int64"])]
    if k == "rank" and prm == "Indices":
        return [rule("rank", "Indices: rank 1", tensor="in1", ranks=[1], param="indices rank"),
                rule("dtype", "Indices: int", tensor="in1", dtypes=["int32", "int64"])]
    if k == "rank" and prm == "pads":
        return [rule("dtype", "pads: int64", tensor="in1", dtypes=["int64"]),
                rule("formula", "pads: 8 values [n_b,c_b,h_b,w_b,n_e,c_e,h_e,w_e]", param="pads",
                     expr="(data.in1.len ?? attr.pads.len ?? 8) == 8")]
    if k == "dtype" and prm == "constant_value":
        return [rule("formula", "constant_value: shape [1] (a scalar)", param="constant_value",
                     expr="(in2.numel ?? 1) == 1"),
                rule("dtype", "constant_value: float, int8 or float16 scalar", tensor="in2",
                     dtypes=["float32", "int8", "float16"])]
    if k == "dim_max" and prm == "mode=reflect":
        when = "(attr.mode ?? 'constant') == 'reflect'"
        return [rule("interval", "mode=reflect: channel in (0,8192]", param="channel", value="channel", min=0,
                     min_open=True, max=8192, when=when),
                rule("interval", "mode=reflect: height in (0,8192]", param="height", value="height", min=0,
                     min_open=True, max=8192, when=when),
                rule("interval", "mode=reflect: width in (0,8176]", param="width", value="width", min=0,
                     min_open=True, max=8176, when=when)]
    if k == "note" and op["op"] == "Clip/ReLU6" and "clip to [0,6]" in t:
        return [rule("formula", "clip to [0,6] (ReLU6): min = 0, max = 6", param="min/max",
                     expr="(data.in1.0 ?? attr.min ?? -1) == 0 && (data.in2.0 ?? attr.max ?? -1) == 6")]
    if k == "broadcast" and prm == "slope":
        return [rule("formula", "slope: a single scalar or one coefficient per channel ([C,1,1] / [1,C,1,1])",
                     param="slope", expr="in1.numel == 1 || (in1.rank == 3 && in1.d0 == channel && in1.d1 == 1 && "
                     "in1.d2 == 1) || (in1.rank == 4 && in1.d0 == 1 && in1.d1 == channel && in1.d2 == 1 && in1.d3 == 1)")]
    if k == "unsupported_attr" and prm == "roi":
        return [rule("formula", "roi: not supported", param="roi", expr="(in1.numel ?? 0) == 0")]
    if k == "dtype" and prm == "scales/sizes":
        return [rule("dtype", "scales: float", tensor="in2", dtypes=["float32"], when="(in2.numel ?? 0) > 0"),
                rule("dtype", "sizes: int64", tensor="in3", dtypes=["int64"])]
    if k == "unsupported_attr" and prm.startswith("antialias"):
        dflt = [("antialias", "0"), ("cubic_coeff_a", "-0.75"), ("exclude_outside", "0"),
                ("extrapolation_value", "0"), ("keep_aspect_ratio_policy", "'stretch'"),
                ("nearest_mode", "'round_prefer_floor'")]
        out = [rule("set", "%s: cannot be set (default only)" % a, param=a, value="attr.%s ?? %s" % (a, d),
                    values=[d.strip("'") if d.startswith("'") else float(d) if "." in d else int(d)]) for a, d in dflt]
        out.append(rule("formula", "axes: cannot be set", param="axes", expr="!defined(attr.axes)"))
        return out
    if k == "enum" and prm == "scale" and "2..8" in t:
        factor = "out0.d2 %% in0.d2 == 0 && out0.d3 %% in0.d3 == 0 && %s >= 2 && %s <= 8 && %s >= 2 && %s <= 8" % (
            "out0.d2 / in0.d2", "out0.d2 / in0.d2", "out0.d3 / in0.d3", "out0.d3 / in0.d3")
        return [rule("formula", "only integer scaling in H and W by a factor 2..8 each, batch and channel kept; "
                     "a (1,c,1,1) input may be upscaled to any (1,c,h,w)", param="scale",
                     expr="out0.d0 == in0.d0 && out0.d1 == in0.d1 && ((in0.d2 == 1 && in0.d3 == 1) || (%s))" % factor)]
    if k == "conditional" and prm == "scale" and "(1,c,1,1)" in t:
        return []  # encoded with the 2..8 rule above
    if k == "alignment" and prm == "steps":
        steps_one = " && ".join("(data.in4.%d ?? 1) == 1" % i for i in range(4))
        return [rule("formula", "steps != 1 only when height*width == 1 (and channel/starts/ends aligned to subc, "
                     "which the seed does not define); otherwise steps must be [1,1,1,1]", param="steps",
                     expr="(%s) || in0.d2 * in0.d3 == 1" % steps_one)]
    if k == "dtype" and prm == "repeats":
        return [rule("dtype", "repeats: int64", tensor="in1", dtypes=["int64"]),
                rule("formula", "repeats: 4 values", param="repeats", expr="(data.in1.len ?? 4) == 4")]
    if k == "dtype" and prm == "mask_tensor":
        return [rule("dtype", "mask: bool", tensor="in0", dtypes=["bool"])]
    if k == "note" and op["op"] == "HardSigmoid":
        return [rule("formula", "y = max(0, min(1, x/6 + 0.5)): alpha = 1/6, beta = 0.5", param="alpha/beta",
                     expr="abs((attr.alpha ?? 0.2) - 1/6) < 0.0001 && abs((attr.beta ?? 0.5) - 0.5) < 0.0001")]
    if k == "note" and op["op"] == "Elu":
        return [rule("formula", "alpha = 1", param="alpha", expr="(attr.alpha ?? 1) == 1")]
    if k == "enum" and prm == "axes" and op["op"] == "exNorm":
        return [rule("formula", "axes: only [1] or [1,2,3] (LayerNormalization axis 1)", param="axis",
                     expr="(attr.axis ?? -1) + ((attr.axis ?? -1) < 0) * in0.rank == 1")]
    if k == "product_limit" and prm.startswith("axis="):
        ax = int(prm.split("=")[1])
        if ax == 1:
            return [rule("formula", eng, expr="height * width < 16384", when="axis == 1")]
        return [rule("formula", "axis=3: channel*height < 16384", expr="channel * height < 16384", when="axis == 3"),
                rule("note", "axis=3: also limited by the Transpose spec")]
    return [rule("note", eng)]


def op_entry(plat_key, section, op, hd, pq):
    name = op["op"]
    e = {"name": name, "heading": hd}
    m = match_for(name)
    if m:
        e["match"] = m
    rules = []
    alias = None
    tr_codes = []
    for c in op["constraints"]:
        if c["kind"] == "perm_limit":
            rs, code = transpose_rules(c, *pq)
            if rs is not None:
                tr_codes.append(code)
                rules += rs
            continue
        r = translate(op, c)
        if isinstance(r, str):
            alias = r.split(":", 1)[1]
            continue
        rules += r
    if name == "Transpose" and tr_codes:
        rules.insert(0, rule("set", "perm must be one of the perms the section does not mark unsupported",
                             param="perm", value="perm_code", values=sorted(tr_codes)))
    if name == "Expand":
        rules.append(rule("broadcast", "Expand patterns [b,c,1,w], [b,1,1,w], [b,c,h,1], [b,1,h,1], [b,c,1,1] -> "
                          "[b,c,h,w]", tensor="in0", patterns=EXPAND_PATTERNS, dims="bchw"))
        rules.append(rule("interval", "expanded h in [1,8192]", param="h", value="out0.d2", min=1, max=8192))
        rules.append(rule("interval", "expanded w in [1,8192]", param="w", value="out0.d3", min=1, max=8192))
    if alias:
        e["inherits"] = alias
        rules = []  # the fused/alias entry has exactly its base's limits
    else:
        dts = op.get("dtypes") or []
        if dts and name == "Where":
            # Where: mask_tensor is T1 = bool; x_tensor and the output are T2 = int8/float16 (y_tensor reads
            # "T1", a typo: it is selected into the T2 output and is quantized per-layer like x).
            for k, t in enumerate(("in2", "in1")):
                rules.insert(0, rule("dtype", "%s in {%s}" % (("y: T2", "x: T2")[k], ", ".join(dts)), tensor=t,
                                     dtypes=dts))
        elif dts and name != "Transpose":
            rules.insert(0, rule("dtype", "T1 in {%s}" % ", ".join(dts), tensor="in0", dtypes=dts))
        if name == "Transpose":
            rules.insert(0, rule("dtype", "input T1 = int8; output int8, int16 or float16", tensor="in0",
                                 dtypes=["int8", "int16", "float16"]))
        q = op.get("quant") or []
        if q == ["per-layer"]:
            rules.append(rule("quant", "input/output quantization per-layer", tensor="in1" if name == "Where" else "in0",
                              granularity=["per-layer"]))
            rules.append(rule("quant", "output quantization per-layer", tensor="out0", granularity=["per-layer"]))
    if name in ("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"):
        e["bind"] = dict(POOL_BIND)
    if name in ("GRU", "LSTM"):
        e["bind"] = dict(RNN_BIND)
    if name == "Softmax":
        e["bind"] = {"axis": "(attr.axis ?? (1 - 2 * (opset >= 13))) + ((attr.axis ?? (1 - 2 * (opset >= 13))) < 0)"
                             " * in0.rank"}
    e["rules"] = rules
    return e


def rknn_platform(key, pid, aliases, sec, fname, ext):
    hds = headings(sec)
    ops = ext[key]
    by_name = {}
    for o in ops:
        by_name.setdefault(o["op"], o)
    doc = base_doc(pid, aliases, sec + " " + key)
    uncovered = []
    pq = (8192, 2048)
    for o in ops:
        for c in o["constraints"]:
            if c["kind"] == "note" and c.get("param") == "p,q":
                m = re.search(r"p=(\d+), q=(\d+)", c["rule"])
                pq = (int(m.group(1)), int(m.group(2)))
    for num, name, full in hds:
        o = by_name.get(name)
        if o is None or any(c["kind"] == "truncated" for c in o["constraints"]):
            uncovered.append({"heading": full, "reason": "heading present but its body is cut off: the seed text "
                              "ends here (rest of the " + key + " table absent from seed 001)"})
            continue
        doc["ops"].append(op_entry(key, sec, o, full, pq))
    if key == "RV1103/RV1106":
        uncovered.append({"heading": sec + ".34- (rest of " + key + ")", "reason": "absent: seed 001 is truncated "
                          "after heading 3.4.33 Div; the remaining RV1103/RV1106 operators are not in the seed"})
        doc["note"] = "seed 001 is cut off inside 3.4: 32 operators encoded, 3.4.33 Div has no body, the rest is absent"
        doc["unlisted"] = "not_in_seed"
    uncovered.append({"heading": "CPU operator list / model input-output limits",
                      "reason": "promised by the seed 001 title but absent from the text"})
    doc["uncovered"] = uncovered
    write(fname, doc)


def base_doc(pid, aliases, section, seed=SEED1, toolchain="RKNN Compiler V2.3.2"):
    return {
        "schema_version": 1, "platform": pid, "aliases": aliases, "toolchain": toolchain, "seed": seed,
        "section": section, "engine": "NPU", "cpu_fallback": True,
        "cpu_fallback_note": "RKNN runs operators outside the NPU tables on the CPU; seed 001's CPU operator list "
                             "is absent, so CPU support itself is not verified",
        "static_shapes": True,
        "dtype_conversions": {"float32": ["float16", "int8"]},
        "bind": dict(BIND), "ops": [],
    }


def no_table(pid, aliases, fname, history):
    doc = base_doc(pid, aliases, "2 (version history)")
    doc["tables_in_seed"] = False
    doc["note"] = "named only in seed 001's version history (" + history + "); no operator tables in the seed"
    doc["uncovered"] = [{"heading": pid + " operator tables", "reason": "not in the seed: " + history}]
    del doc["bind"]
    write(fname, doc)


def rv1103b():
    """Seed 004: RKNN2 V2.5.0 for RV1103B/RV1106B, activations and extension ops."""
    ext = load_extraction(4)
    lines = seed_lines(SEED4)
    doc = base_doc("RV1103B_RV1106B", ["RV1103B", "RV1106B"], "RV1103B/RV1106B", seed=SEED4,
                   toolchain="RKNN2 V2.5.0")
    doc["note"] = ("seed 004 covers only part of the RV1103B/RV1106B operator set (activations and extension "
                   "ops); other operators are not in the seed")
    doc["unlisted"] = "not_in_seed"
    doc["cpu_fallback_note"] = ("RKNN2 runs operators outside the NPU limits on the CPU; seed 004 has no CPU "
                                "operator list, so CPU support itself is not verified")
    doc["bind"] = dict(BIND)
    for o in ext:
        name = o["op"]
        hd = next((ln.strip() for ln in lines if ln.strip().endswith(name) and len(ln.strip()) < 40), name)
        e = {"name": name, "heading": hd}
        m = match_for(name)
        if m:
            e["match"] = m
        rules = []
        dt = (o.get("dtypes") or {}).get("T1")
        if dt:
            rules.append(rule("dtype", "T1 = %s" % ", ".join(dt), tensor="in0", dtypes=dt))
            rules.append(rule("dtype", "output T1 = %s" % ", ".join(dt), tensor="out0", dtypes=dt))
        for c in o["constraints"]:
            t = c["rule"]
            if c["kind"] == "dtype":
                continue
            if c["kind"] == "shape" and "4D" in t:
                rules.append(rule("rank", t, tensor="in0", ranks=[4]))
            elif c["kind"] == "quant-param" and "per-layer" in t:
                rules.append(rule("quant", t, tensor="in0", granularity=["per-layer"]))
                rules.append(rule("quant", t, tensor="out0", granularity=["per-layer"]))
            else:
                rules.append(rule("note", t))
        e["rules"] = rules
        doc["ops"].append(e)
    doc["uncovered"] = [{"heading": "other RV1103B/RV1106B operators",
                         "reason": "not in the seed: seed 004 lists only %d operators" % len(ext)}]
    write("rknn2_v2.5.0_rv1103b_rv1106b.json", doc)


def main():
    ext = load_extraction(1)
    for p in PLATFORMS:
        rknn_platform(*p, ext)
    no_table("RK3576_RV1126B", ["RK3576", "RV1126B"], "rknn_v2.3.2_rk3576_rv1126b.json",
             "V2.3.2 added RV1126B docs; V2.0.0-beta new RK3576 op spec")
    no_table("RK2118", [], "rknn_v2.3.2_rk2118.json", "V2.1.0 added RK2118 docs; V2.0.0-beta new RK2118 op spec")
    rv1103b()


if __name__ == "__main__":
    main()
