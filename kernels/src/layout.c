/* SPDX-License-Identifier: MIT */
/* Data movement for any element size. */
#include <string.h>

#include "mk/mk_layout.h"

void mk_concat(const void* const* inputs, const int32_t* axis_sizes, int32_t count, int32_t outer, int32_t inner,
               size_t elem_bytes, void* out) {
    int32_t total = 0;
    for (int32_t i = 0; i < count; ++i) total += axis_sizes[i];
    uint8_t* o = (uint8_t*)out;
    const size_t row_out = (size_t)total * (size_t)inner * elem_bytes;
    size_t off = 0;
    for (int32_t i = 0; i < count; ++i) {
        const size_t row = (size_t)axis_sizes[i] * (size_t)inner * elem_bytes;
        const uint8_t* src = (const uint8_t*)inputs[i];
        for (int32_t r = 0; r < outer; ++r) memcpy(o + (size_t)r * row_out + off, src + (size_t)r * row, row);
        off += row;
    }
}

void mk_transpose4(const void* in, const int32_t dims[4], const int32_t perm[4], size_t elem_bytes, void* out) {
    int32_t in_stride[4];
    in_stride[3] = 1;
    for (int i = 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * dims[i + 1];
    int32_t od[4], os[4];
    for (int i = 0; i < 4; ++i) {
        od[i] = dims[perm[i]];
        os[i] = in_stride[perm[i]];
    }
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    for (int32_t a = 0; a < od[0]; ++a)
        for (int32_t b = 0; b < od[1]; ++b)
            for (int32_t c = 0; c < od[2]; ++c)
                for (int32_t d = 0; d < od[3]; ++d) {
                    const int32_t si = a * os[0] + b * os[1] + c * os[2] + d * os[3];
                    memcpy(dst, src + (size_t)si * elem_bytes, elem_bytes);
                    dst += elem_bytes;
                }
}

void mk_pad4(const void* in, const int32_t dims[4], const int32_t before[4], const int32_t after[4], const void* value,
             size_t elem_bytes, void* out) {
    int32_t od[4];
    for (int i = 0; i < 4; ++i) od[i] = dims[i] + before[i] + after[i];
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    for (int32_t a = 0; a < od[0]; ++a)
        for (int32_t b = 0; b < od[1]; ++b)
            for (int32_t c = 0; c < od[2]; ++c)
                for (int32_t d = 0; d < od[3]; ++d) {
                    const int32_t ia = a - before[0], ib = b - before[1], ic = c - before[2], id = d - before[3];
                    const int inside = ia >= 0 && ia < dims[0] && ib >= 0 && ib < dims[1] && ic >= 0 && ic < dims[2] &&
                                       id >= 0 && id < dims[3];
                    if (inside)
                        memcpy(dst, src + (size_t)(((ia * dims[1] + ib) * dims[2] + ic) * dims[3] + id) * elem_bytes,
                               elem_bytes);
                    else
                        memcpy(dst, value, elem_bytes);
                    dst += elem_bytes;
                }
}

void mk_slice4(const void* in, const int32_t dims[4], const int32_t begin[4], const int32_t step[4],
               const int32_t out_dims[4], size_t elem_bytes, void* out) {
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    for (int32_t a = 0; a < out_dims[0]; ++a)
        for (int32_t b = 0; b < out_dims[1]; ++b)
            for (int32_t c = 0; c < out_dims[2]; ++c)
                for (int32_t d = 0; d < out_dims[3]; ++d) {
                    const int32_t ia = begin[0] + a * step[0], ib = begin[1] + b * step[1];
                    const int32_t ic = begin[2] + c * step[2], id = begin[3] + d * step[3];
                    memcpy(dst, src + (size_t)(((ia * dims[1] + ib) * dims[2] + ic) * dims[3] + id) * elem_bytes,
                           elem_bytes);
                    dst += elem_bytes;
                }
}

void mk_gather(const void* in, int32_t outer, int32_t n, int32_t inner, const int32_t* idx, int32_t count, size_t elem_bytes,
               void* out) {
    const size_t row = (size_t)inner * elem_bytes;
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    for (int32_t o = 0; o < outer; ++o)
        for (int32_t k = 0; k < count; ++k, dst += row) memcpy(dst, src + ((size_t)o * (size_t)n + (size_t)idx[k]) * row, row);
}

void mk_tile4(const void* in, const int32_t dims[4], const int32_t mult[4], size_t elem_bytes, void* out) {
    const uint8_t* src = (const uint8_t*)in;
    uint8_t* dst = (uint8_t*)out;
    const size_t row = (size_t)dims[3] * elem_bytes;
    for (int32_t a = 0; a < dims[0] * mult[0]; ++a)
        for (int32_t b = 0; b < dims[1] * mult[1]; ++b)
            for (int32_t c = 0; c < dims[2] * mult[2]; ++c) {
                const uint8_t* s = src + ((((size_t)(a % dims[0]) * (size_t)dims[1] + (size_t)(b % dims[1])) * (size_t)dims[2] +
                                           (size_t)(c % dims[2])) * row);
                for (int32_t r = 0; r < mult[3]; ++r, dst += row) memcpy(dst, s, row);
            }
}
