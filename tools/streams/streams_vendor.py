# SPDX-License-Identifier: MIT
"""Streams that follow mtx512/rk3588-npu (matmul) and the vendor runtime's DPU-only tasks."""
import numpy as np

import layouts as L
import mtx512_matmul as mm
import rkregs as rk
import refcalc as ref
import tasklist
import vendor_dpu as vd
from stream import Stream, as_bytes

MTX_SOURCES = [
    "mtx512/rk3588-npu: src/npu_matmul.c (gen_matmul_task, gen_matmul_int8, gen_matmul_fp16, feature_data, "
    "weight_int8, weight_fp16)",
    "mtx512/rk3588-npu: include/npu_hw.h (NPUOP, PC_ENABLE_*, precision codes)",
    "mtx512/rk3588-npu: tests/matmul_int8.c, tests/matmul_fp16.c (rknpu_task and rknpu_submit values)",
    "rockchip-linux/kernel: drivers/rknpu/rknpu_job.c (rknpu_job_subcore_commit_pc)",
]
VCAP_SOURCES = [
    "wtwver/npu: dump/add_1x1.h, dump/mul_int8.h (vendor-runtime regcmd buffers, decoded)",
    "Rockchip RK3588 TRM V1.0 Part 1 ch. 36 (text copy: wtwver/npu docs/rk3588_trm.md)",
    "rockchip-linux/kernel: drivers/rknpu/rknpu_job.c (rknpu_job_subcore_commit_pc)",
]


def rknpu_iovas(names):
    """One page per buffer, handed out from the top of the 4 GiB IOVA window downwards, in
    allocation order (rknpu_iommu_dma_alloc_iova below a 4 GiB limit)."""
    top = 0x1_0000_0000
    return {n: top - 0x1000 * (i + 1) for i, n in enumerate(names)}


def mtx_int8_values(rng, shape):
    """mtx512's rand_int(): (int8)((rand() % 255) + 1), i.e. -128..127 without 0."""
    v = rng.integers(1, 256, size=shape)
    return np.where(v > 127, v - 256, v).astype(np.int8)


def mtx_stream(name, m, k, n, fp16, rng):
    d = mm.matmul_params(m, k, n, fp16)
    iova = rknpu_iovas(["regcmd", "tasks", "input", "weights", "output"])
    words = mm.matmul_task(d, iova["input"], iova["weights"], iova["output"])
    if fp16:
        # tests/matmul_fp16.c: whole numbers 0..9, exact in fp16 and in any fp32 accumulation order.
        a = rng.integers(0, 10, size=(m, k)).astype(np.float16)
        b = rng.integers(0, 10, size=(n, k)).astype(np.float16)
        c = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
        assert np.all(c == (a.astype(np.float32) @ b.astype(np.float32).T))
        feat, wts, out = L.mtx_feature(a, 8), L.mtx_weights_fp16(b), L.mtx_output(c)
        desc = (f"fp16 matmul [{m}x{k}] x [{n}x{k}]^T with fp32 output (OUT_PRECISION 5): A as a W=1, H=M, "
                f"C=K cube with C2 8, B as [N/16][K/32][16][32], C as [N/4][M][4] fp32")
    else:
        a = mtx_int8_values(rng, (m, k))
        b = mtx_int8_values(rng, (n, k))
        c = ref.matmul_int(a, b).astype(np.int32)
        feat, wts, out = L.mtx_feature(a, 16), L.mtx_weights_int8(b), L.mtx_output(c)
        desc = (f"int8 matmul [{m}x{k}] x [{n}x{k}]^T with int32 output (OUT_PRECISION 4): A as a W=1, H=M, "
                f"C=K cube with C2 16, B as [N/32][K/32][32][32], C as [N/4][M][4] int32")
    en = 0x08 | 0x04 | 0x01
    tl = [tasklist.task(en, mm.REGCFG_AMOUNT, iova["regcmd"])]
    sub = tasklist.submit(task_number=1, core_mask=1, subcore_task=[(0, 1), (1, 0), (2, 0)])
    st = Stream(name=name, producer="mtx512/rk3588-npu (board-tested on RK3588, vendor kernel 5.10)",
                sources=MTX_SOURCES, soc="rk3588", description=desc, base=iova["regcmd"], words=words, tasks=1,
                loads=[("input.bin", iova["input"], as_bytes(feat)), ("weights.bin", iova["weights"], as_bytes(wts))],
                dumps=[("output.bin", iova["output"], as_bytes(out), None)],
                task_list=tl, submit=sub, core_mask="0",
                chains=[{"core": 0, "tasks": [0], "first": f"0x{iova['regcmd']:08x}"}],
                notes=["regcmd.bin is mtx512's 112-word array: 108 entries then 4 zero words; regcfg_amount "
                       "104 as the tests compute it (the kernel adds the 4 PC entries)",
                       "addresses: rknpu IOVAs handed out top-down below 4 GiB in mtx512's allocation order"])
    st.checks = {"surf_stride": d["surf_stride"], "data_entries": d["data_entries"], "surf_add": d["surf_add"]}
    return st


