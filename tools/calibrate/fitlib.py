# SPDX-License-Identifier: MIT
"""Fitting helpers for the RKNPU calibration (standard library only, deterministic).

A fit adjusts a few global profile parameters (never per-model or per-layer factors) so that the
simulator's latencies match published figures. The objective is the sum of squared log errors,
so a model 10% slow and one 10% fast weigh the same whatever their absolute latency.
"""
import json
import math


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _sub(a, b):
    return [x - y for x, y in zip(a, b)]


def _scale(a, k):
    return [x * k for x in a]


class FitParam:
    """One profile parameter the fit may move: JSON path, bounds, integer or not."""

    def __init__(self, path, lo, hi, integer=False):
        if not (0 < lo < hi):
            raise ValueError(f"{path}: bounds must satisfy 0 < lo < hi (got {lo}, {hi})")
        self.path, self.lo, self.hi, self.integer = path, float(lo), float(hi), integer

    # The optimiser works on an unbounded variable u; value = lo * (hi/lo)^sigmoid(u): log-uniform
    # inside the bounds, never outside them.
    def value(self, u):
        s = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, u))))
        v = self.lo * (self.hi / self.lo) ** s
        return int(round(v)) if self.integer else v

    def u_of(self, v):
        """Inverse of value(); a start on (or beyond) a bound is moved 2% inside so that the
        optimiser's first steps still change the value (the sigmoid is flat at its ends)."""
        s = math.log(min(max(float(v), self.lo), self.hi) / self.lo) / math.log(self.hi / self.lo)
        s = min(max(s, 0.02), 0.98)
        return math.log(s / (1.0 - s))


def log_errors(estimates, published):
    return [math.log(e / p) for e, p in zip(estimates, published)]


def objective(estimates, published):
    """Sum of squared log errors."""
    return float(sum(x * x for x in log_errors(estimates, published)))


def nelder_mead(f, x0, step=1.0, max_evals=300, xtol=1e-3, ftol=1e-10):
    """Minimise f over R^n from x0 (deterministic Nelder-Mead with the standard coefficients).
    Returns (x_best, f_best, evaluations)."""
    n = len(x0)
    pts = [[float(v) for v in x0]]
    for i in range(n):
        p = [float(v) for v in x0]
        p[i] += step
        pts.append(p)
    vals = [f(p) for p in pts]
    evals = n + 1
    while evals < max_evals:
        order = sorted(range(n + 1), key=lambda k: (vals[k], k))
        pts = [pts[k] for k in order]
        vals = [vals[k] for k in order]
        size = max(max(abs(d) for d in _sub(p, pts[0])) for p in pts[1:])
        if size < xtol or abs(vals[-1] - vals[0]) < ftol:
            break
        c = _scale([sum(col) for col in zip(*pts[:-1])], 1.0 / n)
        xr = _add(c, _sub(c, pts[-1]))
        fr = f(xr)
        evals += 1
        if fr < vals[0]:
            xe = _add(c, _scale(_sub(c, pts[-1]), 2.0))
            fe = f(xe)
            evals += 1
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            outside = fr < vals[-1]
            xc = _add(c, _scale(_sub(xr if outside else pts[-1], c), 0.5))
            fc = f(xc)
            evals += 1
            if fc < (fr if outside else vals[-1]):
                pts[-1], vals[-1] = xc, fc
            else:
                for k in range(1, n + 1):
                    pts[k] = _add(pts[0], _scale(_sub(pts[k], pts[0]), 0.5))
                    vals[k] = f(pts[k])
                    evals += 1
    k = min(range(n + 1), key=lambda i: (vals[i], i))
    return pts[k], vals[k], evals


def prior_penalty(values, priors):
    """Sum of ((log(value / centre)) / sigma)^2 over `priors` {path: (centre, sigma_log)}: a weak
    pull toward a documented typical value, for parameters the three targets cannot separate."""
    return float(sum((math.log(values[k] / c) / s) ** 2 for k, (c, s) in priors.items()))


