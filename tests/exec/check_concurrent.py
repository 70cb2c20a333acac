#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two programs at once on one simulated RK3588: one `npusim exec` runs a shell that starts two
mtx512-style matmul clients together, one submitting to core 0 and one to core 1, 40 submits each
with different data; each checks every result against its CPU matmul. The report must show both
clients' jobs on their cores; how much of their NPU time overlapped is printed (it depends on the
host's scheduling, so it is measured, not asserted).
usage: check_concurrent.py NPUSIM CLIENT WORKDIR"""
import json
import os
import subprocess
import sys

npusim, client, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
report = os.path.join(work, "report.json")
script = (f"'{client}' int8 32 128 64 0 --no-reset --repeat 40 & A=$!; "
          f"'{client}' int8 32 128 64 1 --no-reset --repeat 40 & B=$!; "
          "wait $A; ra=$?; wait $B; rb=$?; exit $((ra + rb))")
r = subprocess.run([npusim, "exec", "--socket", os.path.join(work, "s.sock"), "--report", report, "--", "/bin/sh",
                    "-c", script], capture_output=True, text=True, timeout=280)
print(r.stdout[-1500:])
print(r.stderr[-1500:])
assert r.returncode == 0, f"exit {r.returncode}"
assert r.stdout.count("successful") == 2
rep = json.load(open(report))
jobs = rep["rknpu_jobs"]
by_mask = {}
for j in jobs:
    assert j["ret"] == "0", j
    by_mask.setdefault(j["core_mask"], []).append(j)
assert len(by_mask.get(1, [])) == 40 and len(by_mask.get(2, [])) == 40, {k: len(v) for k, v in by_mask.items()}
clients = {j["client"] for j in jobs}
assert len(clients) == 2, clients


def busy(js):
    return [(j["start_ns"], j["end_ns"]) for j in js]


overlap = 0
for a0, a1 in busy(by_mask[1]):
    for b0, b1 in busy(by_mask[2]):
        overlap += max(0, min(a1, b1) - max(a0, b0))
total = sum(e - s for s, e in busy(by_mask[1]))
print(f"two programs: 80 jobs correct; core 0 busy {total} ns, overlapping core 1 for {overlap} ns "
      f"({100.0 * overlap / max(total, 1):.1f}%)")
