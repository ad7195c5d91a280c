"""The host side of an HMM port, in a simulation testbench.

:class:`HMMHost` drives an HMM's control and readout port the way a host bridge would — strobes,
addresses and data on the port's signals, nothing else — and decodes what it reads with the
layout manifest (:class:`hwgen.instrument.HMMLayout`) into an :class:`~hwgen.sim.readout.HMMReadout`.

The host reaches the port through a :class:`PortBus`: three bus cycles, a word write, a burst of
reads and a wait. :class:`SimulatorBus` runs them in an Amaranth testbench (a board's host has
its own bus, :mod:`hwgen.board.host`). The compiled engine runs the program of
:meth:`HMMHost.read_when_done` in C++, bus cycle for bus cycle the same
(``cxxrtl_harness.cc``), and decodes the words it read with the functions here
(:func:`decode_table`, :func:`decode_records`, :func:`assemble_readout`), so both engines read an
HMM the same way, in the same cycles.
"""

from ..instrument import COMMANDS, REGISTERS, STATUS_BITS
from ..instrument.layout import Field

from .readout import HMMReadout
from .trace_records import TraceRecords

__all__ = ["HMMHost", "HMMError", "PortBus", "SimulatorBus", "assemble_readout",
           "command_limit_cycles", "decode_records", "decode_table", "not_finished",
           "snapshot_words_of", "table_addresses"]


def table_addresses(table, word_bits):
    """The addresses of every word of a table's entries, entry by entry."""
    n = table.entry_words(word_bits)
    return [table.address(entry, w) for entry in range(len(table.labels)) for w in range(n)]


