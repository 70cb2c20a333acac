# SPDX-License-Identifier: MIT
"""Streams that follow Mesa's rocket driver (and, for the 3-core stream, Mesa's conv register list
kicked the way the vendor kernel kicks multi-core submits)."""
import json

import numpy as np

import layouts as L
import mesa_conv as mc
import refcalc as ref
import rkregs as rk
import tasklist
import vendor_dpu
from rkregs import align, div_up
from stream import Stream, as_bytes

MESA_SOURCES = [
    "bminor/mesa-mesa: src/gallium/drivers/rocket/rkt_regcmd.c (fill_first_regcmd)",
    "bminor/mesa-mesa: src/gallium/drivers/rocket/rkt_task.c (fill_task, rkt_split_tasks)",
    "bminor/mesa-mesa: src/gallium/drivers/rocket/rkt_ml.c (compile_operation, rkt_ml_subgraph_invoke)",
    "bminor/mesa-mesa: src/gallium/drivers/rocket/rkt_coefs.c (rkt_fill_weights, rkt_fill_biases)",
    "torvalds/linux: drivers/accel/rocket/rocket_job.c (rocket_job_hw_submit)",
]
PAGE = 4096
# rocket: a drm_mm per file over the Rockchip IOMMU aperture 0..4 GiB-1, page-aligned best fit
# (torvalds/linux drivers/accel/rocket/rocket_gem.c, drivers/iommu/rockchip-iommu.c): the first BO at 0.
ROCKET_APERTURE = 0x0

A_OW = ("A-OW: BS_OW_OP (the CPEND operand) is added to every stored weight byte, so the effective "
        "weight is (w_u8 - 0x80) + (0x80 - zp_w) = w_u8 - zp_w; inferred from the bias correction of "
        "bminor/mesa-mesa rkt_coefs.c, not stated by any public source")


def make_op(rng, in_hw, in_c, out_c, k, stride, same, zp_in, zp_w, zp_out, w_spread):
    op = mc.ConvOp(in_hw=in_hw, in_c=in_c, out_c=out_c, k=k, stride=stride, padding_same=same,
                   zp_in=zp_in, s_in=0.0235, zp_w=zp_w, s_w=0.0117, zp_out=zp_out, s_out=1.0)
    op.x_u8 = rng.integers(0, 256, size=(in_hw, in_hw, in_c), dtype=np.int64)
    op.w_u8 = np.clip(rng.integers(zp_w - w_spread, zp_w + w_spread + 1, size=(out_c, k, k, in_c)), 0, 255)
    op.bias = rng.integers(-3000, 3001, size=out_c, dtype=np.int64)
    return op


def reference(op):
    """Accumulator of the quantized conv and its requantization with Mesa's OUT_CVT values."""
    pt, pb, pl, pr = op.explicit_padding()
    acc = ref.conv2d_int(op.x_u8 - op.zp_in, op.w_u8 - op.zp_w, op.stride, pt, pl, pb, pr, 0) + op.bias
    conv_scale = np.float32(np.float32(op.s_in) * np.float32(op.s_w)) / np.float32(op.s_out)
    scale, shift = ref.mesa_out_cvt_params(conv_scale, op.truncate_bits)
    y, ties, sat = ref.out_cvt(acc, scale, shift, op.zp_out - 0x80)
    return acc, y, ties, sat, (scale, shift)


def choose_output_scale(op, target=100.0):
    """Pick s_out so the outputs span about +-target without saturating and without exact .5 ties
    (so the expectation does not depend on rounding details beyond round-to-nearest)."""
    pt, pb, pl, pr = op.explicit_padding()
    acc = ref.conv2d_int(op.x_u8 - op.zp_in, op.w_u8 - op.zp_w, op.stride, pt, pl, pb, pr, 0) + op.bias
    peak = float(np.max(np.abs(acc)))
    for i in range(64):
        op.s_out = op.s_in * op.s_w * peak / (target * (0.985 ** i))
        _, _, ties, sat, _ = reference(op)
        if ties == 0 and sat == 0:
            return
    raise RuntimeError("no output scale without ties/saturation")


