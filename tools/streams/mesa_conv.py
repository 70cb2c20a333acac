# SPDX-License-Identifier: MIT
"""Convolution tasks written the way Mesa's rocket driver writes them.

Rules followed (docs/rknpu-register-semantics.md, sources MESA-TASK, MESA-CMD, MESA-ML,
MESA-COEF): channel padding (input to 16, output to 32, WEIGHT_KERNELS = ALIGN(OC, 2)), strides
in Mesa's units, 64-byte-entry DATA_ENTRIES, the 1-channel image mode, the row split when the
input exceeds the CBUF, the register list and order of fill_first_regcmd, 64-byte task alignment
and the chain patching of compile_operation. Our own code; the arithmetic mirrors Mesa's so that
the register values are the ones Mesa would program for the same operation.
"""
from dataclasses import dataclass, field

import numpy as np

import rkregs as rk
from rkregs import align, div_up, fields, reg

CBUF_BANKS = 12
CBUF_ENTRIES_PER_BANK = 256
CBUF_ENTRY_SIZE = 128
FEATURE_ATOMIC = 16
ATOMIC_K = 16


@dataclass
class ConvOp:
    """A quantized (TFLite uint8, asymmetric) convolution, square input and kernel."""
    in_hw: int
    in_c: int
    out_c: int
    k: int
    stride: int
    padding_same: bool
    zp_in: int
    s_in: float
    zp_w: int
    s_w: float
    zp_out: int
    s_out: float
    x_u8: np.ndarray = None  # [H][W][C]
    w_u8: np.ndarray = None  # [OC][KH][KW][C]
    bias: np.ndarray = None  # [OC] int32 (scale s_in * s_w)
    truncate_bits: int = 0   # Mesa sets 1 only for a list of weight scales; our scales are not in it

    @property
    def out_hw(self):
        if self.padding_same:
            return div_up(self.in_hw, self.stride)
        return (self.in_hw - self.k) // self.stride + 1

    def explicit_padding(self):
        """(top, bottom, left, right), Mesa's calc_explicit_padding."""
        if not (self.padding_same and self.k > 1):
            return 0, 0, 0, 0
        along = max((self.out_hw - 1) * self.stride + self.k - self.in_hw, 0)
        first = along // 2
        return first, along - first, first, along - first


@dataclass
class Task:
    num: int
    top: int = 0
    bottom: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    in_w: int = 0
    in_h: int = 0
    in_c: int = 0
    in_c_real: int = 0
    out_w: int = 0
    out_h: int = 0
    out_c: int = 0
    out_c_real: int = 0
    line_stride: int = 0
    surf_stride: int = 0
    out_surf_stride: int = 0
    data_entries: int = 0
    kernels: int = 0
    surfaces_per_row: int = 0
    input_banks: int = 0
    weights_banks: int = 0
    atomics: int = 0
    in_offset: int = 0
    out_offset: int = 0
    extra: dict = field(default_factory=dict)


