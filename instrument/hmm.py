"""The hardware measurement module (HMM): probes, their parts, control and readout.

An :class:`HMM` turns a list of probes (:mod:`hwgen.instrument.probe`) into parts (counters, state
profilers, histograms, trace buffers, ...) plus a cycle counter named ``cycles`` that every HMM
has and that timestamps its traces, and gives them one control and readout port
(:mod:`hwgen.instrument.port`). Its :attr:`~HMM.layout` says where every value lives on that port.

Timing. The HMM samples every design signal its probes watch into a register at each clock
edge, computes the probes' expressions from those registers into registers of their own, and its
parts count the samples two cycles later: the design's paths gain no logic but the
sampling flip-flops, and every part sees the same cycle at the same time. The parts share one
``enable`` (the sampled cycle counts: the HMM runs and no clear is in progress), so every value
describes the same cycles. Commands go through the same pipeline; see :mod:`hwgen.instrument.port` for
what the host sees.

Simulation cost. Amaranth's simulator pays for every signal a process assigns, in every cycle,
and for every process it runs: the parts hold as few registers as they can, their inputs are
sampled in one process, and control fan-out lives in a process of its own that only runs when a
command changes it.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ._amaranth import SignalDict, embed_parts, substitute
from .carry_bank import CarryBank
from .counter_bank import CounterBank
from .cycle_counter import CycleCounter
from .layout import (COMMANDS, REGISTERS, STATUS_BITS, Field, Group, HMMLayout, TableLayout,
                     TraceLayout)
from .port import PortSignature
from .select import select as _select
from .state_profiler import TABLE_LATENCY

__all__ = ["HMM", "SNAPSHOT_CHOICES"]

#: The most cycles a value may lag the others (a latency histogram's minimum and maximum: its
#: samples are registered once more, and an extreme takes a sample two cycles after it).
MAX_LAG = 3

#: Counts that go into one :class:`~hwgen.instrument.counter_bank.CounterBank` instead of
#: registers, from this many on: fewer cost more in a table than in registers, as many about
#: the same (docs/hmm.md).
BANK_MIN_COUNTS = 6
#: Counts that go into one :class:`~hwgen.instrument.carry_bank.CarryBank` instead of
#: registers, from this many on up to ``BANK_MIN_COUNTS``, in an HMM that reads them only once
#: frozen (``snapshot="traces"``; docs/hmm.md).
CARRY_BANK_MIN_COUNTS = 2
#: Counts a bank keeps at most (those of further probes stay in registers): after a ``clear |
#: snapshot`` a bank is busy for its copy (its counts + 6 cycles), then its sweep (its counts),
#: within the 64 cycles a host waits for a command of an HMM without tables.
BANK_MAX_COUNTS = 24

#: What the ``snapshot`` command may copy (see :class:`HMM`).
SNAPSHOT_CHOICES = ("all", "traces")


def _pow2(n):
    """The smallest power of two >= n."""
    return 1 << max(0, n - 1).bit_length()


@dataclass
class _Region:
    """A read-only region of the address map: ``entries`` of ``stride`` words each, read from a
    part's ``rdata`` at its ``raddr`` (or, without a part, a flat region of words: the snapshot
    register or the registers)."""
    entries: int
    stride: int
    part: object = None
    base: int = 0

    @property
    def size(self):
        return _pow2(self.entries) * self.stride

    @property
    def size_bits(self):
        """Address bits inside the region."""
        return self.size.bit_length() - 1

    @property
    def word_bits(self):
        """Address bits that pick a word in what the region's source gives at once."""
        return self.size_bits if self.part is None else self.stride.bit_length() - 1

    @property
    def blocks(self):
        """Readout blocks: one register per ``2 ** _BLOCK_SELECT_BITS`` words of its source."""
        return 1 << max(0, self.word_bits - _BLOCK_SELECT_BITS)


#: Words one readout block chooses from (an 8:1 multiplexer: one ECP5 slice pair, one LUT6).
_BLOCK_SELECT_BITS = 3
#: Blocks ORed into one register of the readout tree (one LUT4 per bit).
_OR_FAN_IN = 4


