"""ECP5 block RAM with its output register in use.

Yosys maps Amaranth memories onto ECP5 DP16KD blocks with ``REGMODE="NOREG"``, so a read's data
leaves the block RAM late in the cycle and a block-RAM-to-register path limits the clock to
about 125-140 MHz at speed grade 6. With ``REGMODE="OUTREG"`` the block's own output register
holds the data, at the cost of a second cycle of read latency. This module instantiates DP16KD
tiles directly in that mode, as a simple dual-port memory: port A writes, port B reads.
"""

from amaranth.hdl import ClockSignal, Const, Instance, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["DP16KD_MODES", "OutputRegisteredRAM"]

#: DP16KD aspect ratios, widest first: (data bits, words, lowest address pin used).
DP16KD_MODES = ((18, 1024, 4), (9, 2048, 3), (4, 4096, 2), (2, 8192, 1), (1, 16384, 0))


class OutputRegisteredRAM(wiring.Component):
    """A ``width`` x ``depth`` simple dual-port ECP5 block RAM with read latency 2.

    A read issued with ``rd_en`` (address ``rd_addr``) appears on ``rd_data`` after two more
    ``rd_en`` strobes: ``rd_en`` advances both the block's read stage and its output register,
    and ``rd_data`` holds while ``rd_en`` is low. Reads and writes of the same address in the
    same cycle are not supported.

    Parameters
    ----------
    width : int
    depth : int
        At most 16384 words.
    """

    def __init__(self, width, depth):
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        if not isinstance(depth, int) or not 1 <= depth <= 16384:
            raise ValueError(f"depth must be between 1 and 16384 words, not {depth!r}")
        self._width = width
        self._depth = depth
        self._mode = next(mode for mode in DP16KD_MODES if mode[1] >= depth)
        addr_bits = max(1, (depth - 1).bit_length())
        super().__init__({
            "wr_addr": In(addr_bits),
            "wr_en": In(1),
            "wr_data": In(width),
            "rd_addr": In(addr_bits),
            "rd_en": In(1),
            "rd_data": Out(width),
        })

    @property
    def blocks(self):
        """DP16KD tiles used."""
        return -(-self._width // self._mode[0])

    def elaborate(self, platform):
        m = Module()
        bits, _, low = self._mode
        zero, one = Const(0, 1), Const(1, 1)   # one of each: there are ~100 pins per tile

        def address(addr):
            # Word address on the upper pins; for 18-bit writes the two lowest pins are byte
            # enables (both on), every other unused pin is tied low.
            pins = {f"AD{i}": zero for i in range(14)}
            for i in range(len(addr)):
                pins[f"AD{low + i}"] = addr[i]
            if bits == 18:
                pins["AD0"] = pins["AD1"] = one
            return pins

        wr_pins, rd_pins = address(self.wr_addr), address(self.rd_addr)
        for block in range(self.blocks):
            lo = block * bits
            width = min(bits, self._width - lo)
            ports = {
                "i_CLKA": ClockSignal(), "i_CLKB": ClockSignal(),
                "i_CEA": one, "i_OCEA": one, "i_WEA": self.wr_en, "i_RSTA": zero,
                "i_CEB": self.rd_en, "i_OCEB": self.rd_en, "i_WEB": zero, "i_RSTB": zero,
            }
            for i in range(3):
                ports[f"i_CSA{i}"] = ports[f"i_CSB{i}"] = zero
            for pin, value in wr_pins.items():
                ports[f"i_{pin[:2]}A{pin[2:]}"] = value
            for pin, value in rd_pins.items():
                ports[f"i_{pin[:2]}B{pin[2:]}"] = value
            for i in range(18):
                ports[f"i_DIA{i}"] = self.wr_data[lo + i] if i < width else zero
                ports[f"i_DIB{i}"] = zero
                if i < width:
                    ports[f"o_DOB{i}"] = self.rd_data[lo + i]
            m.submodules[f"tile{block}"] = Instance(
                "DP16KD",
                p_DATA_WIDTH_A=bits, p_DATA_WIDTH_B=bits,
                p_REGMODE_A="NOREG", p_REGMODE_B="OUTREG",
                p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC",
                p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
                p_WRITEMODE_A="NORMAL", p_WRITEMODE_B="NORMAL",
                p_GSR="DISABLED",
                **ports)
        return m
