/* SPDX-License-Identifier: MIT */
/*
 * An fp16 3x3 convolution (8x8x16 -> 8x8x16, padding 1, stride 1, fp32 output) through the
 * vendor rknpu uAPI. No public producer programs an fp16 convolution with a 3x3 kernel, so the
 * task combines the two silicon producers' conventions (docs/rknpu-register-semantics.md): Mesa's
 * convolution register list and units (rkt_regcmd.c: explicit padding in PAD_CON0, LINE_STRIDE =
 * row bytes / 4, SURF_STRIDE = LINE_STRIDE * (H/4 - 1), DATA_ENTRIES in 64-byte entries per input
 * row, weights in the CNA's blocks [OC/kernel group][C/32][Kh][Kw][kernels][channels] of
 * rkt_coefs.c) with mtx512's fp16 settings (npu_matmul.c gen_matmul_fp16: precision 2, NC1HWC2
 * with C2 = 8, kernel groups of 16, fp32 output with OUT_PRECISION 5, BS_OW SIZE_E 3,
 * SURFACE_ADD = DST_SURF_STRIDE * 4, FEATURE_GRAINS = input rows + 1, all DPU stages bypassed).
 * Whole-number data keeps every fp16 product and fp32 sum exact: the check against a CPU
 * convolution is bit-exact.
 */
#include "npu_client.h"

#define W 8
#define H 8
#define C 16
#define OC 16

