#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The README's commands table lists every subcommand and every option (issue 17): each
# subcommand in `npusim --help` has a row, and each option in `npusim SUB --help` appears (by one
# of its names) in that subcommand's rows; the exit-code table has every row of docs/cli.md's.
import re
import subprocess
import sys

NPUSIM, README = sys.argv[1], sys.argv[2]
text = open(README, encoding="utf-8").read()
table = text[text.index("## Commands"):text.index("## Exit codes")]
rows = [l for l in table.splitlines() if l.startswith("| `npusim")]


def helptext(*args):
    return subprocess.run([NPUSIM, *args, "--help"], capture_output=True, text=True).stdout


top = helptext()
subs = re.findall(r"^  ([a-z]+)\s", top[top.index("Subcommands:"):], re.M)
fails = 0
for sub in subs:
    mine = [r for r in rows if re.match(rf"\| `npusim {sub}\b", r)]
    if not mine:
        print(f"FAIL - no commands-table row for '{sub}'")
        fails += 1
        continue
    cells = " ".join(re.split(r"(?<!\\)\|", r)[1] for r in mine)
    h = helptext(sub)
    opts = h[h.index("Options:"):] if "Options:" in h else ""
    missing = []
    for line in opts.splitlines():
        m = re.match(r"^  (-[^ ]+)", line)
        if not m:
            continue
        names = [n for n in m.group(1).split(",") if n.startswith("-")]
        if "--help" in names:
            continue
        if not any(re.search(re.escape(n) + r"(?![a-z-])", cells) for n in names):
            missing.append("/".join(names))
    if missing:
        print(f"FAIL - '{sub}' row(s) miss: {', '.join(missing)}")
        fails += 1
    else:
        print(f"ok   - '{sub}': {len(mine)} row(s) list every option")
# The exit-code table is docs/cli.md's, row for row (the conventions page is the vocabulary).
def code_rows(md):
    lines = md[md.index("| code | meaning |"):].splitlines()
    table = lines[:next((i for i, l in enumerate(lines) if not l.startswith("|")), len(lines))]
    return [l.strip() for l in table if not l.startswith("| code") and not l.startswith("|---")]


CLI_MD = sys.argv[3] if len(sys.argv) > 3 else None
codes = text[text.index("## Exit codes"):]
for code in ["| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |", "10 / 11 / 12", "120-127", "0-118", "`iss`: 119"]:
    if code not in codes:
        print(f"FAIL - exit-code table lacks {code}")
        fails += 1
if CLI_MD:
    mine, theirs = code_rows(codes), code_rows(open(CLI_MD, encoding="utf-8").read())
    for row in theirs:
        if row not in mine:
            print(f"FAIL - README exit-code table lacks docs/cli.md's row: {row}")
            fails += 1
    for row in mine:
        if row not in theirs:
            print(f"FAIL - README exit-code row not in docs/cli.md: {row}")
            fails += 1
    if mine == theirs:
        print(f"ok   - exit-code table: the {len(mine)} rows of docs/cli.md")
sys.exit(1 if fails else 0)
