#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The lowering contract (issue 15) is machine-checked: drivers/compiler/rknpu/COMPILER.md's "Operator contract"
table, between the markers `<!-- contract:begin -->` and `<!-- contract:end -->`, has one or more rows
per operator of the RK3588 table (drivers/compiler/specs/rknn_v2.3.2_rk3588.json, seed 001 section 3.2):

    | seed operator | int8 | block path / why | probes |

- every operator of the spec file has a row (its name first in the cell, a qualifier may follow);
- the int8 cell is one of
    lowered               every probe compiles with all its operator nodes on the NPU (NPU or view layers);
    not lowered           the probe's node "probe" is a CPU layer, reason "no NPU lowering yet";
    not lowered (pending) the same, for the operators another branch lowers (the lead flips the row);
    vendor rule           the probe's node is a CPU layer, reason "vendor rule" (the seed's constraint);
    no ONNX pattern       no probe (the seed names a fused RKNN operator no ONNX graph spells);
- the probes cell names models of tests/e2e/contract_probes.py (quantize_static's QDQ form), compiled
  by `npusim check --platform rk3588 --json` (compile_model, timing-only: the layers `npusim run` gets).
usage: lowering_contract_test.py NPUSIM COMPILER_MD SPEC_JSON"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract_probes  # noqa: E402

STATES = ("lowered", "not lowered", "not lowered (pending)", "vendor rule", "no ONNX pattern")
QDQ = ("QuantizeLinear", "DequantizeLinear")


def table_rows(md):
    text = open(md).read()
    a, b = text.find("<!-- contract:begin -->"), text.find("<!-- contract:end -->")
    if a < 0 or b < a:
        raise SystemExit("FAIL %s: no contract markers" % md)
    rows = []
    for line in text[a:b].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("|") or cells[0] in ("seed operator", "---") or cells[0].startswith("-"):
            continue
        op = cells[0].split(" (")[0].strip("`")
        probes = [p.strip("` ") for p in cells[3].split(",") if p.strip("` -")]
        rows.append((op, cells[1], cells[2], probes))
    return rows


def check(npusim, model):
    c = subprocess.run([npusim, "check", "--platform", "rk3588", "--json", model], capture_output=True, text=True)
    if c.returncode not in (0, 10, 11):
        return None, "check exit %d: %s" % (c.returncode, c.stderr.strip())
    return json.loads(c.stdout)["nodes"], ""


def main():
    npusim, md, spec = sys.argv[1:4]
    ops = [o["name"] for o in json.load(open(spec))["ops"]]
    rows = table_rows(md)
    fails = []
    covered = {r[0] for r in rows}
    for o in ops:
        if o not in covered:
            fails.append("spec operator %s has no contract row" % o)
    for op, state, _, probes in rows:
        if op not in ops:
            fails.append("row %s: not an operator of %s" % (op, os.path.basename(spec)))
        if state not in STATES:
            fails.append("row %s: int8 state '%s' is none of %s" % (op, state, STATES))
        if (state == "no ONNX pattern") != (not probes):
            fails.append("row %s: '%s' with probes %s" % (op, state, probes))
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for op, state, _, probes in rows:
            for pr in probes:
                if pr not in contract_probes.PROBES:
                    fails.append("row %s: unknown probe %s" % (op, pr))
                    continue
                path = os.path.join(tmp, pr + ".onnx")
                with open(path, "wb") as f:
                    f.write(contract_probes.PROBES[pr]().SerializeToString())
                nodes, err = check(npusim, path)
                checked += 1
                if nodes is None:
                    fails.append("%s / %s: %s" % (op, pr, err))
                    continue
                where = {n["name"]: n.get("npusim", {}) for n in nodes}
                ops_of = {n["name"]: n.get("op_type", "") for n in nodes}
                main_node = where.get("probe")
                if main_node is None:
                    fails.append("%s / %s: node 'probe' not in check's placement (%s)" % (op, pr, sorted(where)))
                    continue
                if state == "lowered":
                    for name, pl in where.items():
                        if (name.startswith("probe") or ops_of[name] not in QDQ) and pl.get("unit") not in ("NPU", "view"):
                            fails.append("%s / %s: node %s on %s (%s: %s), the table says lowered"
                                         % (op, pr, name, pl.get("unit"), pl.get("reason"), pl.get("note", "")[:160]))
                    continue
                want = "vendor rule" if state == "vendor rule" else "no NPU lowering yet"
                got = (main_node.get("unit"), main_node.get("reason"))
                if got != ("CPU", want):
                    fails.append("%s / %s: node probe is %s, the table says %s" % (op, pr, got, state))
    for f in fails:
        print("FAIL " + f)
    print("%d contract rows, %d spec operators, %d probes compiled, %d failure(s)" % (len(rows), len(ops), checked, len(fails)))
    return 1 if fails or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
