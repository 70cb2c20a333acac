// SPDX-License-Identifier: MIT
// RKNPU DPU integer datapath (NVDLA SDP lineage, hardware-facts.md §3.1): the BS and BN stages
// (ALU, MUL with shift and PReLU, ReLU/ReLUX), the EW stage with its operand convert (ALU or
// MUL with truncation, ReLU/ReLUX; no LUT) and the output convert (OUT_CVT scale, shift,
// offset, saturation to int8/int16). Arithmetic bit-exact with run_dpu's integer branch
// (npu_models/rknpu/src/dpu_engine.cpp): every shift rounds half up, every ALU/MUL result
// saturates to int32. Microarchitecture and timing: rtl/README.md.
//
// Streams (valid/ready through 2-entry skid buffers):
//   i_*  one input atom per beat: LANES int32 values (CORE accumulators or MRDMA elements,
//        sign-extended) of channel group i_cgrp at pixel i_pix (a tag passed to the output).
//   e_*  the EW operand atom of the same beat (ERDMA elements, sign-extended to 16 bits); read
//        only when the EW operand comes from memory, joined with i_* beat for beat.
//   o_*  one output atom per beat: LANES results (int8 sign-extended, or int16), tags as input.
//   p_*  per-channel operand write (before the task): channel group p_addr, lane l at
//        [l*96 +: 96] = {BS ALU int32, BS MUL int16, BN ALU int32, BN MUL int16} (the values the
//        DPU_RDMA reads from memory or the register operand, resolved per channel).
// Pipeline: skid -> D0 (operands, parameter RAM read) -> D1..D3 BS (ALU | MUL | shift/ReLU),
// D4..D6 BN, EW operand convert in parallel with BS, D7..D8 EW, D9..D10 output convert.
// Throughput one atom per cycle, latency 12 cycles; a global stall when the output is not taken.
module npu_dpu_cvt #(
    parameter int LANES = 16,
    parameter int PIXW = 28,
    parameter int CGW = 12,
    parameter int GROUPS = 512,
    parameter int GW = $clog2(GROUPS)
) (
    input  logic                clk,
    input  logic                rst_n,
    // BS / BN stages (bypass = !en)
    input  logic                cfg_bs_en,
    input  logic                cfg_bs_alu_en,
    input  logic [         1:0] cfg_bs_alu_algo,
    input  logic                cfg_bs_mul_en,
    input  logic                cfg_bs_mul_prelu,
    input  logic [         5:0] cfg_bs_mul_shift,
    input  logic                cfg_bs_relu_en,
    input  logic                cfg_bs_relux_en,
    input  logic [        31:0] cfg_bs_relux,
    input  logic                cfg_bn_en,
    input  logic                cfg_bn_alu_en,
    input  logic [         1:0] cfg_bn_alu_algo,
    input  logic                cfg_bn_mul_en,
    input  logic                cfg_bn_mul_prelu,
    input  logic [         5:0] cfg_bn_mul_shift,
    input  logic                cfg_bn_relu_en,
    input  logic                cfg_bn_relux_en,
    input  logic [        31:0] cfg_bn_relux,
    // EW stage
    input  logic                cfg_ew_en,
    input  logic                cfg_ew_op_en,
    input  logic                cfg_ew_op_mul,
    input  logic                cfg_ew_mul_prelu,
    input  logic [         1:0] cfg_ew_alu_algo,
    input  logic                cfg_ew_op_mem,
    input  logic [        31:0] cfg_ew_operand,
    input  logic                cfg_ew_cvt_en,
    input  logic [        31:0] cfg_ew_cvt_offset,
    input  logic [        15:0] cfg_ew_cvt_scale,
    input  logic [         5:0] cfg_ew_cvt_shift,
    input  logic [         5:0] cfg_ew_truncate,
    input  logic                cfg_ew_relu_en,
    input  logic                cfg_ew_relux_en,
    input  logic [        31:0] cfg_ew_relux,
    // output convert
    input  logic [        15:0] cfg_out_scale,
    input  logic [         5:0] cfg_out_shift,
    input  logic [        31:0] cfg_out_offset,
    input  logic                cfg_out_int16,
    // per-channel operands
    input  logic                p_valid,
    input  logic [      GW-1:0] p_addr,
    input  logic [LANES*96-1:0] p_data,
    // input
    input  logic                i_valid,
    output logic                i_ready,
    input  logic [LANES*32-1:0] i_data,
    input  logic [    PIXW-1:0] i_pix,
    input  logic [     CGW-1:0] i_cgrp,
    input  logic                e_valid,
    output logic                e_ready,
    input  logic [LANES*16-1:0] e_data,
    // output
    output logic                o_valid,
    input  logic                o_ready,
    output logic [LANES*16-1:0] o_data,
    output logic [    PIXW-1:0] o_pix,
    output logic [     CGW-1:0] o_cgrp,
    output logic                idle
);
  import npu_rtl_pkg::*;

  localparam int IW = LANES * 32 + PIXW + CGW;
  localparam int NS = 11;  // D0 .. D10

  // ---- skid buffers and the join of the main and EW operand streams ------------------------
  logic is_valid, is_ready, es_valid, es_ready;
  logic [IW-1:0] is_bits;
  logic [LANES*16-1:0] es_data;
  npu_skid #(
      .W(IW)
  ) u_iskid (
      .clk(clk),
      .rst_n(rst_n),
      .in_valid(i_valid),
      .in_ready(i_ready),
      .in_data({i_data, i_pix, i_cgrp}),
      .out_valid(is_valid),
      .out_ready(is_ready),
      .out_data(is_bits)
  );
  npu_skid #(
      .W(LANES * 16)
  ) u_eskid (
      .clk(clk),
      .rst_n(rst_n),
      .in_valid(e_valid),
      .in_ready(e_ready),
      .in_data(e_data),
      .out_valid(es_valid),
      .out_ready(es_ready),
      .out_data(es_data)
  );
  logic [LANES*32-1:0] is_data;
  logic [PIXW-1:0] is_pix;
  logic [CGW-1:0] is_cgrp;
  assign {is_data, is_pix, is_cgrp} = is_bits;

  logic ew_mem, take, adv;
  logic [NS-1:0] v;  // stage valid bits
  assign ew_mem = cfg_ew_en && cfg_ew_op_en && cfg_ew_op_mem;
  assign adv = !o_valid || o_ready;
  assign is_ready = adv && (!ew_mem || es_valid);
  assign es_ready = adv && ew_mem && is_valid;
  assign take = is_valid && is_ready;

  // ---- per-channel operand RAM (written before the task, read at D0) ------------------------
  /* verilator tracing_off */
  logic [LANES*96-1:0] pram[GROUPS];
  /* verilator tracing_on */
  always_ff @(posedge clk) begin
    if (p_valid) pram[p_addr] <= p_data;
  end

  // ---- stage registers (packed per lane; not traced: the ports and valid bits show the flow) --
  /* verilator tracing_off */
  logic [LANES-1:0][31:0] x0, a1, a2, b3, a4, a5, n6, n7, w8, ec3, ec4, ec5, ec6;
  logic [LANES-1:0][15:0] e0, e1, e2, bsm0, bsm1, bnm0, bnm1, bnm2, bnm3, bnm4;
  logic [LANES-1:0][31:0] bsa0, bna0, bna1, bna2, bna3;
  logic [LANES-1:0][33:0] ex1;
  logic [LANES-1:0][63:0] m2, ep2, m5, p7, po9;
  logic [LANES-1:0][15:0] q10;
  /* verilator tracing_on */
  logic [PIXW-1:0] pix[NS];
  logic [CGW-1:0] cg[NS];

  // Control of the stage pipeline: valid bits and tags shift when the pipeline advances.
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      v <= '0;
    end else if (adv) begin
      v <= {v[NS-2:0], take};
    end
  end
  assign o_valid = v[NS-1];
  always_ff @(posedge clk) begin
    if (adv) begin
      pix[0] <= is_pix;
      cg[0] <= is_cgrp;
      for (int s = 1; s < NS; s++) begin
        pix[s] <= pix[s-1];
        cg[s] <= cg[s-1];
      end
    end
  end

  logic bs_alu_on, bs_mul_on, bs_relu_on, bn_alu_on, bn_mul_on, bn_relu_on, ew_op_on, ew_relu_on;
  assign bs_alu_on = cfg_bs_en && cfg_bs_alu_en;
  assign bs_mul_on = cfg_bs_en && cfg_bs_mul_en;
  assign bs_relu_on = cfg_bs_en && cfg_bs_relu_en;
  assign bn_alu_on = cfg_bn_en && cfg_bn_alu_en;
  assign bn_mul_on = cfg_bn_en && cfg_bn_mul_en;
  assign bn_relu_on = cfg_bn_en && cfg_bn_relu_en;
  assign ew_op_on = cfg_ew_en && cfg_ew_op_en;
  assign ew_relu_on = cfg_ew_en && cfg_ew_relu_en;

  // The end of a BS/BN/EW stage: the MUL result x * m >> shift (rounded, saturated) replaces x
  // when the MUL is on (with PReLU only for negative x), then ReLU / ReLUX when on.
  function automatic logic [31:0] stage_end(input logic mul_on, input logic prelu, input logic [31:0] x,
                                            input logic [63:0] prod, input logic [5:0] shift,
                                            input logic relu_on, input logic relux_en,
                                            input logic [31:0] relux);
    logic signed [31:0] r;
    r = $signed(x);
    if (mul_on && (!prelu || r < 0)) r = sat32(shr_round($signed(prod), shift));
    if (relu_on) r = relu32(r, relux_en, $signed(relux));
    return r;
  endfunction

  // The lane datapath's registers are clock-enabled while any stage holds a beat.
  always_ff @(posedge clk) begin
    if (adv && (take || v != '0)) begin
      for (int l = 0; l < LANES; l++) begin
        // D0: operands
        x0[l] <= is_data[l*32+:32];
        e0[l] <= es_data[l*16+:16];
        {bsa0[l], bsm0[l], bna0[l], bnm0[l]} <= pram[is_cgrp[GW-1:0]][l*96+:96];
        // D1: BS ALU; EW operand + offset
        a1[l] <= bs_alu_on ? alu32(cfg_bs_alu_algo, $signed(x0[l]), $signed(bsa0[l])) : x0[l];
        bsm1[l] <= bsm0[l];
        {bna1[l], bnm1[l]} <= {bna0[l], bnm0[l]};
        ex1[l] <= 34'($signed(e0[l])) + 34'($signed(cfg_ew_cvt_offset));
        e1[l] <= e0[l];
        // D2: BS MUL product; EW operand x scale
        m2[l] <= 64'($signed(a1[l]) * $signed(bsm1[l]));
        a2[l] <= a1[l];
        {bna2[l], bnm2[l]} <= {bna1[l], bnm1[l]};
        ep2[l] <= 64'($signed(ex1[l]) * $signed({1'b0, cfg_ew_cvt_scale}));
        e2[l] <= e1[l];
        // D3: BS shift, ReLU; EW operand shift
        b3[l] <= stage_end(bs_mul_on, cfg_bs_mul_prelu, a2[l], m2[l], cfg_bs_mul_shift, bs_relu_on,
                           cfg_bs_relux_en, cfg_bs_relux);
        {bna3[l], bnm3[l]} <= {bna2[l], bnm2[l]};
        ec3[l] <= cfg_ew_cvt_en ? sat32(shr_round($signed(ep2[l]), cfg_ew_cvt_shift)) : 32'($signed(e2[l]));
        // D4: BN ALU
        a4[l] <= bn_alu_on ? alu32(cfg_bn_alu_algo, $signed(b3[l]), $signed(bna3[l])) : b3[l];
        bnm4[l] <= bnm3[l];
        ec4[l] <= ec3[l];
        // D5: BN MUL product
        m5[l] <= 64'($signed(a4[l]) * $signed(bnm4[l]));
        a5[l] <= a4[l];
        ec5[l] <= ec4[l];
        // D6: BN shift, ReLU
        n6[l] <= stage_end(bn_mul_on, cfg_bn_mul_prelu, a5[l], m5[l], cfg_bn_mul_shift, bn_relu_on,
                           cfg_bn_relux_en, cfg_bn_relux);
        ec6[l] <= ec5[l];
        // D7: EW operation (product, or ALU result held in n7 with p7 unused)
        p7[l] <= 64'($signed(n6[l]) * $signed(ew_mem ? ec6[l] : cfg_ew_operand));
        n7[l] <= (ew_op_on && !cfg_ew_op_mul) ? alu32(cfg_ew_alu_algo, $signed(n6[l]),
                                                      $signed(ew_mem ? ec6[l] : cfg_ew_operand))
                                              : n6[l];
        // D8: EW truncate, ReLU
        w8[l] <= stage_end(ew_op_on && cfg_ew_op_mul, cfg_ew_mul_prelu, n7[l], p7[l], cfg_ew_truncate,
                           ew_relu_on, cfg_ew_relux_en, cfg_ew_relux);
        // D9: output convert product
        po9[l] <= 64'($signed(w8[l]) * $signed({1'b0, cfg_out_scale}));
        // D10: shift, offset, saturate
        q10[l] <= out_sat(shr_round($signed(po9[l]), cfg_out_shift) + sx64($signed(cfg_out_offset)), cfg_out_int16);
      end
    end
  end

  function automatic logic [15:0] out_sat(input logic signed [63:0] q, input logic i16);
    if (i16) begin
      if (q > 64'sd32767) return 16'h7fff;
      if (q < -64'sd32768) return 16'h8000;
      return q[15:0];
    end
    if (q > 64'sd127) return 16'h007f;
    if (q < -64'sd128) return 16'hff80;
    return {{8{q[7]}}, q[7:0]};
  endfunction

  assign o_data = q10;
  assign o_pix = pix[NS-1];
  assign o_cgrp = cg[NS-1];
  assign idle = !is_valid && (v == '0);
endmodule
