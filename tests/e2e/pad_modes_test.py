#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pad mode reflect and edge end to end (issue 15; drivers/compiler/rknpu/COMPILER.md, "Pad reflect / edge"):
one-Pad models, int8 in the QDQ form onnxruntime's quantize_static writes (DQ -> Pad -> Q with the
input's quantization) and float (the fp16 path), run with `npusim run -p rk3588 | rk3566` (full mode)
and with onnxruntime (tests/oracle/run_ort.js). Asserts: exit 0; the Pad in one NPU layer where the
lowering takes it, else a CPU layer with the stated reason (edge: the seed's rule "mode constant or
reflect", a vendor rule; reflect on RK3566 with odd input and output widths: the PPU's 16-byte rows);
`npusim check` placing the Pad as run does; the output bit-identical to onnxruntime's (int8: the same codes; fp16 on the NPU: onnxruntime's
float32 value rounded to fp16, the Pad moving the fp16 input unchanged; a float Pad on the CPU:
float32) and onnxruntime equal to numpy's np.pad.
Prints the task count and time of each Pad layer.

usage: pad_modes_test.py NPUSIM"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_ORT = os.path.join(HERE, "..", "oracle", "run_ort.js")
C = 24  # partial surfaces: 16 + 8 int8 channels on RK3588, 3 x 8 on RK3566

# name, mode, (top, left, bottom, right), input H x W, expected unit per platform (reason when CPU)
PPU_ROWS = "16-byte units"
CASES = [
    ("reflect_1111", "reflect", (1, 1, 1, 1), (8, 12), {}),
    ("reflect_2301", "reflect", (2, 3, 0, 1), (6, 8), {}),
    ("reflect_h", "reflect", (3, 0, 2, 0), (7, 8), {}),
    ("reflect_odd_w", "reflect", (1, 2, 1, 1), (6, 7), {}),                     # output width 10: its rows
    ("reflect_odd_both", "reflect", (1, 1, 1, 1), (6, 7), {"rk3566": PPU_ROWS}),  # widths 7 and 9
    ("edge_1221", "edge", (1, 2, 2, 1), (6, 8), {"rk3588": "vendor rule", "rk3566": "vendor rule"}),
]
PLATFORMS = ("rk3588", "rk3566")


