#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates the per-operator oracle cases: for each case a one-node ONNX model, seeded random
inputs (.npy) and manifest.json (op, domain, attributes, input files in node order, expected
output files, tolerance). run_ort.js then writes the onnxruntime outputs next to them.

Usage: /usr/bin/python3 gen_op_cases.py --out DIR [--node NODE]
Needs Debian's python3-onnx and python3-numpy. When onnx, numpy, node or onnxruntime-node is
missing it writes DIR/UNAVAILABLE with the reason (the C++ test then fails with that message)
and exits 0, so the build itself never depends on the oracle.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


STAMP = None


def unavailable(out, why):
    # No stamp: the build re-runs the generator until the oracle becomes available.
    if STAMP and os.path.exists(STAMP):
        os.remove(STAMP)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "UNAVAILABLE"), "w") as f:
        f.write(why + "\n")
    print("gen_op_cases: oracle unavailable: " + why)
    sys.exit(0)


def onnx_dtype(dt):
    from onnx import TensorProto
    import numpy as np
    return {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int8"): TensorProto.INT8, np.dtype("uint8"): TensorProto.UINT8,
            np.dtype("int32"): TensorProto.INT32, np.dtype("int64"): TensorProto.INT64, np.dtype("bool"): TensorProto.BOOL}[np.dtype(dt)]


class Gen:
    def __init__(self, out, np, onnx):
        self.out, self.np, self.onnx = out, np, onnx
        self.count = 0

    def case(self, name, op, inputs, attrs=None, domain="", opset=19, out_types=None, n_out=1, tol=None):
        """inputs: list of (array or None, is_const). tol: None = exact, else (atol, rtol)."""
        np, onnx = self.np, self.onnx
        from onnx import helper, numpy_helper, TensorProto
        d = os.path.join(self.out, name)
        os.makedirs(d, exist_ok=True)
        attrs = attrs or {}
        node_in, graph_in, inits, feeds, files = [], [], [], [], []
        for i, (arr, const) in enumerate(inputs):
            if arr is None:
                node_in.append("")
                files.append(None)
                continue
            nm = "in%d" % i
            node_in.append(nm)
            fn = nm + ".npy"
            np.save(os.path.join(d, fn), arr)
            files.append(fn)
            if const:
                inits.append(numpy_helper.from_array(arr, nm))
            else:
                graph_in.append(helper.make_tensor_value_info(nm, onnx_dtype(arr.dtype), arr.shape))
                feeds.append({"name": nm, "file": fn})
        first = next(a for a, _ in inputs if a is not None)
        out_types = out_types or [first.dtype] * n_out
        outs = ["out%d" % i for i in range(len(out_types))]
        graph_out = [helper.make_tensor_value_info(o, onnx_dtype(t), None)
                     for o, t in zip(outs, out_types)]
        node = helper.make_node(op, node_in, outs, domain=domain or None, **attrs)
        graph = helper.make_graph([node], name, graph_in, graph_out, initializer=inits)
        imports = [helper.make_opsetid("", opset)]
        if domain:
            imports.append(helper.make_opsetid(domain, 1))
        model = helper.make_model(graph, opset_imports=imports, producer_name="npusim-oracle")
        model.ir_version = 8
        onnx.save(model, os.path.join(d, "model.onnx"))
        man_attrs = {}
        for k, v in attrs.items():
            if isinstance(v, bool) or isinstance(v, int):
                man_attrs[k] = {"type": "int", "value": int(v)}
            elif isinstance(v, float):
                man_attrs[k] = {"type": "float", "value": v}
            elif isinstance(v, str):
                man_attrs[k] = {"type": "string", "value": v}
            elif isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
                man_attrs[k] = {"type": "strings", "value": list(v)}
            elif isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
                man_attrs[k] = {"type": "ints", "value": list(v)}
            elif isinstance(v, (list, tuple)):
                man_attrs[k] = {"type": "floats", "value": [float(x) for x in v]}
            else:
                raise TypeError(k)
        manifest = {"name": name, "op": op, "domain": domain, "opset": opset, "attrs": man_attrs,
                    "inputs": files, "feeds": feeds, "output_names": outs,
                    "expected": ["expected%d.npy" % i for i in range(len(outs))],
                    "exact": tol is None, "atol": 0.0 if tol is None else tol[0], "rtol": 0.0 if tol is None else tol[1]}
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        self.count += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--stamp", help="file to create when the cases were generated successfully")
    args = ap.parse_args()
    global STAMP
    STAMP = args.stamp
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    try:
        import numpy as np
        import onnx
    except ImportError as e:
        unavailable(args.out, "python onnx/numpy missing (%s); install python3-onnx python3-numpy" % e)
    if not shutil.which(args.node) and not os.path.exists(args.node):
        unavailable(args.out, "node not found; install nodejs npm (scripts/deps.sh)")
    sys.path.insert(0, HERE)
    import op_cases
    g = Gen(args.out, np, onnx)
    op_cases.generate(g, np)
    r = subprocess.run([args.node, os.path.join(HERE, "run_ort.js"), args.out], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        unavailable(args.out, "run_ort.js failed: " + (r.stderr.strip() or r.stdout.strip())[-800:])
    print("gen_op_cases: %d cases in %s" % (g.count, args.out))
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write("%d\n" % g.count)


if __name__ == "__main__":
    main()
