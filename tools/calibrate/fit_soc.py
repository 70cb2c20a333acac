#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Calibrate the RKNPU timing model per SoC (standard library only) against the published int8
inference latencies in ../shared/calibration/ (rknn_model_zoo v2.3.2: MobileNetV2, ResNet50 v2,
YOLOv5s-relu; one NPU core, "model inference only").

What is fitted (never per-model or per-layer factors):

* per SoC, on its own three rows, at most two parameters: npu.task_overhead_cycles (latency is
  exactly linear in it: solved in closed form) and npu.conv_mac_efficiency (sustained share of
  the padded-MAC peak on dense convolutions; a log grid, then a golden-section refinement);
* jointly over every calibrated SoC: npu.depthwise_mac_efficiency, as useful products per 8-bit
  cell (profile value = joint value x 16 / C2), because only MobileNetV2 has depthwise layers;
* everything else is a documented hardware fact or an assumption, not fitted here (listed with its
  reason in each profile's "calibration" block).

SoCs without published figures inherit the fitted values of the calibrated SoC of the nearest NPU
IP revision (INHERIT below). The leave-one-model-out error refits everything without one model
(on every SoC) and predicts it: it shows what an unseen model's error looks like.

Each candidate is a simulator run in timing mode; the estimate is the report's totals.inference_ms:

    npusim run --platform SOC --core-mask 0 --mode timing MODEL --report r.json --param k=v ...

    python3 tools/calibrate/fit_soc.py                  # fit, print the tables, write fits/<soc>.json
    python3 tools/calibrate/fit_soc.py --write-profile  # also store values + calibration in the profiles
    python3 tools/calibrate/fit_soc.py --evaluate       # only the table for the profiles as they are
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import fitlib  # noqa: E402

# Calibration entry model name -> (zoo key, file) from tools/zoo/make_zoo.py (QDQ int8).
ZOO = {
    "mobilenet/mobilenetv2-12": ("mobilenetv2", "mobilenetv2_qdq.onnx"),
    "resnet/resnet50-v2-7": ("resnet50v2", "resnet50v2_qdq.onnx"),
    "yolov5/yolov5s_relu": ("yolov5s", "yolov5s_qdq.onnx"),
}
SHORT = {"mobilenet/mobilenetv2-12": "MobileNetV2", "resnet/resnet50-v2-7": "ResNet50 v2",
         "yolov5/yolov5s_relu": "YOLOv5s-relu"}

# SoC -> (calibration file in shared/calibration, "platform" value of its rows). RK3566 and RK3568
# share the vendor's column (one board measured for both): each profile is fitted to it.
CALIBRATED = {
    "rk3588": ("rk3588-int8.json", "RK3588"),
    "rk3566": ("rk3566-int8.json", "RK3566/RK3568"),
    "rk3568": ("rk3566-int8.json", "RK3566/RK3568"),
    "rk3576": ("rk3576-int8.json", "RK3576"),
}

OVERHEAD = fitlib.FitParam("npu.task_overhead_cycles", 50, 40000, integer=True)
OVERHEAD_REF = 3000  # the value runs are simulated at before the closed-form solve
# Optional prior on a SoC's per-task overhead {soc: (centre, sigma_log)}: for rows that cannot
# determine it. None is needed with the current lowering (before the flat DPU surfaces of
# lower_eltwise, RK356x ResNet50 v2 carried 1536 one-surface tasks that drove it to its bound).
OVERHEAD_PRIOR = {}
MAC_EFF = fitlib.FitParam("npu.conv_mac_efficiency", 0.2, 1.0)
DDR_EFF = fitlib.FitParam("memory.ddr_efficiency", 0.2, 1.0)
GRID = [0.2 * 5 ** (i / 12) for i in range(13)]  # log grid over [0.2, 1.0], 14% steps
# The second parameter fitted on each SoC's rows (the first is the task overhead). RK3566 and RK3568
# share one vendor column measured on one board whose DDR speed is not stated, while their profiles
# differ in clock and DDR blob: their sustained DDR efficiency is what the column determines, and
# their dense-MAC efficiency is RK3588's (MAC_FROM). RK3588 and RK3576 (LPDDR4x at the documented
# 0.70) fit their dense-MAC efficiency.
SECOND = {"rk3588": MAC_EFF, "rk3566": DDR_EFF, "rk3568": DDR_EFF, "rk3576": MAC_EFF}
MAC_FROM = {"rk3566": "rk3588", "rk3568": "rk3588"}
DW = fitlib.FitParam("npu.depthwise_mac_efficiency", 0.005, 0.5)
DW_GRID = [0.005 * 100 ** (i / 12) for i in range(13)]  # log grid over [0.005, 0.5], 47% steps
# Weak prior on the joint depthwise value (centre: the RK3588-only fit of the previous model,
# tools/calibrate history at b0687cb; sigma 50% in log): it only decides when MobileNetV2 is left out.
DW_PRIOR = (0.0432, 0.5)

# Not fitted: the three models cannot separate them from the fitted ones (both scale exposed load
# time); kept at documented values, the same on every SoC.
ASSUMED = {
    "npu.load_compute_overlap": "share of a task's loads streamed under the pipeline; the RK3588 fit at b0687cb "
                                "(0.42) kept for every SoC: the three rows of one SoC cannot separate it from "
                                "memory.ddr_efficiency",
    "memory.ddr_efficiency": "sustained/peak of the DDR type (memory.ddr_type); 0.70 from hardware-facts III 5.2 "
                             "(60-80% typical for LPDDR4/4x) where it is not fitted: the RK3588 and RK3576 rows do not move it",
}

ASSUMED_VALUES = {"npu.load_compute_overlap": 0.4186, "memory.ddr_efficiency": 0.7}

# SoCs without published figures: whose fitted values they take, and why (the NPU IP revision is
# read from the vendor driver's per-SoC config, hardware-facts Part I 1.5 / Part II 3.6).
INHERIT = {
    "rk3562": ("rk3576", "same newer PC front end as RK3576 (task status at 0x48, 16-bit task counter, pc_dma_ctrl, "
                         "NBUF) and the same C2 16 datapath; no published figures in shared/calibration"),
    "rv1126b": ("rk3576", "same newer PC front end as RK3576 (task status 0x48, pc_dma_ctrl, NBUF, sparsity); "
                          "no published figures"),
    "rv1106": ("rk3588", "C2 16 datapath, PC data amount scale 2 and task status at 0x3c as RK3588; no published "
                         "figures"),
    "rv1103": ("rk3588", "same driver config as RV1106 (C2 16, amount scale 2, 0x3c): RK3588's; no published figures"),
    "rv1106b": ("rk3588", "assumed as RV1106 (not in the stored vendor driver table): RK3588's; no published figures"),
    "rk2118": ("rk3588", "NPU not public (hardware-facts II.1): the RK3588 values as the default; no published "
                         "figures"),
}


def rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT)


