#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates, at build time, everything the MCU path derives from one profile per MCU
(hwdesc/profiles/mcu/<name>.json):
  OUT/<name>.ld             firmware linker script (picolibc's picolibc.ld with the profile's layout)
  OUT/mk_board_<name>.h     board header of the device firmware (UART / timer / interrupt lines)
  OUT/mcu_targets.inc       the mcu::McuTarget table of drivers/mcu (memory map, devices, unknowns)
  OUT/boards.cmake          the firmware build's per-board choices (hot kernels in SRAM)
  PRESETS/<name>.json       the ISS core preset (ISA, cycle table, memory map with wait states)
and copies the hand-written core presets (--copy-presets DIR: presets that are not MCU profiles) next
to the generated ones. Every figure carries a grade (known / inferred / design / unverified with a
reason); the layout is checked (regions disjoint, firmware and blob inside flash, back to back).
Usage: gen_mcu_board.py --out OUT --presets-out PRESETS [--copy-presets DIR] PROFILE.json..."""
import argparse
import json
import os
import shutil
import sys

GRADES = {"known", "inferred", "design", "unverified"}


class ProfileError(Exception):
    pass


def num(v, where):
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            pass
    raise ProfileError("%s: not a number: %r" % (where, v))


def graded(d, where, key="grade", reason="reason", source="source"):
    g = d.get(key)
    if g not in GRADES:
        raise ProfileError("%s.%s: grade must be one of %s, got %r" % (where, key, sorted(GRADES), g))
    if g == "unverified" and not d.get(reason):
        raise ProfileError("%s: an unverified figure needs '%s'" % (where, reason))
    if g != "unverified" and not d.get(source) and not d.get(reason):
        raise ProfileError("%s: a %s figure needs '%s'" % (where, g, source))
    return g


def load(path):
    with open(path, encoding="utf-8") as f:
        p = json.load(f)
    name = p["name"]
    w = os.path.basename(path)
    for k in ("clock_hz", "isa", "reset_pc", "core"):
        graded(p[k], "%s:%s" % (w, k))
    if p["core"]["misaligned"] not in ("trap", "emulate") or not isinstance(p["core"]["triggers"], int) or p["core"]["triggers"] < 0:
        raise ProfileError("%s: core.misaligned trap|emulate, core.triggers a count" % w)
    regions = []
    for i, r in enumerate(p["memory"]):
        where = "%s:memory[%d]" % (w, i)
        graded(r, where)
        if "wait_grade" in r:
            graded(r, where, "wait_grade", "wait_reason", "wait_source")
        regions.append((r["name"], num(r["base"], where), num(r["size_bytes"], where), r))
    for a in regions:
        for b in regions:
            if a is not b and a[1] < b[1] + b[2] and b[1] < a[1] + a[2]:
                raise ProfileError("%s: regions %s and %s overlap" % (w, a[0], b[0]))
    by = {r[0]: r for r in regions}
    if "flash" not in by or "sram" not in by:
        raise ProfileError("%s: the memory map needs a 'flash' and an 'sram' region" % w)
    lay = p["layout"]
    for k in ("firmware", "model_blob", "sram", "stack_bytes", "hot_code_in_ram"):
        graded(lay[k], "%s:layout.%s" % (w, k))
    fw0, fw1 = num(lay["firmware"]["base"], w), num(lay["firmware"]["end"], w)
    bl0, bl1 = num(lay["model_blob"]["base"], w), num(lay["model_blob"]["end"], w)
    fl = by["flash"]
    if not (fl[1] <= fw0 < fw1 == bl0 < bl1 <= fl[1] + fl[2]):
        raise ProfileError("%s: firmware [%#x, %#x) and model blob [%#x, %#x) must be back to back inside flash [%#x, %#x)"
                           % (w, fw0, fw1, bl0, bl1, fl[1], fl[1] + fl[2]))
    if num(p["reset_pc"]["value"], w) != fw0:
        raise ProfileError("%s: reset_pc must be the firmware base" % w)
    dev = p["devices"]
    for k in ("uart", "timer", "intc", "clint"):
        graded(dev[k], "%s:devices.%s" % (w, k))
    graded(dev["uart"], "%s:devices.uart" % w, "model_grade", "model_reason", "model_source")
    graded(dev["timer"], "%s:devices.timer" % w, "model_grade", "model_reason", "model_source")
    if dev["uart"]["model"] not in ("hisilicon_ws63", "pl011", "ns16550"):
        raise ProfileError("%s: devices.uart.model %r (hisilicon_ws63, pl011, ns16550)" % (w, dev["uart"]["model"]))
    if dev["timer"]["model"] not in ("dw_apb_timer", "unmodelled"):
        raise ProfileError("%s: devices.timer.model %r (dw_apb_timer, unmodelled)" % (w, dev["timer"]["model"]))
    graded(p["cycles"], "%s:cycles" % w)
    return p, regions, (fw0, fw1, bl0, bl1)


def unknowns(p):
    """Every figure that is an assumption, with its reason (what `npusim run` prints as notes)."""
    out = []
    if p["core"]["grade"] == "unverified":
        out.append(p["core"]["reason"])
    if p.get("part_grade") == "unverified":
        out.append("part: " + p["part_reason"])
    for r in p["memory"]:
        if r.get("wait_grade") == "unverified":
            out.append("%s wait states: %s" % (r["name"], r["wait_reason"]))
    d = p["devices"]
    if d["uart"].get("model_grade") == "unverified":
        out.append("UART register model: " + d["uart"]["model_reason"])
    if d["timer"].get("model_grade") == "unverified":
        out.append("timer register model: " + d["timer"]["model_reason"])
    if d["intc"].get("loci_grade") == "unverified":
        out.append("interrupts: " + d["intc"]["loci_reason"])
    out.append("CLINT at %s: %s" % (d["clint"]["base"], d["clint"]["reason"]))
    out.append("cycle table: " + p["cycles"]["reason"])
    return out


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return  # unchanged: no rebuild of its users
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def linker_script(p, regions, lay):
    by = {r[0]: r for r in regions}
    fw0, fw1, bl0, bl1 = lay
    sram = by[p["layout"]["sram"]["region"]]
    return ("/* Generated from hwdesc/profiles/mcu/%s.json by drivers/mcu/tools/gen_mcu_board.py: do not edit. */\n"
            "/* %s: firmware [%#x, %#x), model blob [%#x, %#x) written by the host before reset; SRAM %#x + %#x:\n"
            " * .data/.bss, the activation arena (heap) and a %d-byte stack. */\n"
            "__flash = %#010x;\n__flash_size = %#010x;\n__ram = %#010x;\n__ram_size = %#010x;\n__stack_size = %#x;\n"
            "__model_blob = %#010x;\n__model_blob_size = %#010x;\nINCLUDE picolibc.ld\n"
            % (p["name"], p["display_name"], fw0, fw1, bl0, bl1, sram[1], sram[2], p["layout"]["stack_bytes"]["value"],
               fw0, fw1 - fw0, sram[1], sram[2], p["layout"]["stack_bytes"]["value"], bl0, bl1 - bl0))


def board_header(p):
    d = p["devices"]
    u, t = d["uart"], d["timer"]
    guard = "MK_BOARD_%s_H" % p["name"].upper()
    lines = ["/* Generated from hwdesc/profiles/mcu/%s.json by drivers/mcu/tools/gen_mcu_board.py: do not edit. */" % p["name"],
             "#ifndef " + guard, "#define " + guard,
             '#define MK_BOARD_NAME "%s"' % p["name"],
             "#define MK_BOARD_CLOCK_HZ %du" % p["clock_hz"]["value"],
             "#define MK_BOARD_UART_BASE %#010xu" % num(u["base"], "uart"),
             "#define MK_BOARD_UART_MODEL_%s 1" % u["model"].upper(),
             "#define MK_BOARD_UART_IRQ %d" % u["irq"],
             "#define MK_BOARD_TIMER_BASE %#010xu" % num(t["base"], "timer"),
             "#define MK_BOARD_TIMER_MODEL_%s 1" % t["model"].upper(),
             "#define MK_BOARD_TIMER_IRQ %d" % t["irq"],
             "#define MK_BOARD_TIMER_HZ %du" % t.get("clock_hz", 0),
             "#define MK_BOARD_LOCAL_IRQ_LO %d" % d["intc"]["local_irqs"][0],
             "#define MK_BOARD_LOCAL_IRQ_HI %d" % d["intc"]["local_irqs"][1],
             "#endif", ""]
    return "\n".join(lines)


def cstr(s):
    return json.dumps(s, ensure_ascii=True)


def targets_inc(profiles):
    out = ["// Generated from hwdesc/profiles/mcu/*.json by drivers/mcu/tools/gen_mcu_board.py: do not edit.",
           "// Included by drivers/mcu/src/mcu_target.cpp inside all_targets()."]
    for p, regions, lay in profiles:
        by = {r[0]: r for r in regions}
        fw0, fw1, bl0, bl1 = lay
        sram = by[p["layout"]["sram"]["region"]]
        d = p["devices"]
        t = d["timer"]
        out += ["{", "    McuTarget t;",
                "    t.name = %s;" % cstr(p["name"]), "    t.display_name = %s;" % cstr(p["display_name"]),
                "    t.aliases = {%s};" % ", ".join(cstr(a) for a in p.get("aliases", [])),
                "    t.iss_preset = %s;" % cstr(p["name"]), "    t.spec_platform = %s;" % cstr(p["spec_platform"]),
                "    t.clock_hz = %du;" % p["clock_hz"]["value"],
                "    t.flash_base = %#xu;" % fw0, "    t.flash_bytes = %#xu;" % (bl1 - fw0),
                "    t.fw_flash_base = %#xu;" % fw0, "    t.fw_flash_bytes = %#xu;" % (fw1 - fw0),
                "    t.blob_base = %#xu;" % bl0, "    t.blob_bytes = %#xu;" % (bl1 - bl0),
                "    t.sram_base = %#xu;" % sram[1], "    t.sram_bytes = %#xu;" % sram[2],
                "    t.stack_bytes = %du;" % p["layout"]["stack_bytes"]["value"],
                "    t.hot_code_in_ram = %s;" % ("true" if p["layout"]["hot_code_in_ram"]["value"] else "false"),
                "    t.uart_base = %#xu;" % num(d["uart"]["base"], "uart"), "    t.uart_model = %s;" % cstr(d["uart"]["model"]),
                "    t.timer_base = %#xu;" % num(t["base"], "timer"), "    t.timer_model = %s;" % cstr(t["model"]),
                "    t.timer_channels = %du;" % t.get("channels", 0), "    t.timer_clock_hz = %du;" % t.get("clock_hz", 0),
                "    t.timer_irq = %du;" % t["irq"],
                "    t.local_irq_lo = %du;" % d["intc"]["local_irqs"][0], "    t.local_irq_hi = %du;" % d["intc"]["local_irqs"][1],
                "    t.clint_base = %#xu;" % num(d["clint"]["base"], "clint"),
                "    t.unknowns = {%s};" % ", ".join(cstr(u) for u in unknowns(p)),
                "    v.push_back(t);", "}"]
    return "\n".join(out) + "\n"


def preset(p, regions):
    d = p["devices"]
    mem = []
    for name, base, size, r in regions:
        e = {"name": name, "base": "%#010x" % base, "size_bytes": "%#010x" % size, "writable": bool(r["writable"])}
        for k in ("fetch_wait_cycles", "read_wait_cycles", "write_wait_cycles"):
            if k in r:
                e[k] = r[k]
        mem.append(e)
    cyc = dict(p["cycles"]["table"])
    cyc["clock_hz"] = p["clock_hz"]["value"]
    doc = {"schema_version": 1, "name": p["name"],
           "description": "%s, RV32%s, %d MHz. Generated from hwdesc/profiles/mcu/%s.json by drivers/mcu/tools/gen_mcu_board.py "
                          "(sources and grades there). The SoC's UART and timer are modelled by the SystemC platform "
                          "(riscv_iss/tlm), not by this preset: console_base 0." % (p["display_name"], p["isa"]["value"].upper(),
                                                                                    p["clock_hz"]["value"] // 1000000, p["name"]),
           "unverified": unknowns(p),
           "isa": {"extensions": p["isa"]["value"], "u_mode": True, "misaligned": p["core"]["misaligned"],
                   "triggers": {"count": p["core"]["triggers"]}, "reset_pc": p["reset_pc"]["value"]},
           "cycles": cyc,
           "devices": {"clint_base": d["clint"]["base"], "console_base": 0, "test_finisher_base": 0},
           "memory": mem}
    return json.dumps(doc, indent=2) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--presets-out", required=True)
    ap.add_argument("--copy-presets")
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    try:
        profiles = [load(f) for f in a.profiles]
    except (ProfileError, KeyError, ValueError) as e:
        sys.exit("gen_mcu_board: %s" % e)
    names = [p["name"] for p, _, _ in profiles]
    for p, regions, lay in profiles:
        write(os.path.join(a.out, p["name"] + ".ld"), linker_script(p, regions, lay))
        write(os.path.join(a.out, "mk_board_%s.h" % p["name"]), board_header(p))
        write(os.path.join(a.presets_out, p["name"] + ".json"), preset(p, regions))
    write(os.path.join(a.out, "mcu_targets.inc"), targets_inc(profiles))
    write(os.path.join(a.out, "boards.cmake"),
          "# Generated from hwdesc/profiles/mcu by drivers/mcu/tools/gen_mcu_board.py: do not edit.\n" +
          "".join("set(MK_LIB_%s %s)  # layout.hot_code_in_ram = %s\n" % (p["name"], "mk_rv32_ram" if p["layout"]["hot_code_in_ram"]["value"]
                                                                          else "mk_rv32", str(p["layout"]["hot_code_in_ram"]["value"]).lower())
                  for p, _, _ in profiles) +
          "set(MCU_PROFILE_BOARDS %s)\n" % " ".join(names))
    if a.copy_presets:
        for f in sorted(os.listdir(a.copy_presets)):
            if f.endswith(".json") and f[:-5] not in names:
                with open(os.path.join(a.copy_presets, f), encoding="utf-8") as src:
                    write(os.path.join(a.presets_out, f), src.read())


if __name__ == "__main__":
    main()
