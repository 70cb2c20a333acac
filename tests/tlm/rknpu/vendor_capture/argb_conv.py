# SPDX-License-Identifier: MIT
"""A vendor-runtime capture rebuilt register for register, and checked against the silicon's output.

Source (public): allbilly/rk3588, experimental/rknn/ (gdb capture of librknnrt 2.3.2, rknpu driver
20231018, RK3588): an fp16 Conv2D with input (1,3,5,7), weight (6,3,2,3), no bias, stride 1, no
padding, output (1,6,4,5). The log lists the struct rknpu_task array (11 tasks), every non-zero
regcmd entry of the weight buffer with its IOVA, the weight bytes, the input bytes, the input as
the test printed it, the output the CPU computed and the output the NPU wrote ("Actual Output
(RKNN)"). Entries the log leaves out are zero-valued writes; their registers follow the vendor's
register order (the same order as the vendor matmul capture, tools/streams/streams_vendor.py
VENDOR_MATMUL_CAPTURE), and the counts between the listed entries match that order exactly.

What the capture exercises: ARGB_IN 10 (3-channel "argb" input, fp16, NHWC pixels of 6 bytes in
rows of LINE_STRIDE = 8 pixels), NONALIGN_DMA and GROUP_LINE_OFF, CVT bypass with CVT_CON5 0xfff,
DCOMP_ADDR0 set without decompression, DATAOUT_CHANNEL 15 above WEIGHT_KERNELS 6, fp16 weights in
16-kernel groups ([position][kernel][8 channels]), the vendor's one-, two- and three-core task sets
(CONV_CON2 bits 28/29 and REGISTER_AMOUNTS bits 16/17 set on the split ones), and the PPU task the
runtime appends to every chain (a 1x1x32 int8 max "pool" from memory to memory, INDEX_ADD 1,
RECIP 0, PPU_RDMA IN_PRECISION 1 = 8-bit).

usage: argb_conv.py --npusim PATH [--out DIR]   (exit 0 when all three task sets pass)
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

GEM = 0xFFEC8000        # weight buffer: weights, two 32-byte PPU scratch areas, then the regcmd
REGCMD = 0xFFEC8A40
INPUT = 0xFFEC5000
OUTPUT = 0xFFEC4000
OUT_BYTES = 640         # NC1HWC2, C2 = 8: 2 surfaces of 4 x 5 x 16 bytes

# The vendor's register order of a conv task (108 writes; the tasks after the first drop the
# first four) and the 26 writes of its PPU task.
CONV_ORDER = ([0x1040, 0x1104, 0x1100, 0x100C, 0x4004, 0x100C, 0x1010, 0x1014, 0x1020, 0x1024, 0x1028, 0x102C,
               0x1030, 0x1034, 0x1038, 0x1040, 0x1044, 0x104C, 0x1050, 0x1054, 0x1058, 0x105C, 0x1060, 0x1064,
               0x1068, 0x1070, 0x1074, 0x1078, 0x107C, 0x1080, 0x1084, 0x1088, 0x1100, 0x1104, 0x1110] +
              [0x1140 + 4 * i for i in range(16)] +
              [0x1180, 0x1184, 0x3010, 0x3014, 0x3018, 0x301C, 0x3030, 0x400C, 0x4010, 0x4014, 0x4020, 0x4024,
               0x4030, 0x4034, 0x4038, 0x403C, 0x4040, 0x4044, 0x4048, 0x404C, 0x4050, 0x4054, 0x4058, 0x405C,
               0x4060, 0x4064, 0x4068, 0x406C, 0x4070, 0x4074, 0x4078, 0x407C, 0x4080, 0x4084, 0x4088] +
              [0x4090 + 4 * i for i in range(8)] + [0x40C0, 0x40C4] + [0x4100 + 4 * i for i in range(12)])
assert len(CONV_ORDER) == 108
PPU_ORDER = [0x6004, 0x7004, 0x600C, 0x6010, 0x6014, 0x6018, 0x601C, 0x6020, 0x6024, 0x6034, 0x6038, 0x603C,
             0x6040, 0x6044, 0x6048, 0x6070, 0x607C, 0x6084, 0x60DC, 0x700C, 0x7010, 0x7014, 0x701C, 0x7024,
             0x7028, 0x7030]

TARGET = {0x0: 0x0101, 0x1: 0x0201, 0x3: 0x0801, 0x4: 0x1001, 0x5: 0x2001, 0x6: 0x4001, 0x7: 0x8001}


def entry(off, value):
    return (TARGET[off >> 12] << 48) | ((value & 0xFFFFFFFF) << 16) | off


SYNC = 0x0041000000000000


def op_enable(mask):
    return (0x0081 << 48) | (mask << 16) | 0x0008


# Non-zero values of the conv tasks, as the capture lists them.
CONV_COMMON = {0x1040: 0xB1, 0x100C: 0x6000A120, 0x4004: 0xE, 0x1014: 0x9, 0x1024: 0x00020008, 0x1028: 0x5,
               0x1030: 0x240, 0x1034: 0x60, 0x1038: 0x03020006, 0x104C: 0x1, 0x1050: 0x10000, 0x1054: 0x10000,
               0x1058: 0x10000, 0x105C: 0x10000, 0x1078: 0x000F000F, 0x107C: 0x8, 0x1080: 0x20, 0x1088: 0x8,
               0x1110: 0xFFEC8000, 0x1180: 0xFFF, 0x3010: 0x200, 0x3018: 0xF, 0x400C: 0x1E4, 0x4010: 0x48000002,
               0x4024: 0x140, 0x4030: 0x4, 0x403C: 0x0005000F, 0x4040: 0x53, 0x4050: 0x126, 0x4058: 0xF,
               0x4060: 0x53, 0x4070: 0x383, 0x4078: 0x1, 0x4084: 0x10001, 0x40C0: 0x280}


def conv_values(con2, in_h, out_h, feature, dst):
    v = dict(CONV_COMMON)
    v.update({0x1010: con2, 0x1020: (8 << 16) | in_h, 0x102C: 5 * out_h, 0x1044: 8 * in_h,
              0x1070: feature, 0x1084: (7 << 16) | in_h, 0x3014: ((out_h - 1) << 16) | 4, 0x4020: dst,
              0x4034: out_h - 1, 0x405C: ((out_h - 1) << 16) | 4})
    return v


PPU_VALUES = {0x6004: 0xE, 0x7004: 0xE, 0x6014: 0x1F, 0x6020: 0x1F, 0x6024: 0x11, 0x6070: 0xFFEC8240, 0x607C: 0x10,
              0x6084: 0x10, 0x60DC: 0x3, 0x7014: 0x1F, 0x701C: 0xFFEC8640, 0x7024: 0x10, 0x7028: 0x10, 0x7030: 0x1}

# (regcmd address, kind, values, next task address, in-stream REGISTER_AMOUNTS)
ROW = 48  # input row: 8 pixels x 3 channels x 2 bytes
TASKS = [
    (0xFFEC8A40, "conv108", conv_values(0x70, 5, 4, INPUT, OUTPUT), None, 0),
    (0xFFEC8DC0, "conv", conv_values(0x10000050, 3, 2, INPUT, OUTPUT), 0xFFEC9140, 0x1000E),
    (0xFFEC9140, "ppu", PPU_VALUES, None, 0),
    (0xFFEC9240, "conv", conv_values(0x10000050, 3, 2, INPUT + 2 * ROW, OUTPUT + 160), 0xFFEC95C0, 0x1000E),
    (0xFFEC95C0, "ppu", PPU_VALUES, None, 0),
    (0xFFEC96C0, "conv", conv_values(0x20000050, 3, 2, INPUT, OUTPUT), 0xFFEC9A40, 0x2000E),
    (0xFFEC9A40, "ppu", PPU_VALUES, None, 0),
    (0xFFEC9B40, "conv", conv_values(0x20000040, 2, 1, INPUT + 2 * ROW, OUTPUT + 160), 0xFFEC9EC0, 0x2000E),
    (0xFFEC9EC0, "ppu", PPU_VALUES, None, 0),
    (0xFFEC9FC0, "conv", conv_values(0x20000040, 2, 1, INPUT + 3 * ROW, OUTPUT + 240), 0xFFECA340, 0x2000E),
    (0xFFECA340, "ppu", PPU_VALUES, None, 0),
]
# A few entries as the capture shows them (address -> 64-bit word), to pin the reconstruction.
PINNED = {0xFFEC8A58: 0x02016000A120100C, 0xFFEC8B50: 0x0201FFEC80001110, 0xFFEC8BD8: 0x020100000FFF1180,
          0xFFEC8C08: 0x0801000000003030, 0xFFEC8D38: 0x10010000000040C4, 0xFFEC8DB8: 0x00810000000D0008,
          0xFFEC9100: 0x0101FFEC91400010, 0xFFEC9108: 0x01010001000E0014, 0xFFEC91B8: 0x4001FFEC82406070,
          0xFFEC9208: 0x8001000000017030, 0xFFEC9228: 0x0081000000600008, 0xFFEC92E8: 0x0201FFEC50601070,
          0xFFEC96D0: 0x0201200000501010, 0xFFEC9C10: 0x0201000700021084, 0xFFECA068: 0x0201FFEC50901070,
          0xFFECA188: 0x1001FFEC40F04020, 0xFFECA308: 0x01010002000E0014, 0xFFECA428: 0x0081000000600008,
          0xFFEC9D08: 0x1001FFEC40A04020, 0xFFEC8A80: 0x0201000800051020, 0xFFEC9B78: 0x020100000005102C}


def build_regcmd():
    words = {}
    for addr, kind, vals, nxt, amount in TASKS:
        order = PPU_ORDER if kind == "ppu" else CONV_ORDER if kind == "conv108" else CONV_ORDER[4:]
        body = [entry(o, vals.get(o, 0)) for o in order]
        tail = [entry(0x10, nxt) if nxt else 0, entry(0x14, amount), SYNC,
                op_enable(0x60 if kind == "ppu" else 0x0D)]
        for i, w in enumerate(body + tail):
            words[addr + 8 * i] = w
    end = max(words) + 8
    buf = bytearray(end - REGCMD)
    for a, w in words.items():
        struct.pack_into("<Q", buf, a - REGCMD, w)
    for a, w in PINNED.items():
        got = struct.unpack_from("<Q", buf, a - REGCMD)[0]
        assert got == w, f"0x{a:x}: rebuilt 0x{got:016x}, capture 0x{w:016x}"
    return bytes(buf)


# Input as printed (fp16 values, 6 significant digits identify them), channel-major [c][h][w].
INPUT_PRINTED = [
    ["0.609863 1.24023 2.28906 3.75977 5.64844 7.96094 10.6875", "1.50977 2.14062 3.18945 4.66016 6.55078 8.85938 11.5938",
     "3.00977 3.64062 4.69141 6.16016 8.04688 10.3594 13.0938", "5.10938 5.73828 6.78906 8.25781 10.1484 12.4609 15.1875",
     "7.80859 8.4375 9.49219 10.9609 12.8516 15.1562 17.8906"],
    ["1.12012 2.38086 4.48047 7.42188 11.2031 15.8203 21.2812", "2.91992 4.17969 6.28125 9.21875 13 17.625 23.0781",
     "5.92188 7.17969 9.28125 12.2188 16 20.625 26.0781", "10.1172 11.3828 13.4766 16.4219 20.2031 24.8125 30.2812",
     "15.5234 16.7812 18.875 21.8125 25.5938 30.2188 35.6875"],
    ["1.62988 3.51953 6.67188 11.0781 16.75 23.6875 31.875", "4.32812 6.21875 9.36719 13.7812 19.4531 26.375 34.5625",
     "8.82812 10.7188 13.8672 18.2812 23.9531 30.875 39.0625", "15.1328 17.0156 20.1719 24.5781 30.25 37.1875 45.375",
     "23.2344 25.125 28.2656 32.6875 38.3438 45.2812 53.4688"],
]
# Weight signs of the 36 16-byte entries ([position][kernel], channels 0..2 = sign, 3..7 = 0).
WEIGHT_SIGNS = [1, -1, 0, 1, -1, 0, -1, 0, 1, -1, 0, 1, 0, 1, -1, 0, 1, -1,
                -1, 0, 1, -1, 0, 1, 0, 1, -1, 0, 1, -1, 1, -1, 0, 1, -1, 0]
CPU_EXPECTED_ROW0 = {0: [6.29932, 8.82031, 11.3477, 13.8574, 16.3633], 1: [3.78271, 6.29688, 8.81641, 11.3535, 13.8672],
                     2: [-10.082, -15.1172, -20.1641, -25.2109, -30.2305]}
# The NPU's output as printed, channels 0..2 (3..5 printed identical), rows 0..3.
SILICON = {
    0: ["6.30078 8.82031 11.3438 13.8594 16.3594", "6.29688 8.82031 11.3359 13.8594 16.375",
        "6.29688 8.82031 11.3438 13.8594 16.375", "6.28906 8.8125 11.3359 13.8516 16.4062"],
    1: ["3.7832 6.29688 8.8125 11.3516 13.8672", "3.7793 6.30078 8.82812 11.3438 13.8594",
        "3.7793 6.30078 8.8125 11.3438 13.8516", "3.78906 6.29297 8.83594 11.3359 13.8516"],
    2: ["-10.0781 -15.1172 -20.1562 -25.2188 -30.2344", "-10.0781 -15.125 -20.1562 -25.1875 -30.2344",
        "-10.0781 -15.125 -20.1562 -25.2031 -30.2344", "-10.0781 -15.1094 -20.1719 -25.1875 -30.25"],
}


def tensors():
    x = np.array([[[float(v) for v in row.split()] for row in ch] for ch in INPUT_PRINTED], dtype=np.float16)
    img = np.zeros((5, 8, 3), dtype=np.float16)        # NHWC rows of 8 pixels
    img[:, :7, :] = x.transpose(1, 2, 0)
    ent = np.zeros((36, 8), dtype=np.float16)
    for e, s in enumerate(WEIGHT_SIGNS):
        ent[e, :3] = s
    w = np.zeros((6, 3, 2, 3))                          # [k][c][ky][kx] from [position][kernel]
    for pos in range(6):
        for k in range(6):
            w[k, :, pos // 3, pos % 3] = WEIGHT_SIGNS[pos * 6 + k]
    ref = np.zeros((6, 4, 5))
    xf = x.astype(np.float64)
    for k in range(6):
        for oy in range(4):
            for ox in range(5):
                ref[k, oy, ox] = np.sum(w[k] * xf[:, oy:oy + 2, ox:ox + 3])
    for k, row in CPU_EXPECTED_ROW0.items():
        assert np.allclose(ref[k, 0], row, atol=2e-3), (k, ref[k, 0], row)
        assert np.allclose(ref[k + 3, 0], row, atol=2e-3)
    sil = np.zeros((6, 4, 5), dtype=np.float16)
    for k in range(6):
        sil[k] = [[float(v) for v in r.split()] for r in SILICON[k % 3]]
    out = np.zeros((2, 4, 5, 8), dtype=np.float16)
    mask = np.zeros((2, 4, 5, 8, 2), dtype=np.uint8)
    out[0, :, :, :6] = sil.transpose(1, 2, 0)
    mask[0, :, :, :6, :] = 1
    return img.tobytes(), ent.tobytes(), out.tobytes(), mask.tobytes(), ref


def gem_bytes(weights):
    g = bytearray(REGCMD - GEM)
    g[0:len(weights)] = weights
    g[0x240:0x260] = b"\x01" * 32        # PPU destination (the capture shows 0x01 bytes there)
    g[0x640:0x660] = b"\x01" * 32        # PPU source
    return bytes(g)


def task_json(submit):
    ts = []
    for addr, kind, *_ in TASKS:
        conv = kind != "ppu"
        ts.append({"flags": 0, "op_idx": 1, "enable_mask": 0x0D if conv else 0x60, "int_mask": 0x300 if conv else 0xC00,
                   "int_clear": 0x1FFFF, "int_status": 0,
                   "regcfg_amount": 108 if kind == "conv108" else 104 if conv else 26, "regcfg_offset": 0,
                   "regcmd_addr": f"0x{addr:08x}"})
    return {"uapi": "rknpu: struct rknpu_task (40 B packed) and struct rknpu_submit", "submit": submit, "tasks": ts}


SETS = {  # name -> (task_number, core_mask, subcore_task[5], --core-mask, tasks run)
    "1core": (1, 1, [[0, 1], [0, 0], [0, 0], [0, 0], [0, 0]], "0", 1),
    "2core": (4, 3, [[1, 2], [3, 2], [0, 0], [0, 0], [0, 0]], "0_1", 4),
    "3core": (6, 7, [[0, 0], [0, 0], [5, 2], [7, 2], [9, 2]], "0_1_2", 6),
}


def write(out):
    os.makedirs(out, exist_ok=True)
    img, wts, exp, mask, _ = tensors()
    files = {"regcmd.bin": build_regcmd(), "gem.bin": gem_bytes(wts), "input.bin": img, "expected_output.bin": exp,
             "mask_output.bin": mask}
    for n, b in files.items():
        with open(os.path.join(out, n), "wb") as f:
            f.write(b)
    for name, (num, cm, sub, _, _) in SETS.items():
        submit = {"flags": 5, "timeout": 6000, "task_start": 0, "task_number": num, "task_counter": 0, "priority": 0,
                  "core_mask": cm, "task_base_addr": 0, "subcore_task": sub}
        with open(os.path.join(out, f"tasks_{name}.json"), "w") as f:
            json.dump(task_json(submit), f, indent=1)


def ulps(a, b):
    ia = np.frombuffer(a, dtype=np.int16).astype(np.int32)
    ib = np.frombuffer(b, dtype=np.int16).astype(np.int32)
    ia = np.where(ia < 0, -32768 - ia, ia)
    ib = np.where(ib < 0, -32768 - ib, ib)
    return np.abs(ia - ib)


def check(npusim, d):
    ok = True

    def run(args):
        p = subprocess.run([npusim] + args + ["--platform", "rk3588"], cwd=d, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout + p.stderr

    rc, out = run(["decode", "regcmd.bin"])
    unknown = out.count("<unknown")
    print(f"decode: exit {rc}, {unknown} unknown")
    ok &= rc == 0 and unknown == 0
    rc, out = run(["lint", "regcmd.bin", "--base", f"0x{REGCMD:x}"])
    summary = [ln for ln in out.splitlines() if "error(s)" in ln]
    print("lint:  ", summary[-1] if summary else out.strip()[:300])
    for ln in out.splitlines():
        if ln.startswith(("error", "warning")):
            print("       ", ln[:200])
    errors = re.search(r"(\d+) error\(s\)", summary[-1]) if summary else None
    ok &= rc == 0 and errors is not None and int(errors.group(1)) == 0
    with open(os.path.join(d, "expected_output.bin"), "rb") as f:
        exp = f.read()
    with open(os.path.join(d, "mask_output.bin"), "rb") as f:
        mask = np.frombuffer(f.read(), dtype=np.uint8)[::2] != 0
    for name, (_, _, _, cores, ntasks) in SETS.items():
        with tempfile.TemporaryDirectory() as work:
            dump = os.path.join(work, "out.bin")
            rc, out = run(["replay", "regcmd.bin", "--base", f"0x{REGCMD:x}", "--mode", "full", "--task-list",
                           f"tasks_{name}.json", "--core-mask", cores, "--load", f"gem.bin@0x{GEM:x}", "--load",
                           f"input.bin@0x{INPUT:x}", "--dump", f"0x{OUTPUT:x}:{OUT_BYTES}={dump}"])
            done = sum(int(x) for x in re.findall(r"(\d+) task\(s\) completed", out))
            if not os.path.exists(dump):
                print(f"replay {name}: exit {rc}, {done}/{ntasks} tasks, no dump\n{out[-600:]}")
                ok = False
                continue
            with open(dump, "rb") as f:
                got = f.read()
            u = ulps(got, exp)[mask]
            exact = int(np.sum(u == 0))
            print(f"replay {name}: exit {rc}, {done}/{ntasks} tasks, {exact}/{u.size} fp16 values equal to the "
                  f"silicon's, max {int(u.max())} ulp")
            if rc != 0 or done != ntasks:
                print(out[-800:])
            ok &= rc == 0 and done == ntasks and int(u.max()) <= 1
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--npusim", required=True)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.out:
        write(a.out)
        return 0 if check(a.npusim, a.out) else 1
    with tempfile.TemporaryDirectory(prefix="vcap_argb_") as d:
        write(d)
        return 0 if check(a.npusim, d) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
