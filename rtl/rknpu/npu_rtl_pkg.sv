// SPDX-License-Identifier: MIT
// Integer helpers shared by the RKNPU datapath RTL. They implement, bit for bit, the arithmetic of
// the C++ engines (npu_models/numerics requant.cpp mul_shift with Rounding::HalfUp, num::saturate,
// the DPU ALU of dpu_engine.cpp): the RTL is checked against those in tests/rtl.
package npu_rtl_pkg;

  // Arithmetic right shift by s in [0, 63], rounded half up: floor(x / 2^s) plus bit s-1 of x
  // (the remainder is >= half exactly when that bit is set). s = 0 returns x.
  function automatic logic signed [63:0] shr_round(input logic signed [63:0] x, input logic [5:0] s);
    logic signed [63:0] q;
    logic half;
    q = x >>> s;
    half = (s == 6'd0) ? 1'b0 : x[s-6'd1];
    return q + $signed({63'd0, half});
  endfunction

  // Saturate a 64-bit value to int32.
  function automatic logic signed [31:0] sat32(input logic signed [63:0] x);
    if (x > 64'sd2147483647) return 32'sh7fffffff;
    if (x < -64'sd2147483648) return 32'sh80000000;
    return x[31:0];
  endfunction

  // Sign-extend int32 to 64 bits.
  function automatic logic signed [63:0] sx64(input logic signed [31:0] x);
    return {{32{x[31]}}, x};
  endfunction

  // DPU ALU (BS/BN/EW *_ALU_ALGO): 0 max, 1 min, otherwise add; saturated to int32.
  function automatic logic signed [31:0] alu32(input logic [1:0] algo, input logic signed [31:0] a,
                                               input logic signed [31:0] b);
    case (algo)
      2'd0: return (a > b) ? a : b;
      2'd1: return (a < b) ? a : b;
      default: return sat32(sx64(a) + sx64(b));
    endcase
  endfunction

  // ReLU, then (ReLUX) the clip to [0, cmp].
  function automatic logic signed [31:0] relu32(input logic signed [31:0] v, input logic relux_en,
                                                input logic signed [31:0] cmp);
    logic signed [31:0] r;
    r = (v < 0) ? 32'sd0 : v;
    if (relux_en && r > cmp) r = cmp;
    return r;
  endfunction

endpackage
