#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""npusim exec --trace/--report on the mtx512-style matmul client: the trace has the program's
ioctls and the NPU blocks on one timeline (the CNA/CORE/DPU events of the job lie inside the
RKNPU_SUBMIT ioctl), the report counts the ioctls and the job.
usage: check_trace.py NPUSIM CLIENT WORKDIR"""
import json
import os
import subprocess
import sys

npusim, client, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
trace, report = os.path.join(work, "trace.json"), os.path.join(work, "report.json")
r = subprocess.run([npusim, "exec", "--socket", os.path.join(work, "s.sock"), "--trace", trace, "--report", report,
                    "--log", "--", client, "int8", "8", "64", "32"], capture_output=True, text=True, timeout=240)
print(r.stdout)
print(r.stderr[-2000:])
assert r.returncode == 0, f"exec exit {r.returncode}"
assert "RKNPU_SUBMIT(" in r.stderr, "--log prints every ioctl"
t = json.load(open(trace))
ev = t["traceEvents"] if isinstance(t, dict) else t
names = {}
for e in ev:
    if e.get("ph") == "M" and e["name"] == "thread_name":
        names[(e["pid"], e["tid"])] = e["args"]["name"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
ioctls = [e for e in ev if e.get("ph") in ("X", "i") and procs.get(e["pid"]) == "programs"]
submit = [e for e in ioctls if e["name"] == "RKNPU_SUBMIT"]
assert len(submit) == 1 and submit[0]["ph"] == "X", "one blocking RKNPU_SUBMIT as a complete event"
s0, s1 = submit[0]["ts"], submit[0]["ts"] + submit[0]["dur"]
assert procs[submit[0]["pid"]] == "programs" and "rknpu_matmul" in names[(submit[0]["pid"], submit[0]["tid"])]
blocks = [e for e in ev if e.get("ph") == "X" and names.get((e["pid"], e["tid"])) in ("CNA", "CORE", "DPU")]
assert blocks, "NPU block events"
inside = [e for e in blocks if s0 <= e["ts"] and e["ts"] + e["dur"] <= s1 + 1e-6]
assert len(inside) == len(blocks), f"{len(blocks) - len(inside)} block events outside the submit"
for n in ("DRM_IOCTL_VERSION", "RKNPU_MEM_CREATE", "RKNPU_MEM_MAP", "mmap", "RKNPU_ACTION", "RKNPU_MEM_DESTROY"):
    assert any(e["name"] == n for e in ioctls), f"{n} in the trace"
rep = json.load(open(report))
cl = [c for c in rep["clients"] if c["program"] == "rknpu_matmul"]
assert cl and cl[0]["ioctls"]["RKNPU_MEM_CREATE"] == 5 and cl[0]["ioctls"]["RKNPU_SUBMIT"] == 1, rep
assert len(rep["rknpu_jobs"]) == 1 and rep["rknpu_jobs"][0]["ret"] == "0"
print(f"trace: {len(ioctls)} ioctl events, {len(blocks)} NPU block events inside RKNPU_SUBMIT "
      f"[{s0:.3f}, {s1:.3f}] us; report: {cl[0]['ioctls']}")
