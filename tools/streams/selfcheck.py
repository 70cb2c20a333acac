# SPDX-License-Identifier: MIT
"""Self-check of the stream writer: the reference math against brute force, every packer against
its unpacker, the expected outputs against a second derivation through the memory images the
stream loads, and the structure of every generated buffer against the encoding rules of
docs/rknpu-register-semantics.md (sections 1, 2 and 5). Exit status 1 on the first failure."""
import fractions
import struct

import numpy as np

import layouts as L
import mesa_conv as mc
import refcalc as ref
import rkregs as rk
import streams_mesa as sm
import tasklist

FAILS = []
COUNT = [0]


def check(cond, what):
    COUNT[0] += 1
    if not cond:
        FAILS.append(what)
        print(f"FAIL {what}")


def check_refcalc(rng):
    for stride, pads in [(1, (1, 1, 1, 1)), (2, (0, 1, 0, 1)), (1, (0, 0, 0, 0))]:
        x = rng.integers(-20, 20, size=(7, 7, 5))
        w = rng.integers(-9, 9, size=(3, 3, 3, 5))
        a = ref.conv2d_int(x, w, stride, pads[0], pads[1], pads[2], pads[3], -3)
        b = ref.conv2d_bruteforce(x, w, stride, pads, -3)
        check(np.array_equal(a, b), f"conv2d_int == brute force (stride {stride}, pads {pads})")
    for _ in range(2000):
        acc = int(rng.integers(-10 ** 7, 10 ** 7))
        scale = int(rng.integers(1 << 14, 1 << 15))
        shift = int(rng.integers(1, 30))
        exact = fractions.Fraction(acc * scale, 1 << shift)
        fl = exact.numerator // exact.denominator
        frac = exact - fl
        want = fl + (1 if frac > fractions.Fraction(1, 2) or (frac == fractions.Fraction(1, 2) and fl % 2) else 0)
        got, _, _ = ref.out_cvt(np.array([acc]), scale, shift, 0, lo=-10 ** 12, hi=10 ** 12)
        if int(got[0]) != want:
            check(False, f"out_cvt({acc}, {scale}, {shift}) = {int(got[0])}, want {want}")
            break
    # Mesa's scale/shift encode the float scale within 2^-13 relative.
    for s in [0.0031, 0.0123, 0.2, 0.0007]:
        sc, sh = ref.mesa_out_cvt_params(s)
        check(abs(sc / 2 ** sh - s) / s < 2 ** -13, f"Mesa OUT_CVT params of {s}: {sc}/2^{sh}")


def check_layouts(rng):
    x = rng.integers(-128, 128, size=(5, 6, 21)).astype(np.int8)
    p = L.pack_nc1hwc2(x, 16, 32, pad=7)
    check(p.shape == (2, 5, 6, 16), "NC1HWC2 shape")
    check(np.array_equal(L.unpack_nc1hwc2(p.reshape(-1), 5, 6, 21, 16), x), "NC1HWC2 round trip")
    check(int(p[1, 0, 0, 5]) == 7, "NC1HWC2 channel padding value")
    check(p[0, 2, 3, 4] == x[2, 3, 4] and p[1, 4, 5, 4] == x[4, 5, 20], "NC1HWC2 element positions")
    b = rng.integers(-128, 128, size=(64, 96)).astype(np.int8)
    check(np.array_equal(L.unpack_mtx_weights(L.mtx_weights_int8(b), 64, 96, 32), b), "mtx512 int8 weights")
    bf = rng.integers(0, 10, size=(32, 64)).astype(np.float16)
    check(np.array_equal(L.unpack_mtx_weights(L.mtx_weights_fp16(bf), 32, 64, 16), bf), "mtx512 fp16 weights")
    # mtx512's own index formula weight_int8(C, k, c) (1-based), written out independently.
    wi = L.mtx_weights_int8(b)
    for (n, k) in [(1, 1), (33, 1), (2, 40), (64, 96), (31, 65)]:
        kpg, cpg = (n - 1) // 32, (k - 1) // 32
        dst = cpg * 32 * 32 + kpg * 32 * 96 + (k - 1) % 32 + ((n - 1) % 32) * 32
        check(wi[dst] == b[n - 1, k - 1], f"mtx512 weight_int8 index n={n} k={k}")
    # Mesa weights for IC < 16: [OC/32][1][KH][KW][min(OC,32)][16], channels >= IC = zero point.
    w = rng.integers(-100, 100, size=(20, 3, 3, 8)).astype(np.int8)
    mw = L.mesa_conv_weights(w, -5)
    check(mw.size == 20 * 9 * 16, "Mesa weight count (IC 8 padded to 16, 20 kernels)")
    arr = mw.reshape(3, 3, 20, 16)
    check(np.array_equal(arr[:, :, :, :8], w.transpose(1, 2, 0, 3)) and np.all(arr[:, :, :, 8:] == -5),
          "Mesa weight positions and padding")
    w2 = rng.integers(-100, 100, size=(40, 1, 1, 64)).astype(np.int8)
    mw2 = L.mesa_conv_weights(w2, 0)
    # First kernel group: 32 kernels x 2 input groups; second group: only the 8 remaining kernels
    # (Mesa writes ALIGN(OC, 2) kernels, no padding kernels).
    g0 = mw2[:2 * 32 * 32].reshape(2, 32, 32)  # ic1, oc2, ic2
    g1 = mw2[2 * 32 * 32:].reshape(2, 8, 32)
    ok = mw2.size == 2 * 32 * 32 + 2 * 8 * 32
    for i1 in range(2):
        ok = ok and np.array_equal(g0[i1], w2[:32, 0, 0, 32 * i1:32 * i1 + 32])
        ok = ok and np.array_equal(g1[i1], w2[32:40, 0, 0, 32 * i1:32 * i1 + 32])
    check(ok, "Mesa weight groups OC/32 x IC/32, last group holds only the real kernels")
    t = [tasklist.task(0xD, 104, 0xFFFFF000), tasklist.task(0x18, 69, 0xFFFF2280, op_idx=3)]
    blob = tasklist.pack(t)
    check(len(blob) == 80 and tasklist.unpack(blob) == t, "rknpu_task pack/unpack, 40 bytes each")
    check(struct.unpack_from("<I", blob, 24)[0] == 104 and struct.unpack_from("<Q", blob, 32)[0] == 0xFFFFF000,
          "rknpu_task field offsets (regcfg_amount @24, regcmd_addr @32)")


