#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Random RV32IMAFC test-program generator for differential runs (rviss vs qemu-system-riscv32 -M virt).

Each program initialises registers with random and corner-case values, runs a random instruction mix
(integer ALU, M with /0 and overflow operands, loads/stores/AMOs on a buffer, misaligned loads/stores,
forward branches, counted loops, jumps, calls through jalr, compressed HINTs, F arithmetic in all static
rounding modes and dyn, conversions, compares, CSR accesses to fflags/frm/mscratch, and traps the handler
resumes from: ecall, ebreak, illegal instructions), then prints via the 16550 UART at 0x10000000: the
instret delta of the body, all x/f registers, fcsr, the buffer and the trap log (mcause, mepc offset of
each trap), and exits through the SiFive test device at 0x100000.
Deterministic: the same seed gives the same program."""
import argparse
import random

# x27 (s11) holds the start instret, x28 (t3) the trap log base, x29 (t4) is an address scratch, x30 (t5)
# a loop counter, x31 (t6) the buffer base. Everything else is fair game.
GPRS = [f"x{i}" for i in range(1, 27)]
FPRS = [f"f{i}" for i in range(32)]
RMS = ["rne", "rtz", "rdn", "rup", "rmm", "dyn"]
SPECIAL_X = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 2, 0xFFFFFFFE, 31, 32]
SPECIAL_F = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
             0x7F800001, 0xFFC00001, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x4B800000,
             0x4F000000, 0xCF000000, 0x3F000000, 0x40490FDB, 0x33800000, 0x4F800000]
ALU_RR = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
          "mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu"]
ALU_RI = ["addi", "slti", "sltiu", "xori", "ori", "andi"]
SHIFT_I = ["slli", "srli", "srai"]
BRANCH = ["beq", "bne", "blt", "bge", "bltu", "bgeu"]
FP_RR = ["fadd.s", "fsub.s", "fmul.s", "fdiv.s"]
FP_R4 = ["fmadd.s", "fmsub.s", "fnmsub.s", "fnmadd.s"]
FP_NORM = ["fsgnj.s", "fsgnjn.s", "fsgnjx.s", "fmin.s", "fmax.s"]
FP_CMP = ["feq.s", "flt.s", "fle.s"]
# RVC HINTs (ISA manual Vol. I 16.7): they must execute as no-ops. c.lui/c.li/c.addi/c.mv/c.add/c.slli with
# rd = x0, c.addi/c.slli with a zero immediate on a0.
HINTS = ["0x6005", "0x707d", "0x4015", "0x0005", "0x0501", "0x802a", "0x902a", "0x0006", "0x0502"]
# Traps the handler resumes from: ecall (11), ebreak without the semihosting sequence (3), illegal (2).
TRAPS = ["ecall", "ebreak", ".word 0xfe000033", "csrr x1, 0x7c0"]
AMOS = ["amoswap.w", "amoadd.w", "amoxor.w", "amoand.w", "amoor.w", "amomin.w", "amomax.w", "amominu.w",
        "amomaxu.w"]


class Gen:
    def __init__(self, seed, length, traps=False):
        self.r = random.Random(seed)
        self.length = length
        self.traps = traps
        self.label = 0
        self.out = []

    def x(self):
        return self.r.choice(GPRS)

    def f(self):
        return self.r.choice(FPRS)

    def emit(self, s):
        self.out.append("    " + s)

    def new_label(self):
        self.label += 1
        return f"L{self.label}"

    def value(self, specials):
        return self.r.choice(specials) if self.r.random() < 0.5 else self.r.getrandbits(32)

    def one(self, depth=0):
        r = self.r
        k = r.random()
        if k < 0.22:
            self.emit(f"{r.choice(ALU_RR)} {self.x()}, {self.x()}, {self.x()}")
        elif k < 0.32:
            self.emit(f"{r.choice(ALU_RI)} {self.x()}, {self.x()}, {r.randint(-2048, 2047)}")
        elif k < 0.36:
            self.emit(f"{r.choice(SHIFT_I)} {self.x()}, {self.x()}, {r.randint(0, 31)}")
        elif k < 0.38:
            self.emit(f"{r.choice(['lui', 'auipc'])} {self.x()}, {r.randint(0, 0xFFFFF)}")
        elif k < 0.46:
            size = r.choice([("lw", "sw", 4), ("lh", "sh", 2), ("lhu", "sh", 2), ("lb", "sb", 1), ("lbu", "sb", 1)])
            # one access in eight is misaligned: the cv32e40p preset performs them, as QEMU does
            off = r.randrange(0, 252) if r.random() < 0.125 else r.randrange(0, 256, size[2])
            if r.random() < 0.5:
                self.emit(f"{size[0]} {self.x()}, {off}(x31)")
            else:
                self.emit(f"{size[1]} {self.x()}, {off}(x31)")
        elif k < 0.49:
            off = r.randrange(0, 256, 4)
            self.emit(f"addi x29, x31, {off}")
            if r.random() < 0.2:
                self.emit(f"lr.w {self.x()}, (x29)")
                self.emit(f"sc.w {self.x()}, {self.x()}, (x29)")
            else:
                self.emit(f"{r.choice(AMOS)} {self.x()}, {self.x()}, (x29)")
        elif k < 0.53 and depth == 0:
            lbl = self.new_label()
            self.emit(f"{r.choice(BRANCH)} {self.x()}, {self.x()}, {lbl}")
            for _ in range(r.randint(1, 4)):
                self.one(depth + 1)
            self.out.append(f"{lbl}:")
        elif k < 0.55 and depth == 0:
            lbl = self.new_label()
            self.emit(f"li x30, {r.randint(1, 6)}")
            self.out.append(f"{lbl}:")
            for _ in range(r.randint(1, 5)):
                self.one(depth + 1)
            self.emit("addi x30, x30, -1")
            self.emit(f"bnez x30, {lbl}")
        elif k < 0.56 and depth == 0:
            lbl = self.new_label()
            self.emit(f"jal {self.x()}, {lbl}")
            self.one(depth + 1)
            self.out.append(f"{lbl}:")
        elif k < 0.68:
            self.emit(f"{r.choice(FP_RR)} {self.f()}, {self.f()}, {self.f()}, {r.choice(RMS)}")
        elif k < 0.73:
            self.emit(f"{r.choice(FP_R4)} {self.f()}, {self.f()}, {self.f()}, {self.f()}, {r.choice(RMS)}")
        elif k < 0.75:
            self.emit(f"fsqrt.s {self.f()}, {self.f()}, {r.choice(RMS)}")
        elif k < 0.79:
            self.emit(f"{r.choice(FP_NORM)} {self.f()}, {self.f()}, {self.f()}")
        elif k < 0.82:
            self.emit(f"{r.choice(FP_CMP)} {self.x()}, {self.f()}, {self.f()}")
        elif k < 0.86:
            op = r.choice(["fcvt.w.s", "fcvt.wu.s"])
            self.emit(f"{op} {self.x()}, {self.f()}, {r.choice(RMS)}")
        elif k < 0.89:
            op = r.choice(["fcvt.s.w", "fcvt.s.wu"])
            self.emit(f"{op} {self.f()}, {self.x()}, {r.choice(RMS)}")
        elif k < 0.92:
            op = r.choice(["fmv.x.w", "fclass.s"])
            self.emit(f"{op} {self.x()}, {self.f()}")
        elif k < 0.94:
            self.emit(f"fmv.w.x {self.f()}, {self.x()}")
        elif k < 0.96:
            off = r.randrange(0, 256, 4)
            self.emit(f"{r.choice(['flw', 'fsw'])} {self.f()}, {off}(x31)")
        elif k < 0.965:
            self.emit(f"fsrmi {self.x()}, {r.randint(0, 4)}")
        elif k < 0.97:
            self.emit(f"csrrs {self.x()}, fflags, {self.x()}")
        elif k < 0.975:
            self.emit(f"csrrw {self.x()}, mscratch, {self.x()}")
        elif k < 0.985:
            self.emit(f".2byte {r.choice(HINTS)}")
        elif k < 0.992:
            if self.traps:
                self.emit(r.choice(TRAPS))
        elif depth == 0:
            lbl, skip = self.new_label(), self.new_label()
            self.emit(f"jal x0, {skip}")
            self.out.append(f"{lbl}:")
            for _ in range(r.randint(1, 4)):
                self.one(depth + 1)
            self.emit("jalr x0, 0(x30)")
            self.out.append(f"{skip}:")
            self.emit(f"la x30, {lbl}")
            self.emit("jalr x30, 0(x30)")  # call: the link lands in x30 (free outside loops), the return uses it

    def program(self):
        r = self.r
        head = """    .section .text.init
    .globl _start
