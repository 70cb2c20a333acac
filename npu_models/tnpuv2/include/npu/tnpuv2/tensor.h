// SPDX-License-Identifier: MIT
// tnpuv2 tensor descriptors (TENSOR command) and the element access the engines share: six
// right-aligned dims with byte strides, formats S4/U4 (nibbles packed along DIM5), S8/U8,
// S16/U16, S32, F32, and the grid (BITS) codes saturate to. No SystemC.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/tnpuv2/codec.h"

namespace npu::tnpuv2 {

/// What an engine reads and writes memory through: the core's staged DMA image (TLM wrapper) or
/// a flat memory (direct execution). false = address outside memory.
class MemView {
   public:
    virtual ~MemView() = default;
    virtual bool read(uint64_t addr, uint8_t* dst, size_t n) = 0;
    virtual bool write(uint64_t addr, const uint8_t* src, size_t n) = 0;
};

struct TensorDesc {
    bool valid = false;
    uint32_t format = 0;  ///< hw::tnpuv2::enums::FORMAT
    int bits = 8;         ///< grid width (codes saturate to it)
    int32_t zp = 0;
    uint64_t addr = 0;
    int rank = 4;
    std::array<int64_t, 6> dims{1, 1, 1, 1, 1, 1};     ///< DIM0 (outermost) .. DIM5 (innermost)
    std::array<int64_t, 6> strides{0, 0, 0, 0, 0, 0};  ///< bytes

    bool is_float() const;
    bool is_signed() const;
    bool is_4bit() const;
    int elem_bits() const;  ///< 4, 8, 16 or 32
    int64_t numel() const;
    int64_t grid_lo() const;
    int64_t grid_hi() const;
    /// Byte offset of the element at `idx` from addr (4-bit: of its byte; *nibble = 0 low, 1 high).
    int64_t offset_of(const std::array<int64_t, 6>& idx, int* nibble = nullptr) const;
    /// "S8[1x56x56x64]@0x1000 zp -3" for messages and disassembly.
    std::string text() const;
};

/// Descriptor from a TENSOR command, and its slot (hw::tnpuv2::enums::SLOT).
TensorDesc decode_tensor(const hw::tnpuv2::Command& c);
int tensor_slot(const hw::tnpuv2::Command& c);
/// Problems of a descriptor by itself ("" when none): 4-bit DIM5 stride, F32 bits, grid width > format.
std::string check_tensor(const TensorDesc& t);

/// A contiguous byte range of memory.
struct Run {
    uint64_t addr = 0, bytes = 0;
};
/// The byte runs a tensor's elements occupy, sorted and merged (broadcast and overlapping
/// strides read each byte once). For writes `overlap` is set when two elements share bytes.
std::vector<Run> tensor_runs(const TensorDesc& t, bool* overlap = nullptr);
uint64_t runs_bytes(const std::vector<Run>& runs);

/// Dense row-major images of a tensor (over its six dims): integer codes or floats.
/// Return false when a read/write falls outside memory (*bad_addr set).
bool load_codes(const TensorDesc& t, MemView& m, std::vector<int64_t>& out, uint64_t* bad_addr);
bool load_floats(const TensorDesc& t, MemView& m, std::vector<float>& out, uint64_t* bad_addr);
/// Codes are saturated to the descriptor's grid before they are stored.
bool store_codes(const TensorDesc& t, MemView& m, const std::vector<int64_t>& v, uint64_t* bad_addr);
bool store_floats(const TensorDesc& t, MemView& m, const std::vector<float>& v, uint64_t* bad_addr);

/// Calls f(linear, idx) for every element of dims in row-major order.
template <typename F>
void for_each_index(const std::array<int64_t, 6>& dims, F f) {
    std::array<int64_t, 6> idx{0, 0, 0, 0, 0, 0};
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    for (int64_t i = 0; i < n; ++i) {
        f(i, idx);
        for (int d = 5; d >= 0; --d) {
            if (++idx[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
            idx[static_cast<size_t>(d)] = 0;
        }
    }
}

/// Format bits of a hw::tnpuv2::enums::FORMAT value and its name.
int format_bits(uint32_t format);
const char* format_name(uint32_t format);

}  // namespace npu::tnpuv2
