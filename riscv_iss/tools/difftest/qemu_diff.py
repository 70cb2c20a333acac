#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential runs of rviss against qemu-system-riscv32 (-icount shift=0) on the same ELFs.

Compares exit code and console output; the programs print the retired-instruction count of their body
(read from minstret, exact under -icount shift=0), so a count mismatch shows up as an output mismatch.
Sources: random programs (gen_random.py, -M virt, UART + test finisher) and, optionally, extra ELFs
(--elf, run on -M virt with semihosting, e.g. picolibc programs). --engines also runs rviss's step engine
and requires its output to equal the block engine's byte for byte. --traps generates programs that trap
and resume; their first line (the instret count) is then not compared with QEMU, whose -icount counts
trapping ebreak/illegal instructions as retired (the spec and rviss do not), but still between the
engines. Exit status 0 = all agree."""
import argparse
import concurrent.futures
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CC_FLAGS = ["-march=rv32imafc_zicsr_zifencei", "-mabi=ilp32f", "-nostdlib", "-nostartfiles"]


def run(cmd, timeout):
    # QEMU writes semihosting console output to stderr and the UART to stdout: compare both, merged.
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return "timeout", b""


def qemu_cmd(args, elf):
    return [args.qemu, "-M", "virt", "-bios", "none", "-display", "none", "-serial", "stdio", "-monitor", "none",
            "-icount", "shift=0", "-semihosting-config", "enable=on,target=native", "-kernel", elf]


def without_first_line(result):
    code, out = result
    return code, out.split(b"\n", 1)[1] if b"\n" in out else b""


def compare(args, name, elf, traps=False):
    iss = run([args.rviss, elf], args.timeout)
    if args.engines:
        step = run([args.rviss, "--engine", "step", elf], args.timeout)
        if step != iss:
            return name, False, "the step and block engines differ"
    qemu = run(qemu_cmd(args, elf), args.timeout)
    if traps:
        iss, qemu = without_first_line(iss), without_first_line(qemu)
    if iss == qemu:
        return name, True, ""
    why = f"exit rviss={iss[0]} qemu={qemu[0]}" if iss[0] != qemu[0] else "console output differs"
    return name, False, why


def build_random(args, seed):
    src = os.path.join(args.workdir, f"rand_{seed}.S")
    elf = os.path.join(args.workdir, f"rand_{seed}.elf")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_random.py"), "--seed", str(seed), "--length",
                    str(args.length), "-o", src] + (["--traps"] if args.traps else []), check=True)
    subprocess.run([args.cc] + CC_FLAGS + ["-T", os.path.join(HERE, "random.ld"), src, "-o", elf, "-Wl,--no-warn-rwx-segments"],
                   check=True, capture_output=True)
    return elf


def job(args, seed):
    elf = build_random(args, seed)
    return compare(args, f"random seed {seed}", elf, args.traps)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rviss", required=True)
    ap.add_argument("--qemu", default="qemu-system-riscv32")
    ap.add_argument("--cc", default="riscv64-unknown-elf-gcc")
    ap.add_argument("--count", type=int, default=20, help="number of random programs")
    ap.add_argument("--seed", type=int, default=1, help="first seed (programs use seed, seed+1, ...)")
    ap.add_argument("--length", type=int, default=400)
    ap.add_argument("--elf", action="append", default=[], help="extra ELF to compare (repeatable)")
    ap.add_argument("--workdir", default="difftest_work")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--engines", action="store_true", help="also compare rviss --engine step with the block engine")
    ap.add_argument("--traps", action="store_true", help="programs with resumed traps (see above)")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = [ex.submit(job, args, args.seed + i) for i in range(args.count)]
        futs += [ex.submit(compare, args, os.path.basename(e), e) for e in args.elf]
        for f in futs:
            results.append(f.result())
    bad = [r for r in results if not r[1]]
    for name, _, why in bad:
        print(f"MISMATCH {name}: {why}")
    print(f"qemu_diff: {len(results) - len(bad)}/{len(results)} ELFs agree (exit code, console output, instret)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