def mtx_matmul_int8(rng):
    return mtx_stream("mtx_matmul_int8", 8, 64, 32, False, rng)


def mtx_matmul_fp16(rng):
    return mtx_stream("mtx_matmul_fp16", 4, 64, 16, True, rng)


def vendor_dpu_add_fp16(rng):
    w, h, c = 4, 4, 16
    a = rng.integers(-8, 9, size=(h, w, c)).astype(np.float16)
    b = rng.integers(-8, 9, size=(h, w, c)).astype(np.float16)
    s = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    surf = w * h * 16  # fp16 NC1HWC2, C2 8: 16 bytes per pixel
    nbytes = surf * (c // 8)
    addr = {"a": 0xFFFF1000, "b": 0xFFFF1000 + nbytes, "sum": 0xFFFF1000 + 2 * nbytes,
            "out": 0xFFFF1000 + 3 * nbytes}
    base = 0xFFFF2000
    t0 = vd.DpuTask(w, h, c, src=addr["a"], dst=addr["sum"], fp16=True, ew_src=addr["b"], ew_algo=2)
    t1 = vd.DpuTask(w, h, c, src=addr["sum"], dst=addr["out"], fp16=True)
    words, taddrs, amounts = vd.chain([vd.task_regs(t0), vd.task_regs(t1)], base, vd.ENABLE_MASK)
    tl = [tasklist.task(vd.ENABLE_MASK, n, ta) for n, ta in zip(amounts, taddrs)]
    sub = tasklist.submit(task_number=2, core_mask=1, subcore_task=[(0, 2)])
    pk = lambda x: as_bytes(L.pack_nc1hwc2(x, 8))  # noqa: E731
    return Stream(
        name="vendor_dpu_add_fp16", producer="vendor runtime (librknnrt) DPU-only tasks, as captured",
        sources=VCAP_SOURCES + ["bminor/mesa-mesa: src/gallium/drivers/rocket/rkt_regcmd.c (per-pixel EW mode "
                                "of the fused add)"],
        soc="rk3588",
        description="two flying-mode DPU tasks in one chain: task 0 adds two fp16 4x4x16 cubes read by MRDMA and "
                    "ERDMA (EW ALU add, EDATA_SIZE 2, convert scale 1, FP32TOFP16_EN), task 1 copies the sum "
                    "(EW bypassed); DPU/DPU_RDMA registers only, enable 0x18, 73-entry tasks padded with zero "
                    "words to 80 entries, in-stream amount 36",
        base=base, words=words, tasks=2,
        loads=[("a.bin", addr["a"], pk(a)), ("b.bin", addr["b"], pk(b))],
        dumps=[("sum.bin", addr["sum"], pk(s), None), ("out.bin", addr["out"], pk(s), None)],
        task_list=tl, submit=sub, core_mask="0",
        chains=[{"core": 0, "tasks": [0, 1], "first": f"0x{taddrs[0]:08x}"}],
        notes=["the capture's add is 1x1 (per-channel ERDMA mode equals per-pixel there); this 4x4 add uses "
               "the per-pixel mode (EW_DATA_MODE 1, ERDMA_DATA_MODE 1) as Mesa's fused add programs it",
               "values are small integers: the fp16 sums are exact"])


def dpu_transpose_int8(rng):
    w, h, c = 4, 2, 24
    x = rng.integers(-128, 128, size=(h, w, c)).astype(np.int8)
    src, dst, base = 0xFFFF4000, 0xFFFF4800, 0xFFFF5000
    t = vd.DpuTask(w, h, c, src=src, dst=dst, transpose=True)
    words, taddrs, amounts = vd.chain([vd.task_regs(t)], base, vd.ENABLE_MASK)
    tl = [tasklist.task(vd.ENABLE_MASK, amounts[0], taddrs[0])]
    sub = tasklist.submit(task_number=1, core_mask=1, subcore_task=[(0, 1)])
    return Stream(
        name="dpu_transpose_int8", producer="vendor runtime DPU-only task register set (as captured) with TP_EN",
        sources=VCAP_SOURCES + ["bminor/mesa-mesa: src/gallium/drivers/rocket/registers.xml (TP_EN, TP_PRECISION, "
                                "SIZE_C_WDMA positions)"],
        soc="rk3588",
        description="one flying-mode DPU task reading an int8 4x2x24 NC1HWC2 cube (2 surfaces, channels 24..31 "
                    "padding) with DPU_FEATURE_MODE_CFG.TP_EN = 1, WDMA_SIZE_0.SIZE_C_WDMA = 23, TP_PRECISION 0",
        base=base, words=words, tasks=1,
        loads=[("input.bin", src, as_bytes(L.pack_nc1hwc2(x, 16)))],
        dumps=[("output.bin", dst, as_bytes(L.nhwc_bytes(x)), None)],
        task_list=tl, submit=sub, core_mask="0",
        chains=[{"core": 0, "tasks": [0], "first": f"0x{taddrs[0]:08x}"}],
        assumptions=["A-TP: with TP_EN the WDMA writes the cube channel-last (NHWC: per pixel in row-major order, "
                     "SIZE_C_WDMA + 1 consecutive TP_PRECISION-wide elements) instead of NC1HWC2; the TRM lists "
                     "'transpose, data format conversion' among the DPU functions, the element order is our "
                     "assumption (docs/rknpu-register-semantics.md section 14)"])


# The vendor runtime's own fp16 matmul task (rknn_matmul_api demo, M 4, K 64, N 32), as captured in
# wtwver/npu: dump/rknn_matmul_api_demo_2.txt: (offset, value) of its 108 register writes, in order.
VENDOR_MATMUL_CAPTURE = [
    (0x1040, 0xB1), (0x1104, 0), (0x1100, 0), (0x100C, 0x20000120), (0x4004, 0xE), (0x100C, 0x20000120),
    (0x1010, 0x50), (0x1014, 0x9), (0x1020, 0x00010004), (0x1024, 0x003F0040), (0x1028, 0x1), (0x102C, 0x4),
    (0x1030, 0x1000), (0x1034, 0x80), (0x1038, 0x01010020), (0x1040, 0xB1), (0x1044, 0x2), (0x104C, 0xB),
    (0x1050, 0x10000), (0x1054, 0x10000), (0x1058, 0x10000), (0x105C, 0x10000), (0x1060, 0), (0x1064, 0),
    (0x1068, 0), (0x1070, 0xFFFB4000), (0x1074, 0), (0x1078, 0x000F000F), (0x107C, 0x8), (0x1080, 0),
    (0x1084, 0x00010004), (0x1088, 0x40), (0x1100, 0), (0x1104, 0), (0x1110, 0xFFFB3000)] + \
    [(0x1140 + 4 * i, 0) for i in range(16)] + [
    (0x1180, 0), (0x1184, 0), (0x3010, 0x201), (0x3014, 0x30000), (0x3018, 0x1F), (0x301C, 0), (0x3030, 0),
    (0x400C, 0x1E4), (0x4010, 0xA8000002), (0x4014, 0), (0x4020, 0xFFFB8000), (0x4024, 0x10), (0x4030, 0),
    (0x4034, 0x3), (0x4038, 0x70007), (0x403C, 0x1F001F), (0x4040, 0x53), (0x4044, 0), (0x4048, 0), (0x404C, 0),
    (0x4050, 0x36E), (0x4054, 0), (0x4058, 0x1F), (0x405C, 0x30000), (0x4060, 0x53), (0x4064, 0), (0x4068, 0),
    (0x406C, 0), (0x4070, 0x383), (0x4074, 0), (0x4078, 0x1), (0x407C, 0), (0x4080, 0), (0x4084, 0x1),
    (0x4088, 0)] + [(0x4090 + 4 * i, 0) for i in range(8)] + [(0x40C0, 0x40), (0x40C4, 0)] + \
    [(0x4100 + 4 * i, 0) for i in range(12)]
VENDOR_MATMUL_TASK = dict(enable_mask=0xD, int_mask=0x300, int_clear=0x1FFFF, regcfg_amount=108,
                          regcfg_offset=0, regcmd_addr=0xFF8FF000)


def vendor_matmul_regs(m, k, n, inp, wts, out):
    """Register writes of the vendor's fp16 x fp16 -> fp32 matmul task, values derived from M, K, N
    the way the capture shows them (its 4, 64, 32 give exactly VENDOR_MATMUL_CAPTURE)."""
    assert m % 4 == 0 and k % 32 == 0 and n % 16 == 0
    fd_banks = -(-(m * k * 2) // mm.CBUF_BANK_SIZE)
    cbuf = ((mm.CBUF_BANKS - fd_banks) << 4) | fd_banks
    con1 = (1 << 29) | (2 << 7) | (2 << 4)  # GROUP_LINE_OFF, fp16 proc and input
    line = 32 // 4                            # one pixel of 16 fp16 (32 bytes) per row, row bytes / 4
    notch = n * 4 // 16 - 1                   # output row of N fp32 in 16-byte units, minus the width
    regs = [(0x1040, cbuf), (0x1104, 0), (0x1100, 0), (0x100C, con1), (0x4004, 0xE), (0x100C, con1),
            (0x1010, (m + 1) << 4), (0x1014, (1 << 3) | 1), (0x1020, (1 << 16) | m), (0x1024, ((k - 1) << 16) | k),
            (0x1028, 1), (0x102C, m), (0x1030, k * 2 * n), (0x1034, k * 2), (0x1038, (1 << 24) | (1 << 16) | n),
            (0x1040, cbuf), (0x1044, -(-(k * 2) // 64)), (0x104C, 0xB)] + \
        [(0x1050 + 4 * i, 1 << 16) for i in range(4)] + [
            (0x1060, 0), (0x1064, 0), (0x1068, 0), (0x1070, inp), (0x1074, 0), (0x1078, 0x000F000F),
            (0x107C, line), (0x1080, line * (m // 4 - 1)), (0x1084, (1 << 16) | m), (0x1088, k), (0x1100, 0),
            (0x1104, 0), (0x1110, wts)] + [(0x1140 + 4 * i, 0) for i in range(16)] + [
            (0x1180, 0), (0x1184, 0), (0x3010, (2 << 8) | 1), (0x3014, (m - 1) << 16), (0x3018, n - 1), (0x301C, 0),
            (0x3030, 0), (0x400C, (15 << 5) | (2 << 1)), (0x4010, (5 << 29) | (2 << 26) | 2), (0x4014, 0),
            (0x4020, out), (0x4024, 1 << 4), (0x4030, 0), (0x4034, m - 1), (0x4038, (notch << 16) | notch),
            (0x403C, ((n - 1) << 16) | (n - 1)), (0x4040, 0x53), (0x4044, 0), (0x4048, 0), (0x404C, 0),
            (0x4050, (3 << 8) | (3 << 5) | (3 << 2) | (1 << 1)), (0x4054, 0), (0x4058, n - 1), (0x405C, (m - 1) << 16),
            (0x4060, 0x53), (0x4064, 0), (0x4068, 0), (0x406C, 0), (0x4070, 0x383), (0x4074, 0), (0x4078, 1),
            (0x407C, 0), (0x4080, 0), (0x4084, 1), (0x4088, 0)] + [(0x4090 + 4 * i, 0) for i in range(8)] + \
        [(0x40C0, (1 * 4) << 4), (0x40C4, 0)] + [(0x4100 + 4 * i, 0) for i in range(12)]
    assert len(regs) == 108
    return regs


def vendor_matmul_fp16(rng):
    m, k, n = 4, 64, 32
    addr = {"input": 0xFFFB4000, "weights": 0xFFFB3000, "output": 0xFFFB8000}
    base = VENDOR_MATMUL_TASK["regcmd_addr"]
    regs = vendor_matmul_regs(m, k, n, addr["input"], addr["weights"], addr["output"])
    words = [rk.entry(o, v) for o, v in regs] + [rk.NOP, rk.reg("PC_REGISTER_AMOUNTS", 0), rk.SYNC_ENTRY,
                                                   rk.op_enable_entry(0xD)]
    a = rng.integers(0, 10, size=(m, k)).astype(np.float16)
    b = rng.integers(0, 10, size=(n, k)).astype(np.float16)
    c = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    feat = L.mtx_feature(a, 16)   # matmul A "perf" layout [K/16][M][16] (32-byte rows, LINE_STRIDE 8)
    tl = [tasklist.task(0xD, 108, base)]
    sub = tasklist.submit(task_number=1, core_mask=1, subcore_task=[(0, 1)])
    return Stream(
        name="vendor_matmul_fp16", producer="vendor runtime (librknnrt rknn_matmul_api), as captured",
        sources=["wtwver/npu: dump/rknn_matmul_api_demo_2.txt (regcmd BO and struct rknpu_task of the vendor "
                 "matmul demo, rknpu driver 20231018)",
                 "Rockchip RKNPU User Guide RKNN API v1.5.2 (rockchip-linux/rknpu2: doc/), matmul layouts tables 4-7/4-8",
                 "Rockchip RK3588 TRM V1.0 Part 1 ch. 36 (DATA_CUBE_NOTCH_ADDR, DST_SURF_STRIDE)"],
        soc="rk3588",
        description="the vendor's own fp16 x fp16 -> fp32 matmul task, register for register (108 writes + tail, "
                    "its IOVAs, its rknpu_task: enable 0xd, int_mask 0x300, regcfg_amount 108): A with 16 fp16 per "
                    "32-byte row (LINE_STRIDE 8, SURF_STRIDE 0), GROUP_LINE_OFF, output written row-major [M][N] "
                    "fp32 through DST_SURF_STRIDE 1 and DATA_CUBE_NOTCH 7, SURFACE_ADD 4",
        base=base, words=words, tasks=1,
        loads=[("input.bin", addr["input"], as_bytes(feat)),
               ("weights.bin", addr["weights"], as_bytes(L.mtx_weights_fp16(b)))],
        dumps=[("output.bin", addr["output"], as_bytes(c), None)],
        task_list=tl, submit=sub, core_mask="0",
        chains=[{"core": 0, "tasks": [0], "first": f"0x{base:08x}"}],
        assumptions=["A-MM: the matmul A operand is the user guide's RK3588 'perf' layout [K/16][M][16] and the "
                     "output is C row-major [M][N]; the capture gives the register values (LINE_STRIDE 8 = 32-byte "
                     "rows, DST_SURF_STRIDE 1 = 16 bytes between 4-channel groups, NOTCH 7 = rows of 8 x 16 bytes), "
                     "the element layouts are inferred from them and from the user guide"])
