#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Small ONNX models for the checker end-to-end test: a legal conv net, a net with a 33x33 conv
(illegal on RKNN: kernel in [1,31]), a batch-dim concat (illegal on tnpuv2), and a model with a
dynamic batch dim. Deterministic (no randomness). Needs python3-onnx (Debian)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def save(nodes, inputs, outputs, inits, path):
    g = h.make_graph(nodes, "g", inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="npusim-checker-e2e")
    onnx.save(m, path)


def main(out):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 8, 64, 64])
    w3 = nh.from_array(np.zeros((16, 8, 3, 3), np.float32), "w3")
    w33 = nh.from_array(np.zeros((16, 16, 33, 33), np.float32), "w33")
    legal = [h.make_node("Conv", ["x", "w3"], ["c1"], name="conv_1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["y"], name="relu_1")]
    save(legal, [x], [h.make_tensor_value_info("y", T.FLOAT, None)], [w3], out + "/legal.onnx")
    big = legal[:1] + [h.make_node("Relu", ["c1"], ["r1"], name="relu_1"),
                       h.make_node("Conv", ["r1", "w33"], ["y"], name="conv_12", kernel_shape=[33, 33],
                                   pads=[0, 0, 0, 0])]
    save(big, [x], [h.make_tensor_value_info("y", T.FLOAT, None)], [w3, w33], out + "/conv33.onnx")
    cat = legal + [h.make_node("Concat", ["y", "y"], ["z"], name="concat_batch", axis=0)]
    save(cat, [x], [h.make_tensor_value_info("z", T.FLOAT, None)], [w3], out + "/concat_batch.onnx")
    xd = h.make_tensor_value_info("x", T.FLOAT, ["N", 8, 64, 64])
    save(legal, [xd], [h.make_tensor_value_info("y", T.FLOAT, None)], [w3], out + "/dynamic.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
