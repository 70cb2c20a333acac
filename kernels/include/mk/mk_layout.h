/* SPDX-License-Identifier: MIT */
/* Data-movement kernels for any element size (int8, int32, fp32): Concat, Transpose, Pad, Slice /
 * StridedSlice. Reshape/Flatten/Squeeze are a copy (or nothing) in a dense layout. Shapes are
 * rank-4 (pad lower ranks with leading 1s). */
#ifndef MK_LAYOUT_H
#define MK_LAYOUT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Concatenation of `count` inputs viewed as [outer][axis_i][inner]. */
void mk_concat(const void* const* inputs, const int32_t* axis_sizes, int32_t count, int32_t outer, int32_t inner,
               size_t elem_bytes, void* out);

/** out = transpose(in, perm) for rank-4 `dims`. */
void mk_transpose4(const void* in, const int32_t dims[4], const int32_t perm[4], size_t elem_bytes, void* out);

/** Constant padding of rank-4 `dims` by pads_before/pads_after; `value` is one element. */
void mk_pad4(const void* in, const int32_t dims[4], const int32_t before[4], const int32_t after[4],
             const void* value, size_t elem_bytes, void* out);

/** Strided slice: out[i] = in[begin + i * step] per axis, out_dims given (steps may be negative). */
void mk_slice4(const void* in, const int32_t dims[4], const int32_t begin[4], const int32_t step[4],
               const int32_t out_dims[4], size_t elem_bytes, void* out);

/** Gather along the middle axis of [outer][n][inner]: out[o][k][i] = in[o][idx[k]][i], k < count (the
 * caller checks idx[k] in [0, n)). */
void mk_gather(const void* in, int32_t outer, int32_t n, int32_t inner, const int32_t* idx, int32_t count, size_t elem_bytes,
               void* out);

/** Tile of rank-4 `dims` by `mult` (output dims = dims * mult): out[i] = in[i mod dims] per axis. */
void mk_tile4(const void* in, const int32_t dims[4], const int32_t mult[4], size_t elem_bytes, void* out);

#ifdef __cplusplus
}
#endif
#endif
