#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# `npusim run --compile-cache DIR` (issue 25) on two zoo models in full and timing mode: a run
# without the cache, a cold run (miss: compiles and stores) and a warm run (hit: import and
# compile skipped) must give byte-identical outputs, text reports and JSON reports apart from the
# one "compile cache:" line / "compile_cache" field. A damaged cache file (a flipped payload
# byte, a truncated file, a bad magic, another key's file under this key's name) is a miss with
# one warning line on stderr and the same correct result, and the file is stored again. The
# option is refused (exit 2, naming it) where it does not apply: `check`, --quantize int8, a
# cache path that is a file.
#   compile_cache_test.py NPUSIM ZOODIR
import json
import os
import shutil
import subprocess
import sys
import tempfile

NPUSIM, ZOO = sys.argv[1], sys.argv[2]
T = tempfile.mkdtemp()
fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"))
    fails += not ok


def run(model, mode, cache=None, tag="x"):
    """One run; returns (rc, text without the cache line, cache lines, json without the field,
    the cache field, output bytes, stderr)."""
    out = f"{T}/{tag}.npy"
    rep = f"{T}/{tag}.json"
    args = [NPUSIM, "run", "-p", "rk3588", model, "--mode", mode, "--quiet", "--report", rep]
    if mode == "full":
        args += ["--output", f"{T}/out.npy"]
    if cache:
        args += ["--compile-cache", cache]
    p = subprocess.run(args, capture_output=True, text=True)
    lines = p.stdout.splitlines()
    cache_lines = [l for l in lines if l.startswith("compile cache:")]
    text = "\n".join(l for l in lines if not l.startswith("compile cache:"))
    j = json.load(open(rep)) if os.path.exists(rep) else {}
    field = j.pop("compile_cache", None)
    data = b""
    if mode == "full" and os.path.exists(f"{T}/out.npy"):
        data = open(f"{T}/out.npy", "rb").read()
        os.remove(f"{T}/out.npy")
    if os.path.exists(rep):
        os.remove(rep)
    return p.returncode, text, cache_lines, j, field, data, p.stderr


def cache_file(d):
    files = [f for f in os.listdir(d) if f.endswith(".npc")]
    return os.path.join(d, files[0]) if len(files) == 1 else None


for name in ["mobilenetv2_qdq.onnx", "t_conv.onnx"]:
    model = os.path.join(ZOO, name)
    for mode in ["full", "timing"]:
        what = f"{name} {mode}"
        d = f"{T}/cache_{name}_{mode}"
        base = run(model, mode, tag="base")
        check(f"{what}: no-cache run succeeds", base[0] == 0, base[6])
        check(f"{what}: no-cache report has no cache line/field", not base[2] and base[4] is None)
        if mode == "full":
            check(f"{what}: an output was written", len(base[5]) > 0)
        cold = run(model, mode, d, "cold")
        warm = run(model, mode, d, "warm")
        for label, r, hit in [("cold", cold, False), ("warm", warm, True)]:
            check(f"{what}: {label} run succeeds", r[0] == 0, r[6])
            check(f"{what}: {label} text report equals the no-cache one", r[1] == base[1])
            check(f"{what}: {label} JSON report equals the no-cache one", r[3] == base[3])
            check(f"{what}: {label} outputs byte-identical", r[5] == base[5])
            want = "compile cache: hit" if hit else "compile cache: miss (no file)"
            check(f"{what}: {label} says '{want}'", len(r[2]) == 1 and r[2][0].startswith(want), r[2])
            check(f"{what}: {label} JSON compile_cache.hit = {hit}", r[4] is not None and r[4]["hit"] is hit, r[4])
            check(f"{what}: {label} writes nothing on stderr", r[6] == "", r[6])
        f = cache_file(d)
        check(f"{what}: one cache file", f is not None, os.listdir(d))
        if not f:
            continue
        good = open(f, "rb").read()
        # Damage: flipped payload byte, truncation, bad magic, another model's file under this name.
        other = cache_file(f"{T}/cache_mobilenetv2_qdq.onnx_full") if name != "mobilenetv2_qdq.onnx" else None
        damages = [("flipped payload byte", good[:len(good) // 2] + bytes([good[len(good) // 2] ^ 0x40]) + good[len(good) // 2 + 1:],
                    "payload checksum mismatch"),
                   ("truncated file", good[:len(good) * 2 // 3], "payload of"),
                   ("truncated header", good[:20], "truncated header"),
                   ("bad magic", b"XXXXXXXX" + good[8:], "bad magic")]
        if other:
            damages.append(("another key's file", open(other, "rb").read(), "key mismatch"))
        for label, data, reason in damages:
            open(f, "wb").write(data)
            r = run(model, mode, d, "damaged")
            warn = [l for l in r[6].splitlines() if l]
            check(f"{what}: {label}: run succeeds", r[0] == 0, r[6])
            check(f"{what}: {label}: one warning line naming the reason",
                  len(warn) == 1 and warn[0].startswith("npusim: warning: compile cache") and reason in warn[0], warn)
            check(f"{what}: {label}: a miss in the report", len(r[2]) == 1 and "miss" in r[2][0] and r[4]["hit"] is False,
                  (r[2], r[4]))
            check(f"{what}: {label}: same text report, JSON and outputs",
                  r[1] == base[1] and r[3] == base[3] and r[5] == base[5])
            check(f"{what}: {label}: the file is stored again", open(f, "rb").read() == good)
        again = run(model, mode, d, "again")
        check(f"{what}: after the damage, a hit again", again[0] == 0 and again[4] is not None and again[4]["hit"] is True)

# Where it does not apply: exit 2, one line naming the option.
model = os.path.join(ZOO, "t_conv.onnx")
for label, args in [("check", ["check", "-p", "rk3588", model, "--compile-cache", f"{T}/c"]),
                    ("--quantize int8", ["run", "-p", "rk3588", os.path.join(ZOO, "mobilenetv2.onnx"), "--quantize", "int8",
                                         "--compile-cache", f"{T}/c"]),
                    ("a file as DIR", ["run", "-p", "rk3588", model, "--compile-cache", model]),
                    ("an empty DIR", ["run", "-p", "rk3588", model, "--compile-cache", ""])]:
    p = subprocess.run([NPUSIM] + args, capture_output=True, text=True)
    lines = p.stderr.splitlines()
    check(f"{label}: exit 2 with one error line naming --compile-cache",
          p.returncode == 2 and len(lines) == 1 and lines[0].startswith("npusim: error: --compile-cache"), (p.returncode, lines))

shutil.rmtree(T, ignore_errors=True)
print(f"{fails} failure(s)")
sys.exit(1 if fails else 0)