def snapshot_words_of(fields, word_bits):
    """The indices of the snapshot words that hold ``fields``, in order."""
    return sorted({w for f in fields
                   for w in range(f.offset // word_bits,
                                  (f.offset + f.total_bits - 1) // word_bits + 1)})


def decode_table(table, words, word_bits):
    """``[(count, overflow), ...]`` of a table, one per label, from the words of
    :func:`table_addresses`."""
    n = table.entry_words(word_bits)
    count = Field("count", 0, table.bits, overflow=True)
    return [count.decode(words[i * n:(i + 1) * n], word_bits) for i in range(len(table.labels))]


def decode_records(trace, words, word_bits):
    """The :class:`~hwgen.sim.trace_records.TraceRecords` of a trace, from the words of
    consecutive records (a list or a numpy array), decoded in bulk."""
    return TraceRecords.decode(trace, words, word_bits)


def assemble_readout(layout, snapshot, tables, traces):
    """The :class:`HMMReadout` of a frozen HMM: its snapshot's words, every table's entries
    (:func:`decode_table`, by table name) and every trace's records (by trace name)."""
    values, overflow = layout.decode_snapshot([int(word) for word in snapshot])
    counts = {}
    for table in layout.tables:
        entries = tables[table.name]
        counts[table.name] = {label: count for label, (count, _) in zip(table.labels, entries)}
        for name, (count, flag) in zip(table.entry_names, entries):
            values[name] = count
            overflow[name] = flag
    return HMMReadout(layout.layout_id, values, overflow, counts, traces, layout.groups)


class HMMError(RuntimeError):
    """The HMM answered something a host cannot accept (wrong layout, tables read while running),
    or did not answer in time."""


# Cycles a command may keep the HMM busy beyond one per entry of its largest table (a clear
# sweeps the tables; the last samples settle in a few cycles).
_COMMAND_SLACK_CYCLES = 64


def command_limit_cycles(layout):
    """Cycles a command may keep an HMM of ``layout`` busy: a command always ends by then."""
    entries = max((len(table.labels) for table in layout.tables), default=0)
    return 2 * entries + _COMMAND_SLACK_CYCLES


def not_finished(waited, max_cycles):
    """Why a host that waited for a job gave up."""
    return (f"the job was not finished after the host waited {waited} cycles for it (at most "
            f"{max_cycles})")


class PortBus:
    """How a host reaches an HMM port: the bus cycles :class:`HMMHost` is made of.

    Attributes
    ----------
    read_latency : int
        Cycles from a read strobe to its word (the port's ``read_latency``): what one read of the
        status costs a host that waits for a command.
    """

    read_latency = None

    async def write(self, addr, value):
        """Drive ``addr``, ``wdata`` and ``write`` for one cycle."""
        raise NotImplementedError

    async def read(self, addrs):
        """The words at ``addrs``, read back to back, one address per cycle; raise
        :class:`HMMError` if the port does not answer one."""
        raise NotImplementedError

    async def wait(self, cycles):
        """Let ``cycles`` cycles pass."""
        raise NotImplementedError

    async def wait_until(self, condition, poll_cycles, max_cycles=None):
        """Look at ``condition()`` now and every ``poll_cycles`` cycles until it holds; with
        ``max_cycles``, give up (:class:`HMMError`) once that many cycles have passed."""
        waited = 0
        while not condition():
            if max_cycles is not None and waited >= max_cycles:
                raise HMMError(not_finished(waited, max_cycles))
            await self.wait(poll_cycles)
            waited += poll_cycles


class SimulatorBus(PortBus):
    """The bus cycles of an HMM port in an Amaranth testbench (``ctx`` is its context)."""

    def __init__(self, ctx, port):
        self._ctx = ctx
        self._port = port
        self.read_latency = port.signature.read_latency

    async def write(self, addr, value):
        ctx, port = self._ctx, self._port
        ctx.set(port.addr, addr)
        ctx.set(port.wdata, value)
        ctx.set(port.write, 1)
        await ctx.tick()
        ctx.set(port.write, 0)

    async def read(self, addrs):
        ctx, port = self._ctx, self._port
        addrs = list(addrs)
        words = []
        if not addrs:
            return words
        for cycle in range(len(addrs) + self.read_latency - 1):
            if cycle < len(addrs):
                ctx.set(port.addr, addrs[cycle])
            ctx.set(port.read, cycle < len(addrs))
            await ctx.tick()
            if cycle >= self.read_latency - 1:
                if not ctx.get(port.rvalid):
                    raise HMMError(f"the HMM did not answer the read of {addrs[len(words)]:#x}")
                words.append(ctx.get(port.rdata))
        ctx.set(port.read, 0)
        return words

    async def wait(self, cycles):
        await self._ctx.tick().repeat(cycles)


class HMMHost:
    """Drive an HMM port from an async testbench.

    Parameters
    ----------
    ctx : SimulatorContext or PortBus
        The testbench's context, or a bus to the port.
    port : interface of PortSignature
        The HMM's port, for example ``instrumented.hmm``.
    layout : HMMLayout
    """

    def __init__(self, ctx, port, layout):
        self._bus = ctx if isinstance(ctx, PortBus) else SimulatorBus(ctx, port)
        self._port = port
        self._layout = layout
        self._drained = {}       # trace name -> TraceRecords taken off the HMM by drain()
        self._command_limit_cycles = command_limit_cycles(layout)

    @property
    def port(self):
        return self._port

    @property
    def layout(self):
        return self._layout

    async def write(self, addr, value):
        await self._bus.write(addr, value)

    async def read(self, addrs):
        """The words at ``addrs``, read back to back."""
        return await self._bus.read(addrs)

    async def command(self, *names):
        """Execute commands together (``"clear"``, ``"run"``, ``"freeze"``, ``"snapshot"``) and
        wait until they have taken effect.

        Raises :class:`HMMError` when the HMM is still busy after the sweep of its largest table
        and some slack: a command always ends by then.
        """
        bits = 0
        for name in names:
            if name not in COMMANDS:
                raise ValueError(f"command must be one of {', '.join(COMMANDS)}, not {name!r}")
            bits |= COMMANDS[name]
        await self.write(REGISTERS["control"], bits)
        waited = 0
        while (await self.status())["busy"]:
            waited += self._bus.read_latency
            if waited > self._command_limit_cycles:
                raise HMMError(f"the HMM was still busy {waited} cycles after the command "
                               f"{' + '.join(names)} (it ends within "
                               f"{self._command_limit_cycles}): the HMM does not answer")

    async def status(self):
        """``{"running": bool, "busy": bool}``."""
        word, = await self.read([REGISTERS["control"]])
        return {name: bool(word >> bit & 1) for name, bit in STATUS_BITS.items()}

    async def check_layout(self):
        """Raise HMMError unless the HMM answers this layout's id."""
        word, = await self.read([REGISTERS["layout_id"]])
        if word != self._layout.layout_id:
            raise HMMError(f"the HMM's layout id is {word:#x}, the manifest's "
                           f"{self._layout.layout_id:#x}: wrong manifest")

    async def read_snapshot(self):
        """``(values, overflow)`` of the last snapshot."""
        layout = self._layout
        words = await self.read(range(layout.snapshot_base,
                                      layout.snapshot_base + layout.snapshot_words))
        return layout.decode_snapshot(words)

    async def read_values(self, names):
        """``{name: value}`` of some snapshot fields, reading only the words that hold them."""
        layout = self._layout
        fields = [layout.snapshot_field(name) for name in names]
        wanted = snapshot_words_of(fields, layout.word_bits)
        words = dict(zip(wanted, await self.read(layout.snapshot_base + w for w in wanted)))
        padded = [words.get(w, 0) for w in range(layout.snapshot_words)]
        return {f.name: f.decode(padded, layout.word_bits)[0] for f in fields}

    async def read_table(self, table):
        """``[(count, overflow), ...]`` of a table, one per label. The HMM must be frozen."""
        if (await self.status())["running"]:
            raise HMMError(f"table {table.name!r} can only be read while the HMM is frozen")
        words = await self.read(table_addresses(table, self._layout.word_bits))
        return decode_table(table, words, self._layout.word_bits)

    async def read_records(self, trace, first, count):
        """Records ``first .. first + count - 1`` (record indices, modulo ``2 * depth``)."""
        word_bits = self._layout.word_bits
        n = trace.entry_words(word_bits)
        slots = [(first + i) % trace.depth for i in range(count)]
        words = await self.read([trace.address(slot, w) for slot in slots for w in range(n)])
        return decode_records(trace, words, word_bits)

    async def read_trace(self, trace, values=None):
        """The records in a trace now, oldest first, from a snapshot's ``values``.

        In ``stop`` mode these are the records not consumed yet; in ``wrap`` mode the newest
        ``depth`` records.
        """
        if values is None:
            await self.command("snapshot")
            values = await self.read_values([trace.written, trace.dropped])
        written = values[trace.written]
        period = 2 * trace.depth
        if trace.mode == "stop":
            consumed, = await self.read([trace.consumed_register])
            count = (written - consumed) % period
            first = consumed
        else:
            dropped = values[trace.dropped]
            full = dropped > 0 or written == trace.depth
            count = trace.depth if full else written
            first = (written - count) % period
        return await self.read_records(trace, first, count)

    async def drain(self, trace):
        """Take the unread records of a ``stop``-mode trace, while the design runs.

        Returns ``(records, dropped)``: the records, oldest first, and the drop count of the
        snapshot they were read under. The host keeps them too: :meth:`read_all` returns every
        record a trace ever held, drained or not.
        """
        if trace.mode != "stop":
            raise ValueError(f"only stop-mode traces can be drained, {trace.name!r} wraps")
        await self.command("snapshot")
        values = await self.read_values([trace.written, trace.dropped])
        records = await self.read_trace(trace, values)
        await self.write(trace.consumed_register, values[trace.written])
        self._drained.setdefault(trace.name, []).append(records)
        return records, values[trace.dropped]

    async def read_when_done(self, finished, *, drain_interval_cycles=None, poll_cycles=16,
                             max_cycles=None):
        """Wait for a job as a host does, then read everything (:meth:`read_all`).

        While ``finished()`` is false, the host drains every ``stop``-mode trace and then waits
        ``drain_interval_cycles`` cycles, again and again; with ``None`` it does not drain and
        looks at ``finished()`` every ``poll_cycles`` cycles. Records that find a trace full are
        dropped and counted. With ``max_cycles``, the host gives up (:class:`HMMError`) once it
        has waited that many cycles (drains not counted) and the job is still not finished.

        Returns
        -------
        HMMReadout
        """
        stop_traces = [trace for trace in self._layout.traces if trace.mode == "stop"]
        if drain_interval_cycles is None:
            await self._bus.wait_until(finished, poll_cycles, max_cycles)
        waited = 0
        while not finished():
            if max_cycles is not None and waited >= max_cycles:
                raise HMMError(not_finished(waited, max_cycles))
            for trace in stop_traces:
                await self.drain(trace)
            await self._bus.wait(drain_interval_cycles)
            waited += drain_interval_cycles
        return await self.read_all()

    async def read_all(self, *, freeze=True):
        """Everything: freeze with a snapshot, then read every value, table and trace. With
        ``freeze=False`` the HMM must be frozen already (tables are only read frozen); a new
        snapshot is taken. A ``stop``-mode trace's records begin with those :meth:`drain` took.

        Returns
        -------
        HMMReadout
        """
        await self.check_layout()
        if freeze:
            await self.command("freeze", "snapshot")
        else:
            await self.command("snapshot")
        layout = self._layout
        snapshot = await self.read(range(layout.snapshot_base,
                                         layout.snapshot_base + layout.snapshot_words))
        values, _ = layout.decode_snapshot(snapshot)
        tables = {table.name: await self.read_table(table) for table in layout.tables}
        traces = {trace.name: TraceRecords.concatenate([*self._drained.get(trace.name, ()),
                                                        await self.read_trace(trace, values)])
                  for trace in layout.traces}
        return assemble_readout(layout, snapshot, tables, traces)
