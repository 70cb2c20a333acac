#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Small float ONNX models for the quantizer tests (issue 14), written with onnx.helper the way
PyTorch's exporter writes them (Conv with bias, Relu, Clip with min/max inputs from opset 11,
Flatten + Gemm transB=1, nearest Resize with a scales input), seeded:
  q_yolo_block  Conv+Relu -> [Conv+Relu, MaxPool 5x5/1] -> Concat -> nearest Resize x2 -> Conv
                -> Concat with a skip -> Conv (YOLOv5's SPPF / FPN shapes)
  q_residual    Conv+Relu6 -> Conv -> Add(skip) -> BatchNormalization -> Relu -> GlobalAveragePool
                -> Flatten -> Gemm -> Softmax (two outputs: logits and probabilities)
  q_opset11     the residual net at opset 11 (quantized with com.microsoft Q/DQ)
usage: gen_quant_nets.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(name, nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, producer_name="npusim-tests", opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(21)
    f32 = lambda n, a: numpy_helper.from_array(np.asarray(a, dtype=np.float32), n)
    vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)

    def conv(name, x, y, cin, cout, k, pad=None, group=1, bias=True):
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        inits = [f32(name + "_w", w)]
        ins = [x, name + "_w"]
        if bias:
            inits.append(f32(name + "_b", rng.standard_normal(cout) * 0.1))
            ins.append(name + "_b")
        p = k // 2 if pad is None else pad
        n = helper.make_node("Conv", ins, [y], name=name, kernel_shape=[k, k], pads=[p] * 4, group=group)
        return [n], inits

    # YOLO-like block.
    nodes, inits = [], []
    for spec in [("c1", "x", "c1o", 3, 16, 3), ("c2", "r1", "c2o", 16, 16, 1)]:
        n, i = conv(*spec)
        nodes += n
        inits += i
    nodes.insert(1, helper.make_node("Relu", ["c1o"], ["r1"], name="relu1"))
    nodes.append(helper.make_node("Relu", ["c2o"], ["r2"], name="relu2"))
    nodes.append(helper.make_node("MaxPool", ["r2"], ["p1"], name="pool", kernel_shape=[5, 5], pads=[2, 2, 2, 2]))
    nodes.append(helper.make_node("Concat", ["r2", "p1"], ["k1"], name="cat1", axis=1))
    inits.append(f32("scales", [1, 1, 2, 2]))
    nodes.append(helper.make_node("Resize", ["k1", "", "scales"], ["u1"], name="up", mode="nearest"))
    n, i = conv("c3", "u1", "c3o", 32, 16, 3)
    nodes += n + [helper.make_node("Relu", ["c3o"], ["r3"], name="relu3")]
    inits += i
    n, i = conv("c4", "x", "c4o", 3, 8, 3)  # skip branch from the input, upsampled to match
    nodes += n + [helper.make_node("Relu", ["c4o"], ["r4"], name="relu4"),
                  helper.make_node("Resize", ["r4", "", "scales"], ["u4"], name="up4", mode="nearest"),
                  helper.make_node("Concat", ["r3", "u4"], ["k2"], name="cat2", axis=1)]
    inits += i
    n, i = conv("head", "k2", "y", 24, 12, 1)
    nodes += n
    inits += i
    onnx.save(model("q_yolo_block", nodes, [vi("x", [1, 3, 16, 16])], [vi("y", [1, 12, 32, 32])], inits),
              os.path.join(out, "q_yolo_block.onnx"))

    # Residual classifier, at opset 13 and 11.
    for name, opset in (("q_residual", 13), ("q_opset11", 11)):
        nodes, inits = [], []
        n, i = conv("a", "x", "ao", 3, 16, 3)
        nodes += n
        inits += i + [f32("lo", 0.0), f32("hi", 6.0)]
        nodes.append(helper.make_node("Clip", ["ao", "lo", "hi"], ["a6"], name="relu6"))
        n, i = conv("b", "a6", "bo", 16, 16, 3, group=16)  # depthwise
        nodes += n
        inits += i
        nodes.append(helper.make_node("Add", ["bo", "a6"], ["s"], name="add"))
        bn = [f32("bn_" + k, v) for k, v in (("scale", rng.uniform(0.5, 1.5, 16)), ("bias", rng.standard_normal(16) * 0.1),
                                               ("mean", rng.standard_normal(16) * 0.1), ("var", rng.uniform(0.5, 1.5, 16)))]
        inits += bn
        nodes.append(helper.make_node("BatchNormalization", ["s"] + [t.name for t in bn], ["sb"], name="bn", epsilon=1e-5))
        nodes.append(helper.make_node("Relu", ["sb"], ["sr"], name="relu"))
        nodes.append(helper.make_node("GlobalAveragePool", ["sr"], ["g"], name="gap"))
        nodes.append(helper.make_node("Flatten", ["g"], ["f"], name="flatten"))
        inits += [f32("fc_w", rng.standard_normal((10, 16)) * 0.3), f32("fc_b", rng.standard_normal(10) * 0.1)]
        nodes.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1))
        nodes.append(helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1))
        onnx.save(model(name, nodes, [vi("x", [1, 3, 12, 12])], [vi("logits", [1, 10]), vi("prob", [1, 10])], inits, opset),
                  os.path.join(out, name + ".onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