def ensure_models(work, zoo):
    out, missing = {}, []
    for name, (key, fname) in ZOO.items():
        for d in ([zoo] if zoo else []) + [os.path.join(work, "zoo")]:
            if os.path.exists(os.path.join(d, fname)):
                out[name] = os.path.join(d, fname)
                break
        else:
            missing.append(key)
    if missing:
        d = os.path.join(work, "zoo")
        os.makedirs(d, exist_ok=True)
        cmd = [sys.executable, os.path.join(ROOT, "tools", "zoo", "make_zoo.py"), d, "--models", ",".join(missing)]
        print("generating:", " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)
        for name, (key, fname) in ZOO.items():
            out.setdefault(name, os.path.join(d, fname))
    return out


def load_profile(soc):
    with open(os.path.join(ROOT, "hwdesc", "profiles", soc + ".json")) as fh:
        return json.load(fh)


def c2_of(soc):
    return load_profile(soc)["npu"]["c2_int8"]["value"]


def inference_ms(rep):
    t = rep.get("totals", {})
    if "inference_ms" not in t:
        raise KeyError("report has no totals.inference_ms")
    return float(t["inference_ms"])


class Simulator:
    """Runs npusim; caches reports by (soc, model, parameters that matter for that model)."""

    def __init__(self, npusim, models, work):
        self.npusim, self.models, self.work = npusim, models, work
        self.cache, self.runs, self.has_dw = {}, 0, {}

    def _run(self, soc, model, values):
        cmd = [self.npusim, "run", "--platform", soc, "--core-mask", "0", "--mode", "timing", self.models[model]]
        with tempfile.NamedTemporaryFile(suffix=".json", dir=self.work, delete=False) as f:
            rpath = f.name
        cmd += ["--report", rpath]
        for k, v in sorted(values.items()):
            cmd += ["--param", f"{k}={v}"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.runs += 1
        try:
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(shlex.quote(c) for c in cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
            with open(rpath) as fh:
                rep = json.load(fh)
        finally:
            os.unlink(rpath)
        if model not in self.has_dw:
            self.has_dw[model] = any(l.get("op") == "DepthwiseConv" for l in rep.get("layers", []))
        return {"inference_ms": inference_ms(rep), "tasks": rep["totals"]["tasks"], "clock": rep["npu_clock_hz"],
                "latency_ms": rep["totals"]["latency_ms"]}

    def key(self, soc, model, values):
        v = {k: (round(x, 9) if isinstance(x, float) else x) for k, x in values.items()}
        if self.has_dw.get(model, True) is False:
            v.pop(DW.path, None)
        return (soc, model, tuple(sorted(v.items())))

    def runs_for(self, jobs):
        """jobs: [(soc, model, values)] -> results, simulating only what the cache lacks (2 at a time)."""
        todo = []
        for j in jobs:
            k = self.key(*j)
            if k not in self.cache and k not in [self.key(*t) for t in todo]:
                todo.append(j)
        with ThreadPoolExecutor(max_workers=2) as ex:
            for j, res in zip(todo, ex.map(lambda t: self._run(*t), todo)):
                self.cache[self.key(*j)] = res
        return [self.cache[self.key(*j)] for j in jobs]


FIXED = {}  # soc -> {path: value} set before the per-SoC fits (MAC_FROM)


def profile_values(soc, dw_cell, second, ovh):
    """--param values of one candidate (the joint depthwise value scaled to the SoC's C2; the SoC's
    second fitted parameter; values taken from another SoC's fit)."""
    v = {DW.path: fitlib.round_value(dw_cell * 16 / c2_of(soc), False), SECOND[soc].path: round(second, 6),
         OVERHEAD.path: ovh}
    v.update(FIXED.get(soc, {}))
    return v


# SoCs of one NPU IP revision whose per-task overhead is fitted jointly (one value for the
# revision, on all their rows), each keeping its own second parameter: RK3566 and RK3568 are one
# die family with one NPU (hardware-facts II note R2), their profiles differ in clock and DDR.
GROUPS = [("rk3566", "rk3568")]


def group_of(soc):
    return next((g for g in GROUPS if soc in g), None)


def units_of(socs):
    """The fit units: each group whose SoCs are all in `socs`, the other SoCs alone."""
    out, seen = [], set()
    for g in GROUPS:
        if all(x in socs for x in g):
            out.append(tuple(g))
            seen.update(g)
    return out + [(x,) for x in socs if x not in seen]


class Fitter:
    def __init__(self, sim, published):
        self.sim, self.published = sim, published  # published: soc -> {model: ms}

    def arrays(self, soc, models, dw_cell, second, ovh=OVERHEAD_REF):
        """(base, ms per overhead cycle, published) of one SoC's rows at (dw, second), from runs at `ovh`."""
        res = self.sim.runs_for([(soc, m, profile_values(soc, dw_cell, second, ovh)) for m in models])
        per = [r["tasks"] * 1e3 / r["clock"] for r in res]
        base = [r["inference_ms"] - k * ovh for r, k in zip(res, per)]
        return base, per, [self.published[soc][m] for m in models]

    def unit_at(self, unit, models, dw_cell, seconds, ovh=OVERHEAD_REF):
        """Best common overhead (closed form) of a unit at its SoCs' second values: (objective, overhead)."""
        base, per, pub = [], [], []
        for soc, g in zip(unit, seconds):
            b, k, p = self.arrays(soc, models, dw_cell, g, ovh)
            base, per, pub = base + b, per + k, pub + p
        pr = OVERHEAD_PRIOR.get(unit[0])
        x, est = fitlib.solve_linear(base, per, pub, OVERHEAD, points=800, prior=pr)
        return fitlib.objective(est, pub) + (fitlib.prior_penalty({"x": x}, {"x": pr}) if pr else 0.0), x

    def fit_unit(self, unit, models, dw_cell, refine=True):
        """Fit of a unit at a joint depthwise value: each SoC's second parameter on the grid (its
        runs are shared by every joint candidate and left-out model; all combinations for a group),
        then golden-section refinement SoC by SoC. Returns (objective, {soc: (second, overhead)})."""
        combos = [[g] for g in GRID]
        for _ in unit[1:]:
            combos = [c + [g] for c in combos for g in GRID]
        best = min(combos, key=lambda c: (self.unit_at(unit, models, dw_cell, c)[0], c))
        if refine:
            for i in range(len(unit)):
                j = GRID.index(min(GRID, key=lambda g: abs(g - best[i])))
                lo, hi = GRID[max(0, j - 1)], GRID[min(len(GRID) - 1, j + 1)]

                def f(v, i=i):
                    return self.unit_at(unit, models, dw_cell, best[:i] + [v] + best[i + 1:])[0]
                best[i] = fitlib.round_value(fitlib.golden_min(f, lo, hi, tol=0.004), False)
        obj, x = self.unit_at(unit, models, dw_cell, best)
        return obj, {soc: (g, x) for soc, g in zip(unit, best)}

    def fit_all(self, socs, models):
        """Joint depthwise value over `socs` (grid + golden on the summed unit optima + prior),
        then each unit's own values. Returns (dw_cell, {soc: (second, ovh)})."""
        units = units_of(socs)

        def total(dw):
            return sum(self.fit_unit(u, models, dw, refine=False)[0] for u in units) + fitlib.prior_penalty(
                {"d": dw}, {"d": DW_PRIOR})
        if any(self.sim.has_dw.get(m, True) for m in models):
            best = min(DW_GRID, key=lambda d: (total(d), d))
            i = DW_GRID.index(best)
            dw = fitlib.golden_min(total, DW_GRID[max(0, i - 1)], DW_GRID[min(len(DW_GRID) - 1, i + 1)], tol=0.02)
            dw = fitlib.round_value(dw, False)
        else:
            dw = DW_PRIOR[0]  # no row constrains it: the prior's centre
        per = {}
        for u in units:
            per.update(self.fit_unit(u, models, dw)[1])
        return dw, per

    def fixed_point(self, unit, models, dw, seconds, ovh):
        """The compiler's tiling reads the overhead too: re-solve it at its own value until it repeats."""
        for _ in range(4):
            x = self.unit_at(unit, models, dw, seconds, ovh)[1]
            if x == ovh:
                break
            ovh = x
        return ovh


def fit_with_from(fit, socs, models):
    """The joint fit, then the SoCs that take their dense-MAC efficiency from another SoC's fit
    (MAC_FROM) refitted with that value (both fits on `models` only: leave-one-out stays clean)."""
    for soc in MAC_FROM:
        FIXED.setdefault(soc, {MAC_EFF.path: 0.95})
    dw, per = fit.fit_all(socs, models)
    redo = set()
    for soc, src in MAC_FROM.items():
        if soc in socs and FIXED[soc] != {MAC_EFF.path: per[src][0]}:
            FIXED[soc] = {MAC_EFF.path: per[src][0]}
            redo.add(soc)
    for u in units_of(socs):
        if redo & set(u):
            per.update(fit.fit_unit(u, models, dw)[1])
    return dw, per


def table(rows):
    lines = [f"{'SoC':8s} {'model':14s} {'published':>10s} {'estimate':>9s} {'error':>7s} {'LOO est':>8s} {'LOO err':>8s}"]
    for r in rows:
        lines.append(f"{r['soc']:8s} {SHORT[r['model']]:14s} {r['published_ms']:10.3f} {r['estimate_ms']:9.3f} "
                     f"{r['error_pct']:+6.1f}% {r['loo_estimate_ms']:8.3f} {r['loo_error_pct']:+7.1f}%")
    return "\n".join(lines)


def stats(errs):
    a = [abs(e) for e in errs]
    return (round(sum(a) / len(a), 2), round(max(a), 2)) if a else (-1, -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npusim", default=os.path.join(ROOT, "build", "sim", "npusim"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "calibrate"))
    ap.add_argument("--zoo", help="directory that already holds the *_qdq.onnx zoo models")
    # shared/ sits beside the main checkout (ROOT/..) or beside the worktrees' parent (ROOT/../..).
    cal_dirs = [os.path.join(ROOT, *([".."] * k), "shared", "calibration") for k in (1, 2)]
    ap.add_argument("--calibration-dir", default=next((d for d in cal_dirs if os.path.isdir(d)), cal_dirs[0]))
    ap.add_argument("--evaluate", action="store_true", help="no fit: the table for the profiles as they are")
    ap.add_argument("--write-profile", action="store_true", help="store the fitted values and calibration blocks")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "fits"))
    a = ap.parse_args()

    published = {}
    for soc, (fname, platform) in CALIBRATED.items():
        with open(os.path.join(a.calibration_dir, fname)) as fh:
            rows = [c for c in json.load(fh) if c["platform"] == platform and c["dtype"] == "INT8" and c["model"] in ZOO]
        published[soc] = {c["model"]: float(c["latency_ms"]) for c in rows}
        if len(published[soc]) != len(ZOO):
            sys.exit(f"{fname} lacks some of {sorted(ZOO)} for {platform}")
    models = list(ZOO)
    socs = list(CALIBRATED)
    os.makedirs(a.work, exist_ok=True)
    sim = Simulator(a.npusim, ensure_models(a.work, a.zoo), a.work)

    if a.evaluate:
        for soc in socs:
            res = sim.runs_for([(soc, m, {}) for m in models])
            for m, r in zip(models, res):
                p = published[soc][m]
                print(f"{soc:8s} {SHORT[m]:14s} published {p:8.3f} estimate {r['inference_ms']:8.3f} "
                      f"{100 * (r['inference_ms'] / p - 1):+6.1f}%  (latency with host I/O {r['latency_ms']:.3f})")
        return 0

    for soc in socs:
        fitlib.check_fittable(load_profile(soc), [OVERHEAD.path, MAC_EFF.path, DW.path])
    fit = Fitter(sim, published)
    dw, per = fit_with_from(fit, socs, models)
    final = {}
    for u in units_of(socs):
        ovh = fit.fixed_point(u, models, dw, [per[x][0] for x in u], per[u[0]][1])
        for x in u:
            final[x] = (per[x][0], ovh)
    est = {soc: dict(zip(models, [r["inference_ms"] for r in sim.runs_for(
        [(soc, m, profile_values(soc, dw, *final[soc])) for m in models])])) for soc in socs}

    fixed_full = {k: dict(v) for k, v in FIXED.items()}
    # Leave one model out: refit everything without it, predict it.
    loo = {soc: {} for soc in socs}
    loo_params = {}
    for m in models:
        rest = [x for x in models if x != m]
        dw_m, per_m = fit_with_from(fit, socs, rest)
        loo_params[m] = {"npu.depthwise_mac_efficiency (per cell)": dw_m,
                         "per_soc": {s: {SECOND[s].path: v[0], OVERHEAD.path: v[1]} for s, v in per_m.items()}}
        for soc in socs:
            r = sim.runs_for([(soc, m, profile_values(soc, dw_m, *per_m[soc]))])[0]
            loo[soc][m] = r["inference_ms"]

    FIXED.clear()
    FIXED.update(fixed_full)
    rows = []
    for soc in socs:
        for m in models:
            p = published[soc][m]
            rows.append({"soc": soc, "model": m, "published_ms": p, "estimate_ms": round(est[soc][m], 4),
                         "error_pct": round(100 * (est[soc][m] / p - 1), 2), "loo_estimate_ms": round(loo[soc][m], 4),
                         "loo_error_pct": round(100 * (loo[soc][m] / p - 1), 2)})
    print(table(rows))
    print(f"joint npu.depthwise_mac_efficiency per 8-bit cell: {dw}")
    for soc in socs:
        print(f"  {soc}: {SECOND[soc].path} = {final[soc][0]}, {OVERHEAD.path} = {final[soc][1]}, "
              f"{DW.path} = {profile_values(soc, dw, 1, 1)[DW.path]}"
              + "".join(f", {k} = {v} (from {MAC_FROM[soc]})" for k, v in FIXED.get(soc, {}).items()))
    fe, le = [r["error_pct"] for r in rows], [r["loo_error_pct"] for r in rows]
    print(f"all rows: fit |error| mean {stats(fe)[0]}%, max {stats(fe)[1]}%; "
          f"leave-one-model-out mean {stats(le)[0]}%, max {stats(le)[1]}%; {sim.runs} simulations")

    os.makedirs(a.out_dir, exist_ok=True)
    records = {}
    for soc in socs:
        srows = [r for r in rows if r["soc"] == soc]
        rec = {
            "command": "python3 tools/calibrate/fit_soc.py" + (" --write-profile" if a.write_profile else ""),
            "simulator_command": f"npusim run --platform {soc} --core-mask 0 --mode timing MODEL --report r.json "
                                 + " ".join(f"--param {k}=V" for k in sorted(profile_values(soc, 1, 1, 1))),
            "calibration": f"shared/calibration/{CALIBRATED[soc][0]} ({CALIBRATED[soc][1]})",
            "estimate": "totals.inference_ms (NPU work + CPU layers inside the graph; the host input/output "
                        "conversion is outside the published scope)",
            "objective": "sum of squared log errors (estimate / published) + prior terms",
            "overhead_prior": ({"centre": OVERHEAD_PRIOR[soc][0], "sigma_log": OVERHEAD_PRIOR[soc][1]}
                               if soc in OVERHEAD_PRIOR else None),
            "fitted_on_this_soc": ({SECOND[soc].path: final[soc][0]} if group_of(soc) else
                                   {SECOND[soc].path: final[soc][0], OVERHEAD.path: final[soc][1]}),
            "joint_with_revision": ({OVERHEAD.path: {"value": final[soc][1], "socs": list(group_of(soc))}}
                                    if group_of(soc) else {}),
            "from_other_soc": {k: {"value": v, "from": MAC_FROM[soc]} for k, v in FIXED.get(soc, {}).items()},
            "joint": {DW.path: {"per_cell": dw, "value": profile_values(soc, dw, 1, 1)[DW.path],
                                "socs": socs, "prior": {"centre": DW_PRIOR[0], "sigma_log": DW_PRIOR[1]}}},
            "assumed": ASSUMED,
            "rows": srows,
            "fit_mae_pct": stats([r["error_pct"] for r in srows])[0],
            "fit_max_pct": stats([r["error_pct"] for r in srows])[1],
            "loo_mae_pct": stats([r["loo_error_pct"] for r in srows])[0],
            "loo_max_pct": stats([r["loo_error_pct"] for r in srows])[1],
            "leave_one_model_out_parameters": loo_params,
        }
        records[soc] = rec
        path = os.path.join(a.out_dir, soc + ".json")
        with open(path, "w") as fh:
            fh.write(json.dumps(rec, indent=2) + "\n")
        print(f"wrote {rel(path)}")
    if a.write_profile:
        for path in write_profiles(records, dw):
            print(f"updated {rel(path)}")
    return 0


def calibration_block(soc, rec, status, inherits_from="", why=""):
    fitted = sorted(rec["fitted_on_this_soc"])
    block = {"status": status}
    joint = {DW.path: f"one value per 8-bit MAC cell fitted over {', '.join(CALIBRATED)} (x16/C2 here); only "
                      f"MobileNetV2 has depthwise layers"}
    if status == "calibrated":
        block["summary"] = (f"fitted on this SoC's published rows ({CALIBRATED[soc][1]} column of rknn_model_zoo "
                            f"v2.3.2): {', '.join(fitted)}; depthwise rate jointly with {', '.join(CALIBRATED)}")
        block["data"] = rec["calibration"]
        block["fit"] = f"tools/calibrate/fits/{soc}.json"
        block["fitted"] = fitted
        block["joint"] = dict(joint)
        for k, v in rec.get("joint_with_revision", {}).items():
            block["joint"][k] = (f"one value for the NPU revision of {', '.join(v['socs'])}, fitted on all their rows "
                                 f"(same NPU, one vendor column)")
        block["inherited"] = {k: f"{v['value']} from {v['from']}'s fit: the {CALIBRATED[soc][1]} rows fit the DDR "
                                 f"efficiency instead (one board of unstated DDR speed for both SoCs)"
                              for k, v in rec.get("from_other_soc", {}).items()}
        block["inherited"].update({k: v for k, v in ASSUMED.items() if k not in fitted})
    else:
        block["summary"] = f"no published figures: fitted values inherited from {inherits_from} ({why})"
        block["data"] = rec["calibration"]
        block["fit"] = f"tools/calibrate/fits/{inherits_from}.json"
        block["inherits_from"] = inherits_from
        block["inherited"] = {p: f"from {inherits_from}: {why}" for p in (OVERHEAD.path, MAC_EFF.path)}
        block["inherited"][DW.path] = f"joint fit over {', '.join(CALIBRATED)} (x16/C2 here)"
        block["inherited"].update(ASSUMED)
    block["rows"] = [{"model": SHORT[r["model"]], "published_ms": r["published_ms"], "estimate_ms": r["estimate_ms"],
                      "error_pct": r["error_pct"], "loo_error_pct": r["loo_error_pct"]}
                     for r in rec["rows"]] if status == "calibrated" else []
    for k in ("fit_mae_pct", "fit_max_pct", "loo_mae_pct", "loo_max_pct"):
        block[k] = rec[k]
    return block


def value_of(rec, path):
    """A SoC's final value of `path`: fitted on it, taken from another SoC, or the assumed one."""
    if path in rec["fitted_on_this_soc"]:
        return rec["fitted_on_this_soc"][path]
    if path in rec.get("joint_with_revision", {}):
        return rec["joint_with_revision"][path]["value"]
    if path in rec.get("from_other_soc", {}):
        return rec["from_other_soc"][path]["value"]
    return ASSUMED_VALUES[path]


def write_profiles(records, dw):
    written = []
    d = os.path.join(ROOT, "hwdesc", "profiles")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".json"):
            continue
        soc = name[:-5]
        path = os.path.join(d, name)
        with open(path) as fh:
            text = fh.read()
        c2 = json.loads(text)["npu"]["c2_int8"]["value"]
        dwv = fitlib.round_value(dw * 16 / c2, False)
        dw_src = (f"joint fit by tools/calibrate/fit_soc.py over {', '.join(CALIBRATED)}: {dw} useful products per "
                  f"8-bit cell-cycle of the peak, x16/C2 = x{16 // c2} here (one useful product per C2-wide cell)")
        upd = {k: (v, "inferred", "not fitted (tools/calibrate/fit_soc.py ASSUMED): " + ASSUMED[k])
               for k, v in ASSUMED_VALUES.items()}
        if soc in records:
            rec = records[soc]
            src = (f"fitted by tools/calibrate/fit_soc.py on this SoC's rows of shared/calibration "
                   f"({rec['calibration']}); record tools/calibrate/fits/{soc}.json")
            for k, v in rec["fitted_on_this_soc"].items():
                upd[k] = (v, "inferred", src + ("; solved exactly (latency is linear in it)" if k == OVERHEAD.path
                                                else ""))
            for k, v in rec.get("joint_with_revision", {}).items():
                upd[k] = (v["value"], "inferred", f"fitted by tools/calibrate/fit_soc.py jointly on the rows of "
                                                  f"{', '.join(v['socs'])} (one NPU revision); records "
                                                  f"tools/calibrate/fits/<soc>.json; solved exactly")
            for k, v in rec.get("from_other_soc", {}).items():
                upd[k] = (v["value"], "inferred", f"from the {v['from']} fit (tools/calibrate/fits/{v['from']}.json): "
                                                  f"this SoC's rows fit memory.ddr_efficiency instead")
            upd[DW.path] = (dwv, "inferred", dw_src)
            block = calibration_block(soc, rec, "calibrated")
        else:
            src_soc, why = INHERIT.get(soc, ("rk3588", "no published figures; RK3588 as the default"))
            rec = records[src_soc]
            src = f"inherited from {src_soc} (tools/calibrate/fits/{src_soc}.json): {why}"
            for k in (OVERHEAD.path, MAC_EFF.path):
                upd[k] = (value_of(rec, k), "unknown", src)
            upd[DW.path] = (dwv, "unknown", dw_src + "; not calibrated on this SoC")
            block = calibration_block(soc, rec, "inherited", src_soc, why)
        out = json.loads(fitlib.update_profile_text(text, upd))
        out["calibration"] = block
        with open(path, "w") as fh:
            fh.write(json.dumps(out, indent=2) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    sys.exit(main())
