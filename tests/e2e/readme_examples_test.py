#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The README's examples are true (issue 17): every fenced block of the README that shows `$ `
# commands is run here (in a scratch directory, `build/sim/npusim` standing for the npusim under
# test) and the lines the README shows under a command must appear, in that order, in the
# command's real output (stdout, then stderr), figures included. A stale figure fails the test:
# re-measure and fix the README. Elisions the README documents: a line that is only `...` (any
# lines), `...` inside a line (any text there, e.g. elided columns), and whitespace runs (column
# alignment) compare as one space. Lines a command prints but the README does not show are fine.
#
# Every command of such a block must be known below: run (the setup it needs) or not run with the
# reason (CI runs only commands that take seconds). An unknown command fails the test, so a new
# example cannot escape it.
#   readme_examples_test.py NPUSIM README SOURCE_DIR RTL_BUILT(ON|OFF)
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NPUSIM, README, SRC = (os.path.abspath(a) for a in sys.argv[1:4])
HAS_RTL = sys.argv[4].upper() in ("ON", "1", "TRUE", "YES")

# Commands the test does not run, with the reason (matched on the command's start).
NOT_RUN = {
}


def blocks(text):
    """(first line number, [lines]) of every fenced block that shows `$ ` commands."""
    out, cur, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if cur is None:
                cur, start = [], n + 1
            else:
                if any(l.startswith("$ ") for l in cur):
                    out.append((start, cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return out


def commands(lines):
    """[(command, [shown output lines])] of one block; `\\` continues a command line."""
    cmds = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            cmds.append((cmd, []))
        elif cmds:
            cmds[-1][1].append(line)
        i += 1
    for _, shown in cmds:
        while shown and not shown[-1].strip():
            shown.pop()
    return cmds


def norm(s):
    return re.sub(r"\s+", " ", s.strip())


def line_re(shown):
    """A shown line as a regex over a normalised output line (`...` = any text)."""
    parts = [re.escape(norm(p)) for p in re.split(r"\.\.\.", shown)]
    return re.compile("^" + r".*".join(parts) + "$")


def compare(shown, real):
    """Empty when the shown lines appear in order in `real`; else what is missing."""
    got = [norm(l) for l in real.splitlines()]
    at = 0
    for s in shown:
        if not s.strip() or norm(s) == "...":
            continue
        rx = line_re(s)
        k = at
        while k < len(got) and not rx.match(got[k]):
            k += 1
        if k == len(got):
            near = [g for g in got if g[:12] == norm(s)[:12]]
            return f"shown line not in the output (in order): {s.strip()!r}" + (
                f"\n       the output has: {near[0]!r}" if near else "")
        at = k + 1
    return ""


def main():
    text = open(README, encoding="utf-8").read()
    work = tempfile.mkdtemp(prefix="npusim-readme-")
    fails = ran = 0
    try:
        for name in ("tools", "examples"):
            os.symlink(os.path.join(SRC, name), os.path.join(work, name))
        for start, lines in blocks(text):
            cwd = work
            for cmd, shown in commands(lines):
                label = f"README:{start} $ {cmd[:70]}"
                reason = next((r for k, r in NOT_RUN.items() if cmd.startswith(k)), None)
                if reason is None and "--rtl" in cmd and not HAS_RTL:
                    reason = "this npusim is built without Verilator (NPUSIM_RTL off)"
                if reason is not None:
                    print(f"skip - {label}: not run: {reason}")
                    continue
                words = shlex.split(cmd)
                # Setups: the register streams the decode/replay examples read (mtx512's int8
                # matmul, tools/streams), made once; those commands run in its directory.
                if words[:2] == ["build/sim/npusim", "decode"] or words[:2] == ["build/sim/npusim", "replay"]:
                    sdir = os.path.join(work, "streams", "mtx_matmul_int8")
                    if not os.path.isdir(sdir):
                        subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tools/streams/make_streams.py"),
                                        os.path.join(work, "streams"), "--only", "mtx_matmul_int8"],
                                       check=True, capture_output=True)
                    cwd = sdir
                if words[0] == "build/sim/npusim":
                    words[0] = NPUSIM
                elif words[0] == "/usr/bin/python3" and words[1].startswith("tools/"):
                    pass
                else:
                    print(f"FAIL - {label}: unknown command (run it here or list it in NOT_RUN with a reason)")
                    fails += 1
                    continue
                if "zoo/" in cmd and not os.path.isdir(os.path.join(work, "zoo")) and "make_zoo" not in cmd:
                    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tools/zoo/make_zoo.py"),
                                    os.path.join(work, "zoo"), "--models", "mobilenetv2"],
                                   check=True, capture_output=True)
                if "zoo/" in cmd and cwd != work:
                    words = [os.path.join(work, w) if w.startswith("zoo/") else w for w in words]
                r = subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=300)
                ran += 1
                why = compare(shown, r.stdout + "\n" + r.stderr)
                if why:
                    print(f"FAIL - {label}: {why}")
                    fails += 1
                else:
                    n = sum(1 for s in shown if s.strip() and norm(s) != "...")
                    print(f"ok   - {label}: exit {r.returncode}, {n} shown line(s) match")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{ran} README command(s) run, {fails} failure(s)")
    return 1 if fails or not ran else 0


sys.exit(main())
