#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The PaddleOCR-det-style DBNet of tools/zoo/make_zoo_dbnet.py (a float torch.onnx-style export,
opset 14) quantized by `npusim run --quantize int8` on rk3588 and rk3566, full mode with
--verify-tiling (issue 15): PyTorch's nearest upsampling (Resize asymmetric / floor, A-NEAREST) and
the DB head's ConvTranspose layers run on the NPU, the only CPU layers are the input Q, the output DQ
and the squeeze-excite GlobalAveragePools beyond the seed's 7 x 7 (vendor rule), every NPU layer is
within 1 LSB of its reference nodes in isolation, and at least 99 % of the MACs are on the NPU.

usage: dbnet_probe_test.py NPUSIM"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))
import make_zoo_dbnet  # noqa: E402

SIZE = 320
CPU_OK = {"QuantizeLinear", "DequantizeLinear", "QLinearGlobalAveragePool"}


def main():
    npusim = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dbnet.onnx")
        onnx.save(make_zoo_dbnet.dbnet(SIZE), path)
        cal = os.path.join(tmp, "cal")
        os.makedirs(cal)
        rng = np.random.RandomState(1)
        for i in range(2):
            np.save(os.path.join(cal, "%d.npy" % i), rng.uniform(0, 1, (1, 3, SIZE, SIZE)).astype(np.float32))
        for plat in ("rk3588", "rk3566"):
            rep = os.path.join(tmp, "r.json")
            r = subprocess.run([npusim, "run", "--platform", plat, path, "--quantize", "int8", "--calibration", cal,
                                "--verify-tiling", "--quiet", "--report", rep], capture_output=True, text=True)
            what = "dbnet on %s" % plat
            if r.returncode != 0:
                failures.append("%s: run exit %d: %s" % (what, r.returncode, r.stderr.strip()[-400:]))
                continue
            layers = json.load(open(rep))["layers"]
            ops = {}
            for L in layers:
                ops.setdefault(L["op"], []).append(L)
                c = L.get("isolated_check")
                if L["unit"] == "NPU" and (c is None or c["worse"] != 0):
                    failures.append("%s: layer %s: %s" % (what, L["name"], c))
                if L["unit"] == "CPU" and L["op"] not in CPU_OK:
                    failures.append("%s: %s (%s) on the CPU: %s" % (what, L["name"], L["op"], L.get("note", "")))
                if L["unit"] == "CPU" and L["op"] == "QLinearGlobalAveragePool":
                    h, w = (int(v) for v in L["input_shape"].split("x")[2:4])
                    if L.get("cpu_reason") != "vendor rule" or (h <= 7 and w <= 7):
                        failures.append("%s: %s %dx%d on the CPU (%s)" % (what, L["name"], h, w, L.get("cpu_reason")))
            resizes = [L for L in layers if L["op"] == "Resize"]
            deconvs = [L for L in layers if L["op"].startswith("ConvTranspose")]
            if len(resizes) != 6 or any(L["unit"] != "NPU" for L in resizes):
                failures.append("%s: Resize layers %s" % (what, [(L["name"], L["unit"]) for L in resizes]))
            if len(deconvs) != 2 or any(L["unit"] != "NPU" for L in deconvs):
                failures.append("%s: ConvTranspose layers %s" % (what, [(L["name"], L["unit"]) for L in deconvs]))
            macs = sum(L["macs"] for L in layers)
            npu = sum(L["macs"] for L in layers if L["unit"] == "NPU")
            cpu = [L["op"] for L in layers if L["unit"] == "CPU"]
            print("%s: %d layers, %d NPU, CPU %s, %.2f %% of %d MACs on the NPU" %
                  (what, len(layers), sum(L["unit"] == "NPU" for L in layers), cpu, 100.0 * npu / macs, macs))
            if npu < 0.99 * macs:
                failures.append("%s: %.2f %% of the MACs on the NPU" % (what, 100.0 * npu / macs))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
