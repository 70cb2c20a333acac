// SPDX-License-Identifier: MIT
// Decode and validation of the DPU / DPU_RDMA registers.
#include "npu/rknpu/dpu_config.h"

#include <cstring>

#include <fmt/format.h>

#include "hw/rknpu_regs.h"

namespace npu::rknpu {

using namespace hw::rknpu;

namespace {

int32_t sext16(uint32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v & 0xffffu)); }

template <typename CFG>
DpuStage decode_stage(uint32_t cfg, uint32_t alu, uint32_t mul, uint32_t relux, uint32_t addr, const CFG& f) {
    DpuStage s;
    s.bypass = f.bypass.get(cfg) != 0;
    s.alu_bypass = f.alu_bypass.get(cfg) != 0;
    s.mul_bypass = f.mul_bypass.get(cfg) != 0;
    s.mul_prelu = f.mul_prelu.get(cfg) != 0;
    s.relu_bypass = f.relu_bypass.get(cfg) != 0;
    s.relux_en = f.relux_en.get(cfg) != 0;
    s.alu_from_mem = f.alu_src.get(cfg) != 0;
    s.alu_algo = f.alu_algo.get(cfg);
    s.alu_operand = alu;
    s.mul_from_mem = f.mul_src.get(mul) != 0;
    s.mul_shift = f.mul_shift.get(mul);
    s.mul_operand = f.mul_operand.get(mul);
    s.relux_cmp = relux;
    s.operand_addr = addr;
    return s;
}

struct StageFields {
    hw::Field bypass, alu_bypass, mul_bypass, mul_prelu, relu_bypass, relux_en, alu_src, alu_algo;
    hw::Field mul_src, mul_shift, mul_operand;
};

}  // namespace

