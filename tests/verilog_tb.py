"""A Verilog testbench with an ideal memory, to run emitted PEs in other simulators.

The memory answers a read in the cycle after the request, accepts every request, and applies
writes lane by lane; it matches hwgen.sim.MemoryModel() (the ideal model) cycle for cycle. The bench
pulses start, counts the cycles busy is high up to and including the done cycle, and dumps the
output frame as hex.
"""


def window_testbench(pe, top, *, memory_words, image_hex, dst_base, out_words, out_hex,
                     frame_stride=None, dump_base=None):
    """A Verilog testbench of a window filter (or, with ``frame_stride``, a system of them:
    its ``ctrl__frame_stride`` is driven and each of its memory channels is served by the
    same ideal memory); it dumps ``out_words`` words from ``dump_base`` (default
    ``dst_base``)."""
    from hwgen.kernels import ChannelPort
    dump_base = dst_base if dump_base is None else dump_base
    stride_port = "" if frame_stride is None else f".ctrl__frame_stride({pe.addr_width}'d{frame_stride}), "
    aw = pe.addr_width
    bits = pe.rd_beat.element_bits
    rd, wr = pe.rd_beat, pe.wr_beat
    prefixes = [port.prefix for port in ChannelPort.ports_of(pe)]
    wires = "".join(f"""
  wire {p}rd_req__valid, {p}rd_rsp__ready, {p}wr_req__valid;
  wire [{aw + rd.lanes - 1}:0] {p}rd_req__payload;
  wire [{aw + wr.lanes + wr.lanes * bits - 1}:0] {p}wr_req__payload;
  reg {p}rd_rsp__valid = 1'b0;
  reg [{rd.lanes * bits - 1}:0] {p}rd_rsp__payload = 0;""" for p in prefixes)
    connections = ",".join(f"""
    .{p}rd_req__valid({p}rd_req__valid), .{p}rd_req__ready(1'b1), .{p}rd_req__payload({p}rd_req__payload),
    .{p}rd_rsp__valid({p}rd_rsp__valid), .{p}rd_rsp__ready({p}rd_rsp__ready), .{p}rd_rsp__payload({p}rd_rsp__payload),
    .{p}wr_req__valid({p}wr_req__valid), .{p}wr_req__ready(1'b1), .{p}wr_req__payload({p}wr_req__payload)"""
                           for p in prefixes)
    serve = "".join(f"""
  wire [{aw - 1}:0] {p}rd_addr = {p}rd_req__payload[{aw - 1}:0];
  wire [{rd.lanes - 1}:0] {p}rd_mask = {p}rd_req__payload[{aw + rd.lanes - 1}:{aw}];
  wire [{aw - 1}:0] {p}wr_addr = {p}wr_req__payload[{aw - 1}:0];
  wire [{wr.lanes - 1}:0] {p}wr_mask = {p}wr_req__payload[{aw + wr.lanes - 1}:{aw}];
  integer {p}lane;
  reg [{aw - 1}:0] {p}a;

  always @(posedge clk) begin
    if ({p}rd_rsp__valid && !{p}rd_rsp__ready) begin
      $display("FAIL: response not accepted");
      $finish;
    end
    {p}rd_rsp__valid <= {p}rd_req__valid;
    if ({p}rd_req__valid)
      for ({p}lane = 0; {p}lane < {rd.lanes}; {p}lane = {p}lane + 1)
        if ({p}rd_mask[{p}lane]) begin
          {p}a = {p}rd_addr + {p}lane * {rd.stride};
          {p}rd_rsp__payload[{p}lane * {bits} +: {bits}] <= mem[{p}a];
        end
    if ({p}wr_req__valid)
      for ({p}lane = 0; {p}lane < {wr.lanes}; {p}lane = {p}lane + 1)
        if ({p}wr_mask[{p}lane]) begin
          {p}a = {p}wr_addr + {p}lane * {wr.stride};
          mem[{p}a] <= {p}wr_req__payload[{aw + wr.lanes} + {p}lane * {bits} +: {bits}];
        end
  end
""" for p in prefixes)
    return f"""`timescale 1ns/1ps
module tb;
  reg clk = 1'b0;
  always #5 clk = ~clk;

  reg [{bits - 1}:0] mem [0:{memory_words - 1}];
  reg ctrl__start = 1'b0;
  wire ctrl__busy, ctrl__done;{wires}

  {top} dut (
    .clk(clk), .rst(1'b0),
    .ctrl__start(ctrl__start), .ctrl__busy(ctrl__busy), .ctrl__done(ctrl__done),
    .ctrl__src_base({aw}'d0), .ctrl__dst_base({aw}'d{dst_base}), {stride_port}{connections}
  );
{serve}
  integer cycles = 0;
  integer i, out;
  initial begin
    $readmemh("{image_hex}", mem);
    @(negedge clk) ctrl__start = 1'b1;
    @(negedge clk) ctrl__start = 1'b0;
    forever begin
      @(posedge clk);
      if (ctrl__busy) cycles = cycles + 1;
      if (ctrl__done) begin
        @(negedge clk);
        out = $fopen("{out_hex}", "w");
        for (i = 0; i < {out_words}; i = i + 1) $fdisplay(out, "%h", mem[{dump_base} + i]);
        $fclose(out);
        $display("CYCLES %0d", cycles);
        $finish;
      end
      if (cycles > {50 * memory_words + 10000}) begin
        $display("FAIL: timeout");
        $finish;
      end
    end
  end
endmodule
"""