def hw_buffers(op):
    """Memory images as Mesa writes them: signed input (uint8 - 0x80, padded channels = zp - 0x80;
    1-channel input raw), weights in rkt_fill_weights order, biases with the zero point folded in."""
    if op.in_c == 1:
        x = op.x_u8[:, :, 0].astype(np.uint8)
        assert op.in_hw >= 16
        inp = as_bytes(x)
    else:
        xs = (op.x_u8 - 0x80).astype(np.int8)
        c_total = align(max(op.in_c, 16), 16)
        inp = as_bytes(L.pack_nc1hwc2(xs, 16, c_total, pad=op.zp_in - 0x80))
    w = L.mesa_conv_weights((op.w_u8 - 0x80).astype(np.int8), op.zp_w - 0x80)
    corr = ((op.w_u8 - op.zp_w) * (op.zp_in - 0x80)).reshape(op.out_c, -1).sum(axis=1)
    bias = ((op.bias - corr) // (1 << op.truncate_bits)).astype(np.int32)
    return inp, as_bytes(w), as_bytes(bias)


def out_image(op, y):
    t_out_c = align(max(op.out_c, 32), 32)
    exp = L.pack_nc1hwc2(y.astype(np.int8), 16, t_out_c)
    mask = L.nc1hwc2_mask(op.out_hw, op.out_hw, op.out_c, 16, t_out_c)
    return as_bytes(exp), as_bytes(mask)


def rocket_layout(op, n_words_hint):
    """Page-aligned addresses in Mesa's allocation order (weights, biases in lower_convolution; input
    and output tensors in rkt_ml_subgraph_create; the regcmd BO in compile_operation)."""
    sizes = [("weights", L.mesa_weights_bytes(op.out_c, op.k, op.k, op.in_c)),
             ("biases", op.out_c * 4),
             ("input", op.in_hw * op.in_hw * div_up(op.in_c, 16) * 2 * 16),
             ("output", op.out_hw * op.out_hw * div_up(op.out_c, 16) * 2 * 16),
             ("regcmd", n_words_hint * 8)]
    addr, a = {}, ROCKET_APERTURE
    for name, size in sizes:
        addr[name] = a
        a += align(size, PAGE)
    return addr


def build_mesa_op(name, op, description, assumptions=(), notes=()):
    choose_output_scale(op)
    acc, y, ties, sat, cvt = reference(op)
    tasks, reuse = mc.split_tasks(op)
    addr = rocket_layout(op, 256 * len(tasks))
    ents = [mc.task_regcmd(op, t, addr, len(tasks), reuse, cvt) for t in tasks]
    words, taddrs = mc.link_chain(ents, addr["regcmd"])
    inp, w, b = hw_buffers(op)
    exp, mask = out_image(op, y)
    st = Stream(name=name, producer="Mesa rocket (Teflon) on the mainline rocket kernel driver",
                sources=MESA_SOURCES, soc="rk3588", description=description, base=addr["regcmd"],
                words=words, tasks=len(tasks),
                loads=[("input.bin", addr["input"], inp), ("weights.bin", addr["weights"], w),
                       ("biases.bin", addr["biases"], b)],
                dumps=[("output.bin", addr["output"], exp, mask)],
                chains=[{"core": 0, "tasks": list(range(len(tasks))), "first": f"0x{taddrs[0]:08x}"}],
                assumptions=list(assumptions), notes=list(notes))
    rtasks = [{"regcmd": f"0x{a:08x}", "regcmd_count": len(e)} for a, e in zip(taddrs, ents)]
    # rkt_ml_subgraph_invoke: one job with every task when the weights stay resident, else one job per task.
    jobs = [rtasks] if reuse else [[t] for t in rtasks]
    st.extra_files["rocket_job.json"] = json.dumps(
        {"uapi": "torvalds/linux: include/uapi/drm/rocket_accel.h (drm_rocket_job of drm_rocket_task)",
         "jobs": jobs}, indent=1) + "\n"
    st.checks = {"ties": ties, "saturated": sat, "out_cvt_scale": cvt[0], "out_cvt_shift": cvt[1],
                 "weights_reuse": reuse, "task_rows": [[t.top, t.bottom, t.out_h] for t in tasks],
                 "task_entries": [len(e) for e in ents]}
    st.notes.append("padded output channels are don't-care (mask): no producer reads them "
                    "(rkt_ml_subgraph_read_outputs copies the real channels only)")
    return st


def mesa_conv_int8(rng):
    op = make_op(rng, in_hw=8, in_c=8, out_c=20, k=3, stride=1, same=True, zp_in=117, zp_w=128, zp_out=131,
                 w_spread=40)
    return build_mesa_op(
        "mesa_conv_int8", op,
        "int8 3x3 'same' conv 8x8x8 -> 8x8x20: input channels padded to 16 with the zero point, output "
        "channels padded to 32 (DATAOUT_CHANNEL 31) above WEIGHT_KERNELS 20, LINE_STRIDE = row bytes/4, "
        "SURF_STRIDE = LINE*(H/4-1), DATA_ENTRIES in 64-byte entries, per-channel bias + OUT_CVT requant, "
        "PAD value = input zero point; one task, zero word in the chain slot")


def mesa_conv_split(rng):
    op = make_op(rng, in_hw=40, in_c=256, out_c=16, k=3, stride=1, same=True, zp_in=121, zp_w=0x70, zp_out=125,
                 w_spread=12)
    st = build_mesa_op(
        "mesa_conv_split", op,
        "int8 3x3 'same' conv 40x40x256 -> 40x40x16 whose input exceeds the CBUF: split by rows into tasks "
        "overlapping by Kh - stride rows (rkt_split_tasks), full weights resident (WEIGHT_REUSE on later "
        "tasks), surface strides of the whole tensor, 64-byte aligned chain with Mesa's in-stream amounts, "
        "weight zero point 0x70 (BS_OW_OP 0x10)", assumptions=[A_OW])
    assert st.tasks >= 2
    return st


def mesa_image_conv(rng):
    op = make_op(rng, in_hw=32, in_c=1, out_c=16, k=3, stride=1, same=False, zp_in=0, zp_w=128, zp_out=128,
                 w_spread=60)
    return build_mesa_op(
        "mesa_image_conv", op,
        "1-channel image-mode first layer: 3x3 valid conv 32x32x1 -> 30x30x16, ARGB_IN 8 + NONALIGN_DMA + "
        "GROUP_LINE_OFF, raw uint8 pixels converted by CVT (x*16384>>14 - 128), CVT_CON5 0xffff, "
        "LINE_STRIDE = row bytes, DATA_ENTRIES = W*H, PAD_CON1 0xffff8080 (zero point 0, Kw >= 3)",
        notes=["weight zero point 0x80: the 15 weight channels Mesa pads are exactly 0, so the result does "
               "not depend on what the CNA feeds for the expanded input channels 1..15"])


def vendor_3core_conv(rng):
    """A conv split by output rows over three cores, two tasks per core, in one regcmd buffer."""
    op = make_op(rng, in_hw=24, in_c=16, out_c=16, k=3, stride=1, same=True, zp_in=119, zp_w=128, zp_out=127,
                 w_spread=50)
    choose_output_scale(op)
    acc, y, ties, sat, cvt = reference(op)
    pt, pb, pl, pr = op.explicit_padding()
    rows = 4
    tasks = []
    for b in range(op.out_hw // rows):
        t = mc.Task(b)
        mc.fill_task(op, t)
        o0, o1 = b * rows, b * rows + rows - 1
        t.pad_top = pt if o0 == 0 else 0
        t.pad_bottom = pb if o1 == op.out_hw - 1 else 0
        t.pad_left, t.pad_right = pl, pr
        t.top = max(0, o0 * op.stride - pt)
        t.bottom = min(op.in_hw - 1, o1 * op.stride - pt + op.k - 1)
        t.in_h = t.bottom - t.top + 1
        t.out_h = (t.in_h + t.pad_top + t.pad_bottom - op.k) // op.stride + 1
        assert t.out_h == rows
        t.atomics = t.out_w * t.out_h
        t.in_offset = op.in_hw * mc.ATOMIC_K * t.top
        t.out_offset = op.out_hw * mc.ATOMIC_K * o0
        t.input_banks = div_up(mc.entries_per_slice(op) * t.in_h, mc.CBUF_ENTRIES_PER_BANK)
        t.weights_banks = mc.CBUF_BANKS - t.input_banks
        tasks.append(t)
    addr = {"input": 0xFFBC0000, "weights": 0xFFBD0000, "biases": 0xFFBD8000, "output": 0xFFBE0000}
    base = 0xFFBF0000
    ents = []
    for t in tasks:
        t.num = t.num % 2  # the second task of each core's chain keeps the weights (WEIGHT_REUSE)
        e = mc.task_regcmd(op, t, addr, 2, True, cvt)
        ents.append(e)
    # Lay out all six tasks at 64-byte boundaries; link within each core's pair, end each chain with
    # the vendor's zero word and amount 0.
    words, taddrs, off = [], [], 0
    for e in ents:
        taddrs.append(base + off)
        off += align(len(e) * 8, 64)
    for i, e in enumerate(ents):
        e = list(e)
        if i % 2 == 0:
            e[-4] = rk.reg("PC_BASE_ADDRESS", taddrs[i + 1])
            e[-3] = rk.reg("PC_REGISTER_AMOUNTS", vendor_dpu.vendor_amount(len(ents[i + 1]) - 4))
        else:
            e[-4] = rk.NOP
            e[-3] = rk.reg("PC_REGISTER_AMOUNTS", 0)
        words += e + [0] * (align(len(e) * 8, 64) // 8 - len(e))
    inp, w, b = hw_buffers(op)
    exp, mask = out_image(op, y)
    en = rk.EN_CNA | rk.EN_CORE | rk.EN_DPU | rk.EN_DPU_RDMA
    tl = [tasklist.task(en, len(e) - 4, a) for e, a in zip(ents, taddrs)]
    sub = tasklist.submit(task_number=6, core_mask=0x7, subcore_task=[(0, 0), (0, 0), (0, 2), (2, 2), (4, 2)])
    st = Stream(
        name="vendor_3core_conv",
        producer="vendor rknpu multi-core submit (three chains, subcore_task[2..4]) carrying Mesa's conv "
                 "register list",
        sources=MESA_SOURCES[:4] + [
            "rockchip-linux/kernel: drivers/rknpu/rknpu_job.c (rknpu_job_subcore_commit_pc, rknpu_get_task_number)",
            "rockchip-linux/kernel: drivers/rknpu/include/rknpu_ioctl.h (struct rknpu_task, rknpu_submit)",
            "bminor/mesa-mesa: src/gallium/drivers/rocket/intercept.c (task_number counts all cores)"],
        soc="rk3588",
        description="int8 3x3 'same' conv 24x24x16 -> 24x24x16 split by output rows into 6 tasks of 4 rows; "
                    "core c runs tasks 2c and 2c+1 as its own chain (the first links to the second, the second "
                    "ends with a zero word); all tasks in one buffer at rknpu IOVAs near 4 GiB; task list with "
                    "task_number 6, core_mask 7, subcore_task[2..4] = {0,2},{2,2},{4,2}",
        base=base, words=words, tasks=6,
        loads=[("input.bin", addr["input"], inp), ("weights.bin", addr["weights"], w),
               ("biases.bin", addr["biases"], b)],
        dumps=[("output.bin", addr["output"], exp, mask)],
        task_list=tl, submit=sub, core_mask="0_1_2",
        chains=[{"core": c, "tasks": [2 * c, 2 * c + 1], "first": f"0x{taddrs[2 * c]:08x}"} for c in range(3)],
        notes=["padded output channels are don't-care (mask)",
               "the kernel writes CNA/CORE S_POINTER = 0xE + 0x10000000*core before each core's kick "
               "(rknpu_job_subcore_commit_pc); the stream itself carries no core-specific value"])
    st.checks = {"ties": ties, "saturated": sat, "out_cvt_scale": cvt[0], "out_cvt_shift": cvt[1],
                 "task_entries": [len(e) for e in ents]}
    return st
