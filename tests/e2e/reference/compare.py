#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compares executor output with the onnxruntime oracle: exact, or within --lsb steps of the output's
quantization grid on at most --max-frac of the elements (issue 3: "exact, or 1 LSB on <0.1%").
usage: compare.py OURS.npy ORT.npy [--lsb N --max-frac F --rtol R]"""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("ours")
ap.add_argument("ort")
ap.add_argument("--lsb", type=float, default=0, help="allowed difference in output LSBs (QDQ models)")
ap.add_argument("--max-frac", type=float, default=0.0, help="fraction of elements allowed to differ")
ap.add_argument("--rtol", type=float, default=None, help="float models: relative tolerance instead")
a = ap.parse_args()
x, y = np.load(a.ours), np.load(a.ort)
if x.shape != y.shape or x.dtype != y.dtype:
    print("shape/dtype differ: ours %s %s, onnxruntime %s %s" % (x.shape, x.dtype, y.shape, y.dtype))
    sys.exit(1)
if a.rtol is not None:
    err = np.abs(x.astype(np.float64) - y) / (np.abs(y).max() + 1e-12)
    print("max relative error %.3g over %d elements" % (err.max(), x.size))
    sys.exit(0 if err.max() <= a.rtol else 1)
diff = x != y
n = int(diff.sum())
grid = np.diff(np.unique(y.astype(np.float64)))
lsb = grid[grid > 0].min() if grid.size and (grid > 0).any() else 1.0
steps = np.abs(x.astype(np.float64) - y) / lsb
print("%d of %d elements differ (%.4f%%), max %.2f LSB (LSB ~ %.6g)" % (n, x.size, 100.0 * n / x.size, steps.max() if n else 0, lsb))
ok = n == 0 or (steps.max() <= a.lsb + 1e-3 and n <= a.max_frac * x.size)
sys.exit(0 if ok else 1)
