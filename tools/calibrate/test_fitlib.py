# SPDX-License-Identifier: MIT
"""Unit tests of the calibration fitting code against a synthetic latency model with known
parameters (no simulator needed). Run: python3 tools/calibrate/test_fitlib.py"""
import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fitlib  # noqa: E402

# Three synthetic "models": tasks, DDR bytes, depthwise padded MACs, dense padded MACs.
MODELS = [
    dict(tasks=120, bytes=18e6, dw=30e6, dense=0.45e9),
    dict(tasks=200, bytes=60e6, dw=0.0, dense=4.3e9),
    dict(tasks=420, bytes=95e6, dw=0.0, dense=8.6e9),
]
PARAMS = [
    fitlib.FitParam("npu.task_overhead_cycles", 100, 20000, integer=True),
    fitlib.FitParam("memory.ddr_efficiency", 0.1, 1.0),
    fitlib.FitParam("npu.depthwise_mac_efficiency", 0.005, 1.0),
]
TRUE = {"npu.task_overhead_cycles": 3100, "memory.ddr_efficiency": 0.55, "npu.depthwise_mac_efficiency": 0.03}


def synthetic(v):
    """Latency in ms of a roofline-like model: per-task overhead + max(compute, memory) per model."""
    out = []
    for m in MODELS:
        compute = m["dense"] / 1024e9 + m["dw"] / (1024e9 * v["npu.depthwise_mac_efficiency"])
        memory = m["bytes"] / (33.8e9 * v["memory.ddr_efficiency"])
        out.append(1e3 * (m["tasks"] * v["npu.task_overhead_cycles"] * 1e-9 + max(compute, memory) + 0.2 * min(compute, memory)))
    return out


class FitTest(unittest.TestCase):
    def test_param_transform_stays_in_bounds_and_round_trips(self):
        p = fitlib.FitParam("x", 0.1, 1.0)
        for u in (-100.0, -3.0, 0.0, 3.0, 100.0):
            self.assertTrue(0.1 <= p.value(u) <= 1.0)
        for v in (0.11, 0.5, 0.99):
            self.assertAlmostEqual(p.value(p.u_of(v)), v, places=9)
        q = fitlib.FitParam("n", 100, 20000, integer=True)
        self.assertIsInstance(q.value(0.3), int)
        with self.assertRaises(ValueError):
            fitlib.FitParam("bad", 0, 1)

    def test_objective_is_symmetric_in_log(self):
        self.assertAlmostEqual(fitlib.objective([1.1], [1.0]), math.log(1.1) ** 2)
        self.assertAlmostEqual(fitlib.objective([2.0], [1.0]), fitlib.objective([0.5], [1.0]))
        self.assertEqual(fitlib.objective([3.0, 4.0], [3.0, 4.0]), 0.0)

    def test_nelder_mead_finds_a_quadratic_minimum(self):
        x, fx, _ = fitlib.nelder_mead(lambda u: (u[0] - 1.5) ** 2 + 3 * (u[1] + 0.5) ** 2, [0.0, 0.0], xtol=1e-7)
        self.assertAlmostEqual(x[0], 1.5, places=4)
        self.assertAlmostEqual(x[1], -0.5, places=4)
        self.assertLess(fx, 1e-8)

    def test_fit_recovers_the_synthetic_parameters(self):
        published = synthetic(TRUE)
        start = {"npu.task_overhead_cycles": 1000, "memory.ddr_efficiency": 0.7, "npu.depthwise_mac_efficiency": 0.0625}
        vals, est, evals = fitlib.fit(PARAMS, synthetic, published, start, max_evals=400)
        for e, p in zip(est, published):
            self.assertLess(abs(e / p - 1), 0.005, (vals, est, published))
        self.assertLess(abs(vals["npu.task_overhead_cycles"] / 3100 - 1), 0.02, vals)
        self.assertLess(abs(vals["memory.ddr_efficiency"] / 0.55 - 1), 0.02, vals)
        self.assertLess(abs(vals["npu.depthwise_mac_efficiency"] / 0.03 - 1), 0.05, vals)
        self.assertGreater(evals, 3)
        # Deterministic: a second fit gives the same values.
        again, _, _ = fitlib.fit(PARAMS, synthetic, published, start, max_evals=400)
        self.assertEqual(vals, again)

    def test_fit_respects_bounds_when_the_target_is_outside(self):
        # An unreachable target (every model 100x slower) pushes parameters to their bounds, not past.
        published = [x * 100 for x in synthetic(TRUE)]
        start = {"npu.task_overhead_cycles": 1000, "memory.ddr_efficiency": 0.7, "npu.depthwise_mac_efficiency": 0.0625}
        vals, _, _ = fitlib.fit(PARAMS, synthetic, published, start, max_evals=200)
        for p in PARAMS:
            self.assertTrue(p.lo <= vals[p.path] <= p.hi, (p.path, vals[p.path]))

    def test_known_parameters_are_refused(self):
        prof = {"npu": {"int8_macs_per_cycle": {"grade": "known"}, "task_overhead_cycles": {"grade": "unknown"}},
                "memory": {"ddr_efficiency": {"grade": "inferred"}}}
        fitlib.check_fittable(prof, ["npu.task_overhead_cycles", "memory.ddr_efficiency"])
        with self.assertRaises(ValueError):
            fitlib.check_fittable(prof, ["npu.int8_macs_per_cycle"])

    def test_profile_update_keeps_format_and_sets_grade(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "npu_models", "hwdesc", "profiles", "rk3588.json")
        with open(path) as fh:
            text = fh.read()
        self.assertEqual(fitlib.update_profile_text(text, {}), text)  # no update: byte-identical
        new = fitlib.update_profile_text(text, {"npu.task_overhead_cycles": (1234, "inferred", "fitted")})
        d = json.loads(new)
        self.assertEqual(d["npu"]["task_overhead_cycles"], {"value": 1234, "grade": "inferred", "source": "fitted"})
        with self.assertRaises(KeyError):
            fitlib.update_profile_text(text, {"npu.nosuch": (1, "inferred", "x")})
        self.assertEqual(fitlib.round_value(0.123456, False), 0.1235)
        self.assertEqual(fitlib.round_value(1234.6, True), 1235)


if __name__ == "__main__":
    unittest.main()
