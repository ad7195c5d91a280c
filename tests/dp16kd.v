// Behavioural model of the ECP5 DP16KD block RAM, as far as hwgen uses it: port A writes,
// port B reads, same data width on both ports, chip selects unused. Per Lattice's memory usage
// guide: the address and data pins are sampled on the clock edge when CE is high; a port's
// word address sits on pins AD[13:4] at 18 bits (AD[1:0] are the byte enables of a write),
// AD[13:3] at 9, AD[13:2] at 4, AD[13:1] at 2 and AD[13:0] at 1 bit; with REGMODE "OUTREG"
// the read data passes an output register clocked when OCE is high.
module DP16KD #(
  parameter DATA_WIDTH_A = 18, parameter DATA_WIDTH_B = 18,
  parameter REGMODE_A = "NOREG", parameter REGMODE_B = "NOREG",
  parameter RESETMODE = "SYNC", parameter ASYNC_RESET_RELEASE = "SYNC",
  parameter CSDECODE_A = "0b000", parameter CSDECODE_B = "0b000",
  parameter WRITEMODE_A = "NORMAL", parameter WRITEMODE_B = "NORMAL",
  parameter GSR = "ENABLED"
) (
  input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input CEA, OCEA, CLKA, WEA, RSTA, CSA2, CSA1, CSA0,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input CEB, OCEB, CLKB, WEB, RSTB, CSB2, CSB1, CSB0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  localparam LOW = DATA_WIDTH_A == 18 ? 4 : DATA_WIDTH_A == 9 ? 3 : DATA_WIDTH_A == 4 ? 2 :
                   DATA_WIDTH_A == 2 ? 1 : 0;
  localparam WORDS = DATA_WIDTH_A == 18 ? 1024 : DATA_WIDTH_A == 9 ? 2048 : 16384 / DATA_WIDTH_A;
  wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  wire [13:0] adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  reg [DATA_WIDTH_A-1:0] mem [0:WORDS-1];
  reg [DATA_WIDTH_B-1:0] latch, outreg;
  always @(posedge CLKA)
    if (CEA && WEA && (DATA_WIDTH_A != 18 || (ADA1 && ADA0)))
      mem[ada >> LOW] <= dia[DATA_WIDTH_A-1:0];
  always @(posedge CLKB) begin
    if (CEB) latch <= mem[adb >> LOW];
    if (OCEB) outreg <= latch;
  end
  wire [17:0] dob = REGMODE_B == "OUTREG" ? outreg : latch;
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = dob;
  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = 18'h0;
endmodule
