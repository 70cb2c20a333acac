# SPDX-License-Identifier: MIT
"""RKNPU (RK3588) register offsets, field positions and regcmd entry encoding.

Written for npusim from the public register description (bminor/mesa-mesa:
src/gallium/drivers/rocket/registers.xml, the RK3588 TRM chapter 36); see
docs/rknpu-register-semantics.md. Deliberately independent of the project's own regdb so that
the streams written with it are an outside reference for the model, decoder and linter.
"""

# Block one-hot targets (bits 63..48 of an entry, before OR'ing the op flag).
TARGETS = {
    0x0: 0x0100,  # PC
    0x1: 0x0200,  # CNA
    0x3: 0x0800,  # CORE
    0x4: 0x1000,  # DPU
    0x5: 0x2000,  # DPU_RDMA
    0x6: 0x4000,  # PPU
    0x7: 0x8000,  # PPU_RDMA
}
OP_WRITE = 0x01
OP_SYNC = 0x40
OP_ENABLE = 0x80

# GLOBAL.OPERATION_ENABLE layout, used as the value of the 0x0081 op-enable entry.
EN_CNA, EN_CORE, EN_DPU, EN_DPU_RDMA, EN_PPU, EN_PPU_RDMA = 1 << 0, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6

# Register offsets (core relative).
R = {
    # PC
    "PC_OPERATION_ENABLE": 0x0008, "PC_BASE_ADDRESS": 0x0010, "PC_REGISTER_AMOUNTS": 0x0014,
    # CNA
    "CNA_S_POINTER": 0x1004, "CNA_CONV_CON1": 0x100C, "CNA_CONV_CON2": 0x1010, "CNA_CONV_CON3": 0x1014,
    "CNA_DATA_SIZE0": 0x1020, "CNA_DATA_SIZE1": 0x1024, "CNA_DATA_SIZE2": 0x1028, "CNA_DATA_SIZE3": 0x102C,
    "CNA_WEIGHT_SIZE0": 0x1030, "CNA_WEIGHT_SIZE1": 0x1034, "CNA_WEIGHT_SIZE2": 0x1038,
    "CNA_CBUF_CON0": 0x1040, "CNA_CBUF_CON1": 0x1044,
    "CNA_CVT_CON0": 0x104C, "CNA_CVT_CON1": 0x1050, "CNA_CVT_CON2": 0x1054, "CNA_CVT_CON3": 0x1058,
    "CNA_CVT_CON4": 0x105C, "CNA_FC_CON0": 0x1060, "CNA_FC_CON1": 0x1064, "CNA_PAD_CON0": 0x1068,
    "CNA_FEATURE_DATA_ADDR": 0x1070, "CNA_FC_CON2": 0x1074, "CNA_DMA_CON0": 0x1078, "CNA_DMA_CON1": 0x107C,
    "CNA_DMA_CON2": 0x1080, "CNA_FC_DATA_SIZE0": 0x1084, "CNA_FC_DATA_SIZE1": 0x1088,
    "CNA_DCOMP_CTRL": 0x1100, "CNA_DCOMP_REGNUM": 0x1104, "CNA_DCOMP_ADDR0": 0x1110,
    **{f"CNA_DCOMP_AMOUNT{i}": 0x1140 + 4 * i for i in range(16)},
    "CNA_CVT_CON5": 0x1180, "CNA_PAD_CON1": 0x1184,
    # CORE
    "CORE_S_POINTER": 0x3004, "CORE_MISC_CFG": 0x3010, "CORE_DATAOUT_SIZE_0": 0x3014,
    "CORE_DATAOUT_SIZE_1": 0x3018, "CORE_CLIP_TRUNCATE": 0x301C, "CORE_3030": 0x3030,
    # DPU
    "DPU_S_POINTER": 0x4004, "DPU_FEATURE_MODE_CFG": 0x400C, "DPU_DATA_FORMAT": 0x4010,
    "DPU_OFFSET_PEND": 0x4014, "DPU_DST_BASE_ADDR": 0x4020, "DPU_DST_SURF_STRIDE": 0x4024,
    "DPU_DATA_CUBE_WIDTH": 0x4030, "DPU_DATA_CUBE_HEIGHT": 0x4034, "DPU_DATA_CUBE_NOTCH_ADDR": 0x4038,
    "DPU_DATA_CUBE_CHANNEL": 0x403C, "DPU_BS_CFG": 0x4040, "DPU_BS_ALU_CFG": 0x4044, "DPU_BS_MUL_CFG": 0x4048,
    "DPU_BS_RELUX_CMP_VALUE": 0x404C, "DPU_BS_OW_CFG": 0x4050, "DPU_BS_OW_OP": 0x4054,
    "DPU_WDMA_SIZE_0": 0x4058, "DPU_WDMA_SIZE_1": 0x405C, "DPU_BN_CFG": 0x4060, "DPU_BN_ALU_CFG": 0x4064,
    "DPU_BN_MUL_CFG": 0x4068, "DPU_BN_RELUX_CMP_VALUE": 0x406C, "DPU_EW_CFG": 0x4070,
    "DPU_EW_CVT_OFFSET_VALUE": 0x4074, "DPU_EW_CVT_SCALE_VALUE": 0x4078, "DPU_EW_RELUX_CMP_VALUE": 0x407C,
    "DPU_OUT_CVT_OFFSET": 0x4080, "DPU_OUT_CVT_SCALE": 0x4084, "DPU_OUT_CVT_SHIFT": 0x4088,
    **{f"DPU_EW_OP_VALUE_{i}": 0x4090 + 4 * i for i in range(8)},
    "DPU_SURFACE_ADD": 0x40C0, "DPU_40C4": 0x40C4,
    "DPU_LUT_ACCESS_CFG": 0x4100, "DPU_LUT_ACCESS_DATA": 0x4104, "DPU_LUT_CFG": 0x4108, "DPU_LUT_INFO": 0x410C,
    "DPU_LUT_LE_START": 0x4110, "DPU_LUT_LE_END": 0x4114, "DPU_LUT_LO_START": 0x4118, "DPU_LUT_LO_END": 0x411C,
    "DPU_LUT_LE_SLOPE_SCALE": 0x4120, "DPU_LUT_LE_SLOPE_SHIFT": 0x4124, "DPU_LUT_LO_SLOPE_SCALE": 0x4128,
    "DPU_LUT_LO_SLOPE_SHIFT": 0x412C,
    # DPU_RDMA
    "RDMA_S_POINTER": 0x5004, "RDMA_DATA_CUBE_WIDTH": 0x500C, "RDMA_DATA_CUBE_HEIGHT": 0x5010,
    "RDMA_DATA_CUBE_CHANNEL": 0x5014, "RDMA_SRC_BASE_ADDR": 0x5018, "RDMA_BRDMA_CFG": 0x501C,
    "RDMA_BS_BASE_ADDR": 0x5020, "RDMA_NRDMA_CFG": 0x5028, "RDMA_BN_BASE_ADDR": 0x502C,
    "RDMA_ERDMA_CFG": 0x5034, "RDMA_EW_BASE_ADDR": 0x5038, "RDMA_EW_SURF_STRIDE": 0x5040,
    "RDMA_FEATURE_MODE_CFG": 0x5044, "RDMA_SRC_DMA_CFG": 0x5048, "RDMA_SURF_NOTCH": 0x504C,
    "RDMA_PAD_CFG": 0x5064, "RDMA_WEIGHT": 0x5068, "RDMA_EW_SURF_NOTCH": 0x506C,
}

