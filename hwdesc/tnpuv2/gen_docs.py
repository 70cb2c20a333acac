#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keeps the generated halves of the tnpuv2 documents in step with their data files.

docs/tnpuv2-command-stream.md: below its GENERATED marker, the field tables of cmdstream.json
(gen_tnpuv2.py --markdown). docs/tnpuv2.md: below its marker, one row per profile.json figure
(section.key, value, grade, the reasoning). The text above the markers is written by hand.
  gen_docs.py SOURCE_DIR           rewrite the generated halves
  gen_docs.py SOURCE_DIR --check   exit 1 (naming the file) when a document is out of date
Stdlib only.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_tnpuv2  # noqa: E402

MARKER = "<!-- GENERATED below this line by hwdesc/tnpuv2/gen_docs.py: do not edit by hand -->\n"


def stream_tables(src):
    d, enums, cmds, regs, faults, _ = gen_tnpuv2.load(os.path.join(src, "hwdesc/tnpuv2/cmdstream.json"))
    return gen_tnpuv2.emit_markdown(d, enums, cmds, regs, faults)


def profile_table(src):
    p = json.load(open(os.path.join(src, "hwdesc/tnpuv2/profile.json"), encoding="utf-8"))
    o = ["| parameter | value | grade | reasoning (public NPUs of the same class) |", "|---|---|---|---|"]
    for sec in ("npu", "mac", "memory"):
        for k, v in p[sec].items():
            if isinstance(v, dict) and "value" in v:
                o.append("| %s.%s | %s | %s | %s |" % (sec, k, v["value"], v["grade"], v["source"].replace("|", "/")))
    return "\n".join(o) + "\n"


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--check"):
        print(__doc__, file=sys.stderr)
        return 2
    src, check = argv[1], len(argv) == 3
    bad = 0
    for doc, gen in (("docs/tnpuv2-command-stream.md", stream_tables), ("docs/tnpuv2.md", profile_table)):
        path = os.path.join(src, doc)
        text = open(path, encoding="utf-8").read()
        if MARKER not in text:
            print("gen_docs.py: %s has no GENERATED marker" % doc, file=sys.stderr)
            return 1
        want = text.split(MARKER)[0] + MARKER + "\n" + gen(src)
        if want == text:
            continue
        if check:
            print("gen_docs.py: %s is out of date (run hwdesc/tnpuv2/gen_docs.py .)" % doc, file=sys.stderr)
            bad += 1
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(want)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
