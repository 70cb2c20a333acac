// SPDX-License-Identifier: MIT
// Blocked GEMM kernels behind the reference Conv/MatMul operators: fp32 and 8-bit integer with
// exact int32 accumulation (the arithmetic onnxruntime's QLinearConv/MatMulInteger perform).
// Callers: src/ops/conv.cpp, src/ops/matmul.cpp, bench/. Single-threaded and deterministic: the
// integer results are exact, the float ones depend on the kernel's summation order only.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace num {

/// C[MxN] = A[MxK] * B[KxN] (row-major, leading dimensions in elements). Overwrites C.
void sgemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
           int64_t ldc);

/// One 8-bit GEMM operand: data, signedness and zero point(s). `zp` has 1 entry (per tensor) or
/// one per row of A / column of B.
struct Q8Operand {
    const void* data = nullptr;
    bool is_signed = false;
    int64_t ld = 0;  ///< leading dimension in elements
    std::vector<int32_t> zp{0};
};

/// C[MxN] (int32) = sum_k (A[m,k] - zpA[m]) * (B[k,n] - zpB[n]), exact. Overwrites C.
void qgemm(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const Q8Operand& B, int32_t* C, int64_t ldc);

/// Row k (0 <= k < K) of a GEMM B operand written to dst[0..N): lets a convolution feed im2col rows
/// straight into the packer instead of materialising the K x N column matrix.
using QGemmRowFn = std::function<void(int64_t k, uint8_t* dst)>;

/// Requantization of the int32 result straight to 8 bits (onnxruntime's QLinearConv arithmetic):
/// out[m][n] = saturate(RNE(float(acc + bias[m]) * scale[m]) + zp).
struct QGemmRequant {
    const float* scale = nullptr;   ///< per row of A
    const int32_t* bias = nullptr;  ///< per row of A, or nullptr
    int32_t zp = 0;
    bool out_signed = false;  ///< int8 (true) or uint8 output
    void* out = nullptr;      ///< M x N bytes
    int64_t ldo = 0;
};

/// qgemm followed by QGemmRequant; no int32 matrix is materialised on the VNNI path.
void qgemm_requant(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const Q8Operand& B, const QGemmRequant& rq);

/// qgemm with B produced row by row (raw bytes, signedness b_signed, zero point(s) b_zp). With
/// rq set, C may be nullptr and the result is requantized into rq->out instead.
void qgemm_rows(int64_t M, int64_t N, int64_t K, const Q8Operand& A, const QGemmRowFn& b_row, bool b_signed,
                const std::vector<int32_t>& b_zp, int32_t* C, int64_t ldc, const QGemmRequant* rq = nullptr);

/// Name of the integer kernel the CPU selected ("avx512vnni", "generic") for logs and benchmarks.
const char* qgemm_kernel_name();
/// Forces the portable kernels (tests compare them against the vector ones). Not thread-safe.
void gemm_force_generic(bool on);

}  // namespace num