LUT_REGS = ["DPU_LUT_ACCESS_CFG", "DPU_LUT_ACCESS_DATA", "DPU_LUT_CFG", "DPU_LUT_INFO", "DPU_LUT_LE_START",
            "DPU_LUT_LE_END", "DPU_LUT_LO_START", "DPU_LUT_LO_END", "DPU_LUT_LE_SLOPE_SCALE",
            "DPU_LUT_LE_SLOPE_SHIFT", "DPU_LUT_LO_SLOPE_SCALE", "DPU_LUT_LO_SLOPE_SHIFT"]

# Field positions (low bit, high bit) of the fields the generators set.
F = {
    "S_POINTER": {"POINTER_PP_EN": (1, 1), "EXECUTER_PP_EN": (2, 2), "POINTER_PP_MODE": (3, 3)},
    "CNA_CONV_CON1": {"CONV_MODE": (0, 3), "IN_PRECISION": (4, 6), "PROC_PRECISION": (7, 9),
                      "ARGB_IN": (12, 15), "DECONV": (16, 16), "GROUP_LINE_OFF": (29, 29), "NONALIGN_DMA": (30, 30)},
    "CNA_CONV_CON2": {"FEATURE_GRAINS": (4, 13), "KERNEL_GROUP": (16, 23)},
    "CNA_CONV_CON3": {"CONV_X_STRIDE": (0, 2), "CONV_Y_STRIDE": (3, 5), "NN_MODE": (28, 30)},
    "CNA_DATA_SIZE0": {"DATAIN_HEIGHT": (0, 10), "DATAIN_WIDTH": (16, 26)},
    "CNA_DATA_SIZE1": {"DATAIN_CHANNEL": (0, 15), "DATAIN_CHANNEL_REAL": (16, 29)},
    "CNA_DATA_SIZE2": {"DATAOUT_WIDTH": (0, 10)},
    "CNA_DATA_SIZE3": {"DATAOUT_ATOMICS": (0, 21)},
    "CNA_WEIGHT_SIZE2": {"WEIGHT_KERNELS": (0, 13), "WEIGHT_HEIGHT": (16, 20), "WEIGHT_WIDTH": (24, 28)},
    "CNA_CBUF_CON0": {"DATA_BANK": (0, 3), "WEIGHT_BANK": (4, 7), "WEIGHT_REUSE": (13, 13)},
    "CNA_CBUF_CON1": {"DATA_ENTRIES": (0, 13)},
    "CNA_CVT_CON0": {"CVT_BYPASS": (0, 0), "CVT_TYPE": (1, 1), "DATA_SIGN": (3, 3), "CVT_TRUNCATE_0": (4, 9),
                     "CVT_TRUNCATE_1": (10, 15), "CVT_TRUNCATE_2": (16, 21), "CVT_TRUNCATE_3": (22, 27)},
    "CNA_CVT_CONx": {"CVT_OFFSET": (0, 15), "CVT_SCALE": (16, 31)},
    "CNA_PAD_CON0": {"PAD_TOP": (0, 3), "PAD_LEFT": (4, 7)},
    "CNA_DMA_CON0": {"DATA_BURST_LEN": (0, 3), "WEIGHT_BURST_LEN": (16, 19)},
    "CNA_DMA_CON1": {"LINE_STRIDE": (0, 27)},
    "CNA_DMA_CON2": {"SURF_STRIDE": (0, 27)},
    "CNA_FC_DATA_SIZE0": {"DMA_HEIGHT": (0, 10), "DMA_WIDTH": (16, 29)},
    "CNA_FC_DATA_SIZE1": {"DMA_CHANNEL": (0, 15)},
    "CORE_MISC_CFG": {"QD_EN": (0, 0), "DW_EN": (1, 1), "PROC_PRECISION": (8, 10)},
    "CORE_DATAOUT_SIZE_0": {"DATAOUT_WIDTH": (0, 15), "DATAOUT_HEIGHT": (16, 31)},
    "CORE_DATAOUT_SIZE_1": {"DATAOUT_CHANNEL": (0, 15)},
    "CORE_CLIP_TRUNCATE": {"CLIP_TRUNCATE": (0, 4)},
    "DPU_FEATURE_MODE_CFG": {"FLYING_MODE": (0, 0), "OUTPUT_MODE": (1, 2), "CONV_MODE": (3, 4),
                             "BURST_LEN": (5, 8), "TP_EN": (30, 30)},
    "DPU_DATA_FORMAT": {"PROC_PRECISION": (0, 2), "IN_PRECISION": (26, 28), "OUT_PRECISION": (29, 31)},
    "DPU_DST_SURF_STRIDE": {"DST_SURF_STRIDE": (4, 31)},
    "DPU_DATA_CUBE_CHANNEL": {"CHANNEL": (0, 12), "ORIG_CHANNEL": (16, 28)},
    "DPU_xx_CFG": {"BYPASS": (0, 0), "ALU_BYPASS": (1, 1), "MUL_BYPASS": (4, 4), "RELU_BYPASS": (6, 6),
                   "ALU_SRC": (8, 8), "ALU_ALGO": (16, 19)},
    "DPU_BS_OW_CFG": {"OD_BYPASS": (1, 1), "SIZE_E_0": (2, 4), "SIZE_E_1": (5, 7), "SIZE_E_2": (8, 10)},
    "DPU_WDMA_SIZE_0": {"CHANNEL_WDMA": (0, 12), "SIZE_C_WDMA": (16, 26), "TP_PRECISION": (27, 27)},
    "DPU_WDMA_SIZE_1": {"WIDTH_WDMA": (0, 12), "HEIGHT_WDMA": (16, 28)},
    "DPU_EW_CFG": {"EW_BYPASS": (0, 0), "EW_OP_BYPASS": (1, 1), "EW_OP_SRC": (6, 6), "EW_LUT_BYPASS": (7, 7),
                   "EW_OP_CVT_BYPASS": (8, 8), "EW_RELU_BYPASS": (9, 9), "EW_ALU_ALGO": (16, 19),
                   "EDATA_SIZE": (22, 23), "EW_DATA_MODE": (28, 29), "EW_CVT_TYPE": (31, 31)},
    "DPU_EW_CVT_SCALE_VALUE": {"EW_OP_CVT_SCALE": (0, 15), "EW_OP_CVT_SHIFT": (16, 21)},
    "DPU_OUT_CVT_SCALE": {"OUT_CVT_SCALE": (0, 15), "FP32TOFP16_EN": (16, 16)},
    "DPU_OUT_CVT_SHIFT": {"OUT_CVT_SHIFT": (0, 11)},
    "DPU_SURFACE_ADD": {"SURF_ADD": (4, 31)},
    "RDMA_BRDMA_CFG": {"BRDMA_DATA_USE": (1, 4)},
    "RDMA_ERDMA_CFG": {"ERDMA_DISABLE": (0, 0), "ERDMA_DATA_SIZE": (2, 3), "ERDMA_DATA_MODE": (30, 31)},
    "RDMA_EW_SURF_STRIDE": {"EW_SURF_STRIDE": (4, 31)},
    "RDMA_FEATURE_MODE_CFG": {"FLYING_MODE": (0, 0), "CONV_MODE": (1, 2), "MRDMA_FP16TOFP32_EN": (3, 3),
                              "MRDMA_DISABLE": (4, 4), "PROC_PRECISION": (5, 7), "COMB_USE": (8, 10),
                              "BURST_LEN": (11, 14), "IN_PRECISION": (15, 17)},
    "RDMA_WEIGHT": {"M_WEIGHT": (0, 7), "B_WEIGHT": (8, 15), "N_WEIGHT": (16, 23), "E_WEIGHT": (24, 31)},
}