def _read_latency(blocks):
    """Cycles from a read strobe to its word, for a readout of ``blocks`` blocks: the address and
    the block selects are registered, then each block's word, then the OR tree's levels."""
    levels = 1
    while blocks > _OR_FAN_IN:
        blocks = -(-blocks // _OR_FAN_IN)
        levels += 1
    return 2 + levels


class _Builder:
    """What probes use to add parts and readable values to an HMM (see ``Probe.build``)."""

    def __init__(self, view, counter_bits, live):
        self.view = view
        self.counter_bits = counter_bits
        self.live = live         # counts are read once counting stopped, not snapshotted
        self.parts = {}          # submodule name -> part
        self.samples = []        # (part port, design value): registered at every edge
        self.links = []          # (part port, value of another part): combinational
        self.fields = []         # (name, value, has overflow flag)
        self.lags = []           # per field: cycles it lags the other values (0 .. MAX_LAG)
        self.now = {}            # name -> value in the cycle, of a field that lags
        self.tables = []         # (name, kind, part, labels, values)
        self.traces = []         # (name, kind, part, events, payload [(name, bits, overflow)],
        #                           labels [(payload name, names by code)], period)
        self.groups = []
        self.scaled = []         # (name, name of the count it multiplies, factor)
        self.banked = []         # [names, design values they add up, fallback]: see bank()
        self.bank_part, self.bank_names = None, ()      # see finish()
        self._names = set()
        self.timestamp = None

    def resolve(self, expr, probe, *, width=None):
        """The value an expression of probe ``probe`` stands for (see :mod:`hwgen.instrument.probe`)."""
        if isinstance(expr, str) or callable(expr):
            if self.view is None:
                raise ValueError(f"{probe}: names and functions need a design view; use "
                                 f"hwgen.instrument.attach() or give HMM(view=)")
            expr = self.view.signal(expr) if isinstance(expr, str) else expr(self.view)
        try:
            value = Value.cast(expr)
        except TypeError:
            raise TypeError(f"{probe}: expected a value, not {expr!r}") from None
        if width is not None and len(value) != width:
            raise ValueError(f"{probe}: expected a {width}-bit condition, not {len(value)} bits "
                             f"({value!r})")
        return value

    def _claim(self, name):
        if name in self._names:
            raise ValueError(f"two values of the HMM are named {name!r}")
        self._names.add(name)

    def add(self, name, part):
        """Add a part (it has ``enable`` and ``clear``, and ``busy`` if it sweeps a table)."""
        submodule = name.replace(".", "__").replace("$", "_")
        if submodule in self.parts:
            raise ValueError(f"two parts of the HMM are named {name!r}")
        self.parts[submodule] = part
        return part

    def sample(self, port, value):
        """Drive a part's input with a design value, sampled at every edge."""
        self.samples.append((port, value))

    def connect(self, port, value):
        """Drive a part's input with another part's output (already aligned with the samples)."""
        self.links.append((port, value))

    def count(self, name, counter, *, now=None, lag=0):
        """A saturating count (``count_layout`` view) readable as ``name``, that lags the other
        values ``lag`` cycles, and one more with ``now``, its value a cycle earlier (see
        :func:`~hwgen.instrument.saturating.build_count`)."""
        self._claim(name)
        self.fields.append((name, counter.as_value(), True))
        self.lags.append(lag + int(now is not None))
        if now is not None:
            self.now[name] = now.as_value()

    def scale(self, name, of, factor, probe):
        """A value readable as ``name``: ``factor`` times the count ``of``, added before it,
        read from that count's bits (no hardware of its own)."""
        known = {n for n, _, _ in self.fields} | {n for g in self.banked for n in g[0]}
        if of not in known:
            raise ValueError(f"{probe}: no count named {of!r} was added before it "
                             f"(known: {', '.join(sorted(known))})")
        self._claim(name)
        self.scaled.append((name, of, factor))

    def plain(self, name, value, *, lag=0):
        """A value without an overflow flag, readable as ``name``, that lags the other values
        ``lag`` cycles (0 to :data:`MAX_LAG`)."""
        self._claim(name)
        self.fields.append((name, Value.cast(value), False))
        self.lags.append(lag)

    def bank(self, names, amounts, fallback, *, lagging=False, joins=False):
        """Counts readable as ``names``, each adding its design value ``amounts[i]`` in every
        cycle, kept in the HMM's counter bank if it has one (see :meth:`finish`); else (or when
        another probe needs one of them in the cycle, see :meth:`counter_value`) ``fallback()``
        builds them in registers. With ``lagging`` the amounts are events of another part, a
        cycle late and counted whether or not the HMM counts (they carry its ``enable``); with
        ``joins`` the counts join a bank that the others fill, but do not count towards
        :data:`BANK_MIN_COUNTS`."""
        for name in names:
            self._claim(name)
        self.banked.append((tuple(names), tuple(amounts), fallback, lagging, joins))

    def unbank(self, group):
        """Build a group of :meth:`bank` in registers instead."""
        self.banked.remove(group)
        self._names.difference_update(group[0])
        group[2]()

    def finish(self, snapshot):
        """Put the banked counts into one bank, from :data:`BANK_MIN_COUNTS` counts on, else
        into registers. The bank keeps a snapshot table if the HMM's snapshot copies every
        value (``snapshot="all"``)."""
        kept = 0
        for group in list(self.banked):
            kept += len(group[0])
            if kept > BANK_MAX_COUNTS:
                self.unbank(group)
        names = [name for group in self.banked for name in group[0]]
        amounts = [(amount, group[3]) for group in self.banked for amount in group[1]]
        filling = sum(len(group[0]) for group in self.banked if not group[4])
        # Counts read only once frozen that are too few for a counter bank share their high
        # parts' table and adder in a carry bank, where it is narrower than the counts.
        carried = (snapshot != "all" and filling >= CARRY_BANK_MIN_COUNTS
                   and not any(lagging for _, lagging in amounts)
                   and self.counter_bits > max(CarryBank.low_bits_for([len(a) for a, _ in amounts])))
        if filling < BANK_MIN_COUNTS and not carried:
            for group in list(self.banked):
                self.unbank(group)
            return
        if filling < BANK_MIN_COUNTS:
            bank = CarryBank([len(a) for a, _ in amounts], self.counter_bits)
        else:
            bank = CounterBank(
                [len(a) for a, _ in amounts], self.counter_bits, snapshot=snapshot == "all",
                lagging=[i for i, (_, lagging) in enumerate(amounts) if lagging])
        self.bank_part = self.add("counts", bank)
        for i, (amount, lagging) in enumerate(amounts):
            (self.connect if lagging else self.sample)(self.bank_part.amount(i), amount)
        self.bank_names = tuple(names)

    def counter_value(self, name, probe):
        """``(value, has overflow flag)`` of a value added earlier, in the cycle."""
        for group in self.banked:
            if name in group[0]:
                self.unbank(group)
        for field_name, value, overflow in self.fields:
            if field_name == name:
                return self.now.get(name, value), overflow
        for scaled, of, _ in self.scaled:
            if scaled == name:
                raise ValueError(f"{probe}: {name!r} is a multiple of the count {of!r} and has "
                                 f"no value of its own in the cycle; take {of!r}")
        raise ValueError(f"{probe}: no value named {name!r} was added before it "
                         f"(known: {', '.join(n for n, _, _ in self.fields)})")

    def table(self, name, kind, part, labels, values=()):
        """A RAM table, an entry per label; ``values`` name the entries in the readout when
        ``<name>.<label>`` does not."""
        for claimed in (name, *values):
            self._claim(claimed)
        self.tables.append((name, kind, part, tuple(labels), tuple(values)))

    def trace(self, name, kind, part, events, payload, labels=(), period=None):
        self._claim(name)
        self.traces.append((name, kind, part, tuple(events), tuple(payload),
                            tuple((field, tuple(names)) for field, names in labels), period))

    def group(self, kind, name, **roles):
        self.groups.append(Group(kind, name, tuple(roles.items())))


class HMM(wiring.Component):
    """A hardware measurement module.

    Parameters
    ----------
    probes : sequence of Probe
        What to measure (:mod:`hwgen.instrument.probe`). Names must be unique.
    view : DesignView or None
        Resolves probe expressions given as names or functions.
    counter_bits : int
        Width of every counter (and of the ``cycles`` timestamp).
    word_bits : int
        Width of a port word.
    snapshot : str
        What the ``snapshot`` command copies: ``"all"`` values, so that a host reads every value
        of one instant while the design runs; or ``"traces"``, only the traces' ``written`` and
        ``dropped`` counts a host reads while it drains them, every other value being read as
        it is, which holds still once the HMM is frozen (a host freezes before it reads them).
        ``"traces"`` saves a register as wide as the counters.
    bank : bool
        Keep the counts of :class:`~hwgen.instrument.probe.Count`,
        :class:`~hwgen.instrument.probe.Accumulate` and :class:`~hwgen.instrument.probe.Stream`
        probes (from ``BANK_MIN_COUNTS`` to ``BANK_MAX_COUNTS`` of them) in one
        :class:`~hwgen.instrument.counter_bank.CounterBank`, a RAM table with a register low part
        per count, instead of a register each; they read as snapshot values all the same, once
        ``busy`` fell after the command. Fewer of them (from ``CARRY_BANK_MIN_COUNTS``) in an HMM
        with ``snapshot="traces"`` go into a :class:`~hwgen.instrument.carry_bank.CarryBank`
        instead, which keeps their high parts in a RAM table. A count that another probe takes
        in the cycle (a sampler's) stays in registers. ``False`` keeps every count in
        registers.
    details : dict
        Recorded in the layout as is (with ``snapshot``).

    Members
    -------
    port : In(PortSignature(layout.addr_bits, word_bits, layout.read_latency_cycles))
        Control and readout, see :mod:`hwgen.instrument.port`.
    """

    def __init__(self, probes, *, view=None, counter_bits=32, word_bits=32, snapshot="all",
                 bank=True, details=None):
        if isinstance(counter_bits, bool) or not isinstance(counter_bits, int) or counter_bits < 1:
            raise ValueError(f"counter_bits must be a positive integer, not {counter_bits!r}")
        if not isinstance(bank, bool):
            raise ValueError(f"bank must be True or False, not {bank!r}")
        if snapshot not in SNAPSHOT_CHOICES:
            raise ValueError(f"snapshot must be one of {', '.join(SNAPSHOT_CHOICES)}, not "
                             f"{snapshot!r}")
        probes = tuple(probes)
        b = _Builder(view, counter_bits, live=snapshot == "traces")

        def cycles_in_registers():
            cycles = b.add("cycles", CycleCounter(counter_bits))
            b.count("cycles", cycles.value)
            b.timestamp = cycles.value.count

        # The cycles join a bank unless records take them as their timestamp in the cycle.
        if bank and not any(probe.timestamped for probe in probes):
            b.bank(["cycles"], [Const(1)], cycles_in_registers, joins=True)
        else:
            cycles_in_registers()
        b.group("counter", "cycles", value="cycles")
        for probe in probes:
            probe.build(b)
        if bank:
            b.finish(snapshot)
        else:
            for group in list(b.banked):
                b.unbank(group)
        self._builder = b
        traced = {name for trace in b.traces for name in (f"{trace[0]}.written",
                                                          f"{trace[0]}.dropped")}
        self._snapshotted = [snapshot == "all" or name in traced for name, _, _ in b.fields]
        self._layout, self._regions, self._consumed_base = self._place(
            b, word_bits, {**(details or {}), "snapshot": snapshot})
        super().__init__({"port": In(PortSignature(self._layout.addr_bits, word_bits,
                                                   self._layout.read_latency_cycles))})

    @property
    def layout(self):
        """The :class:`~hwgen.instrument.layout.HMMLayout` of this HMM."""
        return self._layout

    @property
    def parts(self):
        """``{submodule name: part}``."""
        return dict(self._builder.parts)

    @staticmethod
    def _place(b, word_bits, details):
        """Pack the snapshot and place every region in the address map."""
        fields, offset = [], 0
        for name, value, overflow in b.fields:
            fields.append(Field(name, offset, len(value) - overflow, overflow))
            offset += len(value)
        snapshot = _Region(-(-offset // word_bits) or 1, 1)

        def stride(part):
            return _pow2(-(-len(part.rdata.as_value()) // word_bits))

        # The counts of a bank are read as snapshot values too: the snapshot's registers take
        # the first half of its region, the bank's entries (read from its table) the second.
        bank = None
        if b.bank_part is not None:
            bank = _Region(len(b.bank_names), stride(b.bank_part), b.bank_part)
            half = max(snapshot.size, bank.size)
            registered_words, snapshot.entries = snapshot.entries, 2 * half
            for k, name in enumerate(b.bank_names):
                fields.append(Field(name, (half + k * bank.stride) * word_bits,
                                    b.counter_bits, True))

        placed = {f.name: f for f in fields}
        for name, of, factor in b.scaled:
            counted = placed[of]
            fields.append(Field(name, counted.offset, counted.bits, counted.overflow,
                                counted.scale * factor))

        tables = [_Region(len(labels), stride(part), part) for _, _, part, labels, _ in b.tables]
        traces = [_Region(part.depth, stride(part), part) for _, _, part, *_ in b.traces]

        # Registers first (control at 0), then regions aligned to their power-of-two sizes so
        # the read decoder compares high address bits only.
        consumed_base = len(REGISTERS)
        registers = _Region(consumed_base + len(traces), 1)
        cursor = registers.size
        for region in sorted([snapshot, *tables, *traces], key=lambda r: -r.size):
            region.base = -(-cursor // region.size) * region.size
            cursor = region.base + region.size
        addr_bits = max(1, (cursor - 1).bit_length())
        if bank is not None:
            snapshot.entries, bank.base = registered_words, snapshot.base + half

        table_layouts = tuple(
            TableLayout(name, kind, region.base, region.stride, part.bits, labels, values)
            for (name, kind, part, labels, values), region in zip(b.tables, tables))
        trace_layouts = []
        for k, ((name, kind, part, events, payload, labels, period), region) in enumerate(
                zip(b.traces, traces)):
            offset = part.timestamp_bits + len(events)
            payload_fields = []
            for field_name, bits, overflow in payload:
                payload_fields.append(Field(field_name, offset, bits, overflow))
                offset += bits + overflow
            trace_layouts.append(TraceLayout(
                name, kind, region.base, region.stride, part.depth, part.mode, part.timestamp_bits,
                events, tuple(payload_fields), consumed_base + k, f"{name}.written",
                f"{name}.dropped", labels, period))
        details.setdefault("counter_bits", b.counter_bits)
        blocks = sum(region.blocks for region in (registers, snapshot, *tables, *traces,
                                                  *([bank] if bank else [])))
        layout = HMMLayout(word_bits, addr_bits, snapshot.base, tuple(fields), table_layouts,
                           tuple(trace_layouts), tuple(b.groups), details, _read_latency(blocks))
        return layout, (registers, snapshot, tables, traces, bank), consumed_base

    def elaborate(self, platform):
        m = Module()
        b = self._builder
        register_region, snapshot_region, tables, traces, bank = self._regions

        # The design values the parts watch, registered at every edge; links between parts.
        _sample(m, b.samples)
        m.d.comb += [part_port.eq(value) for part_port, value in b.links]

        # What the parts are told fans out from a fragment of its own: its inputs change only
        # on the host's commands and reads.
        m.submodules.control = fan_out = Module()
        control = _control(m, fan_out, self.port, b.parts.values(),
                           [part for _, _, part, *_ in b.traces], self._consumed_base,
                           [value for _, value, _ in b.fields], self._snapshotted, b.lags)

        registers = {
            REGISTERS["control"]: control.status,
            REGISTERS["layout_id"]: Const(self._layout.layout_id, self._layout.word_bits),
            **{self._consumed_base + k: register for k, register in enumerate(control.consumed)},
        }
        word_bits = self._layout.word_bits
        register_words = Cat(*(Cat(registers[a], Const(0, word_bits - len(registers[a])))
                               if a in registers else Const(0, word_bits)
                               for a in range(register_region.size)))
        _readout(m, fan_out, self.port, [(register_region, register_words),
                                         (snapshot_region, control.snapshot),
                                         *((region, region.part.rdata.as_value())
                                           for region in (*tables, *traces,
                                                          *([bank] if bank else [])))])

        # Amaranth's simulator runs one process per fragment and domain, and visits every process
        # in every delta cycle: the parts' clocked logic joins this fragment's (the netlist is the
        # same), their combinational logic and memories stay in fragments of their own. Their
        # registers and ports keep the part's name in front of theirs, for waveforms.
        return embed_parts(m, b.parts, platform)


def _sample(m, samples):
    """Drive each part port of ``samples`` (``[(port, design value)]``) with its value two
    cycles late.

    The design's signals are registered, each once, the values are computed from those
    registers and registered in turn: a design net gains one flip-flop load at most, no logic of
    the HMM shares a net with the design (a ``valid & ready`` computed before its register would
    be merged with the design's own and load it with every part that counts it), and a part's
    logic starts from a register holding its event, not from the logic that computes it. A
    value that is not made of signals, operators, slices, parts, concatenations and switches is
    registered whole, and again.
    """
    registers = SignalDict()

    def registered(signal):
        if signal not in registers:
            registers[signal] = Signal(signal.shape(), init=signal.init,
                                       name=f"sample_{signal.name}")
            m.d.sync += registers[signal].eq(signal)
        return registers[signal]

    for port, value in samples:
        late = substitute(value, registered)
        if late is None:
            late = Signal(len(Value.cast(value)), name="sample_value")
            m.d.sync += late.eq(value)
        m.d.sync += port.eq(late)


@dataclass(frozen=True)
class _Control:
    """What the control block (:func:`_control`) gives the rest of the HMM."""
    status: Value           # the status register's bits (STATUS_BITS)
    snapshot: Value         # the values, as the last snapshot command took them (or as they are)
    consumed: list          # per trace, the register the host writes the records it read to


def _control(m, fan_out, port, parts, traces, consumed_base, values, snapshotted, lags):
    """Execute the host's commands; tell every part whether this cycle counts and when to clear.

    A command written in cycle c: run/freeze decide whether cycle c + 1 is sampled for counting;
    snapshot and clear act at the edge that ends cycle c + 3, when the sample of cycle c has been
    counted (a sample reaches the parts two edges after its cycle, see :func:`_sample`);
    snapshot copies the ``values`` marked ``snapshotted`` into a register, the others are read
    as they are; a value that ``lags`` (a wide sum, see
    :func:`~hwgen.instrument.saturating.count_lag`, or a latency histogram's figures) is copied
    as many edges later. The parts' ``enable``, ``clear`` and the traces' ``consumed`` are
    driven from ``fan_out``.
    """
    run = Signal(init=1)
    clear = Signal()            # clear strobe for the parts, at the end of cycle c + 3
    snap = Signal()             # snapshot strobe, likewise
    pending = Signal(2)         # (clear, snapshot) of cycle c + 1
    ahead = Signal(2)           # ... and of cycle c + 2
    sweeping = Signal()
    counting = Signal()         # this cycle's sample will count
    sampled = Signal()          # the sample taken at the last edge counts
    enable = Signal()           # the sample the parts see now counts
    sweepers = [part.busy for part in parts if hasattr(part, "busy")]
    settlers = [part.settling for part in parts if hasattr(part, "settling")]
    copiers = [part for part in parts if hasattr(part, "snap")]
    m.d.comb += [
        sweeping.eq(Cat(*sweepers).any()),
        # A sample reaches the parts two edges after its cycle: that of the cycle before a
        # clear takes effect would be counted after it. While tables are to be swept, nothing
        # counts from the clear on.
        counting.eq(run & ~ahead[0] & ~(clear & bool(sweepers)) & ~sweeping),
    ]
    m.d.sync += [sampled.eq(counting), enable.eq(sampled), ahead.eq(pending),
                 Cat(clear, snap).eq(ahead), pending.eq(0)]
    for part in parts:
        fan_out.d.comb += [part.enable.eq(enable), part.clear.eq(clear)]
    for part in copiers:
        fan_out.d.comb += part.snap.eq(snap)

    consumed = [Signal(len(part.consumed), name=f"consumed{k}") for k, part in enumerate(traces)]
    for register, part in zip(consumed, traces):
        fan_out.d.comb += part.consumed.eq(register)

    with m.If(port.write):
        with m.Switch(port.addr):
            with m.Case(REGISTERS["control"]):
                command = {name: port.wdata[bit.bit_length() - 1]
                           for name, bit in COMMANDS.items()}
                m.d.sync += pending.eq(Cat(command["clear"], command["snapshot"]))
                with m.If(command["freeze"]):
                    m.d.sync += run.eq(0)
                with m.Elif(command["run"]):
                    m.d.sync += run.eq(1)
            for k, register in enumerate(consumed):
                with m.Case(consumed_base + k):
                    m.d.sync += register.eq(port.wdata)
    with m.If(clear):
        m.d.sync += [register.eq(0) for register in consumed]

    register = Signal(sum(len(value) for value, copied in zip(values, snapshotted) if copied),
                      name="snapshot")
    # The snapshot strobes of the values that lag one to MAX_LAG cycles.
    late = Signal(MAX_LAG)
    m.d.sync += late.eq(Cat(snap, late[:-1]))
    copies = tuple([] for _ in range(MAX_LAG + 1))      # by lag: (part of the register, value)
    readable, offset = [], 0
    for value, copied, lag in zip(values, snapshotted, lags):
        if copied:
            copies[lag].append(register[offset:offset + len(value)].eq(value))
        readable.append(register[offset:offset + len(value)] if copied else value)
        offset += len(value) if copied else 0
    for strobe, assignments in zip((snap, *late), copies):
        if assignments:
            with m.If(strobe):
                m.d.sync += assignments
    snapshot = Cat(*readable)

    # Busy: a command has not fully taken effect, a sweep is running, or, once frozen, the last
    # samples are still being counted (a table holds a count TABLE_LATENCY cycles after it).
    settling = Signal(TABLE_LATENCY + MAX_LAG)
    m.d.sync += settling.eq(Cat(enable, settling[:-1]))
    busy = Cat(pending, ahead, clear, snap, late.any(), sweeping,
               *(part.copying for part in copiers),
               (sampled | enable | settling.any() | Cat(*settlers).any()) & ~run).any()
    status_bits = {"running": run, "busy": busy}
    status = Cat(*(status_bits[name] for name in sorted(STATUS_BITS, key=STATUS_BITS.get)))
    return _Control(status, snapshot, consumed)


def _readout(m, fan_out, port, sources):
    """Answer the host's reads from ``sources``, ``[(region, data)]`` (``data``: the words the
    region's part gives at once, or all of a flat region's words), the port's ``read_latency``
    cycles after the read strobe.

    A pipeline in which no path crosses more than a multiplexer or an OR of a few inputs: the
    address is registered with the strobe and with one select bit per block of up to 8 words,
    decoded from the address (tables and traces read their RAM at the same edge, addressed from
    ``fan_out``); each block then registers its word at that address when selected, else 0; then
    an OR tree of registers, ``_OR_FAN_IN`` blocks per register, ends on ``rdata``.
    """
    word_bits = len(port.rdata)
    read_addr = Signal(len(port.addr))
    m.d.sync += read_addr.eq(port.addr)
    # Each source's words in blocks of at most 2 ** _BLOCK_SELECT_BITS, one register per block.
    blocks = []
    for region, data in sources:
        if region.part is not None:
            high = region.word_bits + (region.entries - 1).bit_length()
            fan_out.d.comb += region.part.raddr.eq(
                port.addr[region.word_bits:high] if high > region.word_bits else 0)
        low = region.word_bits
        words = Cat(data, Const(0, (1 << low) * word_bits))
        select = min(low, _BLOCK_SELECT_BITS)
        for k in range(region.blocks):
            chosen = Signal(name=f"read_select{len(blocks)}")
            in_block = port.addr[region.size_bits:] == region.base >> region.size_bits
            if low > select:
                in_block &= port.addr[select:low] == k
            m.d.sync += chosen.eq(in_block)
            block = words[k * (word_bits << select):(k + 1) * (word_bits << select)]
            register = Signal(word_bits, name=f"read_block{len(blocks)}")
            with m.If(chosen):
                m.d.sync += register.eq(
                    _select([block[w * word_bits:(w + 1) * word_bits] for w in range(1 << select)],
                            read_addr[:select]))
            with m.Else():
                m.d.sync += register.eq(0)
            blocks.append(register)
    level = blocks
    while len(level) > _OR_FAN_IN:
        groups = [level[k:k + _OR_FAN_IN] for k in range(0, len(level), _OR_FAN_IN)]
        level = []
        for group in groups:
            register = Signal(word_bits, name=f"read_or{len(level)}")
            m.d.sync += register.eq(_any_of(group))
            level.append(register)
    latency = port.signature.read_latency
    assert latency == _read_latency(len(blocks))
    # reads[k]: a read strobe k + 1 cycles ago.
    reads = Signal(latency - 1)
    m.d.sync += [reads.eq(Cat(port.read, reads[:-1])), port.rvalid.eq(reads[-1])]
    with m.If(reads[-1]):
        m.d.sync += port.rdata.eq(_any_of(level))


def _any_of(words):
    """The bitwise OR of ``words``."""
    result = words[0]
    for word in words[1:]:
        result = result | word
    return result
