# SPDX-License-Identifier: MIT
"""Generates drivers/compiler/specs/tnpuv2_uranus.json from seed 003 (uranus-tnpuv2-release operator
support page). Rules are written out by hand from the seed text (table 1 and the per-operator
detail blocks). The seed uses [N,H,W,C] notation with axis 0=N,1=H,2=W,3=C; the graph IR from ONNX
is NCHW, so binds map IR dims/axes onto the seed's notation."""
from common import rule, write

SEED = "003_e7d10f4e2f42e79a.txt"
TABLE = "表 1. 算子支持列表"


def nhwc_of(a):
    """NCHW axis expression -> the seed's NHWC axis number (4-D)."""
    n = "((%s) + ((%s) < 0) * 4)" % (a, a)
    return "((%s == 1) * 3 + (%s == 2) * 1 + (%s == 3) * 2)" % (n, n, n)


def nhwc_bit(a):
    n = "((%s) + ((%s) < 0) * 4)" % (a, a)
    return "((%s == 0) * 1 + (%s == 2) * 2 + (%s == 3) * 4 + (%s == 1) * 8)" % (n, n, n, n)


# Bit mask of the reduced axes in the seed's [N,H,W,C] numbering (N=1, H=2, W=4, C=8); axes come
# from the attribute (opset < 18) or the constant second input (opset >= 18); absent entries add 0.
AXES_MASK = " + ".join("(defined(attr.axes.%d ?? data.in1.%d) * %s)" % (k, k, nhwc_bit("attr.axes.%d ?? data.in1.%d ?? 0" % (k, k)))
                       for k in range(4))

BIND = {
    "N": "in0.d0", "C": "in0.d1", "H": "in0.d2", "W": "in0.d3",
    "kernel_h": "in1.d2", "kernel_w": "in1.d3",
    "stride_h": "attr.strides.0 ?? 1", "stride_w": "attr.strides.1 ?? 1",
    "dilation_h": "attr.dilations.0 ?? 1", "dilation_w": "attr.dilations.1 ?? 1",
    "group": "attr.group ?? 1", "out_c": "out0.d1",
    "axis_raw": "(attr.axis ?? 0) + ((attr.axis ?? 0) < 0) * in0.rank",
    "axis_nhwc": nhwc_of("attr.axis ?? 0"),
    "axes_mask": AXES_MASK,
    "axes_count": "attr.axes.len ?? data.in1.len",
    "is_depthwise": "group > 1 && group == C && group == out_c",
    "is_group": "group > 1 && !(group == C && group == out_c)",
    "max_k": "max(kernel_h, kernel_w)",
}
POOL = {"kernel_h": "attr.kernel_shape.0", "kernel_w": "attr.kernel_shape.1"}


def bits(vals, what="in/out", sec=None, value="bits", when=None):
    return rule("set", "%s quantization bit width in {%s}" % (what, ", ".join(map(str, vals))),
                param="%s bit width" % what,
                value=value, values=vals, when=when, source={"section": sec} if sec else None)


def rank4(which=("in0", "out0")):
    return [rule("rank", "input and output are 4D feature tensors", tensor=t, ranks=[4]) for t in which]


def one_in_one_out():
    return rule("formula", "exactly one input and one output", expr="nin == 1 && nout == 1")


def fp32(t):
    return rule("dtype", "FP32 input and output (quantized version not supported)", tensor=t, dtypes=["float32"])


def note(t):
    return rule("note", t)


def status_unsupported(t):
    return rule("status", t, status="unsupported")


