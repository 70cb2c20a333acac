#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Acceptance table of issue 13: the zoo nets in every producer convention (make_zoo.py --convention),
compiled and simulated by `npusim run`, compared with onnxruntime-node.

For each model x convention x platform it prints NPU / view / CPU layers, MACs on the NPU, the
isolated per-layer check (worst |diff| in LSB, layers worse than 1 LSB), and the end-to-end outputs of
the simulated NPU against onnxruntime (max and mean |diff| in LSB of the output's quantization; float
outputs - TensorTRT-style heads - in units of max|y| / 127), plus npusim's reference executor against
onnxruntime on the same input.

usage: convention_table.py BUILD_DIR MODEL_DIR [--platforms rk3588,rk3566] [--models ...] [--conventions ...]
                           [--fail-above LSB]
MODEL_DIR holds make_zoo.py output (<model>_qdq.onnx, <model>_qdq_s8.onnx, <model>_<convention>.onnx).
--fail-above LSB (a test, oracle.tensorrt_vs_onnxruntime): exit 1 when a row's NPU vs onnxruntime
maximum exceeds LSB, an NPU layer is worse than 1 LSB in isolation, or a model is missing or fails."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "..", "tests", "e2e", "reference", "ort_run.js")
FILES = {"ort_qdq": "_qdq", "ort_qdq_s8": "_qdq_s8"}


def output_scales(path):
    """Graph output -> scale of the DequantizeLinear producing it (None for float outputs)."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name: i for i in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    out = {}
    for o in m.graph.output:
        n = prod.get(o.name)
        s = None
        if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            s = float(numpy_helper.to_array(inits[n.input[1]]).reshape(-1)[0])
        out[o.name] = s
    return [out[o.name] for o in m.graph.output]


def diff_lsb(a, b, scale):
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    unit = scale if scale else max(float(np.abs(b).max()), 1e-30) / 127.0
    return d.max() / unit, d.mean() / unit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("models_dir")
    ap.add_argument("--platforms", default="rk3588,rk3566")
    ap.add_argument("--models", default="mobilenetv2,resnet50v2,yolov5s")
    ap.add_argument("--conventions", default="ort_qdq,ort_qdq_s8,ort_qoperator,pytorch_fx,tensorrt")
    ap.add_argument("--fail-above", type=float, default=None)
    a = ap.parse_args()
    bad = []
    npusim = os.path.join(a.build, "sim", "npusim")
    ref = os.path.join(a.build, "drivers", "compiler", "tools", "npusim-ref")
    print("%-12s %-14s %-7s %4s %4s %4s %7s %-14s %-22s %-16s" % (
        "model", "convention", "soc", "NPU", "view", "CPU", "MACs%", "isolated", "NPU vs ORT max/mean", "ref vs ORT max"))
    with tempfile.TemporaryDirectory() as t:
        for model in a.models.split(","):
            for conv in a.conventions.split(","):
                path = os.path.join(a.models_dir, model + FILES.get(conv, "_" + conv) + ".onnx")
                if not os.path.exists(path):
                    print("%-12s %-14s missing %s" % (model, conv, path))
                    bad.append("%s %s: missing" % (model, conv))
                    continue
                scales = output_scales(path)
                # The run's default input: the reference executor's seed-0 input, also fed to onnxruntime.
                subprocess.run([ref, path, "--seed", "0", "--dump-inputs", t, "--output", os.path.join(t, "ref.npy")],
                               check=True, capture_output=True)
                subprocess.run(["node", ORT_RUN, path, os.path.join(t, "ort_"), os.path.join(t, "input_0.npy")],
                               check=True, capture_output=True)
                nout = len(scales)
                ort = [np.load(os.path.join(t, "ort_%d.npy" % k)) for k in range(nout)]
                refo = [np.load(os.path.join(t, "ref.npy" if k == 0 else "ref_%d.npy" % k)) for k in range(nout)]
                rmax = max(diff_lsb(refo[k], ort[k], scales[k])[0] for k in range(nout))
                for soc in a.platforms.split(","):
                    rep = os.path.join(t, "r.json")
                    r = subprocess.run([npusim, "run", "--platform", soc, path, "--quiet", "--input",
                                        os.path.join(t, "input_0.npy"), "--output", os.path.join(t, "npu.npy"),
                                        "--report", rep], capture_output=True, text=True)
                    if not os.path.exists(rep):
                        print("%-12s %-14s %-7s run failed: %s" % (model, conv, soc, r.stderr.strip()))
                        bad.append("%s %s %s: run failed" % (model, conv, soc))
                        continue
                    j = json.load(open(rep))
                    L = j["layers"]
                    units = [l["unit"] for l in L]
                    macs = sum(l["macs"] for l in L)
                    nmacs = sum(l["macs"] for l in L if l["unit"] == "NPU")
                    iso = j["isolated_check"]
                    npu = [np.load(os.path.join(t, "npu.npy" if k == 0 else "npu_%d.npy" % k)) for k in range(nout)]
                    stats = [diff_lsb(npu[k], ort[k], scales[k]) for k in range(nout)]
                    mx = max(s[0] for s in stats)
                    mean = sum(s[1] * npu[k].size for k, s in enumerate(stats)) / sum(x.size for x in npu)
                    unit = "LSB" if all(scales) else "max|y|/127"
                    print("%-12s %-14s %-7s %4d %4d %4d %6.1f%% max %d, %d worse  %5.2f / %.3f %-10s %5.2f" % (
                        model, conv, soc, units.count("NPU"), units.count("view"), units.count("CPU"),
                        100.0 * nmacs / max(macs, 1), iso["max_abs_diff"], iso["layers_worse"], mx, mean, unit, rmax))
                    sys.stdout.flush()
                    os.remove(rep)
                    if a.fail_above is not None and (mx > a.fail_above or iso["max_abs_diff"] > 1):
                        bad.append("%s %s %s: %.2f %s from onnxruntime (limit %g), isolated max %d" % (
                            model, conv, soc, mx, unit, a.fail_above, iso["max_abs_diff"]))
    if a.fail_above is not None and bad:
        print("FAIL: " + "; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