DpuConfig decode_dpu(const RegFile& rf, bool from_core, uint32_t atom) {
    DpuConfig d;
    d.from_core = from_core;
    d.atom = atom;
    auto f = [&](uint16_t off, hw::Field fld) { return rf.field(off, fld); };
    d.w = f(DPU_DATA_CUBE_WIDTH::kOffset, DPU_DATA_CUBE_WIDTH::WIDTH) + 1;
    d.h = f(DPU_DATA_CUBE_HEIGHT::kOffset, DPU_DATA_CUBE_HEIGHT::HEIGHT) + 1;
    d.c = f(DPU_DATA_CUBE_CHANNEL::kOffset, DPU_DATA_CUBE_CHANNEL::CHANNEL) + 1;
    d.proc = static_cast<Precision>(f(DPU_DATA_FORMAT::kOffset, DPU_DATA_FORMAT::PROC_PRECISION));
    d.out = static_cast<Precision>(f(DPU_DATA_FORMAT::kOffset, DPU_DATA_FORMAT::OUT_PRECISION));
    d.output_mode = f(DPU_FEATURE_MODE_CFG::kOffset, DPU_FEATURE_MODE_CFG::OUTPUT_MODE);
    d.dst_addr = rf.read(DPU_DST_BASE_ADDR::kOffset);
    d.dst_surf_stride_bytes = DPU_DST_SURF_STRIDE::DST_SURF_STRIDE.bytes(rf.read(DPU_DST_SURF_STRIDE::kOffset));
    d.notch = f(DPU_DATA_CUBE_NOTCH_ADDR::kOffset, DPU_DATA_CUBE_NOTCH_ADDR::NOTCH_ADDR_0);
    d.transpose = f(DPU_FEATURE_MODE_CFG::kOffset, DPU_FEATURE_MODE_CFG::TP_EN) != 0;
    d.tp_channels = f(DPU_WDMA_SIZE_0::kOffset, DPU_WDMA_SIZE_0::SIZE_C_WDMA) + 1;
    d.tp_precision = f(DPU_WDMA_SIZE_0::kOffset, DPU_WDMA_SIZE_0::TP_PRECISION);

    const uint32_t rmode = rf.read(DPU_RDMA_RDMA_FEATURE_MODE_CFG::kOffset);
    d.mrdma_disable = DPU_RDMA_RDMA_FEATURE_MODE_CFG::MRDMA_DISABLE.get(rmode) != 0;
    d.src_prec = static_cast<Precision>(DPU_RDMA_RDMA_FEATURE_MODE_CFG::IN_PRECISION.get(rmode));
    d.rdma_w = f(DPU_RDMA_RDMA_DATA_CUBE_WIDTH::kOffset, DPU_RDMA_RDMA_DATA_CUBE_WIDTH::WIDTH) + 1;
    d.rdma_h = f(DPU_RDMA_RDMA_DATA_CUBE_HEIGHT::kOffset, DPU_RDMA_RDMA_DATA_CUBE_HEIGHT::HEIGHT) + 1;
    d.rdma_c = f(DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::kOffset, DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::CHANNEL) + 1;
    d.src_addr = rf.read(DPU_RDMA_RDMA_SRC_BASE_ADDR::kOffset);
    // UNVERIFIED: SURF_NOTCH is read as the gap (16-byte units) between input surfaces.
    d.src_surf_stride_bytes = surface_bytes(d.rdma_w, d.rdma_h, atom) +
                              DPU_RDMA_RDMA_SURF_NOTCH::SURF_NOTCH_ADDR.bytes(rf.read(DPU_RDMA_RDMA_SURF_NOTCH::kOffset));

    namespace BS = DPU_BS_CFG;
    namespace BSM = DPU_BS_MUL_CFG;
    const StageFields bsf{BS::BS_BYPASS,      BS::BS_ALU_BYPASS, BS::BS_MUL_BYPASS,        BS::BS_MUL_PRELU,
                          BS::BS_RELU_BYPASS, BS::BS_RELUX_EN,   BS::BS_ALU_SRC,           BS::BS_ALU_ALGO,
                          BSM::BS_MUL_SRC,    BSM::BS_MUL_SHIFT_VALUE, BSM::BS_MUL_OPERAND};
    d.bs = decode_stage(rf.read(BS::kOffset), rf.read(DPU_BS_ALU_CFG::kOffset), rf.read(BSM::kOffset),
                        rf.read(DPU_BS_RELUX_CMP_VALUE::kOffset), rf.read(DPU_RDMA_RDMA_BS_BASE_ADDR::kOffset), bsf);
    namespace BN = DPU_BN_CFG;
    namespace BNM = DPU_BN_MUL_CFG;
    const StageFields bnf{BN::BN_BYPASS,      BN::BN_ALU_BYPASS, BN::BN_MUL_BYPASS,        BN::BN_MUL_PRELU,
                          BN::BN_RELU_BYPASS, BN::BN_RELUX_EN,   BN::BN_ALU_SRC,           BN::BN_ALU_ALGO,
                          BNM::BN_MUL_SRC,    BNM::BN_MUL_SHIFT_VALUE, BNM::BN_MUL_OPERAND};
    d.bn = decode_stage(rf.read(BN::kOffset), rf.read(DPU_BN_ALU_CFG::kOffset), rf.read(BNM::kOffset),
                        rf.read(DPU_BN_RELUX_CMP_VALUE::kOffset), rf.read(DPU_RDMA_RDMA_BN_BASE_ADDR::kOffset), bnf);

    const uint32_t ew = rf.read(DPU_EW_CFG::kOffset);
    d.ew.bypass = DPU_EW_CFG::EW_BYPASS.get(ew) != 0;
    d.ew.op_bypass = DPU_EW_CFG::EW_OP_BYPASS.get(ew) != 0;
    d.ew.op_is_mul = DPU_EW_CFG::EW_OP_TYPE.get(ew) != 0;
    d.ew.mul_prelu = DPU_EW_CFG::EW_MUL_PRELU.get(ew) != 0;
    d.ew.op_from_mem = DPU_EW_CFG::EW_OP_SRC.get(ew) != 0;
    d.ew.lut_bypass = DPU_EW_CFG::EW_LUT_BYPASS.get(ew) != 0;
    d.ew.cvt_bypass = DPU_EW_CFG::EW_OP_CVT_BYPASS.get(ew) != 0;
    d.ew.relu_bypass = DPU_EW_CFG::EW_RELU_BYPASS.get(ew) != 0;
    d.ew.relux_en = DPU_EW_CFG::EW_RELUX_EN.get(ew) != 0;
    d.ew.alu_algo = DPU_EW_CFG::EW_ALU_ALGO.get(ew);
    d.ew.operand = rf.read(DPU_EW_OP_VALUE_0::kOffset);
    d.ew.cvt_offset = static_cast<int32_t>(rf.read(DPU_EW_CVT_OFFSET_VALUE::kOffset));
    const uint32_t ews = rf.read(DPU_EW_CVT_SCALE_VALUE::kOffset);
    d.ew.cvt_scale = DPU_EW_CVT_SCALE_VALUE::EW_OP_CVT_SCALE.get(ews);
    d.ew.cvt_shift = DPU_EW_CVT_SCALE_VALUE::EW_OP_CVT_SHIFT.get(ews);
    d.ew.truncate = DPU_EW_CVT_SCALE_VALUE::EW_TRUNCATE.get(ews);
    d.ew.relux_cmp = rf.read(DPU_EW_RELUX_CMP_VALUE::kOffset);
    const uint32_t er = rf.read(DPU_RDMA_RDMA_ERDMA_CFG::kOffset);
    d.ew.erdma_disable = DPU_RDMA_RDMA_ERDMA_CFG::ERDMA_DISABLE.get(er) != 0;
    d.ew.erdma_data_size = DPU_RDMA_RDMA_ERDMA_CFG::ERDMA_DATA_SIZE.get(er);
    d.ew.data_mode = DPU_RDMA_RDMA_ERDMA_CFG::ERDMA_DATA_MODE.get(er);
    d.ew.addr = rf.read(DPU_RDMA_RDMA_EW_BASE_ADDR::kOffset);
    d.ew.surf_stride_bytes = DPU_RDMA_RDMA_EW_SURF_STRIDE::EW_SURF_STRIDE.bytes(rf.read(DPU_RDMA_RDMA_EW_SURF_STRIDE::kOffset));

    const uint32_t lc = rf.read(DPU_LUT_CFG::kOffset);
    d.lut.expand_en = DPU_LUT_CFG::LUT_EXPAND_EN.get(lc) != 0;
    d.lut.uflow_prefer_lo = DPU_LUT_CFG::LUT_UFLOW_PRIORITY.get(lc) != 0;
    d.lut.oflow_prefer_lo = DPU_LUT_CFG::LUT_OFLOW_PRIORITY.get(lc) != 0;
    d.lut.hybrid_prefer_lo = DPU_LUT_CFG::LUT_HYBRID_PRIORITY.get(lc) != 0;
    d.lut.le_index_select = f(DPU_LUT_INFO::kOffset, DPU_LUT_INFO::LUT_LE_INDEX_SELECT);
    d.lut.lo_index_select = f(DPU_LUT_INFO::kOffset, DPU_LUT_INFO::LUT_LO_INDEX_SELECT);
    d.lut.le_start = static_cast<int32_t>(rf.read(DPU_LUT_LE_START::kOffset));
    d.lut.le_end = static_cast<int32_t>(rf.read(DPU_LUT_LE_END::kOffset));
    d.lut.lo_start = static_cast<int32_t>(rf.read(DPU_LUT_LO_START::kOffset));
    d.lut.lo_end = static_cast<int32_t>(rf.read(DPU_LUT_LO_END::kOffset));
    const uint32_t les = rf.read(DPU_LUT_LE_SLOPE_SCALE::kOffset), lesh = rf.read(DPU_LUT_LE_SLOPE_SHIFT::kOffset);
    const uint32_t los = rf.read(DPU_LUT_LO_SLOPE_SCALE::kOffset), losh = rf.read(DPU_LUT_LO_SLOPE_SHIFT::kOffset);
    d.lut.le_uflow_scale = sext16(DPU_LUT_LE_SLOPE_SCALE::LUT_LE_SLOPE_UFLOW_SCALE.get(les));
    d.lut.le_oflow_scale = sext16(DPU_LUT_LE_SLOPE_SCALE::LUT_LE_SLOPE_OFLOW_SCALE.get(les));
    d.lut.lo_uflow_scale = sext16(DPU_LUT_LO_SLOPE_SCALE::LUT_LO_SLOPE_UFLOW_SCALE.get(los));
    d.lut.lo_oflow_scale = sext16(DPU_LUT_LO_SLOPE_SCALE::LUT_LO_SLOPE_OFLOW_SCALE.get(los));
    d.lut.le_uflow_shift = DPU_LUT_LE_SLOPE_SHIFT::LUT_LE_SLOPE_UFLOW_SHIFT.get(lesh);
    d.lut.le_oflow_shift = DPU_LUT_LE_SLOPE_SHIFT::LUT_LE_SLOPE_OFLOW_SHIFT.get(lesh);
    d.lut.lo_uflow_shift = DPU_LUT_LO_SLOPE_SHIFT::LUT_LO_SLOPE_UFLOW_SHIFT.get(losh);
    d.lut.lo_oflow_shift = DPU_LUT_LO_SLOPE_SHIFT::LUT_LO_SLOPE_OFLOW_SHIFT.get(losh);
    d.lut.le.assign(rf.lut_le().begin(), rf.lut_le().end());
    d.lut.lo.assign(rf.lut_lo().begin(), rf.lut_lo().end());

    d.out_cvt_offset = static_cast<int32_t>(rf.read(DPU_OUT_CVT_OFFSET::kOffset));
    d.out_cvt_scale = f(DPU_OUT_CVT_SCALE::kOffset, DPU_OUT_CVT_SCALE::OUT_CVT_SCALE);
    d.out_cvt_shift = f(DPU_OUT_CVT_SHIFT::kOffset, DPU_OUT_CVT_SHIFT::OUT_CVT_SHIFT);
    return d;
}

