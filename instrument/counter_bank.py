"""Counter banks: many counts that all change in the same cycle, kept in one RAM table.

A state profile's counts take turns (one state per cycle); the counts of a stream's categories,
of busy cycles or of bytes moved all change in the same cycle, so each needs an adder of its
own. A bank keeps only a small *low part* per count in registers, wide enough for what the
count gathers in a few cycles, and the counts themselves in a RAM table: one entry per cycle,
in turn, takes its low part (which restarts from that cycle's amount) through one pipelined,
saturating read-modify-write. An entry is visited every ``period`` cycles (the number of
counts, at least the pipeline's length), so no update is still in flight when its entry is read
again: the table needs no forwarding, and one adder as wide as the counts serves them all.

The table holds a count once the low part has been added, ``period`` + :data:`BANK_LATENCY`
cycles after it at most: once counting stops the bank goes on visiting its entries until every
low part is empty (``settling``), and a host reads the counts when the HMM is frozen and no
longer busy.

A snapshot (``snapshot=True``) copies every count of one instant into a second table while the
design runs: at the ``snap`` edge the low parts are copied into registers, and the next visit of
each entry, within a period, writes the entry as it was then plus that copy into the snapshot
table (``copying`` until all are written). The host reads the snapshot table, as it reads the
snapshot register of counts kept in registers.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import amount_widths, count_layout
from .select import select

__all__ = ["BANK_LATENCY", "CounterBank"]

#: Cycles from an entry's visit to its update being written: the read, the low half's sum, the
#: high half's, the saturation, the write (after the two that pick the entry's low part). An
#: entry is visited again no sooner.
BANK_LATENCY = 5

#: Low parts picked in the first step: 2 ** _GROUP_BITS (a 4:1 multiplexer, two ECP5 LUTs).
_GROUP_BITS = 2


class CounterBank(wiring.Component):
    """Saturating counts of amounts taken in every cycle, in one RAM table.

    Parameters
    ----------
    amount_bits : sequence of int
        The width of each count's amount (1 for an event), one per count.
    bits : int
        Width of each count; a count saturates and sets its overflow flag, as a register
        count does (:func:`~hwgen.instrument.saturating.count_layout`).
    snapshot : bool
        Keep a snapshot table, which ``rdata`` reads; else ``rdata`` reads the counts.
    lagging : sequence of int
        Counts whose amounts come a cycle late, from another part that gates them already
        (a latency histogram's events): they are taken whether or not ``enable`` is high, the
        bank visits its entries a cycle longer once counting stops, and a snapshot copies their
        amount of the ``snap`` cycle with their low part, so that they describe the same
        cycles as the others.

    Members
    -------
    amount<i> : In(amount_bits[i])
        What count ``i`` adds in this cycle.
    enable : In(1)
        Count this cycle.
    clear : In(1)
        Zero every count; the table is swept while ``busy`` is high (keep ``enable`` low).
    snap : In(1)
        Only with ``snapshot``: copy the counts as they are at this edge into the snapshot table.
    busy : Out(1)
        A clear is in progress (or waits for a snapshot's copy).
    settling : Out(1)
        The low parts are still being added to the table (they all are once it falls and
        ``enable`` stayed low).
    copying : Out(1)
        Only with ``snapshot``: the snapshot table is being written.
    raddr : In(range(len(amount_bits)))
        The entry the host reads: in the snapshot table at any time, else while the bank is
        neither counting nor settling.
    rdata : Out(count_layout(bits))
        Its count, one cycle later.
    """

    def __init__(self, amount_bits, bits=32, *, snapshot=False, lagging=()):
        amount_bits = amount_widths(amount_bits)
        lagging = frozenset(lagging)
        if not lagging <= set(range(len(amount_bits))):
            raise ValueError(f"lagging must name counts 0 .. {len(amount_bits) - 1}, not "
                             f"{sorted(lagging)!r}")
        self._lagging = lagging
        self._amount_bits = amount_bits
        self._layout = count_layout(bits)
        self._bits = bits
        self._snapshot = bool(snapshot)
        super().__init__({
            **{f"amount{i}": In(w) for i, w in enumerate(amount_bits)},
            "enable": In(1),
            "clear": In(1),
            **({"snap": In(1), "copying": Out(1)} if snapshot else {}),
            "busy": Out(1),
            "settling": Out(1),
            "raddr": In(range(len(amount_bits))),
            "rdata": Out(self._layout),
        })

    bits = property(lambda self: self._bits)
    amount_bits = property(lambda self: self._amount_bits)
    snapshot = property(lambda self: self._snapshot)
    lagging = property(lambda self: self._lagging)

    @property
    def period(self):
        """Cycles between two visits of an entry."""
        return max(len(self._amount_bits), BANK_LATENCY)

    @property
    def low_bits(self):
        """The width of each count's low part: what it gathers between two visits."""
        # Visits start a cycle after counting does: up to a period and one cycle of amounts
        # (and one more for a count whose amounts come a cycle late).
        return tuple(((self.period + 1 + (i in self._lagging)) * ((1 << w) - 1)).bit_length()
                     for i, w in enumerate(self._amount_bits))

    @property
    def table_bits(self):
        """RAM bits of the table (and of its snapshot)."""
        return len(self._amount_bits) * self._layout.size * (1 + self._snapshot)

    def amount(self, i):
        return getattr(self, f"amount{i}")

    def elaborate(self, platform):
        m = Module()
        n, period = len(self._amount_bits), self.period
        layout = self._layout
        m.submodules.table = table = Memory(shape=layout.size, depth=n, init=[],
                                            attrs={"ram_style": "distributed"})
        rd, wr = table.read_port(domain="comb"), table.write_port()

        # What a clear does inside the bank; a clear that comes with a snapshot, or while one
        # is being copied, waits until the counts have been copied (counting stays stopped:
        # the bank is busy meanwhile).
        clearing, waiting, copy_busy = Signal(), Signal(), Signal()
        if self._snapshot:
            m.d.comb += clearing.eq((self.clear | waiting) & ~self.snap & ~copy_busy)
            with m.If(self.clear & (self.snap | copy_busy)):
                m.d.sync += waiting.eq(1)
            with m.Elif(clearing):
                m.d.sync += waiting.eq(0)
        else:
            m.d.comb += clearing.eq(self.clear)

        # Visiting: the entry whose low part is taken in this cycle; the bank visits while it
        # counts, for a period after (so that every low part is emptied) and for a period after
        # a snapshot (so that every entry is copied).
        # Whether to visit is a register, set from the cycle after the first counted one: no
        # logic sits between it and the low parts it empties.
        # So is which entry is visited, one bit per entry (`flush`, visiting & slot == i), whose
        # low part restarts; it is taken from `ring`, the slot one-hot, so no comparison of the
        # next slot (after its adder) sits in front of it.
        slot = Signal(range(period))
        ring = Signal(period, init=1)
        drain, copy = Signal(range(period + 2)), Signal(range(period + 1))
        # Whether either count is above 1, flags set with the counts: no comparison sits in
        # front of `flush` (`copy > 1` there was the U1 PE's `default` critical path).
        drain_left, copy_left = Signal(), Signal()
        visiting, flush = Signal(), Signal(n, name="flush")
        next_visiting, next_slot = Signal(), Signal.like(slot)
        m.d.comb += [
            next_visiting.eq(~clearing & (self.enable | drain_left | copy_left
                                          | (self.snap if self._snapshot else 0))),
            next_slot.eq(Mux(visiting, Mux(slot == period - 1, 0, slot + 1), slot)),
        ]
        # A clear empties the low parts one edge late, through `flush`: a net from the clear to
        # every low part's flip-flops was a critical path, one to a flip-flop per entry is not.
        # Nothing reads them in between (no entry is visited in the cycle after a clear, and a
        # snapshot then copies zeros) and that cycle's amount is added as before, so every value
        # is as if they were emptied at the clear's edge.
        # A clear leaves the slot where it is: the visits go on from there once the sweep is
        # done (a net from the clear into the reset of every slot flip-flop was a critical path).
        next_ring = Mux(visiting, Cat(ring[-1], ring[:-1]), ring)
        m.d.sync += [visiting.eq(next_visiting), slot.eq(next_slot), ring.eq(next_ring),
                     flush.eq(Cat(*(clearing | (next_visiting & next_ring[i])
                                    for i in range(n))))]
        lows = [Signal(w, name=f"low{i}") for i, w in enumerate(self.low_bits)]
        # A visited low part restarts from this cycle's amount.
        kept = [Mux(flush[i], 0, low) for i, low in enumerate(lows)]
        taken = [self.amount(i) if i in self._lagging else Mux(self.enable, self.amount(i), 0)
                 for i in range(n)]
        for low, rest, amount in zip(lows, kept, taken):
            m.d.sync += low.eq(rest + amount)
        # After the last counted cycle every entry is visited once more; an amount that comes a
        # cycle late needs one visit more.
        drained = period + bool(self._lagging)
        with m.If(clearing):
            m.d.sync += [drain.eq(0), copy.eq(0), drain_left.eq(0), copy_left.eq(0)]
        with m.Else():
            m.d.sync += [drain.eq(Mux(self.enable, drained, Mux(drain.any(), drain - 1, 0))),
                         copy.eq(Mux(copy.any(), copy - 1, 0)),
                         drain_left.eq(Mux(self.enable, drained > 1, drain > 2)),
                         copy_left.eq(copy > 2)]

        # The low part of the visited entry is picked in two steps, a register each: among
        # groups of four by the slot's low bits, then among the groups (a multiplexer of as
        # many entries as the bank's was a critical path). Its address and valid bit follow.
        slot_high = Signal(max(1, len(slot) - _GROUP_BITS))
        addr_a, valid_a, visiting_a = Signal(range(n)), Signal(), Signal()
        in_table = slot < n
        m.d.sync += [slot_high.eq(slot[_GROUP_BITS:]), addr_a.eq(slot), visiting_a.eq(visiting),
                     valid_a.eq(visiting & in_table & ~clearing)]

        def picked(values, name):
            groups = [values[k:k + (1 << _GROUP_BITS)]
                      for k in range(0, len(values), 1 << _GROUP_BITS)]
            stage = [Signal(max(len(v) for v in values), name=f"{name}_group{j}")
                     for j in range(len(groups))]
            for register, group in zip(stage, groups):
                m.d.sync += register.eq(select(group, slot[:_GROUP_BITS]))
            value = Signal(len(stage[0]), name=f"{name}_picked")
            m.d.sync += value.eq(select(stage, slot_high))
            return value

        # The pipeline: the entry's address (a register, as the host's), the word read, the
        # low half added, the high half with its carry, the saturation, the write.
        addr0, valid0 = Signal(range(n)), Signal()
        amount0 = picked(lows, "amount")
        m.d.sync += [
            addr0.eq(Mux(visiting_a, addr_a, self.raddr)),
            valid0.eq(valid_a & ~clearing),
        ]
        m.d.comb += rd.addr.eq(addr0)
        addr4, valid4, word4, updating = self._update(m, "count", addr0, valid0, amount0,
                                                      rd.data, clearing)
        settling = [visiting, visiting_a, valid_a, valid0, *updating]

        # A clear sweeps the table with zeros, one entry per cycle; the updates in flight are
        # dropped (their valid bits fall with the clear).
        sweep, sweeping = Signal(range(n)), Signal()
        m.d.comb += [
            wr.en.eq(sweeping | valid4),
            wr.addr.eq(Mux(sweeping, sweep, addr4)),
            wr.data.eq(Mux(sweeping, 0, word4)),
            self.busy.eq(sweeping | waiting),
        ]
        with m.If(clearing):
            m.d.sync += [sweep.eq(0), sweeping.eq(1)]
        with m.Elif(sweeping):
            m.d.sync += sweep.eq(sweep + 1)
            with m.If(sweep == n - 1):
                m.d.sync += sweeping.eq(0)

        if not self._snapshot:
            m.d.comb += self.rdata.eq(rd.data)
        else:
            # The low parts as they are at the snap edge; the next visit of each entry adds its
            # copy to the entry read then, which holds every update made before the edge (an
            # entry's update is written before it is visited again).
            # A snapshot taken while a clear waits copies zeros: the counts are cleared.
            copies = [Signal(w, name=f"copy{i}") for i, w in enumerate(self.low_bits)]
            zeros = Signal()
            # A late amount of the snap cycle belongs to the cycles before the edge.
            snapped = [rest + amount if i in self._lagging else rest
                       for i, (rest, amount) in enumerate(zip(kept, taken))]
            with m.If(self.snap):
                m.d.sync += [c.eq(Mux(waiting, 0, value)) for c, value in zip(copies, snapped)]
                m.d.sync += [copy.eq(period), copy_left.eq(period > 1), zeros.eq(waiting)]
            copy_a, copy0 = Signal(), Signal()
            copied0 = picked(copies, "copied")
            m.d.sync += [copy_a.eq(copy.any() & in_table & ~clearing),
                         copy0.eq(copy_a & ~clearing)]
            m.submodules.snapshot = snapshot = Memory(shape=layout.size, depth=n, init=[],
                                                      attrs={"ram_style": "distributed"})
            snap_rd, snap_wr = snapshot.read_port(domain="comb"), snapshot.write_port()
            snap_addr4, copy4, snap_word4, copying = self._update(m, "copy", addr0, copy0,
                                                                  copied0,
                                                                  Mux(zeros, 0, rd.data),
                                                                  clearing)
            raddr = Signal(range(n))
            m.d.sync += raddr.eq(self.raddr)
            m.d.comb += [snap_rd.addr.eq(raddr), self.rdata.eq(snap_rd.data),
                         snap_wr.en.eq(copy4), snap_wr.addr.eq(snap_addr4),
                         snap_wr.data.eq(snap_word4),
                         self.copying.eq(copy_busy)]
            # Copying lasts from the snap edge through the last visit's write: a countdown,
            # and a flip-flop that says it runs (a clear waits on it: no logic before it).
            left = Signal(range(period + len(copying) + 3))
            m.d.sync += [left.eq(Mux(self.snap, period + len(copying) + 2,
                                     Mux(left.any(), left - 1, 0))),
                         copy_busy.eq(self.snap | (left > 1))]
        m.d.comb += self.settling.eq(Cat(*settling).any())
        return m

    def _update(self, m, name, addr0, valid0, amount0, data, clearing):
        """The saturating sum of the entry read at ``addr0`` (its word ``data``) and
        ``amount0``, four edges later: ``(address, valid, word)`` registers, the low half added
        at the first edge after the read, the high half with the low half's carry at the next,
        the saturation at the last; and the valid bits of the four stages."""
        bits, layout = self._bits, self._layout
        half = min(bits, max(max(self.low_bits), (bits + 1) // 2))
        addr1, valid1, word1 = (Signal.like(addr0, name=f"{name}_addr1"),
                                Signal(name=f"{name}_valid1"), Signal(layout, name=f"{name}_word1"))
        amount1 = Signal.like(amount0, name=f"{name}_amount1")
        addr2, valid2 = Signal.like(addr0, name=f"{name}_addr2"), Signal(name=f"{name}_valid2")
        low2, carry2 = Signal(half, name=f"{name}_low2"), Signal(name=f"{name}_carry2")
        high2, overflow2 = (Signal(bits - half, name=f"{name}_high2"),
                            Signal(name=f"{name}_overflow2"))
        addr3, valid3 = Signal.like(addr0, name=f"{name}_addr3"), Signal(name=f"{name}_valid3")
        total3, saturate3 = Signal(layout, name=f"{name}_total3"), Signal(name=f"{name}_saturate3")
        addr4, valid4 = Signal.like(addr0, name=f"{name}_addr4"), Signal(name=f"{name}_valid4")
        word4 = Signal(layout, name=f"{name}_word4")
        low_sum = word1.count[:half] + amount1
        m.d.sync += [
            addr1.eq(addr0), valid1.eq(valid0 & ~clearing), word1.eq(data),
            amount1.eq(amount0),
            addr2.eq(addr1), valid2.eq(valid1 & ~clearing),
            low2.eq(low_sum[:half]), carry2.eq(low_sum[half:].any()),
            overflow2.eq(word1.overflow),
        ]
        if half < bits:
            m.d.sync += high2.eq(word1.count[half:])
            high_sum = high2 + carry2
            saturate = overflow2 | high_sum[bits - half]
            total = Cat(low2, high_sum[:bits - half], 0)
        else:
            saturate = overflow2 | carry2
            total = Cat(low2, 0)
        m.d.sync += [addr3.eq(addr2), valid3.eq(valid2 & ~clearing),
                     total3.eq(total), saturate3.eq(saturate),
                     addr4.eq(addr3), valid4.eq(valid3 & ~clearing),
                     word4.eq(Mux(saturate3, (1 << (bits + 1)) - 1, total3))]
        return addr4, valid4, word4, [valid1, valid2, valid3, valid4]
