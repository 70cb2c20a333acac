# SPDX-License-Identifier: MIT
"""Matmul tasks written the way mtx512/rk3588-npu writes them (src/npu_matmul.c gen_matmul_task,
gen_matmul_int8, gen_matmul_fp16): one task of 108 entries in a 112-entry array, A as a W=1,
H=M, C=K feature map, B as 1x1 kernels, int32 (int8 in) or fp32 (fp16 in) output.
Our own code; the register values are the ones that program computes for the same M, K, N.
"""
import rkregs as rk
from rkregs import PREC_FP16, PREC_FP32, PREC_INT8, PREC_INT32, reg

CBUF_BANK_SIZE = 32768
CBUF_BANKS = 12
ARRAY_ENTRIES = 112  # mtx512 copies npu_regs[112] into the regcmd buffer


def matmul_params(m, k, n, fp16):
    """Descriptor values of gen_matmul_{int8,fp16}; raises when that program would refuse."""
    bpe = 2 if fp16 else 1
    d = dict(m=m, k=k, n=n, fp16=fp16)
    d["in_prec"] = d["proc_prec"] = PREC_FP16 if fp16 else PREC_INT8
    d["out_prec"] = PREC_FP32 if fp16 else PREC_INT32
    d["feature_grains"] = m + 1
    d["weight_bytes_per_kernel"] = k * bpe
    d["weight_bytes"] = k * bpe * n
    fd_bytes = m * k * bpe
    fd_banks = -(-fd_bytes // CBUF_BANK_SIZE)
    if fd_banks > CBUF_BANKS - 1:
        raise ValueError("feature data exceeds the CBUF (mtx512 returns -1)")
    if d["weight_bytes_per_kernel"] > CBUF_BANK_SIZE:
        raise ValueError("kernel exceeds one bank (mtx512 returns -2)")
    d["data_bank"] = fd_banks
    d["weight_bank"] = CBUF_BANKS - fd_banks
    per_entry = 32 if fp16 else 64  # elements per 64-byte entry
    d["data_entries"] = -(-k // per_entry)
    d["line_stride"] = 1 * 4
    surf = d["line_stride"] * ((m // 4) - 1)
    d["surf_stride"] = surf + 1 if surf < 0 else surf
    d["dst_surf_stride"] = m * 1
    d["size_e"] = 3 if fp16 else 7
    d["surf_add"] = d["dst_surf_stride"] * (4 if fp16 else 8)
    return d


def matmul_task(d, input_dma, weights_dma, output_dma):
    """The 112-word array of gen_matmul_task: 108 entries, the last four zero."""
    m, k, n = d["m"], d["k"], d["n"]
    e = [reg("DPU_S_POINTER", 0xE),
         reg("CNA_CONV_CON1", (d["proc_prec"] << 7) | (d["in_prec"] << 4) | 0),
         reg("CNA_CONV_CON2", (0 << 16) | ((d["feature_grains"] & 0x3FF) << 4)),
         reg("CNA_CONV_CON3", (1 << 3) | 1),
         reg("CNA_DATA_SIZE0", (1 << 16) | m),
         reg("CNA_DATA_SIZE1", ((k - 1) << 16) | k),
         reg("CNA_DATA_SIZE2", 1),
         reg("CNA_DATA_SIZE3", 1 * m),
         reg("CNA_WEIGHT_SIZE0", d["weight_bytes"]),
         reg("CNA_WEIGHT_SIZE1", d["weight_bytes_per_kernel"]),
         reg("CNA_WEIGHT_SIZE2", (1 << 24) | (1 << 16) | n),
         reg("CNA_CBUF_CON0", (d["weight_bank"] << 4) | d["data_bank"]),
         reg("CNA_CBUF_CON1", d["data_entries"]),
         reg("CNA_CVT_CON0", (1 << 3) | (1 << 1) | 1)]
    e += [reg(f"CNA_CVT_CON{i}", 1 << 16) for i in range(1, 5)]
    e += [reg("CNA_FC_CON0", 0), reg("CNA_FC_CON1", 0), reg("CNA_PAD_CON0", 0),
          reg("CNA_FEATURE_DATA_ADDR", input_dma), reg("CNA_FC_CON2", 0),
          reg("CNA_DMA_CON0", (15 << 16) | 15),
          reg("CNA_DMA_CON1", d["line_stride"] & 0xFFFFFFF),
          reg("CNA_DMA_CON2", d["surf_stride"] & 0xFFFFFFF),
          reg("CNA_FC_DATA_SIZE0", (1 << 16) | m),
          reg("CNA_FC_DATA_SIZE1", k),
          reg("CNA_DCOMP_CTRL", 0), reg("CNA_DCOMP_REGNUM", 0), reg("CNA_DCOMP_ADDR0", weights_dma)]
    e += [reg(f"CNA_DCOMP_AMOUNT{i}", 0) for i in range(16)]
    e += [reg("CNA_CVT_CON5", 0), reg("CNA_PAD_CON1", 0),
          reg("CORE_MISC_CFG", (d["proc_prec"] << 8) | 1),
          reg("CORE_DATAOUT_SIZE_0", ((m - 1) << 16) | 0),
          reg("CORE_DATAOUT_SIZE_1", n - 1),
          reg("CORE_CLIP_TRUNCATE", 0), reg("CORE_3030", 0),
          reg("DPU_FEATURE_MODE_CFG", (15 << 5) | (0 << 3) | (2 << 1) | 0),
          reg("DPU_DATA_FORMAT", (d["out_prec"] << 29) | (d["in_prec"] << 26) | d["proc_prec"]),
          reg("DPU_OFFSET_PEND", 0),
          reg("DPU_DST_BASE_ADDR", output_dma),
          reg("DPU_DST_SURF_STRIDE", d["dst_surf_stride"] << 4),
          reg("DPU_DATA_CUBE_WIDTH", 0), reg("DPU_DATA_CUBE_HEIGHT", m - 1), reg("DPU_DATA_CUBE_NOTCH_ADDR", 0),
          reg("DPU_DATA_CUBE_CHANNEL", ((n - 1) << 16) | (n - 1)),
          reg("DPU_BS_CFG", (1 << 6) | (1 << 4) | (1 << 1) | 1),
          reg("DPU_BS_ALU_CFG", 0), reg("DPU_BS_MUL_CFG", 0), reg("DPU_BS_RELUX_CMP_VALUE", 0),
          reg("DPU_BS_OW_CFG", (d["size_e"] << 8) | (d["size_e"] << 5) | (d["size_e"] << 2) | (1 << 1)),
          reg("DPU_BS_OW_OP", 0),
          reg("DPU_WDMA_SIZE_0", n - 1),
          reg("DPU_WDMA_SIZE_1", ((m - 1) << 16) | 0),
          reg("DPU_BN_CFG", (1 << 6) | (1 << 4) | (1 << 1) | 1),
          reg("DPU_BN_ALU_CFG", 0), reg("DPU_BN_MUL_CFG", 0), reg("DPU_BN_RELUX_CMP_VALUE", 0),
          reg("DPU_EW_CFG", (1 << 9) | (1 << 8) | (1 << 7) | (1 << 1) | 1),
          reg("DPU_EW_CVT_OFFSET_VALUE", 0), reg("DPU_EW_CVT_SCALE_VALUE", 1), reg("DPU_EW_RELUX_CMP_VALUE", 0),
          reg("DPU_OUT_CVT_OFFSET", 0), reg("DPU_OUT_CVT_SCALE", (0 << 16) | 1), reg("DPU_OUT_CVT_SHIFT", 0)]
    e += [reg(f"DPU_EW_OP_VALUE_{i}", 0) for i in range(8)]
    e += [reg("DPU_SURFACE_ADD", d["surf_add"] << 4), reg("DPU_40C4", 0)]
    e += [reg(r, 0) for r in rk.LUT_REGS]
    e += [rk.NOP, reg("PC_REGISTER_AMOUNTS", 0), rk.SYNC_ENTRY,
          rk.op_enable_entry(0x08 | 0x04 | 0x01)]  # PC_ENABLE_DPU | PC_ENABLE_CNA | PC_ENABLE = 0xd
    assert len(e) == 108
    return e + [0] * (ARRAY_ENTRIES - len(e))


# regcfg_amount as tests/matmul_*.c computes it: the array minus the PC entries and the 4 spare words.
REGCFG_AMOUNT = ARRAY_ENTRIES - (4 + 4)