int main(void) {
    int fd = rk_open("/dev/dri/card1");
    CHECK(fd >= 0, "open: %s", strerror(errno));
    uint64_t rc_dma, rc_obj, tk_dma, tk_obj, in_dma, in_obj, w_dma, w_obj, out_dma, out_obj;
    uint32_t h[5];
    uint64_t* e = rk_alloc(fd, 1024, 0, &rc_dma, &rc_obj, &h[0]);
    struct rknpu_task_c* tasks = rk_alloc(fd, 1024, RKNPU_MEM_KERNEL_MAPPING_C, &tk_dma, &tk_obj, &h[1]);
    uint16_t* in = rk_alloc(fd, W * H * C * 2, 0, &in_dma, &in_obj, &h[2]);
    uint16_t* w = rk_alloc(fd, 9 * C * OC * 2, 0, &w_dma, &w_obj, &h[3]);
    float* out = rk_alloc(fd, W * H * OC * 4, 0, &out_dma, &out_obj, &h[4]);
    CHECK(e && tasks && in && w && out, "alloc");

    static int x[H][W][C], k[OC][3][3][C];
    uint32_t seed = 2024;
    for (int y = 0; y < H; ++y)
        for (int xx = 0; xx < W; ++xx)
            for (int c = 0; c < C; ++c) {
                x[y][xx][c] = (int)(lcg(&seed) % 7) - 3;
                in[(size_t)(c / 8) * H * W * 8 + (size_t)(y * W + xx) * 8 + (size_t)(c % 8)] = f32_to_f16((float)x[y][xx][c]);
            }
    for (int o = 0; o < OC; ++o)
        for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
                for (int c = 0; c < C; ++c) {
                    k[o][ky][kx][c] = (int)(lcg(&seed) % 5) - 2;
                    const int t = ky * 3 + kx;
                    w[(size_t)t * 16 * C + (size_t)o * C + (size_t)c] = f32_to_f16((float)k[o][ky][kx][c]);
                }
    const uint32_t line = W * 16 / 4, surf = line * (H / 4 - 1), entries = (W * C * 2 + 63) / 64;
    const uint32_t fd_banks = (W * H * C * 2 + 32767) / 32768;
    int i = 0;
    e[i++] = rk_reg(DPU_S_POINTER, 0xE);
    e[i++] = rk_reg(CNA_CONV_CON1, (PREC_FP16 << 7) | (PREC_FP16 << 4));
    e[i++] = rk_reg(CNA_CONV_CON2, (H + 1) << 4);
    e[i++] = rk_reg(CNA_CONV_CON3, (1 << 3) | 1);
    e[i++] = rk_reg(CNA_DATA_SIZE0, (W << 16) | H);
    e[i++] = rk_reg(CNA_DATA_SIZE1, ((C - 1) << 16) | C);
    e[i++] = rk_reg(CNA_DATA_SIZE2, W);
    e[i++] = rk_reg(CNA_DATA_SIZE3, W * H);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE0, 9 * C * 2 * OC);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE1, 9 * C * 2);
    e[i++] = rk_reg(CNA_WEIGHT_SIZE2, (3u << 24) | (3u << 16) | OC);
    e[i++] = rk_reg(CNA_CBUF_CON0, ((12 - fd_banks) << 4) | fd_banks);
    e[i++] = rk_reg(CNA_CBUF_CON1, entries);
    e[i++] = rk_reg(CNA_CVT_CON0, (1 << 3) | (1 << 1) | 1);
    for (int c = 0; c < 4; ++c) e[i++] = rk_reg((uint16_t)(CNA_CVT_CON1 + 4 * c), 1u << 16);
    e[i++] = rk_reg(CNA_FC_CON0, 0);
    e[i++] = rk_reg(CNA_FC_CON1, 0);
    e[i++] = rk_reg(CNA_PAD_CON0, (1 << 4) | 1);
    e[i++] = rk_reg(CNA_FEATURE_DATA_ADDR, (uint32_t)in_dma);
    e[i++] = rk_reg(CNA_FC_CON2, 0);
    e[i++] = rk_reg(CNA_DMA_CON0, (15u << 16) | 15u);
    e[i++] = rk_reg(CNA_DMA_CON1, line);
    e[i++] = rk_reg(CNA_DMA_CON2, surf);
    e[i++] = rk_reg(CNA_FC_DATA_SIZE0, (W << 16) | H);
    e[i++] = rk_reg(CNA_FC_DATA_SIZE1, C);
    e[i++] = rk_reg(CNA_DCOMP_CTRL, 0);
    e[i++] = rk_reg(CNA_DCOMP_REGNUM, 0);
    e[i++] = rk_reg(CNA_DCOMP_ADDR0, (uint32_t)w_dma);
    for (int c = 0; c < 16; ++c) e[i++] = rk_reg((uint16_t)(CNA_DCOMP_AMOUNT0 + 4 * c), 0);
    e[i++] = rk_reg(CNA_CVT_CON5, 0);
    e[i++] = rk_reg(CNA_PAD_CON1, 0);
    e[i++] = rk_reg(CORE_MISC_CFG, (PREC_FP16 << 8) | 1);
    e[i++] = rk_reg(CORE_DATAOUT_SIZE_0, ((H - 1) << 16) | (W - 1));
    e[i++] = rk_reg(CORE_DATAOUT_SIZE_1, OC - 1);
    e[i++] = rk_reg(CORE_CLIP_TRUNCATE, 0);
    e[i++] = rk_reg(CORE_3030, 0);
    e[i++] = rk_reg(DPU_FEATURE_MODE_CFG, (15u << 5) | (2u << 1));
    e[i++] = rk_reg(DPU_DATA_FORMAT, (PREC_FP32 << 29) | (PREC_FP16 << 26) | PREC_FP16);
    e[i++] = rk_reg(DPU_OFFSET_PEND, 0);
    e[i++] = rk_reg(DPU_DST_BASE_ADDR, (uint32_t)out_dma);
    e[i++] = rk_reg(DPU_DST_SURF_STRIDE, (W * H) << 4);
    e[i++] = rk_reg(DPU_DATA_CUBE_WIDTH, W - 1);
    e[i++] = rk_reg(DPU_DATA_CUBE_HEIGHT, H - 1);
    e[i++] = rk_reg(DPU_DATA_CUBE_NOTCH_ADDR, 0);
    e[i++] = rk_reg(DPU_DATA_CUBE_CHANNEL, ((OC - 1) << 16) | (OC - 1));
    e[i++] = rk_reg(DPU_BS_CFG, (1 << 6) | (1 << 4) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_BS_ALU_CFG, 0);
    e[i++] = rk_reg(DPU_BS_MUL_CFG, 0);
    e[i++] = rk_reg(DPU_BS_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_BS_OW_CFG, (3u << 8) | (3u << 5) | (3u << 2) | (1u << 1));
    e[i++] = rk_reg(DPU_BS_OW_OP, 0);
    e[i++] = rk_reg(DPU_WDMA_SIZE_0, OC - 1);
    e[i++] = rk_reg(DPU_WDMA_SIZE_1, ((H - 1) << 16) | (W - 1));
    e[i++] = rk_reg(DPU_BN_CFG, (1 << 6) | (1 << 4) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_BN_ALU_CFG, 0);
    e[i++] = rk_reg(DPU_BN_MUL_CFG, 0);
    e[i++] = rk_reg(DPU_BN_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_EW_CFG, (1 << 9) | (1 << 8) | (1 << 7) | (1 << 1) | 1);
    e[i++] = rk_reg(DPU_EW_CVT_OFFSET_VALUE, 0);
    e[i++] = rk_reg(DPU_EW_CVT_SCALE_VALUE, 1);
    e[i++] = rk_reg(DPU_EW_RELUX_CMP_VALUE, 0);
    e[i++] = rk_reg(DPU_OUT_CVT_OFFSET, 0);
    e[i++] = rk_reg(DPU_OUT_CVT_SCALE, 1);
    e[i++] = rk_reg(DPU_OUT_CVT_SHIFT, 0);
    for (int c = 0; c < 8; ++c) e[i++] = rk_reg((uint16_t)(DPU_EW_OP_VALUE_0 + 4 * c), 0);
    e[i++] = rk_reg(DPU_SURFACE_ADD, (W * H * 4) << 4);
    e[i++] = rk_reg(DPU_40C4, 0);
    for (int c = 0; c < 12; ++c) e[i++] = rk_reg((uint16_t)(DPU_LUT_ACCESS_CFG + 4 * c), 0);
    e[i++] = 0;
    e[i++] = rk_reg(PC_REGISTER_AMOUNTS, 0);
    e[i++] = RK_SYNC;
    e[i++] = rk_op_enable(0x0d);
    const int regs = i - 4;
    memset(tasks, 0, sizeof *tasks);
    tasks[0].enable_mask = 0xd;
    tasks[0].int_mask = 0x300;
    tasks[0].int_clear = 0x1ffff;
    tasks[0].regcfg_amount = (uint32_t)regs;
    tasks[0].regcmd_addr = rc_dma;
    memset(out, 0, W * H * OC * 4);

    struct rknpu_submit_c s;
    memset(&s, 0, sizeof s);
    s.flags = RKNPU_JOB_PC_C | RKNPU_JOB_PINGPONG_C;
    s.timeout = 6000;
    s.task_number = 1;
    s.task_obj_addr = tk_obj;
    s.core_mask = 4;
    s.fence_fd = -1;
    s.subcore_task[2] = (struct rknpu_subcore_task_c){0, 1};
    CHECK(ioctl(fd, RKNPU_SUBMIT_C, &s) == 0, "submit: %s", strerror(errno));
    int bad = 0;
    for (int o = 0; o < OC; ++o)
        for (int y = 0; y < H; ++y)
            for (int xx = 0; xx < W; ++xx) {
                int acc = 0;
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = y + ky - 1, ix = xx + kx - 1;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                        for (int c = 0; c < C; ++c) acc += x[iy][ix][c] * k[o][ky][kx][c];
                    }
                const float got = out[(size_t)(o / 4) * H * W * 4 + (size_t)(y * W + xx) * 4 + (size_t)(o % 4)];
                if (got != (float)acc && bad++ < 5) printf("mismatch o %d y %d x %d: %g, expected %d\n", o, y, xx, got, acc);
            }
    CHECK(bad == 0, "%d of %d outputs differ from the CPU convolution", bad, OC * H * W);
    printf("fp16 3x3 conv %dx%dx%d -> %dx%dx%d on core 2: equal to the CPU convolution (fp32 out)\n", W, H, C, W, H, OC);
    close(fd);
    return 0;
}
