// SPDX-License-Identifier: MIT
// RKNPU CORE: the int8 MAC cell array and its accumulators (NVDLA CMAC + CACC lineage,
// hardware-facts.md §3.1). Microarchitecture and timing: rtl/README.md.
//
// Array: PIXELS x KERNELS MAC cells of LANES int8 multipliers each (RK3588: 2 x 32 x 16 = 1024
// MACs per cycle). A cell holds one weight atom (LANES input channels of one kernel) and forms the
// dot product of it with one feature atom; the KERNELS cells of a pixel share that pixel's atom,
// the PIXELS pixel groups share the weights. Depthwise (cfg_dw): a beat is one pixel of up to
// FSLOTS = PIXELS*KATOMS channel groups (RK3588: 4 x 16 = 64 channels, the depthwise channel
// padding Mesa applies); cell k < KATOMS of pixel group p multiplies slot q = p*KATOMS + k lane
// by lane with weight atom q, without the adder tree (64 products per beat). Depthwise beats are
// admitted at cfg_dw_rate / 65536 per cycle (a credit counter): the lane utilisation the silicon
// shows on depthwise convolutions (rtl/README.md: from the profile's fitted
// npu.depthwise_mac_efficiency), not a figure this RTL derives.
//
// Streams (valid/ready, both through 2-entry skid buffers):
//   w_*  weight atoms of one weight set, kernel 0 first, WATOMS per beat (w_cnt of them valid,
//        atom a at bits [a*LANES*8 +: LANES*8]: one 128-byte CBUF entry per cycle),
//        w_last on the beat with the set's last atom (a short
//        set leaves the remaining cells at zero). A set is loaded into shadow registers while the
//        array computes with the active set; it becomes active when the active set's last
//        feature beat (f_wlast) has been multiplied.
//   f_*  feature beats: FSLOTS = PIXELS*KATOMS atom slots (slot q at bits [q*LANES*8 +: LANES*8];
//        normal mode uses slots 0..PIXELS-1, one pixel each; depthwise: channel group f_cgrp + q
//        of pixel f_pix), the slots that hold data (f_pmask), the accumulator entry (f_entry), f_first (the
//        entry starts from zero: first kernel tap and channel group), f_last (the entry is
//        complete and goes to the delivery FIFO), f_wlast (last beat for the active weight set),
//        and the tags of the output (f_pix: output pixel of slot 0, f_cgrp: channel group of
//        kernel atom 0).
//   o_*  accumulators, one output atom per beat: LANES int32 channels of one pixel, after
//        CORE_CLIP_TRUNCATE (cfg_clip_shift: shift right rounding half up). Beats of an entry:
//        pixel slot major, then kernel atom (KERNELS/LANES per pixel); o_pix = f_pix + slot,
//        o_cgrp = f_cgrp + kernel atom (depthwise: one atom per slot, o_pix = f_pix,
//        o_cgrp = f_cgrp + slot). Atoms whose channels start at or
//        beyond cfg_cout (output channels of the task) are not emitted.
// Pipeline: skid -> s0 (beat) -> s1 (products) -> s2 (4-product partial sums) -> s3 (cell sums)
// -> accumulate into entry (flop array) -> delivery FIFO (ENTRIES deep) -> output register.
// One feature beat per cycle; the pipeline stalls as a whole only when a completed entry finds
// the delivery FIFO full.
module npu_core_mac #(
    parameter int LANES = 16,
    parameter int KERNELS = 32,
    parameter int PIXELS = 2,
    parameter int ENTRIES = 32,
    parameter int WATOMS = 8,
    parameter int PIXW = 28,
    parameter int CGW = 12,
    parameter int EW = $clog2(ENTRIES),
    parameter int WCW = $clog2(WATOMS + 1)
) (
    input  logic                      clk,
    input  logic                      rst_n,
    input  logic                      cfg_dw,
    input  logic [               4:0] cfg_clip_shift,
    input  logic [              13:0] cfg_cout,
    input  logic [              16:0] cfg_dw_rate,
    input  logic                      w_valid,
    output logic                      w_ready,
    input  logic [WATOMS*LANES*8-1:0] w_data,
    input  logic [           WCW-1:0] w_cnt,
    input  logic                      w_last,
    input  logic                      f_valid,
    output logic                      f_ready,
    input  logic [KERNELS/LANES*PIXELS*LANES*8-1:0] f_data,
    input  logic [KERNELS/LANES*PIXELS-1:0] f_pmask,
    input  logic                      f_first,
    input  logic                      f_last,
    input  logic                      f_wlast,
    input  logic [            EW-1:0] f_entry,
    input  logic [          PIXW-1:0] f_pix,
    input  logic [           CGW-1:0] f_cgrp,
    output logic                      o_valid,
    input  logic                      o_ready,
    output logic [      LANES*32-1:0] o_data,
    output logic [          PIXW-1:0] o_pix,
    output logic [           CGW-1:0] o_cgrp,
    output logic                      idle
);
  import npu_rtl_pkg::*;

  localparam int KATOMS = KERNELS / LANES;  // output atoms per pixel (normal mode)
  localparam int KW = $clog2(KERNELS + 1);
  localparam int KI = $clog2(KERNELS);
  localparam int CELLS = PIXELS * KERNELS;
  localparam int FSLOTS = PIXELS * KATOMS;  // feature atom slots per beat (depthwise: all pixels)
  localparam int FW = FSLOTS * LANES * 8 + FSLOTS + 3 + EW + PIXW + CGW;  // feature beat width
  localparam int DW = $clog2(ENTRIES + 1);

  // ---- input skid buffers ------------------------------------------------------------------
  logic ws_valid, ws_ready, ws_last;
  logic [WATOMS*LANES*8-1:0] ws_data;
  logic [WCW-1:0] ws_cnt;
  npu_skid #(
      .W(WATOMS * LANES * 8 + WCW + 1)
  ) u_wskid (
      .clk(clk),
      .rst_n(rst_n),
      .in_valid(w_valid),
      .in_ready(w_ready),
      .in_data({w_last, w_cnt, w_data}),
      .out_valid(ws_valid),
      .out_ready(ws_ready),
      .out_data({ws_last, ws_cnt, ws_data})
  );

  logic fs_valid, fs_ready;
  logic [FW-1:0] fs_bits;
  npu_skid #(
      .W(FW)
  ) u_fskid (
      .clk(clk),
      .rst_n(rst_n),
      .in_valid(f_valid),
      .in_ready(f_ready),
      .in_data({f_data, f_pmask, f_first, f_last, f_wlast, f_entry, f_pix, f_cgrp}),
      .out_valid(fs_valid),
      .out_ready(fs_ready),
      .out_data(fs_bits)
  );
  logic [FSLOTS*LANES*8-1:0] fs_data;
  logic [FSLOTS-1:0] fs_pmask;
  logic fs_first, fs_last, fs_wlast;
  logic [EW-1:0] fs_entry;
  logic [PIXW-1:0] fs_pix;
  logic [CGW-1:0] fs_cgrp;
  assign {fs_data, fs_pmask, fs_first, fs_last, fs_wlast, fs_entry, fs_pix, fs_cgrp} = fs_bits;

  // ---- pipeline control --------------------------------------------------------------------
  logic v0, v1, v2, v3;
  logic last3;
  logic dfifo_full;
  logic adv;  // every stage advances (global stall only on a full delivery FIFO)
  assign adv = !(v3 && last3 && dfifo_full);

  // ---- weights: shadow set being loaded, active set in the cells ---------------------------
  /* verilator tracing_off */
  logic [KERNELS-1:0][LANES*8-1:0] w_shd;
  logic [KERNELS-1:0][LANES*8-1:0] w_act;
  /* verilator tracing_on */
  logic shd_full, act_valid;
  logic [KW-1:0] shd_cnt, shd_n;
  logic wlast0;
  logic consume, promote;
  assign consume = v0 && wlast0 && adv;  // the active set's last beat is multiplied this cycle
  assign promote = shd_full && (!act_valid || consume);
  assign ws_ready = !shd_full || promote;
  // Depthwise issue credit (Q16): a beat needs a whole credit; cfg_dw_rate is added while less
  // than one is held, so beats enter at cfg_dw_rate / 65536 per cycle on average.
  logic [16:0] dw_credit, dw_left;
  logic dw_go;
  assign dw_go = !cfg_dw || dw_credit[16];
  // A beat entering s0 this cycle multiplies next cycle with the set active after this edge.
  assign fs_ready = adv && dw_go && ((consume || !act_valid) ? shd_full : act_valid);
  assign dw_left = (fs_valid && fs_ready && cfg_dw) ? {1'b0, dw_credit[15:0]} : dw_credit;
  always_ff @(posedge clk) begin
    if (!rst_n) dw_credit <= '0;
    else if (!cfg_dw) dw_credit <= 17'h10000;
    else if (!dw_left[16]) dw_credit <= dw_left + cfg_dw_rate;
    else dw_credit <= dw_left;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      shd_full <= 1'b0;
      act_valid <= 1'b0;
      shd_cnt <= '0;
      shd_n <= '0;
    end else begin
      if (promote) begin
        act_valid <= 1'b1;
        shd_full <= 1'b0;
      end else if (consume) begin
        act_valid <= 1'b0;
      end
      if (ws_valid && ws_ready) begin
        if (ws_last) begin
          shd_full <= 1'b1;
          shd_n <= shd_cnt + KW'(ws_cnt);
          shd_cnt <= '0;
        end else begin
          shd_cnt <= shd_cnt + KW'(ws_cnt);
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    for (int k = 0; k < KERNELS; k++) begin
      if (promote) w_act[k] <= (KW'(k) < shd_n) ? w_shd[k] : '0;
    end
    if (ws_valid && ws_ready) begin
      for (int a = 0; a < WATOMS; a++) begin
        logic [KI-1:0] at;
        at = shd_cnt[KI-1:0] + KI'(a);
        if (WCW'(a) < ws_cnt) w_shd[at] <= ws_data[a*LANES*8+:LANES*8];
      end
    end
  end

  // ---- s0: the accepted feature beat -------------------------------------------------------
  /* verilator tracing_off */
  logic [FSLOTS*LANES*8-1:0] f0;
  /* verilator tracing_on */
  logic [FSLOTS-1:0] pm0, pm1, pm2, pm3;
  logic first0, first1, first2, first3;
  logic last0, last1, last2;
  logic [EW-1:0] e0, e1, e2, e3;
  logic [PIXW-1:0] pix0, pix1, pix2, pix3;
  logic [CGW-1:0] cg0, cg1, cg2, cg3;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      v0 <= 1'b0;
      v1 <= 1'b0;
      v2 <= 1'b0;
      v3 <= 1'b0;
    end else if (adv) begin
      v0 <= fs_valid && fs_ready;
      v1 <= v0;
      v2 <= v1;
      v3 <= v2;
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      if (fs_valid && fs_ready) begin
        f0 <= fs_data;
        pm0 <= fs_pmask;
        first0 <= fs_first;
        last0 <= fs_last;
        wlast0 <= fs_wlast;
        e0 <= fs_entry;
        pix0 <= fs_pix;
        cg0 <= fs_cgrp;
      end
      {pm1, first1, last1, e1, pix1, cg1} <= {pm0, first0, last0, e0, pix0, cg0};
      {pm2, first2, last2, e2, pix2, cg2} <= {pm1, first1, last1, e1, pix1, cg1};
      {pm3, first3, last3, e3, pix3, cg3} <= {pm2, first2, last2, e2, pix2, cg2};
    end
  end

  function automatic logic [31:0] cell_sum(input logic [LANES/4-1:0][17:0] ps);
    logic signed [31:0] t;
    t = 32'sd0;
    for (int g = 0; g < LANES / 4; g++) t = t + 32'($signed(ps[g]));
    return t;
  endfunction

  // ---- s1: products; s2: partial sums of 4; s3: cell sums ----------------------------------
  // Packed arrays (element selects are unsigned: $signed() where read). Not traced: 16K+ bits
  // per stage would swamp the VCD; the ports, valid bits and tags show the pipeline.
  /* verilator tracing_off */
  logic [PIXELS-1:0][KERNELS-1:0][LANES-1:0][15:0] prod1;
  logic [PIXELS-1:0][KERNELS-1:0][LANES/4-1:0][17:0] psum2;
  logic [FSLOTS-1:0][LANES-1:0][15:0] dwp2;
  logic [PIXELS-1:0][KERNELS-1:0][31:0] val3;
  /* verilator tracing_on */

  // Each stage's data registers load only when the stage before holds a beat (clock enable).
  // Depthwise: cell k < KATOMS of pixel group p takes feature slot p*KATOMS + k and the weight
  // atom of that slot's channel group (the operand muxes); the other cells multiply zero.
  always_ff @(posedge clk) begin
    if (adv && v0) begin
      for (int p = 0; p < PIXELS; p++) begin
        for (int k = 0; k < KERNELS; k++) begin
          for (int l = 0; l < LANES; l++) begin
            logic [7:0] fa, wa;
            if (cfg_dw) begin
              fa = (k < KATOMS) ? f0[((p*KATOMS+(k%KATOMS))*LANES+l)*8+:8] : 8'd0;
              wa = w_act[p*KATOMS+(k%KATOMS)][l*8+:8];
            end else begin
              fa = f0[(p*LANES+l)*8+:8];
              wa = w_act[k][l*8+:8];
            end
            prod1[p][k][l] <= 16'($signed(fa) * $signed(wa));
          end
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv && v1) begin
      for (int p = 0; p < PIXELS; p++) begin
        for (int k = 0; k < KERNELS; k++) begin
          for (int g = 0; g < LANES / 4; g++) begin
            psum2[p][k][g] <= 18'($signed(prod1[p][k][4*g])) + 18'($signed(prod1[p][k][4*g+1])) +
                18'($signed(prod1[p][k][4*g+2])) + 18'($signed(prod1[p][k][4*g+3]));
          end
        end
        for (int a = 0; a < KATOMS; a++)
          for (int l = 0; l < LANES; l++) dwp2[p*KATOMS+a][l] <= prod1[p][a][l];
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv && v2) begin
      for (int p = 0; p < PIXELS; p++) begin
        for (int k = 0; k < KERNELS; k++) begin
          if (cfg_dw) val3[p][k] <= 32'($signed(dwp2[p*KATOMS+k/LANES][k%LANES]));
          else val3[p][k] <= cell_sum(psum2[p][k]);
        end
      end
    end
  end

  // ---- accumulate into the stripe's entry; completed entries to the delivery FIFO ----------
  /* verilator tracing_off */
  logic [CELLS*32-1:0] acc[ENTRIES];
  logic [CELLS*32-1:0] dmem[ENTRIES];
  logic [FSLOTS-1:0] dpm[ENTRIES];
  logic [PIXW-1:0] dpix[ENTRIES];
  logic [CGW-1:0] dcg[ENTRIES];
  /* verilator tracing_on */
  logic [EW-1:0] dwp, drp;
  logic [DW-1:0] dcnt;
  logic push, pop;

  assign dfifo_full = (dcnt == DW'(ENTRIES));
  assign push = adv && v3 && last3;

  // The entry's new sums, computed at the clock edge that stores them (a register-file
  // read-add-write); the delivery FIFO takes the same value when the entry completes.
  always_ff @(posedge clk) begin
    logic [CELLS*32-1:0] nxt;
    if (adv && v3) begin
      for (int p = 0; p < PIXELS; p++) begin
        for (int k = 0; k < KERNELS; k++) begin
          nxt[(p*KERNELS+k)*32+:32] = (first3 ? 32'd0 : acc[e3][(p*KERNELS+k)*32+:32]) + val3[p][k];
        end
      end
      acc[e3] <= nxt;
      if (last3) begin
        dmem[dwp] <= nxt;
        dpm[dwp] <= pm3;
        dpix[dwp] <= pix3;
        dcg[dwp] <= cg3;
      end
    end
  end

  // ---- output: one atom per beat from the FIFO head ----------------------------------------
  // Slot j of an entry = pixel slot j / KATOMS, kernel atom j % KATOMS (depthwise: channel group
  // j of the entry's pixel; the cell sums sit at the same place). Slots that hold no output
  // (pixel slot beyond the output, channels at or beyond cfg_cout: the padded kernels and the
  // padded depthwise channel groups) are skipped without a bubble: the next beat is the lowest
  // remaining slot.
  localparam int SLOTS = PIXELS * KATOMS;
  logic [SLOTS-1:0] rem, cur, pick, head_mask;
  logic rem_valid, can_load, head_ok;
  assign can_load = !o_valid || o_ready;
  assign head_ok = (dcnt != '0);

  always_comb begin
    for (int j = 0; j < SLOTS; j++) begin
      head_mask[j] = cfg_dw ? (dpm[drp][j] && (32'(dcg[drp]) + 32'(j)) * LANES < 32'(cfg_cout)) :
          (dpm[drp][j/KATOMS] && (32'(dcg[drp]) + 32'(j % KATOMS)) * LANES < 32'(cfg_cout));
    end
    cur = rem_valid ? rem : head_mask;
    pick = cur & (~cur + 1'b1);  // lowest set bit
  end
  assign pop = can_load && head_ok && ((cur & ~pick) == '0);

  function automatic logic [31:0] clip(input logic [31:0] a, input logic [4:0] s);
    // |a| <= 2^31 shifted right by >= 1 (or not at all) stays within int32: no saturation.
    return sat32(shr_round(sx64($signed(a)), {1'b0, s}));
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      o_valid <= 1'b0;
      rem_valid <= 1'b0;
      dwp <= '0;
      drp <= '0;
      dcnt <= '0;
    end else begin
      if (push) dwp <= (dwp == EW'(ENTRIES - 1)) ? '0 : dwp + 1'b1;
      if (pop) drp <= (drp == EW'(ENTRIES - 1)) ? '0 : drp + 1'b1;
      dcnt <= dcnt + {{(DW - 1) {1'b0}}, push} - {{(DW - 1) {1'b0}}, pop};
      if (can_load) begin
        o_valid <= head_ok && (cur != '0);
        if (head_ok) begin
          rem <= cur & ~pick;
          rem_valid <= !pop;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (can_load && head_ok) begin
      for (int j = 0; j < SLOTS; j++) begin
        if (pick[j]) begin
          for (int l = 0; l < LANES; l++) begin
            o_data[l*32+:32] <= clip(dmem[drp][((j/KATOMS)*KERNELS+(j%KATOMS)*LANES+l)*32+:32], cfg_clip_shift);
          end
          o_pix <= dpix[drp] + PIXW'(cfg_dw ? 0 : j / KATOMS);
          o_cgrp <= dcg[drp] + CGW'(cfg_dw ? j : j % KATOMS);
        end
      end
    end
  end

  assign idle = !fs_valid && !v0 && !v1 && !v2 && !v3 && (dcnt == '0) && !o_valid;
endmodule
