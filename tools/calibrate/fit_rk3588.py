#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Calibrate the RK3588 profile (standard library only) against the published single-core latencies in
../shared/calibration/rk3588-int8.json (MobileNetV2, ResNet50 v2, YOLOv5s-relu; int8).

Only global parameters graded unknown or inferred are fitted (per-task overhead, DDR sustained
efficiency, depthwise MAC efficiency, ...), never per-model or per-layer factors. Each candidate is
evaluated by running the simulator in timing mode:

    npusim run --platform rk3588 --core-mask 0 --mode timing MODEL --report r.json --param k=v ...

and reading the total latency from the report. The objective is the sum of squared log errors.
Every fitted parameter is passed with --param, so the result does not depend on the values already
in the profile: reruns give byte-identical tools/calibrate/rk3588_fit.json.

    python3 tools/calibrate/fit_rk3588.py                 # fit, print the table, write rk3588_fit.json
    python3 tools/calibrate/fit_rk3588.py --write-profile # also store the values in profiles/rk3588.json
    python3 tools/calibrate/fit_rk3588.py --evaluate       # only the table for the profile as it is
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import fitlib  # noqa: E402

# Calibration entry model name -> zoo file (tools/zoo/make_zoo.py, QDQ int8, uint8 activations).
ZOO = {
    "mobilenet/mobilenetv2-12": ("mobilenetv2", "mobilenetv2_qdq.onnx"),
    "resnet/resnet50-v2-7": ("resnet50v2", "resnet50v2_qdq.onnx"),
    "yolov5/yolov5s_relu": ("yolov5s", "yolov5s_qdq.onnx"),
}

# The fitted parameters: (profile path, lower bound, upper bound, integer, start). The start values
# are the pre-calibration profile values, fixed here so that the fit is reproducible.
FIT = [
    ("npu.task_overhead_cycles", 50, 20000, True, 1000),
    ("memory.ddr_efficiency", 0.2, 1.0, False, 0.7),
    ("npu.depthwise_mac_efficiency", 0.005, 1.0, False, 0.0625),
]

SOURCE = ("fitted by tools/calibrate/fit_rk3588.py to shared calibration rk3588-int8.json "
          "(MobileNetV2 2.219 ms, ResNet50 v2 9.083 ms, YOLOv5s-relu 15.129 ms, one core); "
          "residuals in tools/calibrate/rk3588_fit.json")


def rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT)


def ensure_models(work, zoo):
    """Paths of the three QDQ models: from --zoo when present, else generated into work/zoo."""
    out = {}
    missing = []
    for name, (key, fname) in ZOO.items():
        for d in ([zoo] if zoo else []) + [os.path.join(work, "zoo")]:
            p = os.path.join(d, fname)
            if os.path.exists(p):
                out[name] = p
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


class Simulator:
    def __init__(self, npusim, models, work, extra):
        self.npusim, self.models, self.work, self.extra = npusim, models, work, extra
        self.runs = 0

    def report(self, model, values):
        cmd = [self.npusim, "run", "--platform", "rk3588", "--core-mask", "0", "--mode", "timing", model]
        with tempfile.NamedTemporaryFile(suffix=".json", dir=self.work, delete=False) as f:
            rpath = f.name
        cmd += ["--report", rpath]
        for k, v in sorted(values.items()):
            cmd += ["--param", f"{k}={v}"]
        cmd += self.extra
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.runs += 1
        try:
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(shlex.quote(c) for c in cmd)} failed ({r.returncode}):\n"
                                   f"{r.stderr.strip()[-2000:]}")
            with open(rpath) as fh:
                return json.load(fh)
        finally:
            os.unlink(rpath)

    def latencies(self, values, names):
        return [total_ms(self.report(self.models[n], values)) for n in names]


def total_ms(rep):
    """Total latency of a report in ms (sim/app/report.cpp: total_ps)."""
    if "total_ps" in rep:
        return rep["total_ps"] * 1e-9
    for k in ("latency_ms", "total_ms"):
        if k in rep:
            return float(rep[k])
    if "totals" in rep and "latency_ms" in rep["totals"]:
        return float(rep["totals"]["latency_ms"])
    raise KeyError("report has no total latency (total_ps)")


def breakdown(rep):
    """Where the time of one run goes: summed per-layer cycle terms, bound counts, tasks, bytes."""
    terms = {}
    bounds = {}
    tasks = 0
    rd = wr = 0
    for layer in rep.get("layers", []):
        for k, v in (layer.get("cycles") or {}).items():
            terms[k] = terms.get(k, 0) + int(v)
        b = layer.get("bound") or "-"
        bounds[b] = bounds.get(b, 0) + 1
        tasks += int(layer.get("tasks", 0) or 0)
        rd += int(layer.get("ddr_read_bytes", 0) or 0)
        wr += int(layer.get("ddr_write_bytes", 0) or 0)
    return {"cycles": dict(sorted(terms.items())), "bound_layers": dict(sorted(bounds.items())), "tasks": tasks,
            "ddr_read_bytes": rd, "ddr_write_bytes": wr}