# Precision codes (TRM: CNA/CORE proc precision, DPU data format).
PREC_INT8, PREC_INT16, PREC_FP16, PREC_BF16, PREC_INT32, PREC_FP32 = 0, 1, 2, 3, 4, 5


def fields(group, **values):
    """Pack named fields of one register layout into a 32-bit value; refuses overflow."""
    layout = F[group]
    v = 0
    for name, val in values.items():
        lo, hi = layout[name]
        width = hi - lo + 1
        if val < 0 or val >= (1 << width):
            raise ValueError(f"{group}.{name} = {val} does not fit in {width} bits")
        v |= val << lo
    return v


def target_of(offset):
    return TARGETS[offset >> 12]


def entry(offset, value, op=OP_WRITE, target=None):
    """One 64-bit regcmd entry: target|op in 63..48, value in 47..16, offset in 15..0."""
    tgt = target_of(offset) if target is None else target
    return ((tgt | op) << 48) | ((value & 0xFFFFFFFF) << 16) | (offset & 0xFFFF)


def reg(name, value):
    return entry(R[name], value)


NOP = 0
SYNC_ENTRY = entry(0, 0, op=OP_SYNC | OP_WRITE, target=0)  # 0x0041_0000_0000_0000
assert SYNC_ENTRY == 0x0041000000000000


def op_enable_entry(mask):
    """0x0081_<mask>_0008: sets each enabled block's op_en (TRM pc_register_amounts)."""
    return entry(R["PC_OPERATION_ENABLE"], mask, op=OP_ENABLE | OP_WRITE, target=0)


def decode(e):
    """(target|op, value, offset) of an entry, for the self-checks."""
    return (e >> 48) & 0xFFFF, (e >> 16) & 0xFFFFFFFF, e & 0xFFFF


def align(x, a):
    return (x + a - 1) // a * a


def div_up(a, b):
    return (a + b - 1) // b
