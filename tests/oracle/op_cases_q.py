# SPDX-License-Identifier: MIT
"""8-bit operator cases for gen_op_cases.py: expected bit-exact. Weights paired with uint8
activations stay within 7 bits ([-64, 63]) so onnxruntime's AVX2 u8s8 kernel (VPMADDUBSW, which
saturates int16 pairs) gives the mathematically exact sum on machines without AVX-512 VNNI."""
import math

MS = "com.microsoft"


def generate(g, np, R, u):
    f32, u8, i8, i32 = np.float32, np.uint8, np.int8, np.int32

    def q(r, dt, *shape, lo=None, hi=None):
        info = np.iinfo(dt)
        return r.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1, size=shape).astype(dt)

    def s(v):
        return np.array(v, dtype=f32)

    def z(v, dt):
        return np.array(v, dtype=dt)

    # QuantizeLinear / DequantizeLinear.
    r = R("quantize")
    x = (u(r, 2, 3, 4, 5, lo=-3, hi=3))
    x.flat[:8] = np.array([0.05, -0.05, 0.15, -0.15, 0.25, 100.0, -100.0, 0.0], f32)  # ties at scale 0.1 and saturation
    g.case("quantizelinear_u8", "QuantizeLinear", [(x, False), (s(0.1), True), (z(128, u8), True)], out_types=[u8])
    g.case("quantizelinear_i8", "QuantizeLinear", [(x, False), (s(0.1), True), (z(-3, i8), True)], out_types=[i8])
    g.case("quantizelinear_i8_axis1", "QuantizeLinear", [(x, False), (np.array([0.05, 0.1, 0.02], f32), True),
                                                         (np.array([0, 5, -7], i8), True)], dict(axis=1), out_types=[i8])
    xq = q(r, u8, 2, 3, 4, 5)
    g.case("dequantizelinear_u8", "DequantizeLinear", [(xq, False), (s(0.037), True), (z(121, u8), True)], out_types=[f32])
    g.case("dequantizelinear_i8_axis1", "DequantizeLinear", [(q(r, i8, 2, 3, 4), False), (np.array([0.5, 0.25, 0.1], f32), True),
                                                             (np.array([1, -2, 0], i8), True)], dict(axis=1), out_types=[f32])
    g.case("dequantizelinear_i32", "DequantizeLinear", [(r.integers(-5000, 5000, size=(10,)).astype(i32), False), (s(0.0013), True)],
           out_types=[f32])
    g.case("dynamicquantizelinear", "DynamicQuantizeLinear", [(u(r, 4, 7, lo=-2.5, hi=1.0), False)], out_types=[u8, f32, u8])

    # QLinearConv: (name, x dtype, w dtype, x shape, w shape, attrs, per-channel, bias).
    convs = [
        ("qlinearconv_u8u8", u8, u8, (1, 3, 9, 9), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1]), False, True),
        ("qlinearconv_u8s8_perchannel", u8, i8, (1, 8, 10, 10), (16, 8, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2]), True, True),
        ("qlinearconv_s8s8_perchannel", i8, i8, (1, 8, 10, 10), (16, 8, 3, 3), dict(pads=[1, 1, 1, 1]), True, True),
        ("qlinearconv_u8s8_1x1", u8, i8, (1, 32, 7, 7), (24, 32, 1, 1), {}, True, True),
        ("qlinearconv_s8s8_depthwise", i8, i8, (1, 16, 9, 9), (16, 1, 3, 3), dict(group=16, pads=[1, 1, 1, 1]), True, True),
        ("qlinearconv_u8s8_group2", u8, i8, (1, 8, 8, 8), (8, 4, 3, 3), dict(group=2, pads=[0, 1, 0, 1]), True, False),
        ("qlinearconv_u8s8_k7s2", u8, i8, (1, 3, 20, 20), (16, 3, 7, 7), dict(pads=[3, 3, 3, 3], strides=[2, 2]), True, True),
        ("qlinearconv_u8s8_dilated", u8, i8, (1, 4, 12, 12), (8, 4, 3, 3), dict(dilations=[2, 2], pads=[2, 1, 2, 3]), False, True),
        # K = 1152 > the GEMM's 1024-deep k block: partial sums, then the fused requantization.
        ("qlinearconv_s8s8_deep_k", i8, i8, (1, 128, 6, 7), (20, 128, 3, 3), dict(pads=[1, 1, 1, 1]), True, True),
    ]
    for name, xd, wd, xs, ws, at, perch, bias in convs:
        r = R(name)
        x = q(r, xd, *xs)
        w = q(r, wd, *ws, lo=-64 if wd == i8 else None, hi=63 if wd == i8 else None)
        m = ws[0]
        xsc, xzp = s(0.02), z(131 if xd == u8 else -5, xd)
        wsc = r.uniform(0.002, 0.01, size=m).astype(f32) if perch else s(0.005)
        wzp = z(0, wd) if perch or wd == i8 else z(119, wd)
        if perch:
            wzp = np.zeros(m, wd)
        k = ws[1] * ws[2] * ws[3]
        ysc = s(0.02 * float(np.mean(wsc)) * math.sqrt(k) * 60.0 * 36.0 / 40.0)
        yzp = z(120 if xd == u8 else 3, xd)
        ins = [(x, False), (xsc, True), (xzp, True), (w, True), (wsc, True), (wzp, True), (ysc, True), (yzp, True)]
        if bias:
            ins.append((r.integers(-3000, 3000, size=m).astype(i32), True))
        g.case(name, "QLinearConv", ins, at, out_types=[xd])
    r = R("convinteger")
    g.case("convinteger_u8", "ConvInteger", [(q(r, u8, 1, 3, 7, 7), False), (q(r, u8, 4, 3, 3, 3), True), (z(128, u8), True),
                                             (z(120, u8), True)], dict(pads=[1, 1, 1, 1]), out_types=[i32])

    # MatMul family.
    mm = [("qlinearmatmul_u8u8", u8, u8, (6, 40), (40, 17)), ("qlinearmatmul_s8s8", i8, i8, (2, 5, 40), (40, 9)),
          ("qlinearmatmul_u8s8", u8, i8, (9, 64), (64, 33))]
    for name, ad, bd, sa, sb in mm:
        r = R(name)
        a = q(r, ad, *sa)
        b = q(r, bd, *sb, lo=-64 if bd == i8 else None, hi=63 if bd == i8 else None)
        k = sa[-1]
        ysc = s(0.03 * 0.01 * math.sqrt(k) * 60.0 * 36.0 / 40.0)
        g.case(name, "QLinearMatMul", [(a, False), (s(0.03), True), (z(100 if ad == u8 else 2, ad), True), (b, True), (s(0.01), True),
                                       (z(128 if bd == u8 else 0, bd), True), (ysc, True), (z(110 if ad == u8 else -4, ad), True)],
               out_types=[ad])
    r = R("matmulinteger")
    g.case("matmulinteger_u8u8", "MatMulInteger", [(q(r, u8, 5, 30), False), (q(r, u8, 30, 7), True), (z(127, u8), True), (z(131, u8), True)],
           out_types=[i32])
    g.case("matmulinteger_s8s8", "MatMulInteger", [(q(r, i8, 2, 5, 30), False), (q(r, i8, 30, 7), True), (z(3, i8), True), (z(-2, i8), True)],
           out_types=[i32])
    r = R("matmulintegertofloat")
    g.case("matmulintegertofloat", "MatMulIntegerToFloat",
           [(q(r, u8, 4, 24), False), (q(r, i8, 24, 6, lo=-64, hi=63), True), (s(0.02), True), (r.uniform(0.001, 0.01, 6).astype(f32), True),
            (z(120, u8), True), (None, True), (u(r, 6), True)], domain=MS, out_types=[f32], tol=(1e-5, 1e-5))
    g.case("dynamicquantizematmul", "DynamicQuantizeMatMul",
           [(u(r, 4, 24, lo=-2, hi=3), False), (q(r, i8, 24, 6, lo=-64, hi=63), True), (s(0.01), True), (None, True), (u(r, 6), True)],
           domain=MS, out_types=[f32], tol=(1e-5, 1e-5))
    r = R("qgemm")
    a, b = q(r, u8, 5, 32), q(r, i8, 12, 32, lo=-64, hi=63)
    g.case("qgemm_u8s8_quant_out", "QGemm", [(a, False), (s(0.02), True), (z(125, u8), True), (b, True),
                                              (r.uniform(0.002, 0.01, 12).astype(f32), True), (np.zeros(12, i8), True),
                                              (r.integers(-2000, 2000, size=12).astype(i32), True), (s(0.05), True), (z(118, u8), True)],
           dict(transB=1, alpha=1.0), domain=MS, out_types=[u8])
    g.case("qgemm_u8s8_float_out", "QGemm", [(a, False), (s(0.02), True), (z(125, u8), True), (b, True), (s(0.004), True), (z(0, i8), True),
                                              (r.integers(-2000, 2000, size=(5, 12)).astype(i32), True)],
           dict(transB=1, alpha=0.5), domain=MS, out_types=[f32], tol=(1e-5, 1e-5))

    # Element-wise QLinear ops.
    for dt in (u8, i8):
        tag = "u8" if dt == u8 else "i8"
        zp = (lambda v: z(v, dt)) if dt == u8 else (lambda v: z(v - 128, dt))
        # Broadcast patterns select onnxruntime's kernel variants (general, scalar A, scalar B).
        for op in ("QLinearAdd", "QLinearMul"):
            for kind, sa, sb in (("bcast", (2, 3, 16, 33), (3, 1, 33)), ("scalar_a", (7, 1), (1, 45)), ("scalar_b", (3, 50), ()),
                                 ("same", (5, 61), (5, 61))):
                name = "%s_%s_%s" % (op.lower(), tag, kind)
                r = R(name)
                cs = 0.03 if op == "QLinearAdd" else 0.02
                g.case(name, op, [(q(r, dt, *sa), False), (s(0.0213), True), (zp(130), True), (q(r, dt, *sb), False), (s(0.0157), True),
                                  (zp(121), True), (s(cs), True), (zp(127), True)], domain=MS, out_types=[dt])
        r = R("qlinearsigmoid" + tag)
        g.case("qlinearsigmoid_" + tag, "QLinearSigmoid", [(q(r, dt, 4, 64), False), (s(0.05), True), (zp(128), True), (s(1.0 / 256), True),
                                                           (zp(0), True)], domain=MS, out_types=[dt])
        g.case("qlinearleakyrelu_" + tag, "QLinearLeakyRelu", [(q(r, dt, 4, 64), False), (s(0.05), True), (zp(128), True), (s(0.03), True),
                                                               (zp(100), True)], dict(alpha=0.1), domain=MS, out_types=[dt])
        # QLinearSoftmax (onnxruntime's QDQ fusion of DQ -> Softmax -> Q): channels, the last axis
        # with y_scale 1/255 (floor(1 / y_scale) = 254 in the kernel), the opset-12 flattened row,
        # rows whose top value saturates (x_scale 1: 256 p + zp > the type's maximum).
        for kind, shape, at, xsc, ysc in (("c", (1, 16, 3, 5), dict(axis=1, opset=13), 0.05, 1.0 / 256),
                                          ("last", (2, 3, 40), dict(axis=-1, opset=13), 0.5, 1.0 / 255),
                                          ("op12", (2, 4, 3, 5), dict(axis=1, opset=12), 0.02, 1.0 / 256),
                                          ("sat", (6, 8), dict(axis=-1, opset=13), 1.0, 1.0 / 256)):
            name = "qlinearsoftmax_%s_%s" % (tag, kind)
            r = R(name)
            g.case(name, "QLinearSoftmax", [(q(r, dt, *shape), False), (s(xsc), True), (zp(131), True), (s(ysc), True), (zp(0), True)],
                   at, domain=MS, out_types=[dt])
        name = "qlinearavgpool_" + tag
        r = R(name)
        g.case(name, "QLinearAveragePool", [(q(r, dt, 1, 3, 9, 9), False), (s(0.04), True), (zp(125), True), (s(0.03), True), (zp(131), True)],
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0), domain=MS, out_types=[dt])
        name = "qlinearglobalavgpool_" + tag
        r = R(name)
        g.case(name, "QLinearGlobalAveragePool", [(q(r, dt, 2, 6, 7, 7), False), (s(0.04), True), (zp(125), True), (s(0.01), True),
                                                  (zp(131), True)], dict(channels_last=0), domain=MS, out_types=[dt])
        name = "qlinearconcat_" + tag
        r = R(name)
        g.case(name, "QLinearConcat", [(s(0.05), True), (zp(128), True), (q(r, dt, 2, 3, 4), False), (s(0.05), True), (zp(128), True),
                                       (q(r, dt, 2, 2, 4), False), (s(0.031), True), (zp(140), True), (q(r, dt, 2, 1, 4), False),
                                       (s(0.09), True), (zp(100), True)], dict(axis=1), domain=MS, out_types=[dt])

    # Data movement on 8-bit tensors (QDQ graphs run these on quantized values directly).
    r = R("int8_movement")
    g.case("maxpool_u8", "MaxPool", [(q(r, u8, 1, 3, 9, 9), False)], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    g.case("maxpool_i8", "MaxPool", [(q(r, i8, 1, 3, 8, 8), False)], dict(kernel_shape=[2, 2], strides=[2, 2]))
    g.case("resize_nearest_u8", "Resize", [(q(r, u8, 1, 2, 3, 4), False), (None, True), (np.array([1, 1, 2, 2], f32), True)],
           dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    g.case("transpose_i8", "Transpose", [(q(r, i8, 2, 3, 4, 5), False)], dict(perm=[0, 2, 3, 1]))
    g.case("concat_u8", "Concat", [(q(r, u8, 1, 2, 3), False), (q(r, u8, 1, 4, 3), False)], dict(axis=1))
    g.case("pad_i8_constant", "Pad", [(q(r, i8, 1, 2, 3, 3), False), (np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), True),
                                       (z(-5, i8), True)], dict(mode="constant"))
