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
        for v in (0.2, 0.5, 0.9):
            self.assertAlmostEqual(p.value(p.u_of(v)), v, places=9)
        # A start on a bound moves inside it (2% of the log range), so steps have an effect.
        self.assertLess(p.value(p.u_of(1.0)), 0.99)
        self.assertGreater(p.value(p.u_of(0.1)), 0.1)
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

    def test_prior_pulls_an_undetermined_parameter(self):
        # Two parameters that only act through their product: the data fix a*b, the prior fixes a.
        params = [fitlib.FitParam("a", 0.01, 100.0), fitlib.FitParam("b", 0.01, 100.0)]
        sim = lambda v: [v["a"] * v["b"], 2 * v["a"] * v["b"]]  # noqa: E731
        published = [6.0, 12.0]
        vals, est, _ = fitlib.fit(params, sim, published, {"a": 1.0, "b": 1.0}, priors={"a": (2.0, 0.1)}, max_evals=400)
        self.assertAlmostEqual(vals["a"], 2.0, delta=0.02)
        self.assertAlmostEqual(vals["b"], 3.0, delta=0.05)
        self.assertAlmostEqual(fitlib.prior_penalty({"a": 2.0}, {"a": (2.0, 0.1)}), 0.0)
        self.assertAlmostEqual(fitlib.prior_penalty({"a": 2.0 * math.e}, {"a": (2.0, 0.5)}), 4.0)

    def test_extra_starts_escape_a_local_minimum(self):
        # Double well in one parameter: a local minimum near 0.5 (value 0.3), the global one near 5.
        params = [fitlib.FitParam("x", 0.1, 10.0)]
        sim = lambda v: [1.0 + min(0.3 + (math.log(v["x"] / 0.5)) ** 2, (math.log(v["x"] / 5.0)) ** 2)]  # noqa: E731
        local, _, _ = fitlib.fit(params, sim, [1.0], {"x": 0.4}, max_evals=200)
        self.assertLess(local["x"], 1.0)
        best, _, _ = fitlib.fit(params, sim, [1.0], {"x": 0.4}, max_evals=200, extra_starts=[{"x": 4.0}])
        self.assertAlmostEqual(best["x"], 5.0, delta=0.05)

    def test_solve_linear_finds_the_per_task_cost(self):
        # estimates = base + tasks * x: two models agree on x = 2500 exactly, a third is noisy.
        base, slope = [1.0, 4.0, 9.0], [100e-6, 300e-6, 500e-6]
        truth = [b + k * 2500 for b, k in zip(base, slope)]
        p = fitlib.FitParam("npu.task_overhead_cycles", 50, 20000, integer=True)
        x, est = fitlib.solve_linear(base, slope, truth, p)
        self.assertEqual(x, 2500)
        self.assertEqual(est, truth)
        # Out of reach: clamps to the bound.
        x, _ = fitlib.solve_linear(base, slope, [t * 50 for t in truth], p)
        self.assertEqual(x, 20000)

    def test_known_parameters_are_refused(self):
        prof = {"npu": {"int8_macs_per_cycle": {"grade": "known"}, "task_overhead_cycles": {"grade": "unknown"}},
                "memory": {"ddr_efficiency": {"grade": "inferred"}}}
        fitlib.check_fittable(prof, ["npu.task_overhead_cycles", "memory.ddr_efficiency"])
        with self.assertRaises(ValueError):
            fitlib.check_fittable(prof, ["npu.int8_macs_per_cycle"])

    def test_profile_update_keeps_format_and_sets_grade(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "hwdesc", "profiles", "rk3588.json")
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

    def test_solve_linear_prior_holds_an_undetermined_overhead(self):
        # Two rows that disagree (one wants x = 0, one x = 4000): without a prior the optimum sits
        # between them (2760 by hand: d/dx of the two squared log errors cancel there), a narrow
        # prior at 1000 holds it.
        base, slope, pub = [10.0, 5.0], [0.001, 0.001], [10.0, 9.0]
        p = fitlib.FitParam("npu.task_overhead_cycles", 50, 20000, integer=True)
        free, _ = fitlib.solve_linear(base, slope, pub, p)
        held, _ = fitlib.solve_linear(base, slope, pub, p, prior=(1000, 0.05))
        self.assertAlmostEqual(free, 2760, delta=30)
        self.assertAlmostEqual(held, 1000, delta=100)

    def test_golden_min_finds_the_minimum_of_a_unimodal_function(self):
        # Minimum of the synthetic model's error in the depthwise efficiency alone (others true).
        def err(x):
            return fitlib.objective(synthetic({**TRUE, "npu.depthwise_mac_efficiency": x}), synthetic(TRUE))
        x = fitlib.golden_min(err, 0.005, 1.0, tol=1e-4)
        self.assertAlmostEqual(x, TRUE["npu.depthwise_mac_efficiency"], delta=2e-4)
        self.assertAlmostEqual(fitlib.golden_min(lambda v: (math.log(v) - math.log(0.3)) ** 2, 0.1, 1.0, tol=1e-6), 0.3,
                               places=4)
        # A minimum on a bound is found at the bound.
        self.assertAlmostEqual(fitlib.golden_min(lambda v: v, 0.2, 1.0), 0.2, places=3)
        with self.assertRaises(ValueError):
            fitlib.golden_min(lambda v: v, 0.0, 1.0)


if __name__ == "__main__":
    unittest.main()
