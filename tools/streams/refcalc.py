# SPDX-License-Identifier: MIT
"""Independent reference computations for the expected outputs: plain convolution and matmul in
integer/float numpy, and the output convert written from the TRM's description. Nothing here
uses the project's engines.
"""
import numpy as np


def conv2d_int(x_hwc, w_ohwi, stride, pad_top, pad_left, pad_bottom, pad_right, pad_value):
    """Direct convolution, int64 accumulation. x: [H][W][C] int, w: [OC][KH][KW][C] int.
    Padded pixels take pad_value (already in the domain of x)."""
    h, w, c = x_hwc.shape
    oc, kh, kw, c2 = w_ohwi.shape
    assert c == c2
    xp = np.full((h + pad_top + pad_bottom, w + pad_left + pad_right, c), pad_value, dtype=np.int64)
    xp[pad_top:pad_top + h, pad_left:pad_left + w, :] = x_hwc
    oh = (h + pad_top + pad_bottom - kh) // stride + 1
    ow = (w + pad_left + pad_right - kw) // stride + 1
    acc = np.zeros((oh, ow, oc), dtype=np.int64)
    wt = w_ohwi.astype(np.int64)
    for dy in range(kh):
        for dx in range(kw):
            win = xp[dy:dy + stride * (oh - 1) + 1:stride, dx:dx + stride * (ow - 1) + 1:stride, :]
            acc += np.einsum("hwc,oc->hwo", win, wt[:, dy, dx, :])
    return acc


def conv2d_bruteforce(x_hwc, w_ohwi, stride, pads, pad_value):
    """Six nested loops; used only by the self-check to validate conv2d_int."""
    pt, pl, pb, pr = pads
    h, w, c = x_hwc.shape
    oc, kh, kw, _ = w_ohwi.shape
    oh = (h + pt + pb - kh) // stride + 1
    ow = (w + pl + pr - kw) // stride + 1
    out = np.zeros((oh, ow, oc), dtype=np.int64)
    for oy in range(oh):
        for ox in range(ow):
            for o in range(oc):
                s = 0
                for dy in range(kh):
                    for dx in range(kw):
                        iy, ix = oy * stride + dy - pt, ox * stride + dx - pl
                        for i in range(c):
                            v = int(x_hwc[iy, ix, i]) if 0 <= iy < h and 0 <= ix < w else pad_value
                            s += v * int(w_ohwi[o, dy, dx, i])
                out[oy, ox, o] = s
    return out


def matmul_int(a, b_nk):
    """C[m][n] = sum_k A[m][k] * B[n][k] in int64 (mtx512's matmul_int)."""
    return a.astype(np.int64) @ b_nk.astype(np.int64).T


def out_cvt(acc, scale, shift, offset, lo=-128, hi=127):
    """DPU output convert as the TRM describes it with CVT_TYPE 0 (multiply first) and CVT_ROUND 0
    (an exact .5 carries only when the integer part is odd): round(acc * scale / 2^shift) + offset,
    then saturate. Exact integer arithmetic. Returns (values, ties, saturated)."""
    flat = [int(v) for v in np.asarray(acc).reshape(-1)]
    res, ties, sat = [], 0, 0
    half = 1 << (shift - 1) if shift > 0 else 0
    for a in flat:
        p = a * scale
        if shift == 0:
            q = p
        else:
            q, r = divmod(p, 1 << shift)  # floor division, 0 <= r < 2^shift
            if r > half or (r == half and (q & 1)):
                q += 1
            ties += r == half
        y = q + offset
        if y < lo or y > hi:
            sat += 1
            y = min(max(y, lo), hi)
        res.append(y)
    return np.array(res, dtype=np.int64).reshape(np.asarray(acc).shape), ties, sat


def mesa_out_cvt_params(conv_scale, truncate_bits=0):
    """OUT_CVT_SCALE and OUT_CVT_SHIFT exactly as Mesa derives them from the float scale
    (MESA-CMD fill_first_regcmd): 15 bits of the float below the sign, bit 14 forced, plus one;
    shift 141 - biased exponent (minus the truncate bits)."""
    bits = int(np.float32(conv_scale).view(np.uint32))
    shift = 127 + 31 - 32 - (bits >> 23) + 16
    if truncate_bits > 0:
        shift -= 1
    scale = ((bits >> 9) & 0x7FFF) + 1
    if scale < (1 << 14):
        scale |= 1 << 14
    return scale, shift - 1