def check_mesa_hw_domain(rng):
    """The expected output again, this time from the bytes the stream loads (signed input, Mesa's
    weight order, corrected biases) computed the way the accelerator sees them."""
    op = sm.make_op(rng, in_hw=6, in_c=8, out_c=20, k=3, stride=1, same=True, zp_in=117, zp_w=0x70, zp_out=131,
                    w_spread=20)
    sm.choose_output_scale(op)
    acc, y, _, _, _ = sm.reference(op)
    inp, wb, bb = sm.hw_buffers(op)
    xs = np.frombuffer(inp, dtype=np.int8).astype(np.int64)
    xs = L.unpack_nc1hwc2(xs, 6, 6, 16, 16)
    w = np.frombuffer(wb, dtype=np.int8).astype(np.int64).reshape(3, 3, 20, 16).transpose(2, 0, 1, 3)
    w = w + (0x80 - op.zp_w)  # assumption A-OW
    bias = np.frombuffer(bb, dtype=np.int32).astype(np.int64)
    hw = ref.conv2d_int(xs, w, 1, 1, 1, 1, 1, op.zp_in - 0x80) + bias
    check(np.array_equal(hw, acc), "Mesa memory images + A-OW reproduce the quantized conv accumulator")
    # float sanity: the requantized output is within 1 LSB of the real-valued conv.
    real = acc * op.s_in * op.s_w / op.s_out + (op.zp_out - 0x80)
    check(np.max(np.abs(y - real)) <= 1.0, "Mesa requant within 1 LSB of the float result")


