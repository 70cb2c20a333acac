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


def add_decode(model, head_names, head_shapes, version=5, reg_max=16, dfl_weights=None):
    """Appends the Detect decode reading the graph outputs `head_names`; the decode is the only output.

    version 3: the YOLOv3 (darknet) decode instead (Redmon & Farhadi, "YOLOv3: An Incremental
    Improvement", 2018, sec. 2.1: b_x = sigmoid(t_x) + c_x, b_w = p_w e^(t_w)): Split of the raw
    values, xy = (Sigmoid(xy) + grid) * stride with grid = the cell index, wh = Exp(wh) * anchor,
    conf = Sigmoid(conf); YOLOv3's anchors are those of YOLOv5 (the same COCO k-means, 9 anchors).

    version 8: the anchor-free decode of the ultralytics YOLOv8 ONNX export (add_decode_v8)."""
    if version == 8:
        return add_decode_v8(model, head_names, head_shapes, reg_max, dfl_weights)
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


def add_decode_v8(model, head_names, head_shapes, reg_max=16, dfl_weights=None):
    """The YOLOv8 Detect decode as the ultralytics ONNX export writes it (ultralytics 8.x,
    ultralytics/nn/modules/head.py Detect._inference with export=True, DFL in nn/modules/block.py,
    make_anchors and dist2bbox(xywh=True, dim=1) in utils/tal.py); each head is the Concat of its box
    branch (4 * reg_max DFL bins) and class branch (nc), [1, 4 * reg_max + nc, ny, nx]:
      x_cat = Concat(Reshape(head_i, [1, no, -1]) ..., axis=2)          [1, no, A], A = sum ny * nx
      box, cls = Split(x_cat, [4 * reg_max, nc], axis=1)
      DFL: d = Reshape(Conv(Softmax(Transpose(Reshape(box, [1, 4, reg_max, A]), [0, 2, 1, 3]), axis=1),
                            W = arange(reg_max) [1, reg_max, 1, 1], no bias), [1, 4, A])
      lt, rb = Split(d, [2, 2], axis=1)
      x1y1 = anchors - lt; x2y2 = anchors + rb                 anchors = cell + 0.5, [1, 2, A]
      dbox = Concat((x1y1 + x2y2) / 2, x2y2 - x1y1, axis=1) * strides    strides [1, A]
      output = Concat(dbox, Sigmoid(cls), axis=1)              [1, 4 + nc, A] (channels first)
    `dfl_weights` replaces the arange DFL weights (a near-miss test graph)."""
    g = model.graph
    no = head_shapes[0][1]
    nc = no - 4 * reg_max
    p = "detect_"
    nodes, inits = [], []
    n = lambda op, ins, outs, **a: nodes.append(helper.make_node(op, ins, outs, name=outs[0], **a))
    rs, anchors, strides = [], [], []
    for i, (h, shape) in enumerate(zip(head_names, head_shapes)):
        _, _, ny, nx = shape
        inits.append(numpy_helper.from_array(np.array([1, no, -1], np.int64), p + "flat%d" % i))
        n("Reshape", [h, p + "flat%d" % i], [p + "r%d" % i])
        rs.append(p + "r%d" % i)
        sx, sy = np.meshgrid(np.arange(nx, dtype=np.float32) + 0.5, np.arange(ny, dtype=np.float32) + 0.5)
        anchors.append(np.stack((sx.reshape(-1), sy.reshape(-1)), 0))
        strides.append(np.full((1, ny * nx), float(STRIDES[i]), np.float32))
    a_total = sum(s[2] * s[3] for s in head_shapes)
    w = np.arange(reg_max, dtype=np.float32) if dfl_weights is None else np.asarray(dfl_weights, np.float32)
    inits += [numpy_helper.from_array(np.array([4 * reg_max, nc], np.int64), p + "split"),
              numpy_helper.from_array(np.array([1, 4, reg_max, a_total], np.int64), p + "dfl_shape4"),
              numpy_helper.from_array(w.reshape(1, reg_max, 1, 1), p + "dfl_w"),
              numpy_helper.from_array(np.array([1, 4, a_total], np.int64), p + "dfl_shape3"),
              numpy_helper.from_array(np.array([2, 2], np.int64), p + "split_ltrb"),
              numpy_helper.from_array(np.concatenate(anchors, 1)[None].astype(np.float32), p + "anchors"),
              numpy_helper.from_array(np.array(2.0, np.float32), p + "two"),
              numpy_helper.from_array(np.concatenate(strides, 1), p + "strides")]
    n("Concat", rs, [p + "xcat"], axis=2)
    n("Split", [p + "xcat", p + "split"], [p + "box", p + "cls"], axis=1)
    n("Reshape", [p + "box", p + "dfl_shape4"], [p + "dfl_r4"])
    n("Transpose", [p + "dfl_r4"], [p + "dfl_tr"], perm=[0, 2, 1, 3])
    n("Softmax", [p + "dfl_tr"], [p + "dfl_sm"], axis=1)
    n("Conv", [p + "dfl_sm", p + "dfl_w"], [p + "dfl_conv"], kernel_shape=[1, 1])
    n("Reshape", [p + "dfl_conv", p + "dfl_shape3"], [p + "dist"])
    n("Split", [p + "dist", p + "split_ltrb"], [p + "lt", p + "rb"], axis=1)
    n("Sub", [p + "anchors", p + "lt"], [p + "x1y1"])
    n("Add", [p + "anchors", p + "rb"], [p + "x2y2"])
    n("Add", [p + "x1y1", p + "x2y2"], [p + "csum"])
    n("Div", [p + "csum", p + "two"], [p + "cxy"])
    n("Sub", [p + "x2y2", p + "x1y1"], [p + "wh"])
    n("Concat", [p + "cxy", p + "wh"], [p + "dbox"], axis=1)
    n("Mul", [p + "dbox", p + "strides"], [p + "dbox_s"])
    n("Sigmoid", [p + "cls"], [p + "cls_s"])
    nodes.append(helper.make_node("Concat", [p + "dbox_s", p + "cls_s"], ["output"], name="detect_concat", axis=1))
    g.node.extend(nodes)
    g.initializer.extend(inits)
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4 + nc, a_total]))
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
