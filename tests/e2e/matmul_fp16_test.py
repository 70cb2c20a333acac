#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""exMatMul on the fp16 path (issue 15, assumption A-EXMM in drivers/compiler/rknpu/COMPILER.md "Sequence
operators"): the float sequence nets of tools/zoo/make_zoo_seq.py with attention (kws_convattn,
crnn) run with `npusim run -p rk3588 | rk3566` (full mode: a float model runs in fp16). Asserts:
exit 0, every Q^T K MatMul one NPU exMatMul layer, `npusim check` giving those MatMul nodes the
same unit, and the output within max|npusim - onnxruntime| <= 2^-7 x max|onnxruntime| (the fp16
path's tolerance, kFp16LayerRtol). Prints each exMatMul layer's tasks and time.

usage: matmul_fp16_test.py NPUSIM"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

RTOL = 2.0 ** -7
HERE = os.path.dirname(os.path.abspath(__file__))
RUN_ORT = os.path.join(HERE, "..", "oracle", "run_ort.js")
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))
import make_zoo_seq  # noqa: E402

NETS = {"kws_convattn": 1, "crnn": 2}  # Q^T K products in each


def main():
    npusim = sys.argv[1]
    node = shutil.which("node")
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "ort")
        models = {}
        for name in NETS:
            model = make_zoo_seq.SeqEmitter(make_zoo_seq.BUILDERS[name](), False).emit()
            inp = model.graph.input[0]
            shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
            x = np.random.RandomState(5).uniform(-1, 1, shape).astype(np.float32)
            d = os.path.join(root, name)
            os.makedirs(d)
            onnx.save(model, os.path.join(d, "model.onnx"))
            np.save(os.path.join(d, "x.npy"), x)
            out = model.graph.output[0].name
            json.dump({"feeds": [{"name": inp.name, "file": "x.npy"}], "output_names": [out],
                       "expected": ["y.expected.npy"]}, open(os.path.join(d, "manifest.json"), "w"))
            models[name] = (d, out)
        r = subprocess.run([node or "node", RUN_ORT, root], capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("run_ort.js: exit %d: %s" % (r.returncode, (r.stderr + r.stdout).strip()[-400:]))
        for plat in ("rk3588", "rk3566"):
            for name, (d, out) in models.items():
                what = "%s on %s" % (name, plat)
                rep, outdir = os.path.join(tmp, name + plat + ".json"), os.path.join(tmp, name + plat)
                r2 = subprocess.run([npusim, "run", "-p", plat, os.path.join(d, "model.onnx"), "--input",
                                     os.path.join(d, "x.npy"), "--report", rep, "-q", "--output-dir", outdir],
                                    capture_output=True, text=True)
                if r2.returncode != 0:
                    fails.append("%s: npusim exit %d: %s" % (what, r2.returncode, r2.stderr.strip()[-600:]))
                    continue
                j = json.load(open(rep))
                mm = [l for l in j["layers"] if l["op"] == "exMatMul"]
                if len(mm) != NETS[name] or any(l["unit"] != "NPU" for l in mm):
                    fails.append("%s: expected %d NPU exMatMul layers: %s" % (what, NETS[name], mm))
                c = subprocess.run([npusim, "check", "--platform", plat, os.path.join(d, "model.onnx"), "--json"],
                                   capture_output=True, text=True)
                try:
                    verdict = {v["name"]: v["npusim"]["unit"] for v in json.loads(c.stdout)["nodes"]}
                except (ValueError, KeyError) as e:
                    fails.append("%s: npusim check output unreadable (%s): %s" % (what, e, c.stderr.strip()[-300:]))
                    verdict = {}
                for l in mm:
                    if verdict.get(l["name"]) != "NPU":
                        fails.append("%s: npusim check says %s for %s, run NPU" % (what, verdict.get(l["name"]), l["name"]))
                if not os.path.exists(os.path.join(d, "y.expected.npy")):
                    fails.append("%s: no onnxruntime output" % what)
                    continue
                want = np.load(os.path.join(d, "y.expected.npy")).astype(np.float64)
                got = np.load(os.path.join(outdir, out + ".npy")).astype(np.float64)
                e = np.abs(got - want).max() / np.abs(want).max()
                if not e <= RTOL:
                    fails.append("%s: output relative error %.3g > %.3g" % (what, e, RTOL))
                print("%-22s %s; output max rel err vs onnxruntime %.2e; total %.1f us" %
                      (what, ", ".join("%s %d tasks %.1f us" % (l["name"], l["tasks"], l["time_us"]) for l in mm), e,
                       sum(l["time_us"] for l in j["layers"])))
    for f in fails:
        print("FAIL - " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
