#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Where the end-to-end difference of an NPU run comes from, layer by layer (issue 13).

For every NPU layer output of `npusim run --dump-layers` (the device's values in the end-to-end run)
it prints the difference from onnxruntime-node's value of the same tensor in onnxruntime's own
end-to-end run (the model with those tensors added as graph outputs), next to the layer's isolated
figure (the device fed the reference's inputs, from index.csv). With --reference it also runs
npusim-ref on the same model and prints where the reference executor first departs from onnxruntime.

Isolated differences of at most 1 LSB on a few values whose end-to-end difference grows with depth
is accumulation through the network, not a layer computing something else.

usage: drift.py BUILD_DIR MODEL.onnx [--platform rk3588] [--seed 0] [--reference]"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "..", "tests", "e2e", "reference", "ort_run.js")


def with_outputs(model, types, path):
    """`model` with the tensors of `types` (name -> numpy dtype) as extra graph outputs, saved to `path`."""
    m = onnx.load(model)
    have = {o.name for o in m.graph.output}
    for t, dt in types.items():
        if t not in have:
            m.graph.output.append(helper.make_tensor_value_info(t, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)], None))
    onnx.save(m, path)
    return [o.name for o in m.graph.output]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("model")
    ap.add_argument("--platform", default="rk3588")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--reference", action="store_true")
    a = ap.parse_args()
    npusim = os.path.join(a.build, "sim", "npusim")
    ref = os.path.join(a.build, "drivers", "compiler", "tools", "npusim-ref")
    with tempfile.TemporaryDirectory() as t:
        subprocess.run([ref, a.model, "--seed", a.seed, "--dump-inputs", t, "--output", os.path.join(t, "r.npy")],
                       check=True, capture_output=True)
        inp = os.path.join(t, "input_0.npy")
        dl = os.path.join(t, "layers")
        subprocess.run([npusim, "run", "--platform", a.platform, a.model, "--quiet", "--input", inp,
                        "--dump-layers", dl], capture_output=True)
        rows = [r for r in csv.DictReader(open(os.path.join(dl, "index.csv")))]
        prod = {o: n for n in onnx.load(a.model, load_external_data=False).graph.node for o in n.output}
        rows = [r for r in rows if r["tensor"] in prod]
        path = os.path.join(t, "m.onnx")
        dev = {r["tensor"]: np.load(os.path.join(dl, r["file_stem"] + ".device.npy")) for r in rows}
        outs = with_outputs(a.model, {n: v.dtype for n, v in dev.items()}, path)
        subprocess.run(["node", ORT_RUN, path, os.path.join(t, "ort_"), inp], check=True, capture_output=True)
        ort = {n: np.load(os.path.join(t, "ort_%d.npy" % k)) for k, n in enumerate(outs)}
        if a.reference:
            subprocess.run([ref, path, "-i", inp, "-o"] + [os.path.join(t, "ref_%d.npy" % k) for k in range(len(outs))],
                           check=True, capture_output=True)
            first, differing = None, 0
            for k, n in enumerate(outs):
                d = np.abs(np.load(os.path.join(t, "ref_%d.npy" % k)).astype(np.float64) - ort[n].astype(np.float64))
                if d.max() > 0:
                    differing += 1
                    first = first or "%s (%d of %d values)" % (n, int((d > 0).sum()), d.size)
            print("reference executor vs onnxruntime: %d of %d tensors differ%s" % (
                differing, len(outs), "; first: " + first if first else ""))
        print("%4s %-28s %9s %14s %10s" % ("#", "tensor", "values", "e2e max / %", "isolated"))
        for r in rows:
            d = np.abs(dev[r["tensor"]].astype(np.int64) - ort[r["tensor"]].astype(np.int64))
            print("%4s %-28s %9d %5d / %6.2f%% %10s" % (r["layer_index"], r["tensor"][:28], d.size, d.max(),
                                                      100.0 * (d > 0).mean(), r["max_abs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
