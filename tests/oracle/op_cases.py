# SPDX-License-Identifier: MIT
"""fp32 operator cases for gen_op_cases.py (tolerances: (atol, rtol), see README table in the
test source). Every case uses its own seed so adding one does not change the others."""
import zlib

import op_cases_q

F = (1e-5, 1e-5)        # plain float arithmetic
ACC = (2e-5, 1e-5)      # accumulations (Conv/MatMul/pools): different summation order
TRANS = (2e-5, 2e-5)    # exp/tanh/erf: onnxruntime uses its own vectorised approximations


def rng_for(np, name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def generate(g, np):
    f32 = np.float32

    def R(name):
        return rng_for(np, name)

    def u(r, *shape, lo=-1.0, hi=1.0):
        return r.uniform(lo, hi, size=shape).astype(f32)

    def i64(v):
        return np.array(v, dtype=np.int64)

    # Conv family.
    conv = [
        ("conv_3x3_pad1", (1, 3, 9, 9), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
        ("conv_stride2", (2, 4, 10, 11), (6, 4, 3, 3), dict(strides=[2, 2], pads=[1, 0, 1, 0])),
        ("conv_dilation2", (1, 3, 12, 12), (5, 3, 3, 3), dict(dilations=[2, 2], pads=[2, 2, 2, 2])),
        ("conv_group2", (1, 4, 8, 8), (6, 2, 3, 3), dict(group=2, pads=[1, 1, 1, 1])),
        ("conv_depthwise", (1, 8, 9, 9), (8, 1, 3, 3), dict(group=8, pads=[1, 1, 1, 1], strides=[2, 2])),
        ("conv_same_upper", (1, 3, 10, 10), (4, 3, 4, 4), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
        ("conv_same_lower", (1, 3, 9, 10), (4, 3, 4, 3), dict(auto_pad="SAME_LOWER")),
        ("conv_valid", (1, 3, 9, 9), (4, 3, 3, 2), dict(auto_pad="VALID", strides=[1, 2])),
        ("conv_1x1", (1, 16, 7, 7), (8, 16, 1, 1), {}),
        ("conv_1d", (2, 3, 20), (4, 3, 5), dict(pads=[2, 1], strides=[2])),
        ("conv_asym_pads_k7", (1, 3, 16, 16), (8, 3, 7, 7), dict(pads=[3, 2, 1, 3], strides=[2, 2])),
    ]
    for name, xs, ws, at in conv:
        r = R(name)
        ins = [(u(r, *xs), False), (u(r, *ws), True), (u(r, ws[0]), True)]
        g.case(name, "Conv", ins, at, tol=ACC)
    r = R("conv_nobias")
    g.case("conv_nobias", "Conv", [(u(r, 1, 2, 5, 5), False), (u(r, 3, 2, 2, 2), True)], {}, tol=ACC)
    ct = [
        ("convtranspose_s2", (1, 4, 5, 5), (4, 3, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
        ("convtranspose_group2", (1, 4, 4, 4), (4, 2, 2, 2), dict(group=2, strides=[2, 2])),
        ("convtranspose_same_upper", (1, 2, 5, 6), (2, 3, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
        ("convtranspose_output_shape", (1, 2, 4, 4), (2, 2, 3, 3), dict(strides=[2, 2], output_shape=[9, 9])),
        ("convtranspose_dilation", (1, 2, 4, 4), (2, 2, 3, 3), dict(dilations=[2, 2])),
        ("convtranspose_same_lower", (1, 2, 5, 6), (2, 3, 3, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
        ("convtranspose_asym_pads_k4", (1, 3, 4, 5), (3, 2, 4, 4), dict(strides=[2, 3], pads=[0, 1, 2, 1], output_padding=[1, 2])),
        ("convtranspose_1d", (2, 3, 7), (3, 4, 5), dict(strides=[3], pads=[1, 2])),
    ]
    for name, xs, ws, at in ct:
        r = R(name)
        g.case(name, "ConvTranspose", [(u(r, *xs), False), (u(r, *ws), True), (u(r, ws[1] * at.get("group", 1)), True)], at, tol=ACC)

    # MatMul / Gemm.
    for name, a, b in [("matmul_2d", (7, 33), (33, 19)), ("matmul_batched", (3, 5, 16), (16, 9)),
                       ("matmul_broadcast", (2, 1, 4, 8), (3, 8, 5)), ("matmul_vec", (8,), (8, 6)),
                       ("matmul_vec_rhs", (2, 5, 8), (8,)), ("matmul_large", (70, 130), (130, 45))]:
        r = R(name)
        g.case(name, "MatMul", [(u(r, *a), False), (u(r, *b), False)], tol=ACC)
    r = R("gemm_trans")
    g.case("gemm_trans", "Gemm", [(u(r, 9, 6), False), (u(r, 10, 9), True), (u(r, 10), True)],
           dict(transA=1, transB=1, alpha=0.75, beta=1.5), tol=ACC)
    r = R("gemm_c_col")
    g.case("gemm_c_col", "Gemm", [(u(r, 5, 12), False), (u(r, 12, 7), True), (u(r, 5, 1), True)], {}, tol=ACC)

    # Broadcasting binary ops.
    shapes = [((2, 3, 4, 5), (3, 1, 5)), ((4, 1), (1, 6)), ((2, 3, 4), ())]
    for op in ["Add", "Sub", "Mul", "Div"]:
        for i, (sa, sb) in enumerate(shapes):
            name = "%s_bcast%d" % (op.lower(), i)
            r = R(name)
            b = u(r, *sb, lo=0.5, hi=2.0) if op == "Div" else u(r, *sb)
            if op == "Div":
                b = (b * np.where(r.uniform(size=sb) < 0.5, -1, 1)).astype(f32)
            g.case(name, op, [(u(r, *sa), False), (b, False)], tol=F)

    # Pools.
    pools = [
        ("maxpool_k3s2p1", "MaxPool", (1, 3, 9, 9), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("maxpool_ceil", "MaxPool", (1, 2, 10, 10), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
        ("maxpool_dilated", "MaxPool", (1, 2, 10, 10), dict(kernel_shape=[2, 2], dilations=[2, 2])),
        ("maxpool_same_upper", "MaxPool", (1, 2, 7, 7), dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")),
        ("maxpool_1d", "MaxPool", (1, 3, 15), dict(kernel_shape=[4], strides=[3], pads=[1, 2])),
        ("avgpool_pad_exclude", "AveragePool", (1, 3, 8, 8), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
        ("avgpool_pad_include", "AveragePool", (1, 3, 8, 8), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
        ("avgpool_ceil_include", "AveragePool", (1, 2, 9, 9), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, count_include_pad=1)),
        ("avgpool_s2", "AveragePool", (2, 2, 10, 8), dict(kernel_shape=[2, 3], strides=[2, 2])),
    ]
    for name, op, xs, at in pools:
        r = R(name)
        g.case(name, op, [(u(r, *xs), False)], at, tol=ACC)
    for op in ["GlobalAveragePool", "GlobalMaxPool"]:
        r = R(op)
        g.case(op.lower(), op, [(u(r, 2, 5, 7, 6), False)], tol=ACC)

    # Activations.
    def act(name, op, at=None, domain="", opset=19, lo=-4.0, hi=4.0, tol=F, extra=()):
        r = R(name)
        g.case(name, op, [(u(r, 2, 3, 5, 7, lo=lo, hi=hi), False)] + list(extra), at or {}, domain=domain, opset=opset, tol=tol)

    act("relu", "Relu")
    act("clip_inputs", "Clip", extra=[(np.array(-1.5, f32), True), (np.array(2.25, f32), True)])
    act("clip_relu6", "Clip", lo=-3, hi=9, extra=[(np.array(0.0, f32), True), (np.array(6.0, f32), True)])
    act("leakyrelu", "LeakyRelu", dict(alpha=0.1))
    act("sigmoid", "Sigmoid", tol=TRANS, lo=-10, hi=10)
    act("tanh", "Tanh", tol=TRANS)
    act("hardsigmoid", "HardSigmoid", dict(alpha=0.25, beta=0.4))
    act("hardswish", "HardSwish", lo=-5, hi=5)
    act("elu", "Elu", dict(alpha=0.7), tol=TRANS)
    act("gelu_erf_op20", "Gelu", opset=20, tol=TRANS)
    act("gelu_tanh_op20", "Gelu", dict(approximate="tanh"), opset=20, tol=TRANS)
    act("gelu_ms", "Gelu", domain="com.microsoft", tol=TRANS)
    act("softplus", "Softplus", tol=TRANS, lo=-10, hi=10)
    act("mish", "Mish", tol=TRANS)
    r = R("prelu")
    g.case("prelu", "PRelu", [(u(r, 2, 3, 4, 5), False), (u(r, 3, 1, 1), True)], tol=F)
    for name, op, ax in [("softmax_last", "Softmax", -1), ("softmax_axis1", "Softmax", 1), ("logsoftmax", "LogSoftmax", 2)]:
        r = R(name)
        g.case(name, op, [(u(r, 2, 4, 5, 6, lo=-5, hi=5), False)], dict(axis=ax), tol=TRANS)
    r = R("batchnorm")
    c = 4
    g.case("batchnorm", "BatchNormalization", [(u(r, 2, c, 5, 5), False), (u(r, c), True), (u(r, c), True), (u(r, c), True),
                                               (u(r, c, lo=0.2, hi=2.0), True)], dict(epsilon=1e-3), tol=F)

    # Shape / data movement (exact: pure copies).
    r = R("concat")
    g.case("concat_axis1", "Concat", [(u(r, 2, 3, 4), False), (u(r, 2, 1, 4), False), (u(r, 2, 2, 4), False)], dict(axis=1))
    r = R("split")
    g.case("split_input", "Split", [(u(r, 2, 7, 3), False), (i64([2, 4, 1]), True)], dict(axis=1), out_types=[f32] * 3)
    g.case("split_num_outputs", "Split", [(u(r, 10, 3), False)], dict(axis=0, num_outputs=3), opset=18, out_types=[f32] * 3)
    r = R("slice")
    g.case("slice_basic", "Slice", [(u(r, 5, 6, 7), False), (i64([1, -5]), True), (i64([4, 100]), True), (i64([0, 2]), True)])
    g.case("slice_neg_step", "Slice", [(u(r, 5, 6, 7), False), (i64([-1, 5]), True), (i64([-100, 0]), True), (i64([0, 1]), True),
                                        (i64([-2, -2]), True)])
    g.case("reshape", "Reshape", [(u(r, 2, 3, 4), False), (i64([0, -1, 2]), True)])
    g.case("flatten", "Flatten", [(u(r, 2, 3, 4, 5), False)], dict(axis=2))
    g.case("transpose", "Transpose", [(u(r, 2, 3, 4, 5), False)], dict(perm=[0, 2, 3, 1]))
    g.case("squeeze", "Squeeze", [(u(r, 1, 3, 1, 5), False), (i64([0, 2]), True)])
    g.case("unsqueeze", "Unsqueeze", [(u(r, 3, 5), False), (i64([0, 3]), True)])
    for mode in ["constant", "reflect", "edge"]:
        extra = [(np.array(0.5, f32), True)] if mode == "constant" else []
        g.case("pad_" + mode, "Pad", [(u(r, 1, 2, 4, 5), False), (i64([0, 0, 2, 1, 0, 0, 1, 3]), True)] + extra, dict(mode=mode))
    g.case("identity", "Identity", [(u(r, 3, 4), False)])
    r = R("gather")
    g.case("gather_axis0_i32", "Gather", [(u(r, 7, 5), False), (np.array([6, 0, 3, 3], np.int32), True)], dict(axis=0))
    g.case("depthtospace_dcr", "DepthToSpace", [(u(r, 2, 8, 3, 4), False)], dict(blocksize=2, mode="DCR"))
    g.case("depthtospace_crd", "DepthToSpace", [(u(r, 1, 18, 2, 3), False)], dict(blocksize=3, mode="CRD"))
    g.case("spacetodepth", "SpaceToDepth", [(u(r, 2, 3, 6, 4), False)], dict(blocksize=2))

    # Normalisations and Pow (onnxruntime computes x^2 and x^3 as products).
    r = R("layernorm")
    g.case("layernorm_last", "LayerNormalization", [(u(r, 2, 5, 16), False), (u(r, 16, lo=0.5, hi=1.5), True),
                                                    (u(r, 16), True)], dict(axis=-1, epsilon=1e-5), opset=17, tol=ACC)
    g.case("layernorm_axis1", "LayerNormalization", [(u(r, 3, 4, 6), False), (u(r, 4, 6), True)], dict(axis=1), opset=17,
           tol=ACC)
    r = R("lpnorm")
    g.case("lpnorm_p2", "LpNormalization", [(u(r, 3, 7, 4), False)], dict(axis=1, p=2), tol=ACC)
    g.case("lpnorm_p1", "LpNormalization", [(u(r, 4, 9), False)], dict(axis=-1, p=1), tol=ACC)
    r = R("pow")
    g.case("pow_square", "Pow", [(u(r, 4, 50, 50, lo=0, hi=2), False), (np.array(2.0, f32), True)])
    g.case("pow_cube", "Pow", [(u(r, 4, 50, 50, lo=-2, hi=2), False), (np.array(3.0, f32), True)])
    g.case("pow_general", "Pow", [(u(r, 3, 4, 5, lo=0.1, hi=2), False), (np.array(1.7, f32), True)], tol=F)

    # Indexing and generators (exact): what exported shape / mask subgraphs compute.
    r = R("index")
    g.case("gather_axis1_neg", "Gather", [(u(r, 3, 5, 4), False), (i64([[4, -1], [0, 2]]), True)], dict(axis=1))
    g.case("gather_scalar_idx", "Gather", [(i64([7, 3, 9, 4]), False), (i64(2), True)], dict(axis=0))
    g.case("expand", "Expand", [(u(r, 3, 1), False), (i64([2, 3, 4]), True)])
    g.case("tile", "Tile", [(u(r, 2, 3), False), (i64([2, 3]), True)])
    cond = r.uniform(size=(2, 1, 4)) > 0.5
    g.case("where", "Where", [(cond, False), (u(r, 3, 4), False), (u(r, 2, 3, 1), False)], out_types=[f32])
    g.case("range_i64", "Range", [(i64(10), False), (i64(-3), False), (i64(-4), False)])
    g.case("range_f32", "Range", [(np.array(0.5, f32), False), (np.array(3.0, f32), False), (np.array(0.75, f32), False)])
    g.case("constantofshape", "ConstantOfShape", [(i64([2, 3]), False)], out_types=[f32])  # default value: float 0
    g.case("round_half_even", "Round", [(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6], f32), False)])
    bools = r.uniform(size=(3, 4)) > 0.5
    g.case("not", "Not", [(bools, False)])
    g.case("and", "And", [(bools, False), (r.uniform(size=(4,)) > 0.5, False)])
    g.case("or", "Or", [(bools, False), (r.uniform(size=(3, 1)) > 0.5, False)])
    g.case("greaterorequal", "GreaterOrEqual", [(i64([[1, 5, 3]]), False), (i64([[1], [4]]), False)], out_types=[np.bool_])

    # Resize.
    resize = [
        ("resize_nearest_half_pixel", dict(mode="nearest"), [1, 1, 2.0, 1.5], None),
        ("resize_nearest_asym_floor", dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), [1, 1, 2, 2], None),
        ("resize_nearest_align_ceil", dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil"), None, [1, 2, 9, 7]),
        ("resize_nearest_down", dict(mode="nearest", coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="ceil"), [1, 1, 0.5, 0.6], None),
        ("resize_linear_half_pixel", dict(mode="linear"), [1, 1, 2, 2], None),
        ("resize_linear_align", dict(mode="linear", coordinate_transformation_mode="align_corners"), None, [1, 2, 7, 11]),
        ("resize_linear_asym_down", dict(mode="linear", coordinate_transformation_mode="asymmetric"), [1, 1, 0.5, 0.75], None),
        ("resize_linear_pytorch", dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), None, [1, 2, 1, 9]),
    ]
    for name, at, scales, sizes in resize:
        r = R(name)
        ins = [(u(r, 1, 2, 4, 5), False), (None, True)]
        ins.append((np.array(scales, f32), True) if scales else (None, True))
        if sizes:
            ins.append((i64(sizes), True))
        # (tf_half_pixel_for_nearest: onnxruntime 1.30 rejects it, not tested.)
        g.case(name, "Resize", ins, at, tol=F)

    # Reductions.
    for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum"]:
        r = R(op)
        g.case(op.lower() + "_axes", op, [(u(r, 2, 3, 4, 5), False), (i64([1, 3]), True)], dict(keepdims=0), opset=18, tol=ACC)
        g.case(op.lower() + "_all", op, [(u(r, 3, 4, 5), False)], dict(keepdims=1), opset=18, tol=ACC)
    r = R("argmax")
    g.case("argmax", "ArgMax", [(u(r, 3, 6, 5), False)], dict(axis=1, keepdims=0), out_types=[np.int64])
    rnn_cases(g, np, R, u)
    op_cases_q.generate(g, np, R, u)


def rnn_cases(g, np, R, u):
    """RNN, GRU and LSTM (ONNX semantics; onnxruntime's CPU kernels, layout 0 only there). Inputs in
    node order X, W, R, B, sequence_lens, initial_h[, initial_c, P]; the outputs Y, Y_h[, Y_c]."""
    f32 = np.float32
    T, B, I, H = 5, 2, 4, 3
    # name, op, gates, attrs, use_b, seq_lens, initial states, peephole
    cases = [
        ("rnn_forward", "RNN", 1, dict(hidden_size=H), True, None, False, False),
        ("rnn_bidir_relu_seqlens", "RNN", 1, dict(hidden_size=H, direction="bidirectional", activations=["Relu", "Tanh"]), True, [5, 3], True, False),
        ("rnn_reverse_affine", "RNN", 1, dict(hidden_size=H, direction="reverse", activations=["Affine"], activation_alpha=[0.5], activation_beta=[0.1]), True, None, True, False),
        ("gru_forward", "GRU", 3, dict(hidden_size=H), True, None, False, False),
        ("gru_lbr1", "GRU", 3, dict(hidden_size=H, linear_before_reset=1), True, None, True, False),
        ("gru_reverse", "GRU", 3, dict(hidden_size=H, direction="reverse"), True, [4, 5], True, False),
        ("gru_bidir_lbr1_seqlens", "GRU", 3, dict(hidden_size=H, direction="bidirectional", linear_before_reset=1), True, [2, 5], True, False),
        ("gru_clip_hardsigmoid", "GRU", 3, dict(hidden_size=H, clip=0.7, activations=["HardSigmoid", "Tanh"], activation_alpha=[0.3], activation_beta=[0.4]), False, None, False, False),
        ("lstm_forward", "LSTM", 4, dict(hidden_size=H), True, None, False, False),
        ("lstm_initial_states", "LSTM", 4, dict(hidden_size=H), True, None, True, False),
        ("lstm_peephole_seqlens", "LSTM", 4, dict(hidden_size=H), True, [3, 5], True, True),
        ("lstm_reverse", "LSTM", 4, dict(hidden_size=H, direction="reverse"), True, None, True, False),
        ("lstm_bidir", "LSTM", 4, dict(hidden_size=H, direction="bidirectional"), True, [5, 4], True, True),
        ("lstm_input_forget_clip", "LSTM", 4, dict(hidden_size=H, input_forget=1, clip=1.5), True, None, True, False),
    ]
    for name, op, gates, at, use_b, lens, states, peep in cases:
        r = R(name)
        D = 2 if at.get("direction") == "bidirectional" else 1
        ins = [(u(r, T, B, I, lo=-2, hi=2), False), (u(r, D, gates * H, I), True), (u(r, D, gates * H, H), True),
               (u(r, D, 2 * gates * H) if use_b else None, True),
               (np.array(lens, np.int32) if lens else None, True),
               (u(r, D, B, H) if states else None, False)]
        if op == "LSTM":
            ins.append((u(r, D, B, H) if states else None, False))
            ins.append((u(r, D, 3 * H) if peep else None, True))
        while ins[-1][0] is None:
            ins.pop()
        g.case(name, op, ins, at, opset=14, out_types=[f32] * (3 if op == "LSTM" else 2), tol=TRANS)