_start:
    la t0, trap
    csrw mtvec, t0
    li t0, 0x6000
    csrs mstatus, t0
    la x31, buffer
    la x28, traplog
"""
        body = []
        for i in range(64):
            body.append(f"    li t0, 0x{self.value(SPECIAL_X):08x}")
            body.append(f"    sw t0, {4 * i}(x31)")
        for reg in GPRS:
            body.append(f"    li {reg}, 0x{self.value(SPECIAL_X):08x}")
        for reg in FPRS:
            body.append(f"    li t0, 0x{self.value(SPECIAL_F):08x}")
            body.append(f"    fmv.w.x {reg}, t0")
        body.append(f"    li t0, 0x{self.value(SPECIAL_X):08x}")
        body.append("    li x5, 0" if "x5" not in GPRS else f"    li x5, 0x{self.value(SPECIAL_X):08x}")
        body.append(f"    fsrmi {r.randint(0, 4)}")
        body.append("    csrwi fflags, 0")
        body.append("    csrr x27, minstret")
        for _ in range(self.length):
            self.one()
        body += self.out
        tail = """    csrr x29, minstret
    sub x29, x29, x27
    la x30, dump
    sw x29, 0(x30)
""" + "".join(f"    sw x{i}, {4 * i}(x30)\n" for i in range(1, 29) if i != 27) + \
            "".join(f"    fsw f{i}, {128 + 4 * i}(x30)\n" for i in range(32)) + """    csrr t0, fcsr
    sw t0, 256(x30)
    j print_all
