#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""YOLOv5s with its Detect decode, as the ultralytics exporter writes it (zoo variant, issue 19).

The zoo's yolov5s (make_zoo.py) ends at the three raw Detect convolutions, as rknn_model_zoo
exports it for RKNN. This generator appends the decode the ultralytics YOLOv5 v7.0 export
(models/yolo.py, Detect.forward with export=True) puts into the ONNX graph, so that a toolchain
with a box-decoding unit (seed 003's GenerateBox) has the pattern to recognise:

    per head i (stride 8/16/32, na = 3 anchors, no = 85 = 5 + 80 classes):
      x = Reshape(conv_i, [1, na, no, ny, nx]); x = Transpose(x, perm=[0, 1, 3, 4, 2])
      xy, wh, conf = Split(Sigmoid(x), [2, 2, no - 4], axis=4)
      xy = (xy * 2 + grid_i) * stride_i          grid_i = (cell x, cell y) - 0.5, [1, na, ny, nx, 2]
      wh = (wh * 2) ** 2 * anchor_grid_i         anchor_grid_i = anchors_i in pixels, [1, na, ny, nx, 2]
      y_i = Reshape(Concat(xy, wh, conf, axis=4), [1, na * ny * nx, no])
    output = Concat(y_0, y_1, y_2, axis=1)       [1, 25200, 85]

Anchors are YOLOv5's defaults (models/yolov5s.yaml: P3/8 10,13 16,30 33,23; P4/16 30,61 62,45 59,119;
P5/32 116,90 156,198 373,326). Writes yolov5s_detect.onnx (float) and yolov5s_detect_qdq.onnx (the
zoo's uint8 QDQ form up to the head convolutions, the decode in float as deployments keep it).
Same arguments, same bytes. Run with /usr/bin/python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tools/zoo/make_zoo_detect.py OUT_DIR
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_zoo  # noqa: E402  (the zoo's network builder and ONNX emitter, used as a library)

ANCHORS = [[(10, 13), (16, 30), (33, 23)], [(30, 61), (62, 45), (59, 119)], [(116, 90), (156, 198), (373, 326)]]
STRIDES = [8, 16, 32]
NA, NO = 3, 85


def add_decode(model, head_names, head_shapes, version=5):
    """Appends the Detect decode reading the graph outputs `head_names`; the decode is the only output.

    version 3: the YOLOv3 (darknet) decode instead (Redmon & Farhadi, "YOLOv3: An Incremental
    Improvement", 2018, sec. 2.1: b_x = sigmoid(t_x) + c_x, b_w = p_w e^(t_w)): Split of the raw
    values, xy = (Sigmoid(xy) + grid) * stride with grid = the cell index, wh = Exp(wh) * anchor,
    conf = Sigmoid(conf); YOLOv3's anchors are those of YOLOv5 (the same COCO k-means, 9 anchors)."""
    g = model.graph
    nodes, inits, ys = [], [], []
    two = numpy_helper.from_array(np.array(2.0, np.float32), "detect_two")
    inits.append(two)
    for i, (h, shape) in enumerate(zip(head_names, head_shapes)):
        _, _, ny, nx = shape
        p = "detect%d_" % i
        xv, yv = np.meshgrid(np.arange(nx, dtype=np.float32), np.arange(ny, dtype=np.float32))
        grid = np.broadcast_to(np.stack((xv, yv), 2)[None, None], (1, NA, ny, nx, 2)).astype(np.float32) - \
            (0.5 if version == 5 else 0.0)
        ag = np.array(ANCHORS[i], np.float32).reshape(1, NA, 1, 1, 2)
        anchor_grid = np.broadcast_to(ag, (1, NA, ny, nx, 2)).astype(np.float32)
        inits += [numpy_helper.from_array(np.array([1, NA, NO, ny, nx], np.int64), p + "shape5"),
                  numpy_helper.from_array(np.ascontiguousarray(grid), p + "grid"),
                  numpy_helper.from_array(np.array(float(STRIDES[i]), np.float32), p + "stride"),
                  numpy_helper.from_array(np.ascontiguousarray(anchor_grid), p + "anchor_grid"),
                  numpy_helper.from_array(np.array([2, 2, NO - 4], np.int64), p + "split"),
                  numpy_helper.from_array(np.array([1, NA * ny * nx, NO], np.int64), p + "shape3")]
        n = lambda op, ins, outs, **a: nodes.append(helper.make_node(op, ins, outs, name=p + outs[0].split("_")[-1], **a))
        n("Reshape", [h, p + "shape5"], [p + "r5"])
        n("Transpose", [p + "r5"], [p + "tr"], perm=[0, 1, 3, 4, 2])
        if version == 3:
            n("Split", [p + "tr", p + "split"], [p + "txy", p + "twh", p + "tconf"], axis=4)
            n("Sigmoid", [p + "txy"], [p + "sxy"])
            n("Add", [p + "sxy", p + "grid"], [p + "xyg"])
            n("Mul", [p + "xyg", p + "stride"], [p + "xys"])
            n("Exp", [p + "twh"], [p + "ewh"])
            n("Mul", [p + "ewh", p + "anchor_grid"], [p + "wha"])
            n("Sigmoid", [p + "tconf"], [p + "conf"])
            n("Concat", [p + "xys", p + "wha", p + "conf"], [p + "cat"], axis=4)
            n("Reshape", [p + "cat", p + "shape3"], [p + "y"])
            ys.append(p + "y")
            continue
        n("Sigmoid", [p + "tr"], [p + "sig"])
        n("Split", [p + "sig", p + "split"], [p + "xy", p + "wh", p + "conf"], axis=4)
        n("Mul", [p + "xy", "detect_two"], [p + "xy2"])
        n("Add", [p + "xy2", p + "grid"], [p + "xyg"])
        n("Mul", [p + "xyg", p + "stride"], [p + "xys"])
        n("Mul", [p + "wh", "detect_two"], [p + "wh2"])
        n("Pow", [p + "wh2", "detect_two"], [p + "whp"])
        n("Mul", [p + "whp", p + "anchor_grid"], [p + "wha"])
        n("Concat", [p + "xys", p + "wha", p + "conf"], [p + "cat"], axis=4)
        n("Reshape", [p + "cat", p + "shape3"], [p + "y"])
        ys.append(p + "y")
    nodes.append(helper.make_node("Concat", ys, ["output"], name="detect_concat", axis=1))
    g.node.extend(nodes)
    g.initializer.extend(inits)
    total = sum(NA * s[2] * s[3] for s in head_shapes)
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, total, NO]))
    g.name = g.name + "_detect"
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    net = make_zoo.yolov5s()
    shapes = [list(net.vals[o].shape) for o in net.outputs]
    heads = ["output%d" % i for i in range(len(net.outputs))]
    for qdq, name in ((False, "yolov5s_detect.onnx"), (True, "yolov5s_detect_qdq.onnx")):
        m = add_decode(make_zoo.Emitter(net, qdq).emit(), heads, shapes)
        # The head tensors become internal values (their DequantizeLinear / Conv outputs).
        make_zoo.save(m, os.path.join(args.out_dir, name))
    print("yolov5s_detect: 3 heads, %d boxes x %d" % (sum(NA * s[2] * s[3] for s in shapes), NO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
