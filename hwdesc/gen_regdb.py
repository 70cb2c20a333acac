#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate C++ register tables from the RKNPU register database (SG-8.3).

Reads regdb/rknpu.xml, checks it (no two registers of one generation share an offset, fields do
not overlap and fit 32 bits, registers lie inside their block window, enums and units referenced
by fields exist) and writes one deterministic header: no timestamps, no paths, registers sorted by
offset. Stdlib only.

What the XML carries besides offsets and bit ranges:
  <enum name=... source=...><value name=... value=... [verified="no"]/></enum>
      value names of coded fields; fields say enum="name". C++: hw::rknpu::enums::<CamelName>.
  <field ... unit="N"/>      the field counts N-byte units (value * N = bytes)
  <field ... minus_one="yes"/>  the field holds a count minus one
  <field ... note="..."/>    meaning beyond the unit (mode-dependent units, assumptions)
  <reg ... gen="a,b"/>       the register exists only on these register-map generations
                             (<generations> lists them; the first is the default table kRegs)

usage: gen_regdb.py INPUT.xml OUTPUT.h
"""
import re
import sys
import xml.etree.ElementTree as ET


class RegdbError(Exception):
    pass


def parse_int(text, what):
    try:
        return int(text, 0)
    except (TypeError, ValueError):
        raise RegdbError(f"{what}: not an integer: {text!r}")


def camel(name):
    return "".join(p.capitalize() for p in re.split(r"[_\s]+", name) if p)


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Field:
    def __init__(self, name, lo, hi, reserved, unit, minus_one, enum, note, verified):
        self.name, self.lo, self.hi, self.reserved = name, lo, hi, reserved
        self.unit, self.minus_one, self.enum, self.note, self.verified = unit, minus_one, enum, note, verified


def load(path):
    root = ET.parse(path).getroot()
    targets = [(t.get("name"), parse_int(t.get("value"), "target")) for t in root.find("targets")]
    flags = [(f.get("name"), parse_int(f.get("value"), "flag")) for f in root.find("opflags")]
    gens = [g.get("name") for g in root.find("generations")]
    if not gens:
        raise RegdbError("no <generations>")
    enums = []
    enum_names = set()
    for e in root.find("enums"):
        ename = e.get("name")
        if ename in enum_names:
            raise RegdbError(f"enum {ename} defined twice")
        enum_names.add(ename)
        vals = []
        seen = set()
        for v in e.findall("value"):
            n, x = v.get("name"), parse_int(v.get("value"), f"enum {ename}")
            if n in seen:
                raise RegdbError(f"enum {ename}: duplicate value name {n}")
            seen.add(n)
            vals.append((n, x, v.get("verified") != "no"))
        enums.append((ename, e.get("source", ""), vals))
    blocks = []
    fields_by_reg = {}
    for b in root.findall("block"):
        bname = b.get("name")
        base = parse_int(b.get("base"), f"{bname}.base")
        size = parse_int(b.get("size"), f"{bname}.size")
        regs = []
        for r in b.findall("reg"):
            rname = r.get("name")
            off = parse_int(r.get("offset"), f"{bname}.{rname}.offset")
            if not base <= off < base + size:
                raise RegdbError(f"{bname}.{rname}: offset {off:#x} outside block window")
            rgens = [g.strip() for g in r.get("gen", ",".join(gens)).split(",")]
            for g in rgens:
                if g not in gens:
                    raise RegdbError(f"{bname}.{rname}: unknown generation {g}")
            like = r.get("fields_like")
            if like:
                key = like if "." in like else f"{bname}.{like}"
                if key not in fields_by_reg:
                    raise RegdbError(f"{bname}.{rname}: fields_like {like} not defined before")
                fields = fields_by_reg[key]
            else:
                fields = []
                for f in r.findall("field"):
                    fname = f.get("name")
                    what = f"{bname}.{rname}.{fname}"
                    lo = parse_int(f.get("low"), f"{what}.low")
                    hi = parse_int(f.get("high"), f"{what}.high")
                    if not 0 <= lo <= hi <= 31:
                        raise RegdbError(f"{what}: bad bit range {lo}..{hi}")
                    unit = parse_int(f.get("unit", "1"), f"{what}.unit")
                    if unit < 1 or unit > 0xffff:
                        raise RegdbError(f"{what}: unit {unit} out of range")
                    enum = f.get("enum")
                    if enum and enum not in enum_names:
                        raise RegdbError(f"{what}: unknown enum {enum}")
                    fields.append(Field(fname, lo, hi, f.get("reserved") == "yes", unit,
                                        f.get("minus_one") == "yes", enum, f.get("note", ""),
                                        f.get("verified") != "no"))
            used = 0
            names = set()
            for fl in fields:
                mask = ((1 << (fl.hi - fl.lo + 1)) - 1) << fl.lo
                if used & mask:
                    raise RegdbError(f"{bname}.{rname}.{fl.name}: overlaps another field")
                if fl.name in names:
                    raise RegdbError(f"{bname}.{rname}.{fl.name}: duplicate field name")
                names.add(fl.name)
                used |= mask
            key = f"{bname}.{rname}"
            if key in fields_by_reg and not r.get("gen"):
                raise RegdbError(f"{key}: defined twice")
            fields_by_reg.setdefault(key, fields)
            regs.append(dict(name=rname, off=off, acc=r.get("access", "RW"), fields=fields,
                             verified=r.get("verified") != "no", note=r.get("note", ""), gens=rgens))
        for g in gens:
            offs = [x["off"] for x in regs if g in x["gens"]]
            if len(set(offs)) != len(offs):
                raise RegdbError(f"{bname}: two registers share an offset on generation {g}")
        blocks.append((bname, base, size, sorted(regs, key=lambda x: x["off"])))
    tnames = {n for (n, _) in targets}
    for (bname, *_rest) in blocks:
        if bname not in tnames:
            raise RegdbError(f"block {bname} has no regcmd target id")
    return targets, flags, gens, enums, blocks


def cpp_name(block, reg):
    # Keep TRM spelling; DPU_RDMA registers already carry the RDMA_ prefix.
    return f"{block}_{reg}"


def emit(targets, flags, gens, enums, blocks):
    out = []
    w = out.append
    w("// Generated by hwdesc/gen_regdb.py from regdb/rknpu.xml. Do not edit.")
    w("#pragma once")
    w("#include <cstdint>")
    w("#include \"hw/regdb_types.h\"")
    w("")
    w("namespace hw::rknpu {")
    w("")
    w("enum class Block : uint8_t {")
    for i, (bname, *_r) in enumerate(blocks):
        w(f"    {bname} = {i},")
    w("};")
    w(f"inline constexpr int kBlockCount = {len(blocks)};")
    w("using RegInfo = RegInfoT<Block>;")
    w("")
    w("/// Register-map generations (regdb <generations>); profiles name theirs in npu.regdb_generation.")
    w("enum class Generation : uint8_t {")
    for i, g in enumerate(gens):
        w(f"    {g.upper()} = {i},")
    w("};")
    w(f"inline constexpr int kGenerationCount = {len(gens)};")
    w("inline constexpr const char* kGenerationNames[] = {" + ", ".join(cstr(g) for g in gens) + "};")
    w("")
    w("/// regcmd target ids (bits 63..48 of an entry, one-hot per block).")
    w("namespace target {")
    for (n, v) in targets:
        w(f"inline constexpr uint32_t {n} = {v:#x};")
    w("}  // namespace target")
    w("namespace opflag {")
    for (n, v) in flags:
        w(f"inline constexpr uint32_t {n} = {v:#x};")
    w("}  // namespace opflag")
    w("")
    w("/// Value names of coded fields (regdb <enums>); emitters use these, never bare codes.")
    w("namespace enums {")
    for (ename, _src, vals) in enums:
        w(f"enum class {camel(ename)} : uint32_t {{")
        for (n, x, _v) in vals:
            w(f"    {n} = {x},")
        w("};")
    w("}  // namespace enums")
    eidx = {e[0]: i for i, e in enumerate(enums)}
    for (ename, _src, vals) in enums:
        w(f"inline constexpr EnumValueInfo kEnum_{ename}_values[] = {{")
        for (n, x, v) in vals:
            w(f"    {{{cstr(n)}, {x}, {'true' if v else 'false'}}},")
        w("};")
    w("inline constexpr EnumInfo kEnums[] = {")
    for (ename, src, vals) in enums:
        w(f"    {{{cstr(ename)}, {cstr(src)}, kEnum_{ename}_values, {len(vals)}}},")
    w("};")
    w(f"inline constexpr int kEnumCount = {len(enums)};")
    w("")
    tmap = dict(targets)
    w("inline constexpr BlockInfo kBlocks[] = {")
    for (bname, base, size, _regs) in blocks:
        w(f"    {{\"{bname}\", {base:#06x}, {size:#06x}, {tmap[bname]:#x}}},")
    w("};")
    w("")
    serial = 0
    for (bname, _b, _s, regs) in blocks:
        for r in regs:
            r["table"] = f"k{cpp_name(bname, r['name'])}_{serial}_fields"
            serial += 1
            w(f"inline constexpr FieldInfo {r['table']}[] = {{")
            for fl in sorted(r["fields"], key=lambda f: f.lo):
                w(f"    {{{cstr(fl.name)}, {fl.lo}, {fl.hi}, {'true' if fl.reserved else 'false'}, {fl.unit}, "
                  f"{'true' if fl.minus_one else 'false'}, {eidx[fl.enum] if fl.enum else -1}, "
                  f"{'true' if fl.verified else 'false'}, {cstr(fl.note)}}},")
            w("};")
    w("")
    for g in gens:
        allregs = []
        for (bname, _b, _s, regs) in blocks:
            for r in regs:
                if g in r["gens"]:
                    allregs.append((r["off"], bname, r))
        allregs.sort(key=lambda x: x[0])
        arr = "kRegs" if g == gens[0] else f"kRegs_{g}"
        w(f"/// Every register of generation {g}, sorted by core-relative offset.")
        w(f"inline constexpr RegInfo {arr}[] = {{")
        for (off, bname, r) in allregs:
            w(f"    {{{off:#06x}, Block::{bname}, \"{bname}\", \"{r['name']}\", Access::{r['acc']}, "
              f"{r['table']}, {len(r['fields'])}, "
              f"{'true' if r['verified'] else 'false'}, {cstr(r['note'])}}},")
        w("};")
        w(f"inline constexpr int {'kRegCount' if g == gens[0] else 'kRegCount_' + g} = {len(allregs)};")
        w("")
    w("/// Offsets and typed fields, one namespace per register (TRM spelling); default generation")
    w("/// first, then registers only other generations have.")
    done = set()
    for g in gens:
        for (bname, _b, _s, regs) in blocks:
            for r in regs:
                if g not in r["gens"] or (bname, r["name"]) in done:
                    continue
                done.add((bname, r["name"]))
                w(f"namespace {cpp_name(bname, r['name'])} {{")
                w(f"inline constexpr uint16_t kOffset = {r['off']:#06x};")
                for fl in r["fields"]:
                    w(f"inline constexpr Field {fl.name}{{{fl.lo}, {fl.hi}, {fl.unit}, "
                      f"{'true' if fl.minus_one else 'false'}}};")
                w("}")
    w("")
    w("}  // namespace hw::rknpu")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        parsed = load(argv[1])
    except (RegdbError, ET.ParseError) as e:
        print(f"gen_regdb: {argv[1]}: {e}", file=sys.stderr)
        return 1
    text = emit(*parsed)
    try:
        with open(argv[2], encoding="utf-8") as f:
            if f.read() == text:
                return 0
    except OSError:
        pass
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
