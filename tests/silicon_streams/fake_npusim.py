#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Stand-in for npusim used only by runner_selftest.py: answers decode/lint/replay in npusim's
output format from the stream's manifest, with faults injected by FAKE_NPUSIM_MODE, so the
runner's pass/fail decisions can be tested without the register model."""
import json
import os
import sys

mode = os.environ.get("FAKE_NPUSIM_MODE", "good")
args = sys.argv[1:]
if args[:2] == ["replay", "--help"]:
    print("  -p,--platform TEXT  SoC profile")
    sys.exit(0)
m = json.load(open("manifest.json"))
cmd, f = args[0], args[1]
if cmd == "decode":
    print(f"{f}: {m['regcmd']['entries']} entries")
    if mode == "unknown":
        print("  CNA.<unknown 0x1140> = 0x00000000")
    sys.exit(0)
if cmd == "lint":
    errors = 1 if mode == "lint_error" else 0
    if errors:
        print("error: E-conv task 0: CNA.DMA_CON1.LINE_STRIDE = 0x20: line stride below width*C2")
    print(f"{f}: {errors} error(s), 0 warning(s)")
    sys.exit(1 if errors else 0)
if cmd == "replay":
    for i, a in enumerate(args):
        if i and args[i - 1] == "--dump":
            spec, path = a.split("=", 1)
            addr, n = spec.split(":")
            d = next(x for x in m["dump"] if int(x["addr"], 16) == int(addr, 16))
            data = bytearray(open(d["expected"], "rb").read())
            mask = open(d["mask"], "rb").read() if d["mask"] else bytes([0xFF]) * len(data)
            if mode == "corrupt_real":
                data[mask.index(0xFF)] ^= 0x01
            if mode == "corrupt_pad" and 0 in mask:
                data[mask.index(0)] ^= 0x5A
            open(path, "wb").write(bytes(data[: int(n)]))
    done = m["tasks"] - (1 if mode == "short_tasks" else 0)
    print(f"{f}: replayed on rk3588 core 0 (full mode): {done} task(s) completed in 1 ns")
    sys.exit(0)
sys.exit(2)