def model(name, mode, pads, hw, f16):
    t, l, b, r = pads
    shape = [1, C, hw[0], hw[1]]
    rng = np.random.RandomState(sum(map(ord, name)) + f16)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    oshape = [1, C, hw[0] + t + b, hw[1] + l + r]
    inits = [numpy_helper.from_array(np.array([0, 0, t, l, 0, 0, b, r], np.int64), "pads")]
    nodes = []
    if f16:
        nodes.append(helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode=mode))
    else:
        # quantize_static's MinMax parameters for the input (uint8, asymmetric); the Pad shares them.
        lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
        s = np.float32((hi - lo) / 255.0)
        z = int(np.clip(np.round(-lo / s), 0, 255))
        inits += [numpy_helper.from_array(np.array(s, np.float32), "s"),
                  numpy_helper.from_array(np.array(z, np.uint8), "z")]
        nodes += [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                  helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
                  helper.make_node("Pad", ["xf", "pads"], ["pf"], name="pad", mode=mode),
                  helper.make_node("QuantizeLinear", ["pf", "s", "z"], ["yq"]),
                  helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"])]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, oshape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m, x


def main():
    npusim = sys.argv[1]
    node = shutil.which("node") or "node"
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "ort")
        built = []
        for name, mode, pads, hw, cpu in CASES:
            for f16 in (False, True):
                case = "%s_%s" % (name, "fp16" if f16 else "int8")
                m, x = model(case, mode, pads, hw, f16)
                d = os.path.join(root, case)
                os.makedirs(d)
                onnx.save(m, os.path.join(d, "model.onnx"))
                np.save(os.path.join(d, "x.npy"), x)
                json.dump({"feeds": [{"name": "x", "file": "x.npy"}], "output_names": ["y"],
                           "expected": ["y.expected.npy"]}, open(os.path.join(d, "manifest.json"), "w"))
                built.append((case, mode, pads, f16, cpu, d, x))
        r = subprocess.run([node, RUN_ORT, root], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL - run_ort.js: exit %d: %s" % (r.returncode, (r.stderr + r.stdout).strip()[-400:]))
            return 1
        for case, mode, pads, f16, cpu, d, x in built:
            ort = np.load(os.path.join(d, "y.expected.npy"))
            t, l, b, rr = pads
            if not f16:
                # onnxruntime's own QDQ result against np.pad of its dequantized input codes
                s = np.float32(numpy_helper.to_array(onnx.load(os.path.join(d, "model.onnx")).graph.initializer[1]))
                z = int(numpy_helper.to_array(onnx.load(os.path.join(d, "model.onnx")).graph.initializer[2]))
                xq = (np.clip(np.rint(x / s) + z, 0, 255).astype(np.float32) - z) * s
            else:
                xq = x
            want = np.pad(xq, ((0, 0), (0, 0), (t, b), (l, rr)), mode=mode)
            if want.shape != ort.shape or not np.array_equal(want, ort):
                fails.append("%s: onnxruntime differs from np.pad (max %.3g)" %
                             (case, np.abs(want - ort).max() if want.shape == ort.shape else -1))
            for plat in PLATFORMS:
                name = "%s on %s" % (case, plat)
                rep, out = os.path.join(tmp, case + plat + ".json"), os.path.join(tmp, case + plat)
                r = subprocess.run([npusim, "run", "-p", plat, os.path.join(d, "model.onnx"), "--input",
                                    os.path.join(d, "x.npy"), "--report", rep, "-q", "--output-dir", out],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    fails.append("%s: exit %d: %s" % (name, r.returncode, (r.stderr + r.stdout).strip()[-400:]))
                    continue
                layers = [la for la in json.load(open(rep))["layers"] if la["name"] == "pad"]
                unit = "CPU" if plat in cpu else "NPU"
                if len(layers) != 1 or layers[0]["unit"] != unit:
                    fails.append("%s: the Pad is not one %s layer: %s" % (name, unit, layers))
                    continue
                la = layers[0]
                # `npusim check` places the Pad as run does (one verdict, issue 13).
                c = subprocess.run([npusim, "check", "--platform", plat, "--json", os.path.join(d, "model.onnx")],
                                   capture_output=True, text=True)
                try:
                    placed = [(v["npusim"]["unit"], v["npusim"]["reason"] if v["npusim"]["unit"] == "CPU" else "")
                              for v in json.loads(c.stdout)["nodes"] if v["name"] == "pad"]
                except (ValueError, KeyError) as e:
                    placed = ["check failed: %s %s" % (e, c.stderr.strip()[-200:])]
                if placed != [(unit, la.get("cpu_reason", "") if unit == "CPU" else "")]:
                    fails.append("%s: npusim check places the Pad %s, run %s %s" % (name, placed, unit, la.get("cpu_reason", "")))
                if unit == "CPU" and cpu[plat] not in (la.get("cpu_reason", "") + " " + la.get("note", "")):
                    fails.append("%s: CPU reason %r, expected %r" % (name, la.get("note"), cpu[plat]))
                # fp16 on the NPU: the input's fp16 moved unchanged; a float Pad on the CPU: float32.
                rounded = f16 and unit == "NPU"
                expect = ort.astype(np.float16).astype(np.float32) if rounded else ort
                got = np.load(os.path.join(out, "y.npy"))
                same = got.shape == expect.shape and np.array_equal(got, expect)
                if not same:
                    fails.append("%s: output differs from onnxruntime%s (max |diff| %.3g)" %
                                 (name, " rounded to fp16" if rounded else "",
                                  np.abs(got - expect).max() if got.shape == expect.shape else -1))
                print("%-28s %-7s pads %s: %s %3d tasks %8.1f us, %s onnxruntime%s" %
                      (name, mode, pads, unit, la["tasks"], la["time_us"], "bit-identical to" if same else "DIFFERS from",
                       " (fp16 of)" if rounded else ""))
    for f in fails:
        print("FAIL - " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