def fit(params, simulate, published, start, restarts=2, max_evals=300, priors=None, extra_starts=None, xtol=1e-3, ftol=1e-10):
    """Fit `params` (list of FitParam) so that simulate(values_dict) -> list of estimates matches
    `published`. `start`: dict path -> starting value. `priors`: optional {path: (centre, sigma_log)}
    added to the objective (prior_penalty). `extra_starts`: further starting points (dicts overriding
    `start`), the best local minimum wins (ties: the earlier start). Results are cached per rounded value set, so integer
    parameters and restarts cost no extra simulations. Returns (values, estimates, evals)."""
    cache = {}
    priors = priors or {}

    def values_of(u):
        return {p.path: p.value(x) for p, x in zip(params, u)}

    def key(vals):
        return tuple((k, round(v, 9) if isinstance(v, float) else v) for k, v in sorted(vals.items()))

    def run(vals):
        k = key(vals)
        if k not in cache:
            cache[k] = simulate(vals)
        return cache[k]

    def f(u):
        vals = values_of(u)
        return objective(run(vals), published) + prior_penalty(vals, priors)

    best = None
    for st in [start] + list(extra_starts or []):
        u = [p.u_of({**start, **st}[p.path]) for p in params]
        prev = None
        for _ in range(restarts + 1):
            u, fu, _ = nelder_mead(f, u, step=1.0, max_evals=max_evals, xtol=xtol, ftol=ftol)
            if prev is not None and fu >= prev - 1e-12:
                break
            prev = fu
        if best is None or fu < best[1] - 1e-12:
            best = (u, fu)
    vals = values_of(best[0])
    return vals, run(vals), len(cache)


def solve_linear(base, slope, published, param, points=4000, prior=None):
    """Best value x of `param` (FitParam) when the estimates are exactly base[i] + slope[i] * x (a
    parameter that adds the same cost to every task, e.g. a per-task overhead): a deterministic
    log-spaced scan of [lo, hi] (every integer near the optimum for an integer parameter).
    `prior`: optional (centre, sigma_log) added as prior_penalty. Returns (x, estimates)."""
    def f(x):
        est = [b + k * x for b, k in zip(base, slope)]
        if min(est) <= 0:
            return float("inf")
        return objective(est, published) + (prior_penalty({"x": x}, {"x": prior}) if prior else 0.0)

    lo, hi = param.lo, param.hi
    xs = [lo * (hi / lo) ** (i / (points - 1)) for i in range(points)]
    if param.integer:
        xs = sorted(set(int(round(x)) for x in xs))
    best = min(xs, key=lambda x: (f(x), x))
    if param.integer:
        i = xs.index(best)
        a, b = xs[max(0, i - 1)], xs[min(len(xs) - 1, i + 1)]
        best = min(range(int(a), int(b) + 1), key=lambda x: (f(x), x))
    return best, [b + k * best for b, k in zip(base, slope)]


def golden_min(f, lo, hi, tol=1e-3, max_evals=40):
    """Minimum of a unimodal f on [lo, hi] > 0 by golden-section search in log space (relative
    tolerance `tol`); deterministic. Returns the best point evaluated."""
    if not (0 < lo <= hi):
        raise ValueError(f"golden_min needs 0 < lo <= hi (got {lo}, {hi})")
    g = (math.sqrt(5) - 1) / 2
    a, b = math.log(lo), math.log(hi)
    seen = {}

    def ev(x):
        if x not in seen:
            seen[x] = f(math.exp(x))
        return seen[x]

    c, d = b - g * (b - a), a + g * (b - a)
    while b - a > tol and len(seen) < max_evals:
        if ev(c) <= ev(d):
            b, d = d, c
            c = b - g * (b - a)
        else:
            a, c = c, d
            d = a + g * (b - a)
    for x in (a, b):
        ev(x)
    best = min(seen, key=lambda x: (seen[x], x))
    return math.exp(best)


def round_value(v, integer):
    """Values written to the profile: integers, or 4 significant digits."""
    if integer:
        return int(round(v))
    return float(f"{v:.4g}")


def update_profile_text(text, updates):
    """Return the profile JSON text with `updates` {path: (value, grade, source)} applied; the
    file keeps its formatting (json.dumps indent 2 + newline, as the bundled profiles are)."""
    d = json.loads(text)
    for path, (value, grade, source) in sorted(updates.items()):
        section, key = path.split(".", 1)
        if section not in d or key not in d[section]:
            raise KeyError(f"profile has no parameter {path}")
        d[section][key] = {"value": value, "grade": grade, "source": source}
    return json.dumps(d, indent=2) + "\n"


def check_fittable(profile, paths):
    """Only parameters graded unknown or inferred may be fitted: a 'known' figure is a fact."""
    bad = []
    for path in paths:
        section, key = path.split(".", 1)
        grade = profile[section][key]["grade"]
        if grade == "known":
            bad.append(path)
    if bad:
        raise ValueError("refusing to fit parameters graded known: " + ", ".join(bad))
