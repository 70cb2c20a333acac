#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Every `npusim run` option x every kind of run (issue 17, cli.md: "an option that does not apply
# to the chosen mode is an error (exit 2) naming the option"). The table below is this test's own
# statement of which option applies where (from cli.md and the README's commands table), not a
# copy of the CLI's; each pair is run against a model path that does not exist, so that an
# applicable option gets as far as "not found" and an inapplicable one is refused before that,
# with one `npusim: error:` line naming the option and the kind of run. Also: the CLI vocabulary
# (case-insensitive platform names, operator-table aliases, --soc alias, "did you mean").
import os
import subprocess
import sys
import tempfile

NPUSIM = sys.argv[1]
L, N, M, R, V = "layer", "npu", "mcu", "reference", "tnpuv2"
KIND_TEXT = {L: "layer runs", N: "NPU model runs", M: "MCU runs", R: "reference runs", V: "tnpuv2 runs"}
T = tempfile.mkdtemp()

# option, arguments, kinds it applies to
TABLE = [
    ("--platform", ["--platform", "rk3588"], {L, N, M, V}),
    ("--cores", ["--cores", "0"], {L}),
    ("--mode", ["--mode", "timing"], {L, N, V}),
    ("--trace", ["--trace", f"{T}/t.json"], {L, N, M, V}),
    ("--report", ["--report", f"{T}/r.json"], {L, N, M, V}),
    ("--vcd", ["--vcd", f"{T}/w.vcd"], {L, N, M, V}),
    ("--csv", ["--csv", f"{T}/r.csv"], {N}),
    ("--html", ["--html", f"{T}/r.html"], {N}),
    ("--profile", ["--profile", f"{T}/p.json"], {L, N, V}),
    ("--param", ["--param", "npu.task_overhead_cycles=1"], {L, N, V}),
    ("--dump-regcmd", ["--dump-regcmd", f"{T}/r.bin"], {L, V}),
    ("--sram", ["--sram"], {L}),
    ("--input", ["--input", f"{T}/in.npy"], {N, M, R, V}),
    ("--output", ["--output", f"{T}/o.npy"], {N, M, R, V}),
    ("--output-dir", ["--output-dir", f"{T}/od"], {N, M, R}),
    ("--expect", ["--expect", f"{T}/e.npy"], {N, M, R}),
    ("--atol", ["--atol", "0.1"], {N, M, R}),
    ("--rtol", ["--rtol", "0.1"], {N, M, R}),
    ("--input-shape", ["--input-shape", "x=1x3x8x8"], {N, M, R, V}),
    ("--seed", ["--seed", "3"], {N, M, R, V}),
    ("--core-mask", ["--core-mask", "0"], {N, V}),
    ("--cpu-node", ["--cpu-node", "Conv"], {N}),
    ("--dump-layers", ["--dump-layers", f"{T}/layers"], {N, V}),
    ("--verify-tiling", ["--verify-tiling"], {N}),
    ("--expect-exact", ["--expect-exact"], {N, V}),
    ("--no-compare", ["--no-compare"], {N, V}),
    ("--compile-cache", ["--compile-cache", f"{T}/cc"], {N}),
    ("--rtl", ["--rtl", "core"], {L, N}),
    ("--rtl-vcd", ["--rtl-vcd", f"{T}/v.vcd"], {L, N}),
    ("--keep-qdq", ["--keep-qdq"], {R}),
    ("--requant", ["--requant", "fixed"], {M}),
    ("--skip-check", ["--skip-check"], {M}),
    ("--quantize", ["--quantize", "int8"], {N, M}),
    ("--calibration", ["--calibration", f"{T}/c.npy"], {N, M, V}),
    ("--calibration-method", ["--calibration-method", "kl"], {N, M, V}),
    ("--bits", ["--bits", "8"], {V}),
    ("--weight-bits", ["--weight-bits", "8"], {V}),
]
BASE = {
    L: ["run", f"{T}/missing_layer.json"],
    N: ["run", "--platform", "rk3588", f"{T}/missing.onnx"],
    M: ["run", "--platform", "ws63", f"{T}/missing.onnx"],
    R: ["run", "--reference", f"{T}/missing.onnx"],
    V: ["run", "--platform", "tnpuv2", f"{T}/missing.onnx"],
}

fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"))
    fails += not ok


def run(args):
    p = subprocess.run([NPUSIM] + args, capture_output=True, text=True, cwd=T, timeout=120)
    return p.returncode, p.stdout, p.stderr


pairs = 0
for opt, args, kinds in TABLE:
    for kind, base in BASE.items():
        if opt == "--platform" and kind in (N, M, V):
            continue  # the platform is what makes the run an NPU / MCU run
        rc, out, err = run(base + args)
        pairs += 1
        refused = "does not apply" in err
        if kind in kinds:
            check(f"{opt} applies to {KIND_TEXT[kind]}", not refused, err.strip())
        else:
            lines = err.strip().splitlines()
            ok = (rc == 2 and len(lines) == 1 and lines[0].startswith(f"npusim: error: {opt} does not apply to ")
                  and KIND_TEXT[kind] in lines[0])
            check(f"{opt} refused on {KIND_TEXT[kind]} (exit 2, names option and run kind)", ok, f"rc {rc}: {err.strip()}")
print(f"{pairs} option x run-kind pairs")

# Vocabulary.
rc, out, err = run(["run", "--platform", "rk3588x"])
check("unknown platform: exit 2, one line, did you mean", rc == 2 and err.count("\n") == 1 and
      err.startswith("npusim: error: unknown platform 'rk3588x'") and "did you mean rk3588?" in err, err)
rc, out, err = run(["run", "--platform", "RK3588", "--mode", "timing"])
check("platform names are case-insensitive (RK3588)", rc == 0 and "platform rk3588" in out, err)
rc, out, err = run(["run", "--platform", "RK3576_RV1126B", "--mode", "timing"])
check("operator-table name RK3576_RV1126B is an alias of rk3576", rc == 0 and "platform rk3576" in out, err)
rc, out, err = run(["run", "--outptu", "y.npy"])
check("unknown option: exit 2, npusim: error:, did you mean --output", rc == 2 and err.count("\n") == 1 and
      err.startswith("npusim: error: unknown option '--outptu', npusim run") and "did you mean --output?" in err, err)
rc, out, err = run(["decode", "--platform", "rk3588", f"{T}/nothing.bin"])
rc2, out2, err2 = run(["decode", "--soc", "rk3588", f"{T}/nothing.bin"])
check("decode: --platform, --soc alias: same error for a missing file", rc == rc2 == 2 and err == err2 and
      err.startswith("npusim: error: "), err + err2)
rc, out, err = run(["replay", "--platform", "Rk3588", "--core", "7", f"{T}/nothing.bin"])
check("replay: case-insensitive --platform, --core alias reaches the file check", rc == 2 and
      err.startswith("npusim: error: "), err)
rc, out, err = run(["check", "--platform", "rk3588", f"{T}/missing.onnx"])
rc2, out2, err2 = run(["run", "--platform", "rk3588", f"{T}/missing.onnx"])
check("a missing model is exit 2 on check as on run, one npusim: error: line each", rc == rc2 == 2 and
      err.startswith("npusim: error: ") and err2.startswith("npusim: error: ") and err.count("\n") == 1, err + err2)
rc, out, err = run(["specs", "--platform", "RK9999"])
check("specs: unknown platform, one npusim: error: line", rc == 2 and err.startswith("npusim: error: unknown platform 'RK9999'"), err)
# A value CLI11 cannot convert to the option's type (its own text is "Could not convert: --epochs =
# -1"): one line naming the option, the value and what it takes.
rc, out, err = run(["train", f"{T}/m.onnx", "--data", "d.npy", "--labels", "l.npy", "--epochs", "-1"])
check("train --epochs -1: exit 2, names the option, the value and 'a non-negative integer'", rc == 2 and
      err.count("\n") == 1 and err.startswith("npusim: error: --epochs: '-1' is not a non-negative integer"), err)
rc, out, err = run(["train", f"{T}/m.onnx", "--data", "d.npy", "--labels", "l.npy", "--lr", "fast"])
check("train --lr fast: exit 2, 'is not a number'", rc == 2 and err.count("\n") == 1 and
      err.startswith("npusim: error: --lr: 'fast' is not a number"), err)
sys.exit(1 if fails else 0)
