#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Single-layer QDQ int8 nets for the RTL co-simulation test (npusim run --rtl core,dpu MODEL.onnx),
built with the model zoo's layer recorder and QDQ emitter (tools/zoo/make_zoo.py), so they
quantize the way onnxruntime's QDQ quantizer writes models (uint8 activations, per-channel int8
weights, int32 biases), like every other zoo net:

  dwconv3x3_c32_qdq.onnx     1x32x28x28: depthwise 3x3/1 + ReLU (32 channels: one 64-channel pad group)
  dwconv3x3_s2_c64_qdq.onnx  1x64x28x28: depthwise 3x3/2 + ReLU6
  residual_qdq.onnx          1x16x16x16: conv 3x3 + ReLU, conv 1x1, residual add (a DPU-only EW task)

Deterministic: same arguments, same bytes. Run with /usr/bin/python3 (python3-onnx, numpy)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
import make_zoo  # noqa: E402


def dw32():
    n = make_zoo.Net("dwconv3x3_c32", 21, (1, 32, 28, 28))
    n.output(n.conv("input", 32, 3, 1, "relu", group=32))
    return n


def dw64_s2():
    n = make_zoo.Net("dwconv3x3_s2_c64", 22, (1, 64, 28, 28))
    n.output(n.conv("input", 64, 3, 2, "relu6", group=64))
    return n


def residual():
    n = make_zoo.Net("residual", 23, (1, 16, 16, 16))
    h = n.conv("input", 16, 3, 1, "relu")
    h = n.conv(h, 16, 1, 1, None)
    n.output(n.add("input", h))
    return n


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, build in (("dwconv3x3_c32", dw32), ("dwconv3x3_s2_c64", dw64_s2), ("residual", residual)):
        make_zoo.save(make_zoo.Emitter(build(), True).emit(), os.path.join(out, name + "_qdq.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
