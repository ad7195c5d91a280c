"""The deployed top: a PE with its HMM, the job's memory in block RAM, and a UART bridge.

:class:`BoardTop` is the whole design between the UART's two pins; :class:`PlatformTop` puts it
on a board's ``uart`` resource for Amaranth's platform build. The co-simulation drives the very
same :class:`BoardTop`, with a bit period of a few cycles instead of the board's (``divisor``
is its only difference).

A window filter's job takes its input frame at element 0 and its output frame right after it
(as ``sim`` lays them out): :func:`frame_elements` of them.
"""

from amaranth.hdl import Elaboratable, Module
from amaranth.lib import io, wiring
from amaranth.lib.wiring import In, Out

from ..instrument import Instrumented

from .bridge import Bridge
from .launcher import Launcher
from .memory import BoardMemory, bank_count
from .uart import UARTReceiver, UARTTransmitter, check_divisor

__all__ = ["BoardTop", "PlatformTop", "block_count", "frame_elements", "largest_frame",
           "largest_memory", "memory_blocks"]


def frame_elements(pe):
    """Elements of a window filter's job: its input frame, then its output frame."""
    return pe.width * pe.height + pe.out_width * pe.out_height


# Entries of one block RAM by the widest data it holds in that configuration.
_BLOCK_CONFIGS = {
    "ecp5": ((1, 16384), (2, 8192), (4, 4096), (9, 2048), (18, 1024), (36, 512)),   # DP16KD
    "ice40": ((2, 2048), (4, 1024), (8, 512), (16, 256)),                          # SB_RAM40_4K
}