def entries_per_slice(op):
    """CBUF entries (128 B) of one input row, MESA-TASK calc_entries_per_slice."""
    per_entry = CBUF_ENTRY_SIZE // FEATURE_ATOMIC
    total = div_up(op.in_c, FEATURE_ATOMIC)
    last = total % per_entry
    whole = (total // per_entry) * op.in_hw
    frac = op.in_hw if last == 3 else div_up(last * op.in_hw, per_entry)
    return whole + frac


def input_banks(op):
    return div_up(entries_per_slice(op) * op.in_hw, CBUF_ENTRIES_PER_BANK)


def weight_banks(op):
    nbytes = op.k * op.k * op.in_c * op.out_c
    return div_up(div_up(nbytes, CBUF_ENTRY_SIZE), CBUF_ENTRIES_PER_BANK) + 1  # Mesa's extra bank


def fill_task(op, t):
    """Per-task sizes and strides as MESA-TASK fill_task computes them (before the split)."""
    t.in_w = op.in_hw
    t.in_h = op.in_hw
    t.in_c = align(max(op.in_c, FEATURE_ATOMIC), FEATURE_ATOMIC)
    t.in_c_real = op.in_c
    t.out_w = t.out_h = op.out_hw
    t.out_c_real = op.out_c
    t.out_c = align(max(op.out_c, 32), 32)
    row_bytes = op.in_hw * ATOMIC_K
    if op.in_c == 1 and op.out_c > 1:
        # 1-channel image mode: the row is max(W, 16) one-byte pixels.
        t.in_w = max(t.in_w, FEATURE_ATOMIC)
        t.line_stride = max(row_bytes // FEATURE_ATOMIC, FEATURE_ATOMIC)
        t.surf_stride = int(float(t.line_stride) * (float(t.in_h) - 1))
    else:
        t.line_stride = row_bytes // 4
        t.surf_stride = int(float(t.line_stride) * (float(t.in_h) / 4 - 1))
    t.out_surf_stride = op.out_hw * ATOMIC_K * t.out_h // FEATURE_ATOMIC
    if op.in_c == 1:
        t.data_entries = t.in_w * t.in_h
    elif t.in_w == 40 and op.in_c == 40:
        t.data_entries = 40
    else:
        t.data_entries = div_up(t.in_w * 2 * div_up(op.in_c, FEATURE_ATOMIC), 8)
    t.kernels = align(op.out_c, 2)
    t.surfaces_per_row = t.out_w * t.out_h * 2


def split_tasks(op):
    """Tasks of an operation and whether the weights stay in the CBUF (MESA-TASK rkt_split_tasks)."""
    eps = entries_per_slice(op)
    need_in = input_banks(op)
    wb = weight_banks(op)
    avail_w, avail_in = wb, CBUF_BANKS - wb
    pt, pb, pl, pr = op.explicit_padding()
    if wb + 1 < CBUF_BANKS:
        reuse = True
    else:
        reuse = False
        avail_in = 7
        avail_w = CBUF_BANKS - avail_in
    if need_in <= avail_in:
        t = Task(0)
        fill_task(op, t)
        t.input_banks = need_in
        t.weights_banks = CBUF_BANKS - need_in
        t.pad_top, t.pad_bottom, t.pad_left, t.pad_right = pt, pb, pl, pr
        t.atomics = t.out_w * t.out_h
        return [t], reuse

    h, k, s = op.in_hw, op.k, op.stride
    slices = (CBUF_ENTRIES_PER_BANK * avail_in) // eps
    tasks = []
    t = Task(0)
    fill_task(op, t)
    t.top, t.bottom = 0, slices - 1
    t.pad_top, t.pad_left, t.pad_right = pt, pl, pr
    tasks.append(t)
    row = k - pt - 1
    while row < h:
        prev = tasks[-1]
        while row <= prev.bottom:
            row += s
        if row > prev.bottom:
            row -= s
        t = Task(len(tasks))
        fill_task(op, t)
        t.top = min(row, prev.bottom) - (k - 1) + s
        t.bottom = t.top + slices - 1
        t.pad_left, t.pad_right = pl, pr
        if t.bottom >= h - 1:
            t.bottom = h - 1
            t.pad_bottom = pb
            tasks.append(t)
            break
        row = t.top + k - 1
        tasks.append(t)
    last = tasks[-1]
    if last.top >= h or last.bottom >= h + pb:
        tasks.pop()
    done = 0
    for t in tasks:
        t.bottom = min(t.bottom, h - 1)
        t.in_h = t.bottom - t.top + 1
        t.out_w = (t.in_w + t.pad_left + t.pad_right - op.k) // s + 1
        t.out_h = (t.in_h + t.pad_top + t.pad_bottom - op.k) // s + 1
        t.atomics = t.out_w * t.out_h
        t.in_offset = op.in_hw * ATOMIC_K * t.top
        t.out_offset = op.out_hw * ATOMIC_K * done
        t.input_banks, t.weights_banks = avail_in, avail_w
        done += t.out_h
    assert done == op.out_hw, "the split covers every output row"
    return tasks, reuse


def task_regcmd(op, t, addr, n_tasks, reuse, out_cvt):
    """The entries of one task in the order of MESA-CMD fill_first_regcmd (convolution, no fused add,
    not depthwise). addr: dict with input, output, weights, biases. out_cvt: (scale, shift)."""
    e = []
    con0 = fields("CNA_CBUF_CON0", WEIGHT_BANK=t.weights_banks, DATA_BANK=t.input_banks)
    if t.num > 0 and reuse:
        con0 |= fields("CNA_CBUF_CON0", WEIGHT_REUSE=1)
    image = t.in_c_real == 1
    con1 = fields("CNA_CONV_CON1", NONALIGN_DMA=1, GROUP_LINE_OFF=1, ARGB_IN=8) if image else 0
    pp = fields("S_POINTER", POINTER_PP_MODE=1, EXECUTER_PP_EN=1, POINTER_PP_EN=1)
    e += [reg("CNA_CBUF_CON0", con0), reg("CNA_DCOMP_REGNUM", 0), reg("CNA_DCOMP_CTRL", 0),
          reg("CNA_CONV_CON1", con1), reg("DPU_S_POINTER", pp), reg("RDMA_S_POINTER", pp),
          reg("CNA_CONV_CON1", con1),
          reg("CNA_CONV_CON2", fields("CNA_CONV_CON2", FEATURE_GRAINS=50 + op.stride + 1)),
          reg("CNA_CONV_CON3", fields("CNA_CONV_CON3", CONV_X_STRIDE=op.stride, CONV_Y_STRIDE=op.stride)),
          reg("CNA_DATA_SIZE0", fields("CNA_DATA_SIZE0", DATAIN_WIDTH=t.in_w, DATAIN_HEIGHT=t.in_h)),
          reg("CNA_DATA_SIZE1", fields("CNA_DATA_SIZE1", DATAIN_CHANNEL_REAL=t.in_c_real - 1, DATAIN_CHANNEL=t.in_c)),
          reg("CNA_DATA_SIZE2", fields("CNA_DATA_SIZE2", DATAOUT_WIDTH=t.out_w)),
          reg("CNA_DATA_SIZE3", fields("CNA_DATA_SIZE3", DATAOUT_ATOMICS=t.atomics)),
          reg("CNA_WEIGHT_SIZE0", op.k * op.k * t.in_c * t.kernels),
          reg("CNA_WEIGHT_SIZE1", op.k * op.k * t.in_c),
          reg("CNA_WEIGHT_SIZE2", fields("CNA_WEIGHT_SIZE2", WEIGHT_WIDTH=op.k, WEIGHT_HEIGHT=op.k,
                                         WEIGHT_KERNELS=t.kernels)),
          reg("CNA_CBUF_CON0", con0),
          reg("CNA_CBUF_CON1", fields("CNA_CBUF_CON1", DATA_ENTRIES=t.data_entries))]
    if image:
        tr = 14
        e.append(reg("CNA_CVT_CON0", fields("CNA_CVT_CON0", CVT_TRUNCATE_3=tr, CVT_TRUNCATE_2=tr,
                                            CVT_TRUNCATE_1=tr, CVT_TRUNCATE_0=tr)))
        cvt = fields("CNA_CVT_CONx", CVT_SCALE=16384, CVT_OFFSET=65408)
    else:
        e.append(reg("CNA_CVT_CON0", fields("CNA_CVT_CON0", DATA_SIGN=1, CVT_TYPE=1, CVT_BYPASS=1)))
        cvt = fields("CNA_CVT_CONx", CVT_SCALE=1)
    e += [reg(f"CNA_CVT_CON{i}", cvt) for i in range(1, 5)]
    e += [reg("CNA_FC_CON0", 0), reg("CNA_FC_CON1", 0),
          reg("CNA_PAD_CON0", fields("CNA_PAD_CON0", PAD_LEFT=t.pad_left, PAD_TOP=t.pad_top)),
          reg("CNA_FEATURE_DATA_ADDR", addr["input"] + t.in_offset),
          reg("CNA_FC_CON2", 0),
          reg("CNA_DMA_CON0", fields("CNA_DMA_CON0", WEIGHT_BURST_LEN=15, DATA_BURST_LEN=15)),
          reg("CNA_DMA_CON1", fields("CNA_DMA_CON1", LINE_STRIDE=t.line_stride)),
          reg("CNA_DMA_CON2", fields("CNA_DMA_CON2", SURF_STRIDE=t.surf_stride & 0xFFFFFFF)),
          reg("CNA_FC_DATA_SIZE0", fields("CNA_FC_DATA_SIZE0", DMA_WIDTH=op.in_hw, DMA_HEIGHT=t.in_h)),
          reg("CNA_FC_DATA_SIZE1", fields("CNA_FC_DATA_SIZE1", DMA_CHANNEL=t.in_c)),
          reg("CNA_DCOMP_CTRL", 0), reg("CNA_DCOMP_REGNUM", 0), reg("CNA_DCOMP_ADDR0", addr["weights"])]
    e += [reg(f"CNA_DCOMP_AMOUNT{i}", 0) for i in range(16)]
    e.append(reg("CNA_CVT_CON5", 65535 if image else 0))
    if op.k >= 3 and op.zp_in == 0:
        pad = 0xFFFF8080
    else:
        pad = (op.zp_in - 0x80) & 0xFFFFFFFF
    e.append(reg("CNA_PAD_CON1", pad))
    e += [reg("CORE_MISC_CFG", fields("CORE_MISC_CFG", QD_EN=1)),
          reg("CORE_DATAOUT_SIZE_0", fields("CORE_DATAOUT_SIZE_0", DATAOUT_HEIGHT=t.out_h - 1,
                                            DATAOUT_WIDTH=t.out_w - 1)),
          reg("CORE_DATAOUT_SIZE_1", fields("CORE_DATAOUT_SIZE_1", DATAOUT_CHANNEL=t.out_c - 1)),
          reg("CORE_CLIP_TRUNCATE", fields("CORE_CLIP_TRUNCATE", CLIP_TRUNCATE=op.truncate_bits)),
          reg("CORE_3030", 0)]
    scale, shift = out_cvt
    e += [reg("DPU_FEATURE_MODE_CFG", fields("DPU_FEATURE_MODE_CFG", BURST_LEN=15, OUTPUT_MODE=2)),
          reg("DPU_DATA_FORMAT", 0), reg("DPU_OFFSET_PEND", 0),
          reg("DPU_DST_BASE_ADDR", addr["output"] + t.out_offset),
          reg("DPU_DST_SURF_STRIDE", fields("DPU_DST_SURF_STRIDE", DST_SURF_STRIDE=t.out_surf_stride)),
          reg("DPU_DATA_CUBE_WIDTH", t.out_w - 1), reg("DPU_DATA_CUBE_HEIGHT", t.out_h - 1),
          reg("DPU_DATA_CUBE_NOTCH_ADDR", 0),
          reg("DPU_DATA_CUBE_CHANNEL", fields("DPU_DATA_CUBE_CHANNEL", ORIG_CHANNEL=t.out_c_real - 1,
                                              CHANNEL=t.out_c - 1)),
          reg("DPU_BS_CFG", fields("DPU_xx_CFG", ALU_ALGO=2, ALU_SRC=1, RELU_BYPASS=1, MUL_BYPASS=1)),
          reg("DPU_BS_ALU_CFG", 0), reg("DPU_BS_MUL_CFG", 0), reg("DPU_BS_RELUX_CMP_VALUE", 0),
          reg("DPU_BS_OW_CFG", fields("DPU_BS_OW_CFG", SIZE_E_2=1, SIZE_E_1=1, SIZE_E_0=1)),
          reg("DPU_BS_OW_OP", (0x80 - op.zp_w) & 0xFFFF),
          reg("DPU_WDMA_SIZE_0", fields("DPU_WDMA_SIZE_0", CHANNEL_WDMA=t.out_c - 1)),
          reg("DPU_WDMA_SIZE_1", fields("DPU_WDMA_SIZE_1", HEIGHT_WDMA=t.out_h - 1, WIDTH_WDMA=t.out_w - 1)),
          reg("DPU_BN_CFG", fields("DPU_xx_CFG", RELU_BYPASS=1, MUL_BYPASS=1, ALU_BYPASS=1, BYPASS=1)),
          reg("DPU_BN_ALU_CFG", 0), reg("DPU_BN_MUL_CFG", 0), reg("DPU_BN_RELUX_CMP_VALUE", 0),
          reg("DPU_EW_CFG", fields("DPU_EW_CFG", EW_RELU_BYPASS=1, EW_OP_CVT_BYPASS=1, EW_LUT_BYPASS=1,
                                   EW_OP_BYPASS=1, EW_BYPASS=1)),
          reg("DPU_EW_CVT_OFFSET_VALUE", 0),
          reg("DPU_EW_CVT_SCALE_VALUE", fields("DPU_EW_CVT_SCALE_VALUE", EW_OP_CVT_SCALE=1)),
          reg("DPU_EW_RELUX_CMP_VALUE", 0),
          reg("DPU_OUT_CVT_OFFSET", (op.zp_out - 0x80) & 0xFFFFFFFF),
          reg("DPU_OUT_CVT_SCALE", fields("DPU_OUT_CVT_SCALE", OUT_CVT_SCALE=scale)),
          reg("DPU_OUT_CVT_SHIFT", fields("DPU_OUT_CVT_SHIFT", OUT_CVT_SHIFT=shift))]
    e += [reg(f"DPU_EW_OP_VALUE_{i}", 0) for i in range(8)]
    e += [reg("DPU_SURFACE_ADD", fields("DPU_SURFACE_ADD", SURF_ADD=t.surfaces_per_row)), reg("DPU_40C4", 0)]
    e += [reg(n, 0) for n in rk.LUT_REGS]
    e += [reg("RDMA_DATA_CUBE_WIDTH", t.out_w - 1), reg("RDMA_DATA_CUBE_HEIGHT", t.out_h - 1),
          reg("RDMA_DATA_CUBE_CHANNEL", t.out_c - 1), reg("RDMA_SRC_BASE_ADDR", 0),
          reg("RDMA_BRDMA_CFG", fields("RDMA_BRDMA_CFG", BRDMA_DATA_USE=1)),
          reg("RDMA_BS_BASE_ADDR", addr["biases"]), reg("RDMA_NRDMA_CFG", 0), reg("RDMA_BN_BASE_ADDR", 0),
          reg("RDMA_ERDMA_CFG", fields("RDMA_ERDMA_CFG", ERDMA_DISABLE=1)),
          reg("RDMA_EW_BASE_ADDR", 0), reg("RDMA_EW_SURF_STRIDE", 0),
          reg("RDMA_FEATURE_MODE_CFG", fields("RDMA_FEATURE_MODE_CFG", BURST_LEN=15, MRDMA_DISABLE=1)),
          reg("RDMA_SRC_DMA_CFG", 0), reg("RDMA_SURF_NOTCH", 0), reg("RDMA_PAD_CFG", 0),
          reg("RDMA_WEIGHT", fields("RDMA_WEIGHT", E_WEIGHT=1, N_WEIGHT=1, B_WEIGHT=1, M_WEIGHT=1)),
          reg("RDMA_EW_SURF_NOTCH", 0)]
    # Task tail: the chain slot is a plain zero word for a single-task operation, a PC_BASE_ADDRESS
    # write (patched for all but the last task) otherwise.
    e.append(rk.NOP if n_tasks == 1 else reg("PC_BASE_ADDRESS", 0))
    e.append(reg("PC_REGISTER_AMOUNTS", 0))
    e.append(rk.SYNC_ENTRY)
    e.append(rk.op_enable_entry(rk.EN_CNA | rk.EN_CORE | rk.EN_DPU | rk.EN_DPU_RDMA))
    return e


def mesa_amount(n_next):
    """In-stream amount Mesa patches for the next task (MESA-ML compile_operation)."""
    return align((n_next - 4) // 2, 2)


def link_chain(task_entries, base, amount_rule=mesa_amount):
    """Lay the tasks out back to back at 64-byte boundaries from `base` and patch each task's chain
    slot with the next task's address and amount. Returns (words, task addresses)."""
    words, addrs = [], []
    offsets = []
    off = 0
    for ents in task_entries:
        offsets.append(off)
        off += align(len(ents) * 8, 64)
    for i, ents in enumerate(task_entries):
        ents = list(ents)
        if i < len(task_entries) - 1:
            nxt = base + offsets[i + 1]
            ents[-4] |= nxt << 16
            ents[-3] |= amount_rule(len(task_entries[i + 1])) << 16
        addrs.append(base + offsets[i])
        words += ents
        words += [0] * (align(len(ents) * 8, 64) // 8 - len(ents))
    return words, addrs
