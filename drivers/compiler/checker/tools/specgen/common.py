# SPDX-License-Identifier: MIT
"""Helpers shared by the spec-DB generators (development aids, run by hand; their output in
drivers/compiler/specs/*.json is the committed data). Rule parameters come from the seed
extractions in /work/shared/seeds/seed-00N-ops.json, each checked against the seed text."""
import json
import os
import re

SEEDS = os.environ.get("NPUSIM_SEEDS_DIR", "/work/shared/seeds")
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "specs")


def seed_lines(name):
    with open(os.path.join(SEEDS, name), encoding="utf-8") as f:
        return f.read().split("\n")


def load_extraction(n):
    with open(os.path.join(SEEDS, "seed-%03d-ops.json" % n), encoding="utf-8") as f:
        return json.load(f)


def rule(kind, message, **kw):
    r = {"kind": kind, "message": message}
    r.update({k: v for k, v in kw.items() if v is not None})
    return r


def interval_from_text(text):
    """'in [1,31]', 'in (0,8192]', 'in (0,7] i.e. 1..7' -> (min, max, min_open, max_open)."""
    m = re.search(r"([\[(])\s*(-?[\d.]+|inf)\s*,\s*(-?[\d.]+|inf)\s*([\])])", text)
    if not m:
        return None
    lo, hi = m.group(2), m.group(3)
    out = {}
    if lo != "inf":
        out["min"] = float(lo) if "." in lo else int(lo)
        if m.group(1) == "(":
            out["min_open"] = True
    if hi != "inf":
        out["max"] = float(hi) if "." in hi else int(hi)
        if m.group(4) == ")":
            out["max_open"] = True
    return out


def write(name, doc):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", os.path.normpath(path), len(doc.get("ops", [])), "ops")