def check_split():
    op = mc.ConvOp(in_hw=40, in_c=256, out_c=16, k=3, stride=1, padding_same=True, zp_in=0, s_in=1, zp_w=0,
                   s_w=1, zp_out=0, s_out=1)
    tasks, reuse = mc.split_tasks(op)
    check(reuse and len(tasks) == 2, "40x40x256 conv splits into 2 tasks with resident weights")
    check([(t.top, t.bottom) for t in tasks] == [(0, 27), (26, 39)], "split rows overlap by Kh - stride")
    check(sum(t.out_h for t in tasks) == 40, "split covers all output rows")
    check(all(t.input_banks + t.weights_banks == 12 for t in tasks), "banks sum to 12")
    t = tasks[0]
    check(t.line_stride == 40 * 16 // 4 and t.surf_stride == t.line_stride * (40 // 4 - 1),
          "LINE_STRIDE = row bytes / 4, SURF_STRIDE = LINE * (H/4 - 1)")
    check(16 * (t.surf_stride + t.line_stride) == 40 * 40 * 16, "surface step rule 16 x (SURF + LINE)")
    check(t.data_entries == 40 * 16 * 16 // 64, "DATA_ENTRIES = row bytes / 64")


def check_vendor_capture():
    import streams_vendor as sv
    regs = sv.vendor_matmul_regs(4, 64, 32, 0xFFFB4000, 0xFFFB3000, 0xFFFB8000)
    check(regs == sv.VENDOR_MATMUL_CAPTURE, "vendor matmul registers reproduce the capture for M 4, K 64, N 32")
    st = sv.vendor_matmul_fp16(np.random.default_rng(1))
    t = st.task_list[0]
    check(all(t[k] == v for k, v in sv.VENDOR_MATMUL_TASK.items()), "vendor matmul rknpu_task equals the capture")


def check_buffer(st):
    """Encoding rules every generated buffer must follow."""
    w = st.words
    check(st.base % 64 == 0, f"{st.name}: buffer 64-byte aligned")
    # Walk every chain from its first task and follow the in-stream pointers.
    seen = 0
    for c in st.chains:
        addr, ntask = int(c["first"], 16), 0
        while True:
            i = (addr - st.base) // 8
            check(addr % 64 == 0 and 0 <= i < len(w), f"{st.name}: task at 0x{addr:x} inside the buffer, aligned")
            j = i
            while rk.decode(w[j])[0] != (rk.OP_ENABLE | rk.OP_WRITE):
                j += 1
            check(w[j - 1] == rk.SYNC_ENTRY, f"{st.name}: 0x0041 entry before op-enable at {j}")
            amt_t, amt_v, amt_o = rk.decode(w[j - 2])
            check(amt_t == 0x0101 and amt_o == 0x14, f"{st.name}: PC_REGISTER_AMOUNTS in slot -3 at {j - 2}")
            for k in range(i, j - 3):
                t, v, o = rk.decode(w[k])
                if w[k] != 0:
                    check(t == (rk.target_of(o) | rk.OP_WRITE), f"{st.name}: entry {k} target matches offset 0x{o:x}")
            nxt_t, nxt_v, nxt_o = rk.decode(w[j - 3])
            ntask += 1
            if w[j - 3] == 0 or nxt_v == 0:
                check(amt_v == 0, f"{st.name}: chain end has amount 0")
                break
            check(nxt_t == 0x0101 and nxt_o == 0x10, f"{st.name}: PC_BASE_ADDRESS in slot -4")
            n_next = 0
            k = (nxt_v - st.base) // 8
            while rk.decode(w[k + n_next])[0] != (rk.OP_ENABLE | rk.OP_WRITE):
                n_next += 1
            n_next += 1
            check(amt_v in (mc.mesa_amount(n_next), -(-n_next // 2) - 1),
                  f"{st.name}: in-stream amount {amt_v} for a {n_next}-entry task")
            addr = nxt_v
        check(ntask == len(c["tasks"]), f"{st.name}: chain of core {c['core']} has {ntask} tasks")
        seen += ntask
    check(seen == st.tasks, f"{st.name}: chains hold all {st.tasks} tasks")
    if st.task_list is not None:
        for tk in st.task_list:
            i = (tk["regcmd_addr"] - st.base) // 8
            j = i + tk["regcfg_amount"] + 3
            check(rk.decode(w[j])[0] == (rk.OP_ENABLE | rk.OP_WRITE),
                  f"{st.name}: regcfg_amount {tk['regcfg_amount']} + 4 ends at the op-enable entry")
            check(rk.decode(w[j])[1] == tk["enable_mask"], f"{st.name}: enable_mask equals the op-enable value")
        for c in st.chains:
            check(st.task_list[c["tasks"][0]]["regcmd_addr"] == int(c["first"], 16),
                  f"{st.name}: the task list's first task of core {c['core']} starts its chain")
    check(all(0 <= a < 1 << 32 for _, a, _ in st.loads), f"{st.name}: loads below 4 GiB")
    check(st.checks.get("ties", 0) == 0 and st.checks.get("saturated", 0) == 0,
          f"{st.name}: expected output free of rounding ties and saturation")


def run(build, streams):
    rng = np.random.default_rng(12)
    check_refcalc(rng)
    check_layouts(rng)
    check_mesa_hw_domain(rng)
    check_split()
    check_vendor_capture()
    for name in streams:
        st = build(name)
        check_buffer(st)
        again = build(name)
        check(again.words == st.words and [b for _, _, b in again.loads] == [b for _, _, b in st.loads],
              f"{name}: deterministic")
    print(f"selfcheck: {COUNT[0]} checks, {len(FAILS)} failure(s)")
    return 1 if FAILS else 0
