#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`npusim check` and `npusim run` agree node by node (issue 13): for every model and platform given,
check's JSON (--json) and run's report (--report) are compared. Every node of the graph check lists
must sit in a run layer of the same name and unit (NPU / CPU / view) and, on the CPU, with the same
kind of reason; a node the vendor rules send to the CPU must be a CPU layer for that reason; every
node of every run layer must appear in check.

A float model runs without --quantize on the fp16 path (issue 14), which check places the same way;
a platform without an fp16 path refuses it, and it is then compared with run --quantize none.

usage: check_run_agree.py NPUSIM MODE PLATFORMS MODEL...   (MODE full|timing, PLATFORMS a,b)"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    npusim, mode, platforms, models = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
    failures, pairs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for plat in platforms:
                name = "%s on %s" % (os.path.basename(model), plat)
                c = subprocess.run([npusim, "check", "--platform", plat, "--json", model], capture_output=True, text=True)
                if c.returncode not in (0, 10, 11):
                    failures.append("%s: check exit %d: %s" % (name, c.returncode, c.stderr.strip()))
                    continue
                chk = json.loads(c.stdout)
                rep = os.path.join(tmp, "r.json")
                cmd = [npusim, "run", "--platform", plat, model, "--mode", mode, "--quiet", "--report", rep]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode == 4 and "float model" in r.stderr:
                    # a SoC without an fp16 path refuses a float model unless told how to build it;
                    # check places its nodes as --quantize none runs them (on the host CPU).
                    r = subprocess.run(cmd + ["--quantize", "none"], capture_output=True, text=True)
                if r.returncode not in (0, 1) or not os.path.exists(rep):
                    failures.append("%s: run exit %d: %s" % (name, r.returncode, r.stderr.strip()))
                    continue
                run = json.load(open(rep))
                os.remove(rep)
                pairs += 1
                layer_of = {}
                for layer in run["layers"]:
                    for n in layer["nodes"]:
                        layer_of[n] = layer
                seen = set()
                for n in chk["nodes"]:
                    seen.add(n["name"])
                    p = n.get("npusim")
                    layer = layer_of.get(n["name"])
                    if p is None or layer is None:
                        failures.append("%s: node %s: %s" % (name, n["name"], "no npusim placement in check" if p is None
                                                             else "in no run layer"))
                        continue
                    want = (layer["unit"], layer["name"], layer.get("cpu_reason", ""))
                    got = (p["unit"], p["layer"], p["reason"] if p["unit"] == "CPU" else "")
                    if want != got:
                        failures.append("%s: node %s: check says %s, run says %s" % (name, n["name"], got, want))
                    if n["verdict"] in ("CPU fallback", "unsupported") and p["reason"] != "vendor rule" and p["unit"] != "CPU":
                        failures.append("%s: node %s: the vendor rule sends it to the CPU, npusim places it %s"
                                        % (name, n["name"], p["unit"]))
                for n in layer_of:
                    if n not in seen:
                        failures.append("%s: run layer node %s not in check" % (name, n))
    for f in failures[:40]:
        print("FAIL " + f)
    print("%d model/platform pairs compared, %d disagreement(s)" % (pairs, len(failures)))
    return 1 if failures or pairs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
