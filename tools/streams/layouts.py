# SPDX-License-Identifier: MIT
"""Memory layouts as the silicon producers write them (docs/rknpu-register-semantics.md section 7).

Every packer here has an unpacker so the self-check can prove the round trip; the generators use
only the packers, the expected outputs are computed on plain NHWC / row-major arrays and packed
last.
"""
import numpy as np

from rkregs import align, div_up


def pack_nc1hwc2(x_hwc, c2, c_total=None, pad=0):
    """HWC array -> [C1][H][W][C2] with channels padded to c_total (default: multiple of c2)."""
    h, w, c = x_hwc.shape
    c_total = align(c, c2) if c_total is None else c_total
    assert c_total % c2 == 0 and c_total >= c
    full = np.full((h, w, c_total), pad, dtype=x_hwc.dtype)
    full[:, :, :c] = x_hwc
    return np.ascontiguousarray(full.reshape(h, w, c_total // c2, c2).transpose(2, 0, 1, 3))


def unpack_nc1hwc2(buf, h, w, c, c2):
    c1 = div_up(c, c2)
    arr = buf.reshape(c1, h, w, c2).transpose(1, 2, 0, 3).reshape(h, w, c1 * c2)
    return arr[:, :, :c]


def nc1hwc2_mask(h, w, c, c2, c_total):
    """uint8 mask over a packed output: 0xff where a real channel lives, 0 for padded channels."""
    m = np.zeros((h, w, c_total), dtype=np.uint8)
    m[:, :, :c] = 0xFF
    return pack_nc1hwc2(m, c2, c_total)


def mesa_conv_weights(w_s8_ohwi, zp_s8, depthwise=False):
    """Weights in the order of Mesa's rkt_fill_weights (MESA-COEF).

    w_s8_ohwi holds the weights already converted to signed (uint8 - 0x80), shape
    [OC][KH][KW][IC]; zp_s8 is the weight zero point minus 0x80 (the padding value).
    Order: [OC/32][IC1][KH][KW][min(OC,32)][min(IC,32)], IC padded to >= 16, only
    ALIGN(OC, 2) kernels written in the last group (Mesa skips the rest when OC > 2).
    """
    assert not depthwise, "depthwise layout not used by the streams"
    oc_real, kh, kw, ic_real = w_s8_ohwi.shape
    # Mesa pads the weights' input channels only up to 16; above 16 a count that is not a
    # multiple of 16 gives fewer weight bytes than WEIGHT_BYTES_PER_KERNEL (a Mesa limitation,
    # not a hardware rule), so the streams never use one.
    assert ic_real < 16 or ic_real % 16 == 0, "input channels Mesa lays out consistently: < 16 or 16k"
    ic = max(ic_real, 16)
    oc = align(oc_real, 2)
    groups = 32
    ic1 = div_up(ic, groups)
    ic2 = min(ic, groups)
    out = []
    for o1 in range(div_up(oc, 32)):
        for i1 in range(ic1):
            for y in range(kh):
                for x in range(kw):
                    for o2 in range(min(oc, 32)):
                        for i2 in range(ic2):
                            o = o1 * 32 + o2
                            i = i1 * groups + i2
                            if oc_real > 2 and o >= align(oc_real, 2):
                                continue
                            if o >= oc_real:
                                out.append(0)
                            elif i >= ic_real:
                                if i2 < 16 or (ic_real % 32) > 16:
                                    out.append(zp_s8)
                            else:
                                out.append(int(w_s8_ohwi[o, y, x, i]))
    return np.array(out, dtype=np.int8)


def mesa_weights_bytes(oc_real, kh, kw, ic_real):
    """Size Mesa allocates for the weight buffer (rkt_fill_weights)."""
    return kw * kh * align(oc_real, 2) * align(max(ic_real, 16), 32) * 2


def mtx_weights_int8(b_nk):
    """mtx512 weight_int8: [N/32][K/32][32 kernels][32 k] (MTX-MM)."""
    n, k = b_nk.shape
    assert n % 32 == 0 and k % 32 == 0
    return np.ascontiguousarray(b_nk.reshape(n // 32, 32, k // 32, 32).transpose(0, 2, 1, 3)).reshape(-1)


def mtx_weights_fp16(b_nk):
    """mtx512 weight_fp16: [N/16][K/32][16 kernels][32 k] (MTX-MM)."""
    n, k = b_nk.shape
    assert n % 16 == 0 and k % 32 == 0
    return np.ascontiguousarray(b_nk.reshape(n // 16, 16, k // 32, 32).transpose(0, 2, 1, 3)).reshape(-1)


def unpack_mtx_weights(buf, n, k, n2):
    return buf.reshape(n // n2, k // 32, n2, 32).transpose(0, 2, 1, 3).reshape(n, k)


def mtx_feature(a_mk, c2):
    """mtx512 feature_data(K, M, 1, C2): matrix A as a W=1, H=M, C=K cube: [K/C2][M][C2]."""
    m, k = a_mk.shape
    return pack_nc1hwc2(a_mk.reshape(m, 1, k), c2)


def mtx_output(c_mn):
    """int32/fp32 output of the matmul: [N/4][M][4] (MTX-T read-back)."""
    m, n = c_mn.shape
    return pack_nc1hwc2(c_mn.reshape(m, 1, n), 4)


def nhwc_bytes(x_hwc):
    return np.ascontiguousarray(x_hwc).reshape(-1)
