#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Numerics of the planned int8 Softmax mapping (A-SOFTMAX, drivers/compiler/rknpu/COMPILER.md) against
onnxruntime's QLinearSoftmax kernel (uint8 in, y_scale 1/256, zero point 0), on random rows.

The plan, per row of D codes x (integers only, as the DPU / CNA would compute it):
  d = x - max(row)                       exact (the run-time max, a DPU Sub of equal scales)
  e = round(E exp(d s)), E = 32767       the EW LUT with 16-bit entries, one per code distance
  S = sum(e)                             exact (an all-ones reduction, int32)
  R ~ 2^K / S                            16-bit table entries, linear interpolation at power-of-two
                                         steps: one LO table (257 entries) over [E, D E], or the LE
                                         table (65) over [E, 2E) and the LO table over [2E, D E]
  y = (e R + 2^(K-9)) >> (K - 8)         EW multiply, output convert (round half up), saturate
This is a design study (no block runs here): it prints the share of outputs off by one and the
largest difference for each row length D and input scale s.
Usage: /usr/bin/python3 tools/rknpu/softmax_plan.py [--rows N] [--seed S]"""
import argparse
import math

import numpy as np


def ort_qlinear_softmax(rows, s):
    """onnxruntime's kernel (the reference library's QLinearSoftmax, numerics README)."""
    d = rows.shape[1]
    shift = max(0.0, math.log(float(np.float32(np.finfo(np.float32).max) / np.float32(d))) - 5) / float(np.float32(s))
    table = np.array([np.float32(math.exp((i - 255 + shift) * float(np.float32(s)))) for i in range(256)], np.float32)
    out = np.zeros(rows.shape, np.int64)
    for r in range(rows.shape[0]):
        vt = table[255 + rows[r] - rows[r].max()]
        acc = np.float32(0)
        for v in vt:
            acc = np.float32(acc + v)
        out[r] = np.minimum(np.rint(vt * np.float32(256) / acc), 255)
    return out


def interp(S, lo, n, sel, k):
    nodes = lo + (np.arange(n + 1, dtype=np.int64) << sel)
    tab = np.minimum(np.round(2.0 ** k / nodes), 32767).astype(np.int64)
    off = S - lo
    idx = np.minimum(off >> sel, n - 1)
    frac = off - (idx << sel)
    a, b = tab[idx], tab[idx + 1]
    return a + (((b - a) * frac + ((1 << (sel - 1)) if sel else 0)) >> sel)


def plan(rows, s, hybrid, E=32767, k=29):
    D = rows.shape[1]
    lut = np.round(E * np.exp(np.arange(-255, 1) * float(np.float32(s)))).astype(np.int64)
    e = lut[rows - rows.max(axis=1, keepdims=True) + 255]
    S = e.sum(axis=1)
    if hybrid:
        le_sel = math.ceil(math.log2(E / 64))
        lo_start = E + (64 << le_sel)
        lo_sel = max(0, math.ceil(math.log2(max(1.0, (D * E - lo_start) / 256))))
        R = np.where(S < lo_start, interp(S, E, 64, le_sel, k), interp(np.maximum(S, lo_start), lo_start, 256, lo_sel, k))
    else:
        R = interp(S, E, 256, max(0, math.ceil(math.log2(max(1.0, (D - 1) * E / 256)))), k)
    sh = k - 8
    return np.minimum((e * R[:, None] + (1 << (sh - 1))) >> sh, 255)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    print("   D     s | one LO table: off by 1, max | LE + LO: off by 1, max")
    for D in (8, 16, 40, 64, 128, 256):
        for s in (0.02, 0.1, 0.2):
            rows = rng.integers(0, 256, size=(a.rows, D))
            ref = ort_qlinear_softmax(rows, s)
            one, two = np.abs(plan(rows, s, False) - ref), np.abs(plan(rows, s, True) - ref)
            print("%4d  %.2f | %7.3f %%  %d | %7.3f %%  %d" % (D, s, 100.0 * (one == 1).mean(), one.max(), 100.0 * (two == 1).mean(), two.max()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