"""
        return head + "\n".join(body) + "\n" + tail + EPILOGUE


EPILOGUE = """
# Prints 65 words of dump (instret delta, x1..x28, f0..f31, fcsr), 64 buffer words and the trap log (count,
# then mcause and mepc of up to 48 traps) as hex lines.
print_all:
    la s0, dump
    li s1, 65
    call print_words
    la s0, buffer
    li s1, 64
    call print_words
    la s0, traplog + 8
    li s1, 98
    call print_words
    li t0, 0x100000
    li t1, 0x5555
    sw t1, 0(t0)
1:  j 1b
print_words:
    li t2, 0x10000000
2:  lw a0, 0(s0)
    li a1, 8
3:  srli a2, a0, 28
    slli a0, a0, 4
    li a3, 10
    blt a2, a3, 4f
    addi a2, a2, 39
4:  addi a2, a2, 48
    sb a2, 0(t2)
    addi a1, a1, -1
    bnez a1, 3b
    li a2, 10
    sb a2, 0(t2)
    addi s0, s0, 4
    addi s1, s1, -1
    bnez s1, 2b
    ret
# Resumable trap handler: logs mcause and mepc, skips the trapping instruction (2 or 4 bytes by its low
# bits), restores t0/t1 and returns. More than 48 traps: the fatal handler below ends the program. mtvec
# keeps the mode in its low bits: the handler is 4-byte aligned.
    .align 2
trap:
    sw x5, 0(x28)
    sw x6, 4(x28)
    lw x5, 8(x28)
    li x6, 48
    bgeu x5, x6, trap_fatal
    addi x5, x5, 1
    sw x5, 8(x28)
    slli x5, x5, 3
    add x5, x5, x28
    csrr x6, mcause
    sw x6, 8(x5)
    csrr x6, mepc
    sw x6, 12(x5)
    lhu x5, 0(x6)
    andi x5, x5, 3
    addi x6, x6, 2
    addi x5, x5, -3
    bnez x5, 6f
    addi x6, x6, 2
6:  csrw mepc, x6
    lw x5, 0(x28)
    lw x6, 4(x28)
    mret
trap_fatal:
    li t2, 0x10000000
    li a2, 84
    sb a2, 0(t2)
    csrr a0, mcause
    la s0, dump
    sw a0, 0(s0)
    csrr a0, mepc
    sw a0, 4(s0)
    li s1, 2
    call print_words
    li t0, 0x100000
    li t1, 0x33333
    sw t1, 0(t0)
5:  j 5b
    .data
    .align 6
buffer: .fill 64, 4, 0
dump: .fill 80, 4, 0
traplog: .fill 104, 4, 0
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--length", type=int, default=400, help="random instructions (before loop/branch expansion)")
    ap.add_argument("--traps", action="store_true",
                    help="also ecall/ebreak/illegal instructions the handler resumes from (QEMU 7.2 -icount counts "
                         "trapping ebreak and illegal instructions in minstret, unlike the spec and rviss)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    with open(a.output, "w", encoding="utf-8") as fh:
        fh.write(f"# Generated by gen_random.py --seed {a.seed} --length {a.length}{' --traps' if a.traps else ''}\n")
        fh.write(Gen(a.seed, a.length, a.traps).program())


if __name__ == "__main__":
    main()
