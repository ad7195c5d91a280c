"""State profilers: cycles spent in each state of a state machine, counted in a RAM table.

Only one state is active per cycle, so one table of counters with one read-modify-write per cycle
does the work of a counter per state. The update is pipelined so that no path runs from a RAM's
read data through the adder back into the RAM, and none from the adder into the RAM's write
port: the entry of the state seen in cycle ``t`` is registered at the edge that ends ``t``, read
at the next edge, the word registered at the edge after that, its increment registered at the
third edge after ``t`` and written at the fourth. The three updates still on their way to the
RAM when the word was read are forwarded: the two older are folded into the word as it is
registered, the newest selected by a flag computed a cycle ahead, so only one multiplexer sits
before the adder; which ones to fold in is decided when the entry is addressed, a cycle before
its word is read. Counting one at a time, each entry keeps a flag beside its count that says the
count is all ones, so saturating needs no test of the word read. Small tables go to distributed
RAM, large ones to block RAM.

:func:`build_count_table` builds that table into any module; histograms use it too, and with an
amount to add instead of one, so do accumulator tables
(:mod:`hwgen.instrument.accumulator_table`).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import count_layout, saturating_sum

__all__ = ["StateProfiler", "TABLE_LATENCY", "build_count_table", "count_table_bits"]

#: Cycles from a count to its entry holding it.
TABLE_LATENCY = 4

#: Tables up to this many entries are kept in distributed (LUT) RAM.
DISTRIBUTED_ENTRIES = 64


def count_table_bits(depth, bits, *, ones=True):
    """RAM bits of a :func:`build_count_table` table: ``depth`` counts of ``bits`` bits with their
    overflow flags, and (``ones``: counting one at a time) their all-ones flags."""
    return depth * (count_layout(bits).size + ones)


def build_count_table(m, *, index, count, clear, raddr, rdata, busy, depth, bits, amount=1):
    """A RAM table of ``depth`` saturating counts of ``bits`` bits.

    Parameters
    ----------
    m : Module
    index : Value
        The entry to count in this cycle.
    count : Value
        Add ``amount`` to entry ``index`` in this cycle. In the next cycle the read port serves
        that entry, else ``raddr``.
    clear : Value
        Zero every entry: the table is swept, one word per cycle, while ``busy`` is high; nothing
        may be counted until it falls.
    raddr : Value
        The entry the host reads; a count lands four cycles after the cycle it was made in
        (:data:`TABLE_LATENCY`).
    rdata : Signal of count_layout(bits)
        Driven with the entry read at the last edge.
    busy : Signal
        Driven high while a clear sweeps the table.
    depth, bits : int
    amount : Value or int
        What a count adds to its entry: a constant needs no registers (one, the default, no
        adder wider than the count either); a value travels beside the entry's index. A sum
        past the maximum saturates the entry and sets its overflow flag.
    """
    layout = count_layout(bits)
    amount = Value.cast(amount)
    counting_one = isinstance(amount, Const) and amount.value == 1
    distributed = depth <= DISTRIBUTED_ENTRIES
    attrs = {"ram_style": "distributed"} if distributed else {}
    # Counting one at a time, each entry keeps beside its count whether the count is all ones,
    # so the word read needs no all-ones test before its increment saturates.
    m.submodules.table = table = Memory(shape=layout.size + counting_one, depth=depth, init=[],
                                        attrs=attrs)
    wr = table.write_port()

    sweep = Signal(range(depth))
    sweeping = Signal()              # `busy`, from a register: it enables the RAM's writes
    read_addr, read_valid = Signal(range(depth)), Signal()     # the entry read_data holds
    word_addr, word_valid = Signal(range(depth)), Signal()     # ... and its registered copy
    word = Signal(layout)
    update = Signal(layout)                                    # word + amount
    writing = Signal()
    # The updates of the last two cycles: `last` is written to the RAM in this cycle, `older`
    # was written at the last edge.
    last_addr, last_valid, last_word = Signal(range(depth)), Signal(), Signal(layout)
    older_addr, older_valid, older_word = Signal(range(depth)), Signal(), Signal(layout)
    newest = Signal()        # `word` is older than the update being computed now: take `last`

    # The entry to count is registered first: whatever computes it (a histogram's bin) does not
    # share a cycle with the RAM's read.
    counting = Signal()
    m.d.sync += counting.eq(count & ~clear)
    if distributed:
        # Distributed RAM reads asynchronously: the read address is a register, chosen between
        # the entry to count and the host's the cycle before, and the word read is registered
        # after the RAM, so neither the choice nor its fan-out to the RAM's cells shares a
        # cycle with the read. The host sees the word in the cycle after its address, as from
        # a synchronous read port; so does the update, which misses the same writes.
        rd = table.read_port(domain="comb")
        count_index = Signal(range(depth))
        read_data = Signal.like(rd.data)
        m.d.sync += [count_index.eq(Mux(count & ~clear, index, raddr)), read_data.eq(rd.data)]
        m.d.comb += rd.addr.eq(count_index)
    else:
        # Block RAM registers its address itself.
        rd = table.read_port(domain="sync")
        count_index, read_data = Signal(range(depth)), rd.data
        m.d.sync += count_index.eq(index)
        m.d.comb += rd.addr.eq(Mux(counting, count_index, raddr))
    entry = layout(read_data[:layout.size])
    if isinstance(amount, Const):
        word_amount = amount
    else:
        # The amount follows its index through the registers to the adder.
        count_amount, read_amount, word_amount = (Signal(amount.shape(), name=f"{stage}_amount")
                                                  for stage in ("count", "read", "word"))
        m.d.sync += [count_amount.eq(amount), read_amount.eq(count_amount),
                     word_amount.eq(read_amount)]
    source = layout(Mux(newest, last_word, word))
    m.d.comb += [
        rdata.eq(rd.data[:layout.size]),
        busy.eq(sweeping),
        writing.eq(word_valid & ~sweeping & ~clear),
    ]
    # The word read for an entry misses the updates written at the read's edge and at the next
    # one, and the one computed while the word is registered. The first two are folded into the
    # word as it is registered (the later wins); for the third a registered flag selects it.
    # Which ones to fold in is decided a cycle ahead, when the entry is addressed, so the
    # comparisons of addresses are off the path from the RAM and the choices are registers.
    from_older, from_last = Signal(), Signal()
    m.d.sync += [from_older.eq(last_valid & ~clear & (last_addr == count_index)),
                 from_last.eq(writing & (word_addr == count_index))]
    forwarded = Mux(from_older, older_word, entry)
    if counting_one:
        # Whether each word is all ones travels beside it in a register, so the increment's
        # saturation needs no all-ones test after the choice of its word.
        word_full, last_full, older_full = Signal(), Signal(), Signal()
        source_full = Mux(newest, last_full, word_full)
        # Both candidates are incremented from their registers and the choice comes after the
        # adders: no multiplexer, and no wide fan-out of `newest`, sits before a carry chain.
        # A full word saturates to all ones (its count already is), with its flag set.
        m.d.comb += update.eq(Mux(source_full, (1 << (bits + 1)) - 1,
                                  Mux(newest, last_word.as_value() + 1, word.as_value() + 1)))
        m.d.sync += [
            word_full.eq(Mux(from_last, last_full,
                             Mux(from_older, older_full, read_data[layout.size]))),
            # The update is all ones when its word is at least all ones but the lowest bit: the
            # carry out of adding one to the bits above it, a carry chain from each word's
            # register, `newest` choosing between them after, as for the increment itself.
            last_full.eq(Mux(newest, (last_word.count[1:] + 1)[bits - 1],
                             (word.count[1:] + 1)[bits - 1])),
            older_full.eq(last_full),
        ]
    else:
        m.d.comb += update.eq(saturating_sum(source, word_amount))
    m.d.sync += [
        read_addr.eq(count_index), read_valid.eq(counting & ~clear),
        word_addr.eq(read_addr), word_valid.eq(read_valid & ~clear),
        word.eq(Mux(from_last, last_word, forwarded)),
        newest.eq(writing & (word_addr == read_addr)),
        last_addr.eq(word_addr), last_valid.eq(writing), last_word.eq(update),
        older_addr.eq(last_addr), older_valid.eq(last_valid & ~clear), older_word.eq(last_word),
    ]
    # The write port is driven from registers alone. A clear sweeps the table with zeros, one
    # entry per cycle; nothing is counted meanwhile (`last_valid` falls with the clear).
    m.d.comb += [
        wr.en.eq(sweeping | last_valid),
        wr.addr.eq(Mux(sweeping, sweep, last_addr)),
        wr.data.eq(Mux(sweeping, 0, Cat(last_word, last_full) if counting_one else last_word)),
    ]
    with m.If(clear):
        m.d.sync += [sweep.eq(0), sweeping.eq(1), last_valid.eq(0)]
    with m.Elif(sweeping):
        m.d.sync += sweep.eq(sweep + 1)
        with m.If(sweep == depth - 1):
            m.d.sync += sweeping.eq(0)


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
        return count_table_bits(len(self._states), self._bits)

    def elaborate(self, platform):
        m = Module()
        build_count_table(m, index=self.state, count=self.enable, clear=self.clear,
                          raddr=self.raddr, rdata=self.rdata, busy=self.busy,
                          depth=len(self._states), bits=self._bits)
        return m
