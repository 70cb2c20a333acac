#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Small QDQ int8 nets for the whole-model run test (npusim run --platform P MODEL.onnx), built with
the model zoo's own layer recorder and QDQ emitter (tools/zoo/make_zoo.py) so they quantize exactly
like the zoo models: uint8 activations, per-channel int8 weights, int32 biases.

  tiny_qdq.onnx   1x3x32x32: conv 3x3/2 + ReLU6, depthwise 3x3, pointwise, residual add,
                  maxpool 3x3/2, nearest 2x resize + concat, 1x1 conv + ReLU, GAP, flatten, gemm
  plain_qdq.onnx  1x8x16x16: conv 3x3 + ReLU, conv 1x1 (no fusion partners, one NPU layer each)
  bigk_qdq.onnx   1x8x40x40: conv 3x3 + ReLU, conv 33x33 (outside RKNN's kernel range [1, 31]: the
                  checker sends it to the CPU), conv 1x1

With --convention C1,C2,... only tiny, plain and preact are written, once per producer convention
(tools/zoo/conventions.py: ort_qdq_s8, ort_qoperator, pytorch_fx, tensorrt ...) as <net>_<convention>.onnx;
  preact          1x8x9x11: conv 3x3 + ReLU, two pre-activation bottlenecks (BN-ReLU read by a 1x1 and
                  a 3x3 conv, residual add), BN-ReLU, conv 1x1 (ResNet v2's BatchNormalization -> Relu)

Deterministic: same arguments, same bytes. Run with /usr/bin/python3 (python3-onnx, numpy)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
import conventions  # noqa: E402
import make_zoo  # noqa: E402


def tiny():
    n = make_zoo.Net("tiny", 7, (1, 3, 32, 32))
    x = n.conv("input", 16, 3, 2, "relu6")
    h = n.conv(x, 16, 3, 1, "relu6", group=16)
    h = n.conv(h, 16, 1, 1, None)
    x = n.add(x, h)
    p = n.maxpool(x, 3, 2, 1)
    u = n.upsample(p)
    x = n.concat([x, u])
    x = n.conv(x, 32, 1, 1, "relu")
    x = n.gemm(n.flatten(n.gap(x)), 10)
    n.output(x)
    return n


def plain():
    n = make_zoo.Net("plain", 8, (1, 8, 16, 16))
    x = n.conv("input", 16, 3, 1, "relu")
    x = n.conv(x, 16, 1, 1, None)
    n.output(x)
    return n


def preact():
    # Pre-activation bottleneck (ResNet v2): a BN-ReLU read by two convolutions, then a residual Add
    # read by the next BN-ReLU; TensorRT-style exports keep the Relu after the BatchNormalization and
    # quantize its output once per reader.
    n = make_zoo.Net("preact", 10, (1, 8, 9, 11))
    x = n.conv("input", 32, 3, 1, "relu")
    for _ in range(2):
        b = n.bn_relu(x)
        s = n.conv(b, 32, 1, 1, None)
        h = n.conv(b, 32, 3, 1, "relu")
        x = n.add(s, h)
    n.output(n.conv(n.bn_relu(x), 16, 1, 1, None))
    return n


def bigk():
    n = make_zoo.Net("bigk", 9, (1, 8, 40, 40))
    x = n.conv("input", 8, 3, 1, "relu")
    x = n.conv(x, 16, 33, 1, "relu", pad=0)
    x = n.conv(x, 16, 1, 1, None)
    n.output(x)
    return n


def main(out, convs=None):
    os.makedirs(out, exist_ok=True)
    if convs:
        for c in convs:
            for name, build in (("tiny", tiny), ("plain", plain), ("preact", preact)):
                m = conventions.emit(build(), c, lambda n, act: make_zoo.Emitter(n, True, act).emit())
                make_zoo.save(m, os.path.join(out, "%s_%s.onnx" % (name, c)))
        return
    for name, build in (("tiny", tiny), ("plain", plain), ("bigk", bigk)):
        make_zoo.save(make_zoo.Emitter(build(), True).emit(), os.path.join(out, name + "_qdq.onnx"))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--convention":
        main(sys.argv[1], sys.argv[3].split(","))
    else:
        main(sys.argv[1])