def table(names, published, est):
    lines = [f"{'model':28s} {'estimate ms':>12s} {'published ms':>13s} {'error':>8s}"]
    for n, p, e in zip(names, published, est):
        lines.append(f"{n:28s} {e:12.3f} {p:13.3f} {100 * (e / p - 1):+7.1f}%")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npusim", default=os.path.join(ROOT, "build", "sim", "npusim"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "calibrate"), help="models and scratch reports")
    ap.add_argument("--zoo", help="directory that already holds the *_qdq.onnx zoo models")
    ap.add_argument("--calibration", default=os.path.join(ROOT, "..", "shared", "calibration", "rk3588-int8.json"))
    ap.add_argument("--evals", type=int, default=150, help="simulations per Nelder-Mead run at most")
    ap.add_argument("--evaluate", action="store_true", help="no fit: table for the profile as it is")
    ap.add_argument("--write-profile", action="store_true", help="store the fitted values in profiles/rk3588.json")
    ap.add_argument("--out", default=os.path.join(HERE, "rk3588_fit.json"))
    a = ap.parse_args()

    with open(a.calibration) as fh:
        cal = [c for c in json.load(fh) if c["platform"] == "RK3588" and c["dtype"] == "INT8"]
    names = [c["model"] for c in cal if c["model"] in ZOO]
    published = [float(c["latency_ms"]) for c in cal if c["model"] in ZOO]
    if len(names) != len(ZOO):
        sys.exit(f"calibration file lacks some of {sorted(ZOO)}")
    os.makedirs(a.work, exist_ok=True)
    models = ensure_models(a.work, a.zoo)
    sim = Simulator(a.npusim, models, a.work, [])
    prof_path = os.path.join(ROOT, "npu_models", "hwdesc", "profiles", "rk3588.json")
    with open(prof_path) as fh:
        prof_text = fh.read()
    profile = json.loads(prof_text)

    if a.evaluate:
        est = sim.latencies({}, names)
        print(table(names, published, est))
        return 0

    fitlib.check_fittable(profile, [p[0] for p in FIT])
    params = [fitlib.FitParam(p, lo, hi, integer) for p, lo, hi, integer, _ in FIT]
    start = {p: s for p, _, _, _, s in FIT}
    est0 = sim.latencies(start, names)
    print("before the fit (start values):\n" + table(names, published, est0), file=sys.stderr)
    vals, _, nsim = fitlib.fit(params, lambda v: sim.latencies(v, names), published, start, max_evals=a.evals)
    final = {p.path: fitlib.round_value(vals[p.path], p.integer) for p in params}
    reports = [sim.report(models[n], final) for n in names]
    est = [total_ms(r) for r in reports]
    print(table(names, published, est))
    for p in params:
        print(f"  {p.path} = {final[p.path]}  (start {start[p.path]}, bounds [{p.lo:g}, {p.hi:g}])")

    command = "python3 tools/calibrate/fit_rk3588.py" + (" --write-profile" if a.write_profile else "")
    result = {
        "command": command,
        "simulator_command": "npusim run --platform rk3588 --core-mask 0 --mode timing MODEL --report r.json "
                             + " ".join(f"--param {k}=V" for k in sorted(final)),
        "calibration": "shared/calibration/rk3588-int8.json",
        "objective": "sum of squared log errors (estimate / published)",
        "parameters": {p.path: {"value": final[p.path], "start": start[p.path], "lower": p.lo, "upper": p.hi,
                                "grade_before": profile[p.path.split(".")[0]][p.path.split(".", 1)[1]]["grade"]}
                       for p in params},
        "models": [{"model": n, "file": os.path.basename(models[n]), "published_ms": pub,
                    "estimate_ms": round(e, 4), "error_pct": round(100 * (e / pub - 1), 2), "breakdown": breakdown(r)}
                   for n, pub, e, r in zip(names, published, est, reports)],
        "sum_squared_log_error": round(fitlib.objective(est, published), 6),
        "distinct_simulated_parameter_sets": nsim,
    }
    with open(a.out, "w") as fh:
        fh.write(json.dumps(result, indent=2, sort_keys=False) + "\n")
    print(f"wrote {rel(a.out)}")
    if a.write_profile:
        new = fitlib.update_profile_text(prof_text, {k: (v, "inferred", SOURCE) for k, v in final.items()})
        with open(prof_path, "w") as fh:
            fh.write(new)
        print(f"updated {rel(prof_path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
