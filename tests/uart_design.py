"""A UART like the one in Amaranth's examples (a transmitter and a receiver with a clock divisor,
8 data bits, one stop bit), for the compiled simulator's tests and benchmark."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


class UART(wiring.Component):
    """``tx_*``: a byte offered with ``tx_ack`` while ``tx_rdy`` leaves on ``tx_o``;
    ``rx_*``: a byte that arrived on ``rx_i`` waits in ``rx_data`` with ``rx_rdy`` until
    ``rx_ack``, ``rx_err`` on a bad stop bit, ``rx_ovf`` when a byte came before the last was
    taken."""

    tx_o: Out(1, init=1)
    tx_data: In(8)
    tx_rdy: Out(1)
    tx_ack: In(1)
    rx_i: In(1, init=1)
    rx_data: Out(8)
    rx_rdy: Out(1)
    rx_ack: In(1)
    rx_err: Out(1)
    rx_ovf: Out(1)

    def __init__(self, divisor):
        self.divisor = divisor
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        div = self.divisor

        tx_phase = Signal(range(div))
        tx_shreg = Signal(10, init=1)
        tx_count = Signal(range(11))
        m.d.comb += [self.tx_o.eq(tx_shreg[0]), self.tx_rdy.eq(tx_count == 0)]
        with m.If(tx_count == 0):
            with m.If(self.tx_ack):
                m.d.sync += [tx_shreg.eq(1 << 9 | self.tx_data << 1), tx_count.eq(10),
                             tx_phase.eq(div - 1)]
        with m.Else():
            with m.If(tx_phase != 0):
                m.d.sync += tx_phase.eq(tx_phase - 1)
            with m.Else():
                m.d.sync += [tx_shreg.eq(1 << 9 | tx_shreg >> 1), tx_count.eq(tx_count - 1),
                             tx_phase.eq(div - 1)]

        rx_phase = Signal(range(div))
        rx_shreg = Signal(10, init=1)
        rx_count = Signal(range(11))
        with m.If(self.rx_ack):
            m.d.sync += [self.rx_rdy.eq(0), self.rx_ovf.eq(0)]
        with m.If(rx_count == 0):
            with m.If(~self.rx_i):
                # A start bit: sample every bit in its middle.
                m.d.sync += [rx_count.eq(10), rx_phase.eq(div // 2)]
        with m.Else():
            with m.If(rx_phase != 0):
                m.d.sync += rx_phase.eq(rx_phase - 1)
            with m.Else():
                m.d.sync += [rx_shreg.eq(self.rx_i << 9 | rx_shreg >> 1),
                             rx_count.eq(rx_count - 1), rx_phase.eq(div - 1)]
                with m.If(rx_count == 1):
                    m.d.sync += [self.rx_data.eq(rx_shreg[2:10]), self.rx_rdy.eq(1),
                                 self.rx_err.eq(~self.rx_i | rx_shreg[1]),
                                 self.rx_ovf.eq(self.rx_rdy & ~self.rx_ack)]
        return m


def uart_testbench(dut, data, log):
    """A testbench that sends ``data`` through ``dut`` with its output looped to its input,
    taking every byte received and logging what it sees: the same steps on any simulator."""

    async def loop(ctx):
        async for _, _, tx in ctx.tick().sample(dut.tx_o):
            ctx.set(dut.rx_i, tx)

    async def send(ctx):
        for byte in data:
            await ctx.tick().until(dut.tx_rdy)
            ctx.set(dut.tx_data, byte)
            ctx.set(dut.tx_ack, 1)
            await ctx.tick()
            ctx.set(dut.tx_ack, 0)
            log.append(("sent", byte, ctx.get(dut.tx_rdy), ctx.get(dut.tx_o)))

    async def receive(ctx):
        for _ in data:
            await ctx.tick().until(dut.rx_rdy)
            log.append(("received", ctx.get(dut.rx_data), ctx.get(dut.rx_err),
                        ctx.get(dut.rx_ovf)))
            ctx.set(dut.rx_ack, 1)
            await ctx.tick()
            ctx.set(dut.rx_ack, 0)

    return loop, send, receive


class ExampleUART(wiring.Component):
    """A UART with the interface and handshakes of Amaranth's example (``examples/basic/uart.py``):
    ``tx_ack`` is high while the transmitter is idle and takes ``tx_data`` when ``tx_rdy`` is
    offered; ``rx_rdy`` is set when a byte has arrived (``rx_data``, with ``rx_err`` for a bad
    start or stop bit, both read while the receiver is idle) and cleared by ``rx_ack``;
    ``rx_ovf`` is set when a start bit comes while the last byte waits untaken."""

    tx_o: Out(1)
    tx_data: In(8)
    tx_rdy: In(1)
    tx_ack: Out(1)
    rx_i: In(1)
    rx_data: Out(8)
    rx_err: Out(1)
    rx_ovf: Out(1)
    rx_rdy: Out(1)
    rx_ack: In(1)

    def __init__(self, divisor):
        if not isinstance(divisor, int) or divisor < 4:
            raise ValueError(f"divisor must be an integer of at least 4, not {divisor!r}")
        self.divisor = divisor
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        div = self.divisor

        # Transmitter: a frame (start bit, 8 data bits, stop bit) shifted out LSB first, one bit
        # every `div` cycles; the line idles high.
        tx_frame = Signal(10, init=0x3FF)
        tx_bits = Signal(range(11))
        tx_phase = Signal(range(div))
        m.d.comb += [self.tx_o.eq(tx_frame[0]), self.tx_ack.eq(tx_bits == 0)]
        with m.If(tx_bits == 0):
            with m.If(self.tx_rdy):
                m.d.sync += [tx_frame.eq(Cat(0, self.tx_data, 1)), tx_bits.eq(10),
                             tx_phase.eq(div - 1)]
        with m.Elif(tx_phase == 0):
            m.d.sync += [tx_frame.eq(Cat(tx_frame[1:], 1)), tx_bits.eq(tx_bits - 1),
                         tx_phase.eq(div - 1)]
        with m.Else():
            m.d.sync += tx_phase.eq(tx_phase - 1)

        # Receiver: a falling edge starts a frame, each bit sampled near its middle and shifted
        # in from the top, so that the frame ends with its start bit in bit 0.
        rx_frame = Signal(10, init=0x3FF)
        rx_bits = Signal(range(11))
        rx_phase = Signal(range(div))
        m.d.comb += self.rx_data.eq(rx_frame[1:9])
        with m.If(rx_bits == 0):
            m.d.comb += self.rx_err.eq(rx_frame[0] | ~rx_frame[9])
            with m.If(self.rx_ack):
                m.d.sync += self.rx_rdy.eq(0)
            with m.If(~self.rx_i):
                with m.If(~self.rx_rdy | self.rx_ack):
                    m.d.sync += [self.rx_rdy.eq(0), self.rx_ovf.eq(0), rx_bits.eq(10),
                                 rx_phase.eq(div // 2)]
                with m.Else():
                    m.d.sync += self.rx_ovf.eq(1)
        with m.Elif(rx_phase == 0):
            m.d.sync += [rx_frame.eq(Cat(rx_frame[1:], self.rx_i)), rx_bits.eq(rx_bits - 1),
                         rx_phase.eq(div - 1)]
            with m.If(rx_bits == 1):
                m.d.sync += self.rx_rdy.eq(1)
        with m.Else():
            m.d.sync += rx_phase.eq(rx_phase - 1)
        return m


def example_testbench(dut, data, log):
    """The testbench of Amaranth's UART example, for every byte of ``data``: ``loopback`` (to be
    added in the background) copies ``tx_o`` to ``rx_i`` at each of its changes; ``transmit``
    offers a byte for a cycle, waits ``12 * divisor`` cycles and checks it arrived, then takes
    it, logging what it sees. The example unpacks nothing (``async for val in ...``), which
    Amaranth 0.5 refuses (``ctx.set`` of a 1-tuple): here ``val,``."""

    async def loopback(ctx):
        async for val, in ctx.changed(dut.tx_o):
            ctx.set(dut.rx_i, val)

    async def transmit(ctx):
        for byte in data:
            assert ctx.get(dut.tx_ack)
            assert not ctx.get(dut.rx_rdy)

            ctx.set(dut.tx_data, byte)
            ctx.set(dut.tx_rdy, 1)
            await ctx.tick()
            ctx.set(dut.tx_rdy, 0)
            await ctx.tick()
            assert not ctx.get(dut.tx_ack)

            await ctx.tick().repeat(dut.divisor * 12)

            assert ctx.get(dut.tx_ack)
            assert ctx.get(dut.rx_rdy)
            assert not ctx.get(dut.rx_err)
            assert ctx.get(dut.rx_data) == byte
            log.append((byte, ctx.get(dut.rx_data), ctx.get(dut.rx_err), ctx.get(dut.rx_ovf),
                        ctx.get(dut.tx_o), ctx.get(dut.rx_i)))

            ctx.set(dut.rx_ack, 1)
            await ctx.tick()
            ctx.set(dut.rx_ack, 0)
            await ctx.tick()
            assert not ctx.get(dut.rx_rdy)

    return loopback, transmit


def example_uart_simulation(kind, divisor, data, log):
    """A simulator of ``kind`` (``amaranth.sim.Simulator`` or a drop-in for it) running
    :class:`ExampleUART` with ``divisor`` under :func:`example_testbench` for ``data``, logging
    into ``log``: a 1 MHz clock, the loopback in the background; not yet run."""
    dut = ExampleUART(divisor)
    loopback, transmit = example_testbench(dut, data, log)
    sim = kind(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(loopback, background=True)
    sim.add_testbench(transmit)
    return sim
