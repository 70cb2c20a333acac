// SPDX-License-Identifier: MIT
// Two-entry elastic buffer at a valid/ready input: in_ready and out_valid are decoded from
// registers only, so no combinational path crosses the block boundary (a producer and this block
// may be separate simulation models, or separate placement regions). Full throughput: one beat
// per cycle in and out; two beats of slack absorb the registered-ready latency.
module npu_skid #(
    parameter int W = 8
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         in_valid,
    output logic         in_ready,
    input  logic [W-1:0] in_data,
    output logic         out_valid,
    input  logic         out_ready,
    output logic [W-1:0] out_data
);
  /* verilator tracing_off */
  logic [W-1:0] mem[2];
  /* verilator tracing_on */
  logic [1:0] cnt;
  logic wp, rp;
  logic push, pop;

  assign in_ready = (cnt != 2'd2);
  assign out_valid = (cnt != 2'd0);
  assign out_data = mem[rp];
  assign push = in_valid && in_ready;
  assign pop = out_valid && out_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      cnt <= 2'd0;
      wp <= 1'b0;
      rp <= 1'b0;
    end else begin
      if (push) wp <= ~wp;
      if (pop) rp <= ~rp;
      cnt <= cnt + {1'b0, push} - {1'b0, pop};
    end
  end

  always_ff @(posedge clk) begin
    if (push) mem[wp] <= in_data;
  end
endmodule
