# SPDX-License-Identifier: MIT
"""DPU-only (flying mode) tasks with the register set, order and values of the vendor runtime's
captures (wtwver/npu: dump/add_1x1.h, dump/mul_int8.h; docs/rknpu-register-semantics.md
sections 10 and 16): DPU and DPU_RDMA registers only, 69 registers + the 4-entry tail, enable
mask DPU|DPU_RDMA (0x18), tasks padded with zero words to 64 bytes, in-stream amount
ceil((regs + 4) / 2) - 1.
"""
from dataclasses import dataclass

import rkregs as rk
from rkregs import PREC_FP16, PREC_INT8, fields, reg

ENABLE_MASK = rk.EN_DPU | rk.EN_DPU_RDMA  # 0x18 in the captures


@dataclass
class DpuTask:
    w: int
    h: int
    c: int
    src: int            # MRDMA source (RDMA_SRC_BASE_ADDR)
    dst: int            # DPU_DST_BASE_ADDR
    fp16: bool = False
    ew_src: int = 0     # ERDMA operand (0: no elementwise operand)
    ew_algo: int = 2    # EW_ALU_ALGO (2 add)
    transpose: bool = False


def task_regs(t):
    """Register writes of one task (without the tail), in the captures' order."""
    prec = PREC_FP16 if t.fp16 else PREC_INT8
    pp = fields("S_POINTER", POINTER_PP_MODE=1, EXECUTER_PP_EN=1, POINTER_PP_EN=1)
    mode = fields("DPU_FEATURE_MODE_CFG", BURST_LEN=15, OUTPUT_MODE=2, FLYING_MODE=1)
    if t.transpose:
        mode |= fields("DPU_FEATURE_MODE_CFG", TP_EN=1)
    wdma0 = fields("DPU_WDMA_SIZE_0", CHANNEL_WDMA=t.c - 1)
    if t.transpose:
        wdma0 |= fields("DPU_WDMA_SIZE_0", SIZE_C_WDMA=t.c - 1, TP_PRECISION=1 if t.fp16 else 0)
    e = [reg("DPU_S_POINTER", pp), reg("RDMA_S_POINTER", pp),
         reg("DPU_FEATURE_MODE_CFG", mode),
         reg("DPU_DATA_FORMAT", fields("DPU_DATA_FORMAT", OUT_PRECISION=prec, IN_PRECISION=prec,
                                       PROC_PRECISION=prec)),
         reg("DPU_OFFSET_PEND", 0),
         reg("DPU_DST_BASE_ADDR", t.dst),
         reg("DPU_DST_SURF_STRIDE", fields("DPU_DST_SURF_STRIDE", DST_SURF_STRIDE=t.w * t.h)),
         reg("DPU_DATA_CUBE_WIDTH", t.w - 1), reg("DPU_DATA_CUBE_HEIGHT", t.h - 1),
         reg("DPU_DATA_CUBE_NOTCH_ADDR", 0),
         reg("DPU_DATA_CUBE_CHANNEL", fields("DPU_DATA_CUBE_CHANNEL", ORIG_CHANNEL=t.c - 1, CHANNEL=t.c - 1)),
         reg("DPU_BS_CFG", fields("DPU_xx_CFG", RELU_BYPASS=1, MUL_BYPASS=1, ALU_BYPASS=1, BYPASS=1)),
         reg("DPU_BS_ALU_CFG", 0), reg("DPU_BS_MUL_CFG", 0), reg("DPU_BS_RELUX_CMP_VALUE", 0),
         reg("DPU_BS_OW_CFG", fields("DPU_BS_OW_CFG", OD_BYPASS=1)), reg("DPU_BS_OW_OP", 0),
         reg("DPU_WDMA_SIZE_0", wdma0),
         reg("DPU_WDMA_SIZE_1", fields("DPU_WDMA_SIZE_1", HEIGHT_WDMA=t.h - 1, WIDTH_WDMA=t.w - 1)),
         reg("DPU_BN_CFG", fields("DPU_xx_CFG", RELU_BYPASS=1, MUL_BYPASS=1, ALU_BYPASS=1, BYPASS=1)),
         reg("DPU_BN_ALU_CFG", 0), reg("DPU_BN_MUL_CFG", 0), reg("DPU_BN_RELUX_CMP_VALUE", 0)]
    if t.ew_src:
        # The capture's fp16 add: EW stage on, operand from memory, input convert on with scale 1.
        # The capture is 1x1 so its ERDMA runs per channel; a W x H cube needs the per-pixel mode,
        # programmed as Mesa programs its fused add (EW_DATA_MODE 1, ERDMA_DATA_MODE 1).
        size = 2 if t.fp16 else 1
        ew = fields("DPU_EW_CFG", EW_DATA_MODE=1, EDATA_SIZE=size, EW_ALU_ALGO=t.ew_algo, EW_RELU_BYPASS=1,
                    EW_LUT_BYPASS=1, EW_OP_SRC=1)
    else:
        ew = fields("DPU_EW_CFG", EW_RELU_BYPASS=1, EW_OP_CVT_BYPASS=1, EW_LUT_BYPASS=1, EW_OP_BYPASS=1,
                    EW_BYPASS=1)
    e += [reg("DPU_EW_CFG", ew), reg("DPU_EW_CVT_OFFSET_VALUE", 0),
          reg("DPU_EW_CVT_SCALE_VALUE", fields("DPU_EW_CVT_SCALE_VALUE", EW_OP_CVT_SCALE=1)),
          reg("DPU_EW_RELUX_CMP_VALUE", 0), reg("DPU_OUT_CVT_OFFSET", 0),
          reg("DPU_OUT_CVT_SCALE", fields("DPU_OUT_CVT_SCALE", FP32TOFP16_EN=1 if t.fp16 else 0, OUT_CVT_SCALE=1)),
          reg("DPU_OUT_CVT_SHIFT", 0)]
    e += [reg(f"DPU_EW_OP_VALUE_{i}", 0) for i in range(8)]
    e += [reg("DPU_SURFACE_ADD", fields("DPU_SURFACE_ADD", SURF_ADD=t.w * t.h)), reg("DPU_40C4", 0)]
    e += [reg(n, 0) for n in rk.LUT_REGS]
    if t.ew_src:
        erdma = fields("RDMA_ERDMA_CFG", ERDMA_DATA_MODE=1, ERDMA_DATA_SIZE=2 if t.fp16 else 1)
        ew_stride = fields("RDMA_EW_SURF_STRIDE", EW_SURF_STRIDE=t.w * t.h)
    else:
        erdma = fields("RDMA_ERDMA_CFG", ERDMA_DISABLE=1)
        ew_stride = 0
    rmode = fields("RDMA_FEATURE_MODE_CFG", BURST_LEN=15, FLYING_MODE=1)
    if t.fp16:
        rmode |= fields("RDMA_FEATURE_MODE_CFG", IN_PRECISION=PREC_FP16, PROC_PRECISION=PREC_FP16,
                        MRDMA_FP16TOFP32_EN=1)
    e += [reg("RDMA_DATA_CUBE_WIDTH", t.w - 1), reg("RDMA_DATA_CUBE_HEIGHT", t.h - 1),
          reg("RDMA_DATA_CUBE_CHANNEL", t.c - 1), reg("RDMA_SRC_BASE_ADDR", t.src),
          reg("RDMA_BRDMA_CFG", 0), reg("RDMA_BS_BASE_ADDR", 0), reg("RDMA_NRDMA_CFG", 0),
          reg("RDMA_BN_BASE_ADDR", 0), reg("RDMA_ERDMA_CFG", erdma), reg("RDMA_EW_BASE_ADDR", t.ew_src),
          reg("RDMA_EW_SURF_STRIDE", ew_stride), reg("RDMA_FEATURE_MODE_CFG", rmode),
          reg("RDMA_SRC_DMA_CFG", 0), reg("RDMA_SURF_NOTCH", 0), reg("RDMA_PAD_CFG", 0),
          reg("RDMA_WEIGHT", fields("RDMA_WEIGHT", E_WEIGHT=1, N_WEIGHT=1, B_WEIGHT=1, M_WEIGHT=1)),
          reg("RDMA_EW_SURF_NOTCH", 0)]
    assert len(e) == 69, len(e)
    return e


def vendor_amount(regs):
    """In-stream / kick amount of a task with `regs` entries before its tail (VCAP, RKNPU-JOB)."""
    return -(-(regs + 4) // 2) - 1


def chain(tasks_regs, base, enable_mask):
    """Tasks back to back at 64-byte boundaries, zero padded, each linked to the next; the last
    ends the chain with a zero word and amount 0. Returns (words, task addresses, regcfg amounts)."""
    blocks = [regs + [0, 0, rk.SYNC_ENTRY, rk.op_enable_entry(enable_mask)] for regs in tasks_regs]
    sizes = [rk.align(len(b) * 8, 64) for b in blocks]
    addrs, off = [], 0
    for s in sizes:
        addrs.append(base + off)
        off += s
    words = []
    for i, b in enumerate(blocks):
        if i + 1 < len(blocks):
            b[-4] = reg("PC_BASE_ADDRESS", addrs[i + 1])
            b[-3] = reg("PC_REGISTER_AMOUNTS", vendor_amount(len(tasks_regs[i + 1])))
        else:
            b[-3] = reg("PC_REGISTER_AMOUNTS", 0)
        words += b + [0] * (sizes[i] // 8 - len(b))
    return words, addrs, [len(r) for r in tasks_regs]