def block_count(family, depth, bits):
    """Block RAMs of ``family`` that hold ``depth`` entries of ``bits`` bits."""
    configs = _BLOCK_CONFIGS.get(family)
    if configs is None:
        raise ValueError(f"the board path supports the families {', '.join(_BLOCK_CONFIGS)}, "
                         f"not {family!r}")
    best = None
    for width, entries in configs:
        blocks = -(-bits // width) * -(-depth // entries)
        best = blocks if best is None else min(best, blocks)
    return best


def memory_blocks(family, elements, banks, bits):
    """Block RAMs of a :class:`BoardMemory` of ``elements`` in ``banks``."""
    return banks * block_count(family, -(-elements // banks), bits)


def largest_memory(family, free_blocks, banks, bits):
    """The most elements a :class:`BoardMemory` of ``banks`` holds in ``free_blocks``."""
    per_bank = free_blocks // banks
    if per_bank < 1:
        return 0
    depth = 1
    while block_count(family, 2 * depth, bits) <= per_bank:
        depth *= 2
    step = depth
    while step > 1:
        step //= 2
        if block_count(family, depth + step, bits) <= per_bank:
            depth += step
    return depth * banks


def largest_frame(family, free_blocks, pe):
    """The largest ``(width, height)`` of this filter's frame whose job fits ``free_blocks``:
    at the PE's width (height 0 when none), and square."""
    banks = bank_count(pe.rd_beat, pe.wr_beat)
    bits = pe.rd_beat.element_bits

    def fits(width, height):
        if height < pe.rows or width < pe.cols:
            return True
        elements = width * height + (width - pe.cols + 1) * (height - pe.rows + 1)
        return memory_blocks(family, elements, banks, bits) <= free_blocks

    def largest(grow):
        low, high = 0, 1
        while fits(*grow(high)):
            low, high = high, 2 * high
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(*grow(middle)) else (low, middle)
        return low

    height = largest(lambda h: (pe.width, h))
    side = largest(lambda s: (s, s))
    return (pe.width, height if height >= pe.rows else 0), (side, side)


class BoardTop(wiring.Component):
    """A PE, its HMM, its memory and the bridge, between a UART's pins.

    Parameters
    ----------
    design : Instrumented
        The PE with its HMM: a window filter, or a multithreaded pipeline.
    memory_elements : int
        Elements of the job's memory.
    divisor : int
        Clock cycles per UART bit (the clock over the baud rate on a board).
    idle_bits : int
        Bit periods without a byte after which the bridge drops an unfinished command.
    max_outstanding_reads : int or None
        Read beats the PE can have in flight; ``None``: its ``max_outstanding_reads``.
    launch_delay_cycles : int or None
        For a pipeline (a PE with a ``launch`` stream): a :class:`~hwgen.board.launcher.Launcher`
        starts its threads, one every this many cycles, as the simulated host does.

    Members
    -------
    rx : In(1)
        The UART line from the host (idle high).
    tx : Out(1)
        The UART line to the host.
    """

    def __init__(self, design, memory_elements, *, divisor, idle_bits=1000,
                 max_outstanding_reads=None, launch_delay_cycles=None):
        if not isinstance(design, Instrumented):
            raise TypeError(f"design must be an Instrumented PE (with its HMM), not {design!r}")
        self._design = design
        self._divisor = check_divisor(divisor)
        pe = design.design
        self._launcher = None
        if "launch" in pe.signature.members:
            if launch_delay_cycles is None:
                raise ValueError("a pipeline's top needs launch_delay_cycles")
            self._launcher = Launcher(pe.threads, launch_delay_cycles,
                                      len(pe.launch.payload))
        if max_outstanding_reads is None:
            max_outstanding_reads = pe.max_outstanding_reads
        self._memory = BoardMemory(memory_elements, addr_width=pe.addr_width,
                                   rd_beat=pe.rd_beat, wr_beat=pe.wr_beat,
                                   max_outstanding_reads=max_outstanding_reads)
        self._params = [name for name in pe.signature.members["ctrl"].signature.members
                        if name not in ("start", "busy", "done")]
        self._bridge = Bridge(memory_elements=memory_elements,
                              element_bits=pe.rd_beat.element_bits,
                              mem_addr_bits=pe.addr_width, hmm=design.hmm.signature.flip(),
                              params=len(self._params), layout_id=design.layout.layout_id,
                              idle_cycles=idle_bits * divisor)
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1)})

    design = property(lambda self: self._design)
    divisor = property(lambda self: self._divisor)
    memory = property(lambda self: self._memory)

    @property
    def params(self):
        """The PE's run-time parameters, in the order the protocol indexes them."""
        return list(self._params)

    @property
    def identity(self):
        """What the bridge answers to ``identify``."""
        return self._bridge.identity

    def elaborate(self, platform):
        m = Module()
        design, memory, bridge = self._design, self._memory, self._bridge
        m.submodules.design = design
        m.submodules.memory = memory
        m.submodules.bridge = bridge
        receiver = m.submodules.receiver = UARTReceiver(self._divisor)
        transmitter = m.submodules.transmitter = UARTTransmitter(self._divisor)

        m.d.comb += [receiver.rx.eq(self.rx), self.tx.eq(transmitter.tx)]
        wiring.connect(m, receiver.bytes, bridge.rx)
        wiring.connect(m, bridge.tx, transmitter.bytes)
        wiring.connect(m, bridge.hmm, design.hmm)
        wiring.connect(m, design.rd_req, memory.rd_req)
        wiring.connect(m, memory.rd_rsp, design.rd_rsp)
        wiring.connect(m, design.wr_req, memory.wr_req)
        m.d.comb += [
            memory.host_addr.eq(bridge.host_addr),
            memory.host_read.eq(bridge.host_read),
            memory.host_write.eq(bridge.host_write),
            memory.host_wdata.eq(bridge.host_wdata),
            bridge.host_rdata.eq(memory.host_rdata),
            design.ctrl.start.eq(bridge.start),
            bridge.busy.eq(design.ctrl.busy),
            bridge.done.eq(design.ctrl.done),
        ]
        for index, name in enumerate(self._params):
            m.d.comb += getattr(design.ctrl, name).eq(bridge.params[index])
        if self._launcher is not None:
            launcher = m.submodules.launcher = self._launcher
            m.d.comb += [launcher.start.eq(bridge.start), launcher.done.eq(design.ctrl.done)]
            wiring.connect(m, launcher.launch, design.launch)
        return m


class PlatformTop(Elaboratable):
    """``top`` on a board: its UART pins on the platform's ``uart`` resource, clocked by the
    platform's default clock."""

    def __init__(self, top):
        self._top = top

    def elaborate(self, platform):
        m = Module()
        m.submodules.top = top = self._top
        uart = platform.request("uart", 0, dir="-")
        m.submodules.rx = rx = io.Buffer("i", uart.rx)
        m.submodules.tx = tx = io.Buffer("o", uart.tx)
        m.d.comb += [top.rx.eq(rx.i), tx.o.eq(top.tx)]
        return m
