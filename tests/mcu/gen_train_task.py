#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Synthetic on-device training task for `npusim train --platform ws63` (issue 21 acceptance 4),
written at test time: a small float conv net in the seed's FP32 training configurations
(DepthwiseConv-equivalent ONNX Conv 3x3, group = channels, no bias -> Relu -> Flatten -> Gemm with bias)
and 4-class data: a bright 3x3 patch in one of the four quadrants over noise.
and a residual variant (Add, constant Pad, Concat: the trainer's DAG).
Usage: gen_train_task.py OUTDIR -> train_net.onnx, train_resnet.onnx, train_ops.onnx, train_qas.onnx, train_x.npy, train_y.npy"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.RandomState(2100)
C, H, W, K, N = 4, 8, 8, 4, 32
x = (rng.standard_normal((N, C, H, W)) * 0.3).astype(np.float32)
y = np.arange(N, dtype=np.int64) % K
for i in range(N):
    qy, qx = divmod(int(y[i]), 2)
    oy, ox = qy * 4 + rng.randint(0, 2), qx * 4 + rng.randint(0, 2)
    x[i, :, oy:oy + 3, ox:ox + 3] += 1.5
w = (rng.standard_normal((C, 1, 3, 3)) * 0.3).astype(np.float32)
fc = (rng.standard_normal((K, C * H * W)) * 0.05).astype(np.float32)
b = np.zeros(K, np.float32)
nodes = [helper.make_node("Conv", ["x", "w"], ["c"], group=C, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Flatten", ["r"], ["f"]),
         helper.make_node("Gemm", ["f", "fc", "b"], ["logits"], transB=1),
         helper.make_node("Softmax", ["logits"], ["prob"], axis=-1)]
g = helper.make_graph(nodes, "train_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                      [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, K])],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
onnx.save(m, os.path.join(out, "train_net.onnx"))

# A residual variant in the same configurations plus Add, Pad and Concat (a DAG):
# a = relu(dw(x)); r = a + x; p = dw2(pad(r)) (valid 3x3 after a 1-pixel pad); c = concat(p, x); logits = fc(c)
w2 = (rng.standard_normal((C, 1, 3, 3)) * 0.3).astype(np.float32)
fc2 = (rng.standard_normal((K, 2 * C * H * W)) * 0.05).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w"], ["c"], group=C, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["a"]),
         helper.make_node("Add", ["a", "x"], ["r"]),
         helper.make_node("Pad", ["r", "pads"], ["rp"], mode="constant"),
         helper.make_node("Conv", ["rp", "w2"], ["p"], group=C, kernel_shape=[3, 3]),
         helper.make_node("Concat", ["p", "x"], ["cat"], axis=1),
         helper.make_node("Flatten", ["cat"], ["f"]),
         helper.make_node("Gemm", ["f", "fc2", "b"], ["logits"], transB=1),
         helper.make_node("Softmax", ["logits"], ["prob"], axis=-1)]
g = helper.make_graph(nodes, "train_resnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                      [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, K])],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(fc2, "fc2"),
                       numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "train_resnet.onnx"))
# The other FP32 rows: Slice (positive steps), Transpose, Div by a broadcast tensor (TP-DIV),
# ReduceMean over H and W, ReduceSum over the channels, Flatten, MatMul (B not transposed) + bias.
w3 = (rng.standard_normal((C, 1, 3, 3)) * 0.3).astype(np.float32)
fc3 = (rng.standard_normal((6 * 4, K)) * 0.2).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w3"], ["c"], group=C, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Slice", ["r", "st", "en", "ax", "sp"], ["s"]),
         helper.make_node("Transpose", ["s"], ["t"], perm=[0, 1, 3, 2]),
         helper.make_node("Abs", ["x"], ["a"]),
         helper.make_node("ReduceMean", ["a"], ["m"], axes=[2, 3], keepdims=1),
         helper.make_node("Div", ["t", "m"], ["d"]),
         helper.make_node("ReduceSum", ["d", "rax"], ["rs"], keepdims=1),
         helper.make_node("Flatten", ["rs"], ["f"]),
         helper.make_node("MatMul", ["f", "fc3"], ["mm"]),
         helper.make_node("Add", ["mm", "b"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["prob"], axis=-1)]
i64 = lambda v: np.array(v, np.int64)
g = helper.make_graph(nodes, "train_ops", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                      [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, K])],
                      [numpy_helper.from_array(w3, "w3"), numpy_helper.from_array(fc3, "fc3"), numpy_helper.from_array(b, "b"),
                       numpy_helper.from_array(i64([1, 0]), "st"), numpy_helper.from_array(i64([7, 8]), "en"),
                       numpy_helper.from_array(i64([2, 3]), "ax"), numpy_helper.from_array(i64([1, 2]), "sp"),
                       numpy_helper.from_array(i64([1]), "rax")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "train_ops.onnx"))

# The QAS INT8 configurations (trained after `--quantize int8`): Conv 3x3 group 1 with a bias -> Relu ->
# MaxPool 2x2 -> Conv 3x3 -> Relu -> Flatten -> Gemm (B transposed, a bias) -> Softmax.
wq1 = (rng.standard_normal((6, C, 3, 3)) * 0.2).astype(np.float32)
wq2 = (rng.standard_normal((8, 6, 3, 3)) * 0.2).astype(np.float32)
fcq = (rng.standard_normal((K, 8 * 4 * 4)) * 0.1).astype(np.float32)
bq1, bq2, bfc = (np.zeros(6, np.float32), np.zeros(8, np.float32), np.zeros(K, np.float32))
nodes = [helper.make_node("Conv", ["x", "wq1", "bq1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Conv", ["p1", "wq2", "bq2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c2"], ["r2"]),
         helper.make_node("Flatten", ["r2"], ["f"]),
         helper.make_node("Gemm", ["f", "fcq", "bfc"], ["logits"], transB=1),
         helper.make_node("Softmax", ["logits"], ["prob"], axis=-1)]
g = helper.make_graph(nodes, "train_qas", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                      [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, K])],
                      [numpy_helper.from_array(a, n) for a, n in ((wq1, "wq1"), (wq2, "wq2"), (fcq, "fcq"), (bq1, "bq1"),
                                                                   (bq2, "bq2"), (bfc, "bfc"))])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "train_qas.onnx"))
np.save(os.path.join(out, "train_x.npy"), x)
np.save(os.path.join(out, "train_y.npy"), y)