OPS = [
    ("Add", "Add", ["Add"], None, [
        bits([8, 16], sec=TABLE + ": Add"),
        rule("broadcast", "element-wise, scalar constant, channel-constant ([N,1,1,C] in the seed's NHWC) or spatial "
             "broadcast ([N,H,W,1] -> [N,H,W,C]); no batch-dim broadcast, no width-only broadcast",
             tensor="in*", dims="nchw", patterns=["scalar", "nc11", "n1hw"]),
        note("spatial-broadcast add: some quantization configs require W to be even"),
        note("spatial-broadcast add: no fused activation"),
        rule("formula", "spatial-broadcast add: exactly two inputs and one output", expr="nin == 2 && nout == 1"),
    ]),
    ("AveragePool", "AveragePool", ["AveragePool"], POOL, rank4() + [
        bits([4, 8, 12, 16], sec=TABLE + ": AveragePool"),
        rule("interval", "kernel height positive", param="kernel_h", value="kernel_h", min=1),
        rule("interval", "kernel width positive", param="kernel_w", value="kernel_w", min=1),
        rule("interval", "stride height positive", param="stride_h", value="stride_h", min=1),
        rule("interval", "stride width positive", param="stride_w", value="stride_w", min=1),
        rule("formula", "kernel <= 7x7: covered strides are stride_h, stride_w in {1,2,4}, or stride_w = 3 with "
             "stride_h in {1,2,3}", param="stride",
             expr="((stride_h == 1 || stride_h == 2 || stride_h == 4) && (stride_w == 1 || stride_w == 2 || "
                  "stride_w == 4)) || (stride_w == 3 && stride_h >= 1 && stride_h <= 3)",
             when="kernel_h <= 7 && kernel_w <= 7"),
        note("other positive kernel/stride combos: whatever the converter accepts"),
    ]),
    ("ChannelShuffle", "ChannelShuffle", [], None, rank4() + [
        bits([8, 16], sec=TABLE + ": ChannelShuffle"),
        note("groups > 0 and input channels divisible by groups (no ONNX operator maps to ChannelShuffle)"),
    ]),
    ("Concat", "Concat", ["Concat"], None, [
        bits([8, 16], sec=TABLE + ": Concat"),
        rule("formula", "at least 1 input, exactly 1 output", expr="nin >= 1 && nout == 1"),
        rule("interval", "concat axis within input rank (negative axis allowed)", param="axis",
             value="attr.axis", min_open=False, min=0, max=3, when="in0.rank == 4 && attr.axis >= 0"),
        rule("formula", "4D feature tensors: concat only along H, W or C (axis 1,2,3 in [N,H,W,C]); not along "
             "the batch dimension", param="axis", expr="axis_raw != 0", when="in0.rank == 4"),
    ]),
    ("Conv2D", "Conv2D", ["Conv"], None, rank4() + [
        bits([4, 8, 12, 16], sec=TABLE + ": Conv2D"),
        bits([4, 8, 16, 20], what="normal/group conv weight", value="in1.bits", when="!is_depthwise",
             sec=TABLE + ": Conv2D"),
        bits([8], what="depthwise conv weight", value="in1.bits", when="is_depthwise", sec=TABLE + ": Conv2D"),
        rule("constant", "kernel (weights) fixed at model conversion", tensor="in1"),
        rule("interval", "kernel height positive", param="kernel_h", value="kernel_h", min=1),
        rule("interval", "kernel width positive", param="kernel_w", value="kernel_w", min=1),
        rule("formula", "padding: non-negative integers only", param="pads",
             expr="(attr.pads.0 ?? 0) >= 0 && (attr.pads.1 ?? 0) >= 0 && (attr.pads.2 ?? 0) >= 0 && "
                  "(attr.pads.3 ?? 0) >= 0"),
        note("conv cannot be configured as a fully-connected layer"),
        rule("set", "normal conv, kernel <= 7: publicly covered strides {1,2,4}", param="stride_h",
             value="stride_h", values=[1, 2, 4], when="group == 1 && max_k <= 7"),
        rule("set", "normal conv, kernel <= 7: publicly covered strides {1,2,4}", param="stride_w",
             value="stride_w", values=[1, 2, 4], when="group == 1 && max_k <= 7"),
        rule("formula", "normal large-kernel conv (kernel_h or kernel_w > 7): only dilation = 1 and stride 1 or 2",
             param="large kernel", expr="dilation_h == 1 && dilation_w == 1 && stride_h <= 2 && stride_w <= 2",
             when="group == 1 && max_k > 7"),
        rule("formula", "dilation > 1 requires kernel <= 7x7, groups = 1, stride 1 or 2", param="dilation",
             expr="max_k <= 7 && group == 1 && stride_h <= 2 && stride_w <= 2",
             when="dilation_h > 1 || dilation_w > 1"),
        rule("formula", "group conv: input and output channels divisible by groups", param="group",
             expr="C % group == 0 && out_c % group == 0", when="is_group"),
        rule("alignment", "group conv: output channels per group must be a multiple of 8",
             param="output channels per group", value="out_c / group", multiple=8, when="is_group"),
        rule("formula", "group conv: groups < output channels", param="group", expr="group < out_c",
             when="is_group"),
        rule("interval", "group/depthwise conv: kernel_h in 1..7", param="kernel_h", value="kernel_h", min=1, max=7,
             when="group > 1"),
        rule("interval", "group/depthwise conv: kernel_w in 1..7", param="kernel_w", value="kernel_w", min=1, max=7,
             when="group > 1"),
        rule("set", "group/depthwise conv: stride in {1,2,4}", param="stride_h", value="stride_h",
             values=[1, 2, 4], when="group > 1"),
        rule("set", "group/depthwise conv: stride in {1,2,4}", param="stride_w", value="stride_w",
             values=[1, 2, 4], when="group > 1"),
        rule("formula", "group/depthwise conv: dilation = 1 only", param="dilation",
             expr="dilation_h == 1 && dilation_w == 1", when="group > 1"),
        rule("formula", "depthwise: channel multiplier 1 only (groups == in channels == out channels)",
             param="group", expr="out_c == C", when="group > 1 && group == C"),
    ]),
    ("DepthToSpace", "DepthToSpace", ["DepthToSpace"], None, rank4() + [
        bits([8, 16], sec=TABLE + ": DepthToSpace"),
        rule("interval", "block_size > 1", param="block_size", value="attr.blocksize", min=1, min_open=True),
        rule("formula", "input channels divisible by block_size * block_size", param="channels",
             expr="C % (attr.blocksize * attr.blocksize) == 0"),
        rule("set", "modes DCR and CRD", param="mode", value="attr.mode ?? 'DCR'", values=["DCR", "CRD"]),
    ]),
    # The tnpuv2 converter view keeps a YOLO head's Dequantize in domain "tnpuv2" (the GenerateBox input).
    ("Dequantize", "Dequantize", ["DequantizeLinear", {"op_type": "DequantizeLinear", "domain": "tnpuv2"}], None, [
        bits([8, 12, 16], what="input", sec=TABLE + ": Dequantize", value="in0.bits"),
        rule("dtype", "output FP32", tensor="out0", dtypes=["float32"]),
        rule("constant", "scale matching the input must be provided", tensor="in1"),
    ]),
    ("Embedding", "Embedding", [{"op_type": "Embedding", "domain": "tnpuv2"}], None, [
        rule("dtype", "indices INT32", tensor="in1", dtypes=["int32"], source={"section": "Embedding"}),
        bits([8, 16], what="output", sec=TABLE + ": Embedding", value="out0.bits"),
        note("each index within the table rows; output last dim = the table's vector length (the tnpuv2 converter "
             "maps a Gather of a constant table by runtime indices to Embedding)")]),
    ("Erf", "Erf", ["Erf"], None, [one_in_one_out(), fp32("in0"), fp32("out0")]),
    ("Gather", "Gather", ["Gather"], None, [
        bits([8], sec=TABLE + ": Gather"),
        rule("rank", "input rank 1..6", tensor="in0", ranks=[1, 2, 3, 4, 5, 6]),
        rule("interval", "number of indices 1..64", param="number of indices", value="in1.numel", min=1, max=64),
        rule("constant", "index list fixed at model conversion", tensor="in1"),
    ]),
    ("GenerateBox", "GenerateBox", [{"op_type": "GenerateBox", "domain": "tnpuv2"}], None, [
        rule("formula", "YOLOv3, YOLOv5 or YOLOv8 post-processing",
             expr="attr.version == 3 || attr.version == 5 || attr.version == 8", source={"section": "GenerateBox"}),
        rule("interval", "class count > 0", param="num_classes", value="attr.num_classes", min=1,
             source={"section": "GenerateBox"}),
        rule("dtype", "input FP32 (or 16-bit quantized)", tensor="in0", dtypes=["float32", "int16", "uint16"],
             source={"section": "GenerateBox"}),
        note("thresholds in [0,1]; NMS type, anchors, strides and reg_max fixed at conversion (the tnpuv2 converter "
             "matches the YOLOv5 and YOLOv8 decodes of the ultralytics exports and the YOLOv3 darknet decode as "
             "GenerateBox; NMS off)")]),
    ("GlobalAveragePool", "GlobalAveragePool", ["GlobalAveragePool"], None, rank4() + [
        bits([4, 8, 12, 16], sec=TABLE + ": GlobalAveragePool"),
        rule("formula", "output H and W both 1", expr="out0.d2 == 1 && out0.d3 == 1"),
    ]),
    ("GRU", "GRU", ["GRU"], None, [
        bits([8], sec=TABLE + ": GRU"),
        rule("set", "linear_before_reset must be enabled", param="linear_before_reset",
             value="attr.linear_before_reset ?? 0", values=[1]),
        rule("alignment", "hidden size multiple of 16", param="hidden_size", value="attr.hidden_size", multiple=16),
        rule("alignment", "input feature count multiple of 16", param="input_size", value="in0.d2", multiple=16),
        rule("formula", "weight bit width even and <= 8", param="weight bits",
             expr="in1.bits <= 8 && in1.bits % 2 == 0"),
    ]),
    ("LeakyReLU", "LeakyReLU", ["LeakyRelu"], None, [one_in_one_out(), bits([8], sec=TABLE + ": LeakyReLU")]),
    ("MatMul", "MatMul", ["MatMul"], None, [
        bits([4, 8, 12, 16], sec=TABLE + ": MatMul"),
        rule("rank", "A rank 2..4", tensor="in0", ranks=[2, 3, 4]),
        rule("rank", "B rank 2..5", tensor="in1", ranks=[2, 3, 4, 5]),
        rule("rank", "output rank 2..4", tensor="out0", ranks=[2, 3, 4]),
        rule("formula", "leading dims of A and B identical (no leading-dim broadcast)", param="leading dims",
             expr="in0.d0 == in1.d0", when="in0.rank >= 3 && in0.rank == in1.rank"),
        rule("formula", "4-bit input: B last dim even and output N a multiple of 16", param="N",
             expr="in1.dlast % 2 == 0 && out0.dlast % 16 == 0", when="bits == 4"),
    ]),
    ("MaxPool", "MaxPool", ["MaxPool"], POOL, rank4() + [
        bits([4, 8, 16], sec=TABLE + ": MaxPool"),
        rule("interval", "kernel height positive", param="kernel_h", value="kernel_h", min=1),
        rule("interval", "kernel width positive", param="kernel_w", value="kernel_w", min=1),
        rule("interval", "stride height positive", param="stride_h", value="stride_h", min=1),
        rule("interval", "stride width positive", param="stride_w", value="stride_w", min=1),
        note("concrete kernel/stride combos: as validated by the converter"),
    ]),
    ("Mul", "Mul", ["Mul"], None, [
        bits([8, 12, 14, 16], sec=TABLE + ": Mul"),
        rule("broadcast", "element-wise, channel broadcast (C = 1 input), spatial broadcast (H/W), width broadcast "
             "(W = 1) or scalar; no broadcast into the batch dimension", tensor="in*", dims="nchw",
             patterns=["scalar", "n1hw", "nc11", "nc1w", "nch1"]),
    ]),
    ("Normalize", "Normalize", ["LpNormalization", "LayerNormalization"], None, [
        bits([8, 16], sec=TABLE + ": Normalize"),
        rule("interval", "variance epsilon > 0", param="epsilon", value="attr.epsilon", min=0, min_open=True),
    ]),
    ("Pad", "Pad", ["Pad"], None, rank4() + [
        bits([4, 8, 16], sec=TABLE + ": Pad"),
        rule("set", "Constant mode only", param="mode", value="attr.mode ?? 'constant'", values=["constant"]),
        rule("constant", "padding fixed at conversion", tensor="in1"),
        rule("formula", "every pad size non-negative", param="pads",
             expr=" && ".join("(data.in1.%d ?? attr.pads.%d ?? 0) >= 0" % (k, k) for k in range(8))),
        note("channel-direction padding must be 8-aligned in some quantization configs"),
    ]),
    # Seed 003 Pow: FP32, or quantized through fixed lookup-table parameters the converter generates.
    ("Pow", "Pow", ["Pow"], None, [
        rule("dtype", "FP32 input and output, or quantized through the converter's fixed lookup table (seed 003 Pow)",
             tensor="in0", dtypes=["float32", "int8", "uint8", "int16", "uint16"]),
        rule("dtype", "FP32 input and output, or quantized through the converter's fixed lookup table (seed 003 Pow)",
             tensor="out0", dtypes=["float32", "int8", "uint8", "int16", "uint16"]),
        rule("constant", "exponent fixed at conversion (no dynamic runtime exponent)", tensor="in1"),
    ]),
    ("ReduceMax", "ReduceMax", ["ReduceMax"], None, [
        bits([8], sec=TABLE + ": ReduceMax"),
        rule("formula", "axes = [3] only (max over the channel dim of [N,H,W,C])", param="axes",
             expr="axes_mask == 8"),
        rule("alignment", "input channel count multiple of 16", param="C", value="C", multiple=16),
    ]),
    ("ReduceMean", "ReduceMean", ["ReduceMean"], None, rank4(("in0",)) + [
        bits([8, 12, 14, 16], sec=TABLE + ": ReduceMean"),
        rule("set", "allowed axes [2], [1,2], [1,2,3], [3] of [N,H,W,C] (as a bit mask N=1,H=2,W=4,C=8)",
             param="axes mask", value="axes_mask", values=[4, 6, 14, 8]),
        rule("alignment", "8-bit channel reduction: input channels multiple of 16", param="C", value="C",
             multiple=16, when="bits == 8 && axes_mask >= 8"),
    ]),
    ("ReduceMin/ReduceProd", "ReduceMin/ReduceProd", ["ReduceMin", "ReduceProd"], None, [
        status_unsupported("no public support path for ReduceMin and ReduceProd")]),
    ("ReduceSum", "ReduceSum", ["ReduceSum"], None, rank4(("in0",)) + [
        bits([8, 12, 14, 16], sec=TABLE + ": ReduceSum"),
        rule("set", "allowed axes [3], [2], [1,2], [1,2,3], [0,1,2,3] of [N,H,W,C] (bit mask N=1,H=2,W=4,C=8)",
             param="axes mask", value="axes_mask", values=[8, 4, 6, 14, 15]),
    ]),
    ("ReLU", "ReLU", ["Relu"], None, [one_in_one_out()] + rank4() + [bits([8, 16], sec=TABLE + ": ReLU")]),
    ("Reshape", "Reshape", ["Reshape"], None, [
        bits([8, 16], sec=TABLE + ": Reshape"),
        rule("constant", "target shape fixed at model conversion", tensor="in1"),
        rule("formula", "input element count == output element count", expr="in0.numel == out0.numel"),
    ]),
    ("Resize/Upsample", "Resize/Upsample", ["Resize", "Upsample"], None, rank4() + [
        bits([4, 8, 16], sec=TABLE + ": Resize/Upsample"),
        rule("formula", "Nearest/FillZero: positive integer upscale factors in H and W", param="scale",
             expr="out0.d2 % in0.d2 == 0 && out0.d3 % in0.d3 == 0 && out0.d2 >= in0.d2 && out0.d3 >= in0.d3",
             when="(attr.mode ?? 'nearest') == 'nearest'"),
        bits([4, 8], what="Nearest/FillZero", when="(attr.mode ?? 'nearest') == 'nearest'"),
        bits([8, 16], what="Bilinear", when="(attr.mode ?? 'nearest') == 'linear'"),
        rule("set", "modes Nearest/FillZero and Bilinear", param="mode", value="attr.mode ?? 'nearest'",
             values=["nearest", "linear"]),
    ]),
    ("Slice", "Slice", ["Slice"], None, rank4() + [
        bits([4, 8, 16], sec=TABLE + ": Slice"),
        rule("formula", "contiguous slicing only: step must be 1", param="steps",
             expr=" && ".join("(data.in4.%d ?? 1) == 1" % k for k in range(4))),
        rule("interval", "at most 4 slice axes", param="slice axes", value="data.in1.len", max=4),
        rule("constant", "start fixed at conversion", tensor="in1"),
        rule("constant", "end fixed at conversion", tensor="in2"),
    ]),
    ("Softmax", "Softmax", ["Softmax"], None, [one_in_one_out()] + rank4() + [
        bits([8, 12, 16], what="input", value="in0.bits", sec=TABLE + ": Softmax"),
        rule("formula", "only along the channel dim C: axis 3 of [N,H,W,C] (NCHW axis 1)", param="axis",
             expr=nhwc_of("attr.axis ?? (1 - 2 * (opset >= 13))") + " == 3"),
    ]),
    ("SpaceToDepth", "SpaceToDepth", ["SpaceToDepth"], None, rank4() + [
        bits([8, 16], sec=TABLE + ": SpaceToDepth"),
        rule("interval", "block_size > 1", param="block_size", value="attr.blocksize", min=1, min_open=True),
        rule("formula", "input H and W divisible by block_size", param="H, W",
             expr="H % attr.blocksize == 0 && W % attr.blocksize == 0"),
    ]),
    ("Sqrt", "Sqrt", ["Sqrt"], None, [one_in_one_out(), fp32("in0"), fp32("out0"),
                                      note("input values >= 0")]),
    ("Squeeze/Unsqueeze", "Squeeze/Unsqueeze", ["Squeeze", "Unsqueeze"], None, [
        status_unsupported("no public support path for Squeeze and Unsqueeze; fold into a static Reshape")]),
    ("Swish", "Swish", ["Swish"], None, [
        bits([8, 16], what="input (configs 8->8, 16->16, 16->8)", sec=TABLE + ": Swish"),
        note("fixed lookup-table form only; LUT parameters generated by the converter"),
    ]),
    ("Transpose/Permute", "Transpose/Permute", ["Transpose"], None, [
        bits([8, 16], sec=TABLE + ": Transpose/Permute"),
        rule("rank", "tensor rank 2..5", tensor="in0", ranks=[2, 3, 4, 5]),
        rule("formula", "number of axes == input rank", param="perm", expr="attr.perm.len == in0.rank"),
    ]),
]


def main():
    doc = {
        "schema_version": 1, "platform": "tnpuv2", "aliases": ["uranus-tnpuv2", "uranus_tnpuv2"],
        "toolchain": "uranus-tnpuv2-release", "seed": SEED, "section": "算子支持列表", "engine": "NPU",
        "cpu_fallback": False, "static_shapes": True, "quant_bits_default": 8,
        "note": "no CPU path in seed 003: operators outside the table or its limits are unsupported; the seed's "
                "[N,H,W,C] axis notation is mapped onto the NCHW graph IR; --bits sets the quantization width",
        "bind": BIND, "ops": [],
    }
    for name, heading, onnx, bind, rules in OPS:
        e = {"name": name, "heading": heading}
        if onnx:
            e["match"] = [t if isinstance(t, dict) else {"op_type": t} for t in onnx]
        if bind:
            e["bind"] = bind
        e["rules"] = [r for r in rules if r]
        doc["ops"].append(e)
    doc["uncovered"] = []
    write("tnpuv2_uranus.json", doc)


if __name__ == "__main__":
    main()