std::vector<Fault> validate_dpu(const DpuConfig& d, const hw::SocProfile& /*p*/) {
    std::vector<Fault> out;
    auto fault = [&](const char* block, const char* reg, const char* field, uint64_t v, std::string msg) {
        out.push_back(Fault{block, reg, field, v, std::move(msg)});
    };
    auto prec_ok = [](Precision x) { return x == Precision::Int8 || x == Precision::Int16 || x == Precision::Fp16; };
    if (d.proc != Precision::Int8 && d.proc != Precision::Int16 && d.proc != Precision::Fp16)
        fault("DPU", "DATA_FORMAT", "PROC_PRECISION", static_cast<uint32_t>(d.proc),
              "DPU processing precision must be int8/int16 (0/1, integer path) or fp16 (2, float path)");
    const bool int_out = d.out == Precision::Int8 || d.out == Precision::Int16 || d.out == Precision::Int32;
    const bool float_out = d.out == Precision::Fp16 || d.out == Precision::Fp32;
    if (!int_out && !float_out)
        fault("DPU", "DATA_FORMAT", "OUT_PRECISION", static_cast<uint32_t>(d.out),
              "output precision must be int8 0, int16 1, fp16 2, int32 4 or fp32 5");
    else if (d.float_path() != float_out)
        fault("DPU", "DATA_FORMAT", "OUT_PRECISION", static_cast<uint32_t>(d.out),
              fmt::format("{} output from the {} path (int<->float output conversion is not modelled)",
                          precision_name(d.out), d.float_path() ? "float" : "integer"));
    if (d.transpose) {
        const uint32_t want = elem_bytes(d.out) == 1 ? 0u : (elem_bytes(d.out) == 2 ? 1u : 2u);
        if (d.tp_precision != want)
            fault("DPU", "WDMA_SIZE_0", "TP_PRECISION", d.tp_precision,
                  fmt::format("transpose element width {} does not match the {} output", d.tp_precision, precision_name(d.out)));
        if (d.tp_channels > d.c)
            fault("DPU", "WDMA_SIZE_0", "SIZE_C_WDMA", d.tp_channels - 1,
                  fmt::format("transposed pixel of {} channels exceeds the {} channels of the cube", d.tp_channels, d.c));
    } else {
        // The WDMA's rows (w atoms, notch apart) and surfaces (DST_SURF_STRIDE apart) must not overlap:
        // either surfaces hold their rows one after another, or rows hold every surface's atoms.
        const uint64_t row = static_cast<uint64_t>(d.w) * d.atom, line = d.out_row_bytes();
        const uint64_t c1s = (d.c + c2_of(d.out, d.atom) - 1) / c2_of(d.out, d.atom);
        const uint64_t s = d.dst_surf_stride_bytes;
        const bool stacked = s >= (static_cast<uint64_t>(d.h) - 1) * line + row;
        const bool interleaved = s >= row && line >= (c1s - 1) * s + row;
        if (c1s > 1 && !stacked && !interleaved)
            fault("DPU", "DST_SURF_STRIDE", "DST_SURF_STRIDE", s,
                  fmt::format("output surfaces of {} rows of {} bytes ({} bytes apart) overlap at a stride of {} bytes", d.h,
                              row, line, s));
    }
    if (!d.from_core) {
        if (d.mrdma_disable)
            fault("DPU_RDMA", "RDMA_FEATURE_MODE_CFG", "MRDMA_DISABLE", 1,
                  "DPU task without CORE input needs the MRDMA to read its input cube");
        if (!prec_ok(d.src_prec))
            fault("DPU_RDMA", "RDMA_FEATURE_MODE_CFG", "IN_PRECISION", static_cast<uint32_t>(d.src_prec),
                  "input precision must be 0, 1 or 2");
        else if ((d.src_prec == Precision::Fp16) != d.float_path())
            fault("DPU_RDMA", "RDMA_FEATURE_MODE_CFG", "IN_PRECISION", static_cast<uint32_t>(d.src_prec),
                  fmt::format("{} input on the {} path", precision_name(d.src_prec), d.float_path() ? "float" : "integer"));
        if (d.rdma_w != d.w || d.rdma_h != d.h || d.rdma_c != d.c)
            fault("DPU_RDMA", "RDMA_DATA_CUBE_WIDTH/HEIGHT/CHANNEL", "WIDTH/HEIGHT/CHANNEL",
                  d.rdma_w * 65536ull + d.rdma_h,
                  fmt::format("MRDMA cube {}x{}x{} differs from the DPU cube {}x{}x{}", d.rdma_w, d.rdma_h, d.rdma_c,
                              d.w, d.h, d.c));
    }
    auto check_stage = [&](const DpuStage& s, const char* reg, const char* algo_field) {
        if (s.bypass) return;
        if (!s.alu_bypass && s.alu_algo > 2)
            fault("DPU", reg, algo_field, s.alu_algo, "ALU algorithm not modelled (0 max, 1 min, 2 add)");
    };
    check_stage(d.bs, "BS_CFG", "BS_ALU_ALGO");
    check_stage(d.bn, "BN_CFG", "BN_ALU_ALGO");
    if (!d.ew.bypass) {
        if (!d.ew.op_bypass && d.ew.op_is_mul && d.ew.truncate > 63)
            fault("DPU", "EW_CVT_SCALE_VALUE", "EW_TRUNCATE", d.ew.truncate, "EW multiply truncation beyond 63 bits");
        if (!d.ew.op_bypass && !d.ew.op_is_mul && d.ew.alu_algo > (d.float_path() ? 4u : 2u))
            fault("DPU", "EW_CFG", "EW_ALU_ALGO", d.ew.alu_algo,
                  d.float_path() ? "ALU algorithm not modelled (0 max, 1 min, 2 add, 3 div, 4 minus)"
                                 : "ALU algorithm not modelled on the integer path (0 max, 1 min, 2 add)");
        if (!d.ew.op_bypass && d.ew.op_from_mem) {
            if (d.ew.erdma_disable)
                fault("DPU_RDMA", "RDMA_ERDMA_CFG", "ERDMA_DISABLE", 1,
                      "EW operand from memory (EW_OP_SRC = 1) but the ERDMA is disabled");
            if (d.ew.erdma_data_size == 0 || d.ew.erdma_data_size > 2)
                fault("DPU_RDMA", "RDMA_ERDMA_CFG", "ERDMA_DATA_SIZE", d.ew.erdma_data_size,
                      "EW operand element size not modelled (1: 8-bit, 2: 16-bit)");
            if (d.ew.data_mode > 1)
                fault("DPU_RDMA", "RDMA_ERDMA_CFG", "ERDMA_DATA_MODE", d.ew.data_mode,
                      "EW operand mode not modelled (0 per channel, 1 per pixel)");
            if (d.ew.surf_stride_bytes != 0 && d.c > c2_of(d.ew_prec(), d.atom) &&
                d.ew.surf_stride_bytes < surface_bytes(d.ew_w(), d.ew_h(), d.atom))
                fault("DPU_RDMA", "RDMA_EW_SURF_STRIDE", "EW_SURF_STRIDE", d.ew.surf_stride_bytes,
                      fmt::format("EW surface stride below width*height*{} bytes", d.atom));
            if (d.float_path() && !d.ew.cvt_bypass && d.ew.cvt_offset != 0)
                fault("DPU", "EW_CVT_OFFSET_VALUE", "EW_OP_CVT_OFFSET", static_cast<uint32_t>(d.ew.cvt_offset),
                      "the float path's EW operand convert is modelled with offset 0 (scale x 2^-shift)");
        }
        if (!d.ew.lut_bypass) {
            if (d.lut.expand_en)
                fault("DPU", "LUT_CFG", "LUT_EXPAND_EN", 1, "exponent-indexed (expanded) LE table not modelled");
            if (!d.float_path() && (d.lut.le_index_select > 31 || d.lut.lo_index_select > 31))
                fault("DPU", "LUT_INFO", "LUT_LE/LO_INDEX_SELECT", std::max(d.lut.le_index_select, d.lut.lo_index_select),
                      "index select beyond 31");
            // Float path (UNVERIFIED): start/end are fp32 bits (lut_lookup_f).
            const auto f = [](int32_t bits) {
                float v = 0;
                std::memcpy(&v, &bits, 4);
                return v;
            };
            const bool backwards = d.float_path()
                                       ? !(f(d.lut.le_end) >= f(d.lut.le_start)) || !(f(d.lut.lo_end) >= f(d.lut.lo_start))
                                       : d.lut.le_end < d.lut.le_start || d.lut.lo_end < d.lut.lo_start;
            if (backwards)
                fault("DPU", "LUT_LE_END/LUT_LO_END", "LUT_LE_END/LUT_LO_END", 0, "table end below its start");
        }
    }
    // validate_conv already checks these two for conv tasks.
    if (!d.from_core && d.out_cvt_shift > 63)
        fault("DPU", "OUT_CVT_SHIFT", "OUT_CVT_SHIFT", d.out_cvt_shift, "shift beyond the 64-bit accumulator path");

    return out;
}

}  // namespace npu::rknpu
