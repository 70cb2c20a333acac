#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The sequence nets of tools/zoo/make_zoo_seq.py (issue 15) on rk3588 and rk3566, full mode with
--verify-tiling: the attention's Q^T K products are exMatMul NPU layers (one in kws_convattn, two
in crnn), the last-frame Gather an NPU layer, every NPU layer within 1 LSB of its reference nodes
in isolation (npusim's isolated check against the reference executor), at least 99 % of the MACs
on the NPU, and each decomposed layer norm recognised as exNorm (a vendor-rule CPU region for int8:
the seed lists exNorm in float16 only), 7 nodes each.

usage: seq_zoo_test.py NPUSIM"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))
import make_zoo  # noqa: E402
import make_zoo_seq  # noqa: E402

WANT = {"kws_convattn": {"exMatMul": 1, "Gather": 1}, "crnn": {"exMatMul": 2}}
NORMS = {"kws_convattn": 1, "crnn": 2}


def main():
    npusim = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, want in WANT.items():
            path = os.path.join(tmp, name + "_qdq.onnx")
            make_zoo.save(make_zoo_seq.SeqEmitter(make_zoo_seq.BUILDERS[name](), True).emit(), path)
            for plat in ("rk3588", "rk3566"):
                rep = os.path.join(tmp, "r.json")
                r = subprocess.run([npusim, "run", "--platform", plat, path, "--verify-tiling", "--quiet", "--report", rep],
                                   capture_output=True, text=True)
                what = "%s on %s" % (name, plat)
                if r.returncode != 0:
                    failures.append("%s: run exit %d: %s" % (what, r.returncode, r.stderr.strip()))
                    continue
                layers = json.load(open(rep))["layers"]
                for op, n in want.items():
                    got = sum(1 for L in layers if L["op"] == op and L["unit"] == "NPU")
                    if got != n:
                        failures.append("%s: %d NPU %s layers, want %d" % (what, got, op, n))
                for L in layers:
                    c = L.get("isolated_check")
                    if L["unit"] == "NPU" and (c is None or c["worse"] != 0):
                        failures.append("%s: layer %s: %s" % (what, L["name"], c))
                norm = [L for L in layers if any("LayerNormalization (exNorm)" in w for w in L.get("rewrites", []))]
                nodes = sum(len([n for n in L["nodes"] if "quantizelinear" not in n]) for L in norm)  # not the Q/DQ
                if nodes != 7 * NORMS[name] or any(L["unit"] != "CPU" or L.get("cpu_reason") != "vendor rule" for L in norm):
                    failures.append("%s: %d layer-norm nodes recognised as exNorm, want %d on the CPU by the vendor rule"
                                    % (what, nodes, 7 * NORMS[name]))
                macs = sum(L["macs"] for L in layers)
                npu = sum(L["macs"] for L in layers if L["unit"] == "NPU")
                print("%s: %d layers, %d NPU, %.2f %% of %d MACs on the NPU" %
                      (what, len(layers), sum(L["unit"] == "NPU" for L in layers), 100.0 * npu / macs, macs))
                if npu < 0.99 * macs:
                    failures.append("%s: %.2f %% of the MACs on the NPU" % (what, 100.0 * npu / macs))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
