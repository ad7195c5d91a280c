"""A small 8N1 UART: one start bit, eight data bits (least significant first), one stop bit.

The bit period is ``divisor`` clock cycles. On a board it is the clock over the baud rate
(25 MHz / 115200 baud: 217); in co-simulation it may be a few cycles, so that a frame crosses
the line in few simulated cycles: the same top, only the divisor differs.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["UARTReceiver", "UARTTransmitter", "check_divisor"]


def check_divisor(divisor):
    if isinstance(divisor, bool) or not isinstance(divisor, int) or divisor < 2:
        raise ValueError(f"divisor (clock cycles per bit) must be an integer of at least 2, "
                         f"not {divisor!r}")
    return divisor


class UARTReceiver(wiring.Component):
    """Bytes from a serial line.

    The line is synchronised through two registers; a falling edge starts a byte, each bit is
    sampled in the middle of its period, and a byte whose stop bit is not high is dropped
    (``frame_error`` pulses).

    Parameters
    ----------
    divisor : int
        Clock cycles per bit, at least 2.

    Members
    -------
    rx : In(1)
        The line, idle high.
    bytes : Out(stream.Signature(8))
        One beat per byte received; the receiver does not wait for ``ready`` (a byte not taken
        before the next one ends is lost), as a UART cannot hold the line.
    frame_error : Out(1)
    """

    def __init__(self, divisor):
        self._divisor = check_divisor(divisor)
        super().__init__({"rx": In(1, init=1), "bytes": Out(stream.Signature(8)),
                          "frame_error": Out(1)})

    divisor = property(lambda self: self._divisor)

    def elaborate(self, platform):
        m = Module()
        d = self._divisor
        sync_1 = Signal(init=1)
        line = Signal(init=1)
        m.d.sync += [sync_1.eq(self.rx), line.eq(sync_1)]

        timer = Signal(range(d + d // 2 + 1))
        shift = Signal(8)
        bit = Signal(range(9))

        with m.If(self.bytes.valid & self.bytes.ready):
            m.d.sync += self.bytes.valid.eq(0)
        m.d.sync += self.frame_error.eq(0)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    # From the start bit's first cycle to the middle of data bit 0.
                    m.d.sync += [timer.eq(d + d // 2 - 1), bit.eq(0)]
                    m.next = "BITS"
            with m.State("BITS"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(bit == 8):
                    with m.If(line):
                        m.d.sync += [self.bytes.payload.eq(shift), self.bytes.valid.eq(1)]
                    with m.Else():
                        m.d.sync += self.frame_error.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [shift.eq(shift[1:] | (line << 7)), bit.eq(bit + 1),
                                 timer.eq(d - 1)]
        return m


class UARTTransmitter(wiring.Component):
    """Bytes onto a serial line.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit, at least 2.

    Members
    -------
    bytes : In(stream.Signature(8))
        Bytes to send; one is taken whenever the transmitter is idle.
    tx : Out(1)
        The line, idle high.
    """

    def __init__(self, divisor):
        self._divisor = check_divisor(divisor)
        super().__init__({"bytes": In(stream.Signature(8)), "tx": Out(1, init=1)})

    divisor = property(lambda self: self._divisor)

    def elaborate(self, platform):
        m = Module()
        d = self._divisor
        timer = Signal(range(d))
        frame = Signal(10, init=0x3FF)   # stop bit, data, start bit: shifted out LSB first
        bits_left = Signal(range(11))

        m.d.comb += [self.tx.eq(frame[0]), self.bytes.ready.eq(bits_left == 0)]
        with m.If(self.bytes.valid & self.bytes.ready):
            m.d.sync += [frame.eq((1 << 9) | (self.bytes.payload << 1)), bits_left.eq(10),
                         timer.eq(d - 1)]
        with m.Elif(bits_left != 0):
            with m.If(timer != 0):
                m.d.sync += timer.eq(timer - 1)
            with m.Else():
                m.d.sync += [frame.eq((frame >> 1) | (1 << 9)), bits_left.eq(bits_left - 1),
                             timer.eq(d - 1)]
        return m
