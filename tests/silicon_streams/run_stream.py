#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run npusim on silicon-producer streams (tools/streams) and check them: decode leaves no
`<unknown>` register, lint reports no error, replay completes every task and the dumped memory
equals the expected bytes (outside the don't-care mask of padded channels).

    run_stream.py --npusim BIN --stream-dir DIR --check decode|lint|replay|replay_bin|all
    run_stream.py --npusim BIN --streams-root DIR --table      (every stream, one row each)

Standard library only. Exit 0 when every requested check passes, 1 otherwise, 2 on bad usage.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

TIMEOUT_S = 600  # hang protection only; no assertion depends on time


def platform_flag(npusim):
    """`--platform` per docs cli.md once the CLI has it, else the older `--soc`."""
    try:
        out = subprocess.run([npusim, "replay", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "--soc"
    return "--platform" if "--platform" in out else "--soc"


def run(cmd, cwd):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"no exit within {TIMEOUT_S} s (hang)"


def first_error(stderr, stdout=""):
    for line in (stderr + "\n" + stdout).splitlines():
        if "error" in line.lower() or "fault" in line.lower():
            return line.strip()[:160]
    return (stderr.strip().splitlines() or [""])[0][:160]


def check_decode(npusim, flag, d, m):
    rc, out, err = run([npusim, "decode", m["regcmd"]["file"], flag, m["soc"]], d)
    unknown = out.count("<unknown")
    ok = rc == 0 and unknown == 0
    detail = f"{unknown} unknown" if rc == 0 else f"exit {rc}: {first_error(err)}"
    if unknown:
        regs = sorted(set(re.findall(r"<unknown (0x[0-9a-f]+)>", out)))
        detail += " (" + ", ".join(regs[:8]) + (" ..." if len(regs) > 8 else "") + ")"
    return ok, unknown if rc == 0 else None, detail


def check_lint(npusim, flag, d, m):
    rc, out, err = run([npusim] + m["commands"]["lint"] + [flag, m["soc"]], d)
    mt = re.search(r"(\d+) error\(s\), (\d+) warning\(s\)", out)
    if not mt:
        return False, None, f"exit {rc}: {first_error(err, out)}"
    errors = int(mt.group(1))
    rules = sorted(set(re.findall(r"^error: (E-[a-z-]+)", out, re.M)))
    detail = f"{errors} error(s), {mt.group(2)} warning(s)" + (f" [{', '.join(rules)}]" if rules else "")
    return rc == 0 and errors == 0, errors, detail


def compare(got, exp, mask):
    if len(got) != len(exp):
        return f"length {len(got)} != {len(exp)}"
    bad = [i for i in range(len(exp)) if (mask is None or mask[i]) and got[i] != exp[i]]
    if bad:
        n = len(exp) if mask is None else sum(1 for b in mask if b)
        return f"{len(bad)} of {n} bytes differ, first at +0x{bad[0]:x} (got 0x{got[bad[0]]:02x}, want 0x{exp[bad[0]]:02x})"
    return None


def check_replay(npusim, flag, d, m, key="replay"):
    with tempfile.TemporaryDirectory(prefix=f"npusim_{m['name']}_") as work:
        args = list(m["commands"][key])
        # Dumps go to the work directory, not into the stream directory.
        for i, a in enumerate(args):
            if i > 0 and args[i - 1] == "--dump":
                spec, fname = a.split("=", 1)
                args[i] = f"{spec}={os.path.join(work, fname)}"
        rc, out, err = run([npusim] + args + [flag, m["soc"]], d)
        done = sum(int(x) for x in re.findall(r"(\d+) task\(s\) completed", out))
        want = m["tasks"]
        tasks = f"{done}/{want}"
        if rc is None:
            return False, tasks, "hang", "not run"
        problems = []
        if rc != 0:
            problems.append(f"exit {rc}: {first_error(err, out)}")
        if rc == 2:
            # The CLI refused an option (--load/--dump/--task-list/--core-mask): say how far the
            # buffer gets with the options it has, so the gap list names the first model fault.
            bare = [npusim, "replay", m["regcmd"]["file"], "--base", m["regcmd"]["base"], "--mode", "full", flag,
                    m["soc"]]
            brc, bout, berr = run(bare, d)
            bdone = sum(int(x) for x in re.findall(r"(\d+) task\(s\) completed", bout))
            faults = [ln[len("fault: "):] for ln in bout.splitlines() if ln.startswith("fault: ")]
            problems.append(f"without those options: {bdone}/{want} tasks" +
                            (f", first fault: {faults[-1][:200]}" if faults else ""))
        if done != want:
            problems.append(f"{done} of {want} tasks completed")
        match_parts = []
        for dmp in m["dump"]:
            path = os.path.join(work, dmp["file"])
            if not os.path.exists(path):
                match_parts.append(f"{dmp['file']}: not dumped")
                continue
            with open(path, "rb") as f:
                got = f.read()
            with open(os.path.join(d, dmp["expected"]), "rb") as f:
                exp = f.read()
            mask = None
            if dmp.get("mask"):
                with open(os.path.join(d, dmp["mask"]), "rb") as f:
                    mask = f.read()
            diff = compare(got, exp, mask)
            match_parts.append(f"{dmp['file']}: " + ("equal" if diff is None else diff))
        match_ok = all(p.endswith("equal") for p in match_parts)
        ok = rc == 0 and done == want and match_ok
        return ok, tasks, "; ".join(problems) or "ok", "; ".join(match_parts)


def load(d):
    with open(os.path.join(d, "manifest.json")) as f:
        return json.load(f)


def one(npusim, flag, d, which):
    m = load(d)
    ok_all = True
    if which in ("decode", "all"):
        ok, _, detail = check_decode(npusim, flag, d, m)
        print(f"{m['name']}: decode {'PASS' if ok else 'FAIL'}: {detail}")
        ok_all &= ok
    if which in ("lint", "all"):
        ok, _, detail = check_lint(npusim, flag, d, m)
        print(f"{m['name']}: lint {'PASS' if ok else 'FAIL'}: {detail}")
        ok_all &= ok
    for key in ("replay", "replay_bin"):
        if which not in (key, "all") or (key == "replay_bin" and which == "all" and key not in m["commands"]):
            continue
        if key not in m["commands"]:
            print(f"{m['name']}: {key} FAIL: the manifest has no {key} command")
            ok_all = False
            continue
        ok, tasks, problem, match = check_replay(npusim, flag, d, m, key)
        print(f"{m['name']}: {key} {'PASS' if ok else 'FAIL'}: tasks {tasks}; {problem}; {match}")
        ok_all &= ok
    return ok_all


def table(npusim, flag, root):
    names = sorted(n for n in os.listdir(root) if os.path.exists(os.path.join(root, n, "manifest.json")))
    rows, details, passed = [], [], 0
    for n in names:
        d = os.path.join(root, n)
        m = load(d)
        dok, unk, ddet = check_decode(npusim, flag, d, m)
        lok, errs, ldet = check_lint(npusim, flag, d, m)
        rok, tasks, prob, match = check_replay(npusim, flag, d, m)
        bin_line = ""
        if "replay_bin" in m["commands"]:
            bok, btasks, bprob, bmatch = check_replay(npusim, flag, d, m, "replay_bin")
            rok = rok and bok
            bin_line = f"\n  replay (tasks.bin): tasks {btasks}; {bprob}; {bmatch}"
        out_ok = match and all(p.endswith("equal") for p in match.split("; "))
        rows.append((n, "-" if unk is None else str(unk), "-" if errs is None else str(errs), tasks,
                     "yes" if out_ok else "no", "PASS" if dok and lok and rok else "FAIL"))
        details.append(f"{n}:\n  decode: {ddet}\n  lint:   {ldet}\n  replay: {prob}\n  output: {match}{bin_line}")
        passed += dok and lok and rok
    hdr = ("stream", "unknown regs", "lint errors", "tasks completed", "output match", "result")
    widths = [max(len(r[i]) for r in rows + [hdr]) for i in range(len(hdr))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*hdr))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))
    print(f"\n{passed} of {len(rows)} streams pass\n")
    print("\n".join(details))
    return passed == len(rows)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--npusim", required=True)
    ap.add_argument("--stream-dir")
    ap.add_argument("--streams-root")
    ap.add_argument("--check", choices=["decode", "lint", "replay", "replay_bin", "all"], default="all")
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args(argv)
    if not os.access(a.npusim, os.X_OK):
        print(f"run_stream: error: npusim '{a.npusim}' is not executable", file=sys.stderr)
        return 2
    flag = platform_flag(a.npusim)
    if a.table:
        if not a.streams_root:
            ap.error("--table needs --streams-root")
        return 0 if table(a.npusim, flag, a.streams_root) else 1
    if not a.stream_dir:
        ap.error("--stream-dir or --table is required")
    return 0 if one(a.npusim, flag, a.stream_dir, a.check) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
