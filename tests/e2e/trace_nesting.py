#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a Chrome/Perfetto trace-event JSON file the way Perfetto's JSON importer reads it.

Perfetto keeps the complete ("X") slices of one track (pid, tid) only when they form a stack:
sorted by start, every slice either starts at or after the end of the previous open slice, or
lies entirely inside it (docs: perfetto.dev "Trace event format" -- complete events must nest
per thread). Times are compared at nanosecond resolution, as the importer stores them (ts and
dur are microseconds in the file). Also checked: every process and thread that is named carries
at least one event (no empty processes), and counter ("C") events have numeric args.

usage: trace_nesting.py TRACE.json [--expect-counter NAME]... [--expect-async]
prints one line per track with a problem and a summary; exit 1 on any problem.
"""
import json
import sys
from decimal import Decimal


def ns(v):
    # Exact decimal microseconds -> integer nanoseconds (rounded half up).
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))


def main(argv):
    path = argv[1]
    want_counters = [argv[i + 1] for i, a in enumerate(argv) if a == "--expect-counter"]
    with open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"]
    tracks = {}
    names = {}
    procs = {}
    used_pids, used_tracks = set(), set()
    counters = {}
    problems = []
    for e in ev:
        ph = e.get("ph")
        if ph == "M":
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e["name"] == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            continue
        used_pids.add(e["pid"])
        if ph == "X":
            s = ns(e["ts"])
            tracks.setdefault((e["pid"], e["tid"]), []).append((s, s + ns(e["dur"]), e["name"]))
            used_tracks.add((e["pid"], e["tid"]))
        elif ph == "i":
            used_tracks.add((e["pid"], e["tid"]))
        elif ph == "C":
            for k, v in e.get("args", {}).items():
                if not isinstance(v, (int, float)):
                    problems.append(f"counter {e['name']}: non-numeric value {k}={v!r}")
            counters[e["name"]] = counters.get(e["name"], 0) + 1
    bad_total = 0
    slices = 0
    for key, sl in sorted(tracks.items()):
        # Perfetto sorts by timestamp; a longer slice starting at the same time is the parent.
        sl.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        stack = []
        bad = 0
        first = None
        for s, e, n in sl:
            if e < s:
                bad += 1
                continue
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                bad += 1
                if first is None:
                    first = f"'{n}' [{s},{e}) ns overlaps '{stack[-1][2]}' [{stack[-1][0]},{stack[-1][1]}) ns"
                continue
            stack.append((s, e, n))
        slices += len(sl)
        if bad:
            bad_total += bad
            problems.append(f"track {procs.get(key[0], key[0])}/{names.get(key, key[1])}: {bad} of {len(sl)} "
                            f"slices misnested, first: {first}")
    for pid, name in procs.items():
        if pid not in used_pids:
            problems.append(f"process '{name}' (pid {pid}) has no events")
    for key, name in names.items():
        if key not in used_tracks:
            problems.append(f"track {procs.get(key[0], key[0])}/{name} has no slices")
    for c in want_counters:
        if not counters.get(c):
            problems.append(f"no counter events named '{c}' (have: {sorted(counters)})")
    for p in problems:
        print(p)
    print(f"{len(tracks)} tracks, {slices} slices, {bad_total} misnested, "
          f"counters: {', '.join(f'{k} ({v})' for k, v in sorted(counters.items())) or 'none'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
