"""State profilers: cycles spent in each state of a state machine, counted in block RAM.

Only one state is active per cycle, so one table of counters with one read-modify-write per cycle
does the work of a counter per state. The table is a :class:`~amaranth.lib.memory.Memory` with a
synchronous read port (block RAM): the count of the state seen in cycle ``t`` is read at the edge
that ends ``t`` and written back, incremented, at the next edge. When the state stays the same,
the read for cycle ``t + 1`` happens at the very edge that writes cycle ``t``'s update; the read
port is transparent to the write port, so it returns the updated word: the pending update is
forwarded (where the block RAM cannot do that itself, synthesis adds the bypass register and
multiplexer).

:func:`build_count_table` builds that table into any module; histograms use it too.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import count_layout, saturating_sum

__all__ = ["StateProfiler", "build_count_table"]


def build_count_table(m, *, index, count, clear, raddr, rdata, busy, depth, bits):
    """A block-RAM table of ``depth`` saturating counts of ``bits`` bits.

    Parameters
    ----------
    m : Module
    index : Value
        The entry to count in this cycle.
    count : Value
        Add one to entry ``index`` in this cycle. While low, the read port serves ``raddr``.
    clear : Value
        Zero every entry: the table is swept, one word per cycle, while ``busy`` is high; nothing
        may be counted until it falls.
    raddr : Value
        The entry the host reads.
    rdata : Signal of count_layout(bits)
        Driven with the entry read at the last edge.
    busy : Signal
        Driven high while a clear sweeps the table.
    depth, bits : int
    """
    m.submodules.table = table = Memory(shape=count_layout(bits), depth=depth, init=[])
    wr = table.write_port()
    rd = table.read_port(domain="sync", transparent_for=(wr,))

    read_addr = Signal(range(depth))     # the entry rd.data holds
    pending = Signal()                    # rd.data is a count to increment and write back
    sweep = Signal(range(depth + 1), init=depth)

    m.d.comb += [
        rd.addr.eq(Mux(count, index, raddr)),
        rdata.eq(rd.data),
        busy.eq(sweep != depth),
    ]
    m.d.sync += [read_addr.eq(rd.addr), pending.eq(count & ~clear)]
    with m.If(clear):
        m.d.sync += sweep.eq(0)
    with m.Elif(busy):
        m.d.comb += [wr.addr.eq(sweep), wr.data.eq(0), wr.en.eq(1)]
        m.d.sync += sweep.eq(sweep + 1)
    with m.Elif(pending):
        m.d.comb += [wr.addr.eq(read_addr), wr.data.eq(saturating_sum(rd.data, 1)),
                     wr.en.eq(1)]


class StateProfiler(wiring.Component):
    """Count the cycles spent in each state.

    Parameters
    ----------
    states : sequence of str
        The names of the states, in encoding order (state ``i`` is ``states[i]``).
    bits : int
        Width of each count; they saturate and set their overflow flags.

    Members
    -------
    state : In(range(len(states)))
        The state in this cycle.
    enable : In(1)
        Count this cycle. While low, the table's read port serves ``raddr``.
    clear : In(1)
        Zero every count. The table is swept, one word per cycle, while ``busy`` is high;
        ``enable`` must stay low until it falls.
    busy : Out(1)
        A clear is in progress.
    raddr : In(range(len(states)))
        Address the host reads, while ``enable`` is low.
    rdata : Out(count_layout(bits))
        The count at ``raddr`` (or at the state being counted) one cycle earlier.
    """

    def __init__(self, states, bits=32):
        states = tuple(states)
        if not states or not all(isinstance(name, str) for name in states):
            raise ValueError(f"states must be a non-empty sequence of names, not {states!r}")
        if len(set(states)) != len(states):
            raise ValueError(f"state names must be unique, not {states!r}")
        self._states = states
        self._layout = count_layout(bits)
        self._bits = bits
        index = range(len(states))
        super().__init__({
            "state": In(index),
            "enable": In(1),
            "clear": In(1),
            "busy": Out(1),
            "raddr": In(index),
            "rdata": Out(self._layout),
        })

    @property
    def states(self):
        return self._states

    @property
    def bits(self):
        return self._bits

    @property
    def table_bits(self):
        """Block-RAM bits of the table."""
        return len(self._states) * self._layout.size

    def elaborate(self, platform):
        m = Module()
        build_count_table(m, index=self.state, count=self.enable, clear=self.clear,
                          raddr=self.raddr, rdata=self.rdata, busy=self.busy,
                          depth=len(self._states), bits=self._bits)
        return m
