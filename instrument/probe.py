"""Probes: what an HMM measures, described before the hardware exists.

A probe names a measurement and the design expressions it watches; :class:`~hwgen.instrument.hmm.HMM`
builds the parts for it. An expression can be

* an Amaranth value (for example a port of the design: ``pe.rd_req.valid``),
* a string naming a signal of the elaborated design (``"out_fifo.level"``, see
  :meth:`~hwgen.instrument.discover.DesignView.signal`), or
* a function that receives the :class:`~hwgen.instrument.discover.DesignView` and returns a value,
  for expressions over internal signals: ``lambda d: d["out_fifo.level"] > 12``.

Every counter is ``counter_bits`` wide (an HMM parameter), saturates and keeps an overflow flag.
"""

import re

from amaranth.hdl import Cat, Const, Mux

from .accumulator_table import AccumulatorTable
from .event_counter import EventCounter
from .saturating import count_lag
from .histogram import Histogram as HistogramPart
from .latency_histogram import LatencyHistogram
from .periodic_sampler import PeriodicSampler
from .state_profiler import StateProfiler
from .change_recorder import ChangeRecorder
from .stream_monitor import STREAM_CATEGORIES, StreamMonitor
from .trace_buffer import TRACE_MODES, TraceBuffer

__all__ = ["Probe", "Count", "Accumulate", "Scaled", "AccumulateExclusive", "Profile", "Stream",
           "Histogram", "Latency", "Trace", "Sampler", "Changes", "ThreadStates", "THREAD_STATES"]

#: The state of a hardware thread, by its 2-bit code (see :class:`ThreadStates`).
THREAD_STATES = ("idle", "running", "critical", "spinning")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


class Probe:
    """A named measurement; ``name`` is dotted words of letters, digits, ``_`` and ``$``.

    Each kind of probe has ``build(builder)``, which the HMM calls to add the probe's parts and
    readable values (see ``hwgen.instrument.hmm``), and says whether its records take the
    ``cycles`` count as their timestamp (``timestamped``).
    """

    timestamped = False

    def __init__(self, name):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_$][\w$]*(\.[\w$]+)*", name):
            raise ValueError(f"probe name must be dotted words such as 'fsm.ctrl', not {name!r}")
        self._name = name

    @property
    def name(self):
        return self._name

    def __repr__(self):
        return f"{type(self).__name__}({self._name!r})"


class Count(Probe):
    """Cycles in which an event happens; with several events, the events per cycle.

    Parameters
    ----------
    name : str
    *events : expression
        1-bit conditions.
    """

    def __init__(self, name, *events):
        super().__init__(name)
        if not events:
            raise ValueError(f"{name}: Count needs at least one event")
        self._events = events

    def build(self, b):
        events = [b.resolve(e, self.name, width=1) for e in self._events]

        def in_registers():
            part = b.add(self.name, EventCounter(b.counter_bits, sources=len(events),
                                                 live=b.live))
            b.sample(part.valid, Cat(*events))
            b.count(self.name, part.value, now=part.now if part.lag else None)

        b.bank([self.name], [sum(events[1:], events[0])], in_registers)
        b.group("counter", self.name, value=self.name)


class Accumulate(Probe):
    """The sum of values taken in cycles where they are valid.

    Parameters
    ----------
    name : str
    *sources : (expression, expression)
        ``(value, valid)`` pairs; every valid value of a cycle is added.
    """

    def __init__(self, name, *sources):
        super().__init__(name)
        if not sources or not all(isinstance(s, tuple) and len(s) == 2 for s in sources):
            raise ValueError(f"{name}: Accumulate needs (value, valid) pairs, not {sources!r}")
        self._sources = sources

    def build(self, b):
        pairs = [(b.resolve(v, self.name), b.resolve(ok, self.name, width=1))
                 for v, ok in self._sources]
        amount_bits = max(1, *(len(v) for v, _ in pairs))     # a 0-bit value adds 0

        def in_registers():
            part = b.add(self.name, EventCounter(b.counter_bits, sources=len(pairs),
                                                 amount_bits=amount_bits, live=b.live))
            for i, (value, valid) in enumerate(pairs):
                b.sample(part.amount[i], value)
                b.sample(part.valid[i], valid)
            b.count(self.name, part.value, now=part.now if part.lag else None)

        terms = [Mux(valid, value, 0) if len(value) else Const(0, 1) for value, valid in pairs]
        b.bank([self.name], [sum(terms[1:], terms[0])], in_registers)
        b.group("counter", self.name, value=self.name)


class Scaled(Probe):
    """A constant multiple of a count: ``factor`` times the value of the :class:`Count` or
    :class:`Accumulate` named ``of``, added before it. It is read from that count's bits and
    shares its overflow flag, so it takes no hardware: a figure that differs from another by a
    constant per event (a PE's operations, ``ops_per_element`` per element written, from its
    bytes written) is counted once.

    Parameters
    ----------
    name : str
    of : str
        The name of the count.
    factor : int
        At least 1.
    """

    def __init__(self, name, of, factor):
        super().__init__(name)
        if not isinstance(of, str):
            raise ValueError(f"{name}: of must name a count, not {of!r}")
        self._of, self._factor = of, _positive_int(f"{name}: factor", factor)

    def build(self, b):
        b.scale(self.name, self._of, self._factor, self.name)
        b.group("counter", self.name, value=self.name)


class AccumulateExclusive(Probe):
    """A sum per source, for sources of which at most one is valid in any cycle, kept in a RAM
    table (:class:`~hwgen.instrument.accumulator_table.AccumulatorTable`) instead of a counter
    and a snapshot register per source. Its entries are read once the HMM is frozen; each is a
    value of the readout, with an overflow flag, as an :class:`Accumulate`'s would be.

    The sums are exact only if no two sources are ever valid in the same cycle (one beat per
    cycle through a shared port, granted to one source): nothing checks it in the hardware.

    Parameters
    ----------
    name : str
        The table's.
    *sources : (expression, expression)
        ``(value, valid)`` pairs, one per entry.
    labels : sequence of str
        A label per source, naming its entry in the table.
    values : sequence of str or None
        The readout names of the entries; default ``<name>.<label>``.
    """

    def __init__(self, name, *sources, labels, values=None):
        super().__init__(name)
        if not sources or not all(isinstance(s, tuple) and len(s) == 2 for s in sources):
            raise ValueError(f"{name}: AccumulateExclusive needs (value, valid) pairs, not "
                             f"{sources!r}")
        self._sources = sources
        self._labels = tuple(labels)
        self._values = tuple(values) if values is not None else \
            tuple(f"{name}.{label}" for label in self._labels)
        for what, names in (("labels", self._labels), ("values", self._values)):
            if len(names) != len(sources) or not all(isinstance(n, str) for n in names) \
                    or len(set(names)) != len(names):
                raise ValueError(f"{name}: {what} must be {len(sources)} distinct names, one "
                                 f"per source, not {names!r}")

    def build(self, b):
        pairs = [(b.resolve(v, self.name), b.resolve(ok, self.name, width=1))
                 for v, ok in self._sources]
        amount_bits = max(1, *(len(v) for v, _ in pairs))
        part = b.add(self.name, AccumulatorTable(len(pairs), amount_bits, b.counter_bits))
        for i, (value, valid) in enumerate(pairs):
            b.sample(part.amount[i], value)
            b.sample(part.valid[i], valid)
        b.table(self.name, "accumulate", part, self._labels, self._values)
        for value in self._values:
            b.group("counter", value, value=value)


class Profile(Probe):
    """Cycles per state of a state machine (a RAM table, one entry per state).

    Parameters
    ----------
    name : str
    state : expression
        The state's encoding.
    states : sequence of str
        State names in encoding order.
    """

    def __init__(self, name, state, states):
        super().__init__(name)
        self._state = state
        self._states = tuple(states)

    def build(self, b):
        state = b.resolve(self._state, self.name)
        if (1 << len(state)) < len(self._states):
            raise ValueError(f"{self.name}: a {len(state)}-bit state cannot take "
                             f"{len(self._states)} values")
        part = b.add(self.name, StateProfiler(self._states, b.counter_bits))
        b.sample(part.state, state)
        b.table(self.name, "profile", part, self._states)
        b.group("profile", self.name, table=self.name)


class Stream(Probe):
    """Cycles a valid/ready stream spends transferring, blocking and idle."""

    def __init__(self, name, valid, ready):
        super().__init__(name)
        self._valid = valid
        self._ready = ready

    def build(self, b):
        valid = b.resolve(self._valid, self.name, width=1)
        ready = b.resolve(self._ready, self.name, width=1)

        def in_registers():
            part = b.add(self.name, StreamMonitor(b.counter_bits))
            b.sample(part.valid, valid)
            b.sample(part.ready, ready)
            for category in STREAM_CATEGORIES:
                b.count(f"{self.name}.{category}", getattr(part, category))

        events = {"transferring": valid & ready, "blocking": valid & ~ready, "idle": ~valid}
        b.bank([f"{self.name}.{category}" for category in STREAM_CATEGORIES],
               [events[category] for category in STREAM_CATEGORIES], in_registers)
        b.group("stream", self.name,
                **{category: f"{self.name}.{category}" for category in STREAM_CATEGORIES})


def _add_histogram(b, name, part, lag=0):
    """Make a histogram part's values readable; they lag the others ``lag`` cycles. A part
    without ``count`` has its owner count its samples."""
    if hasattr(part, "count"):
        b.count(f"{name}.count", part.count, lag=lag)
    value_bits = len(part.sum.count) - len(part.rdata.count)
    lags = count_lag(len(part.sum.count), value_bits)
    b.count(f"{name}.sum", part.sum, now=part.sum_now if lags else None, lag=lag)
    b.plain(f"{name}.min", part.min, lag=lag + 2)
    b.plain(f"{name}.max", part.max, lag=lag + 2)
    b.table(f"{name}.bins", "histogram", part, part.labels())
    b.group("histogram", name, count=f"{name}.count", sum=f"{name}.sum", min=f"{name}.min",
            max=f"{name}.max", table=f"{name}.bins")


class Histogram(Probe):
    """A histogram of a value sampled when valid, with count, sum, minimum and maximum.

    Parameters
    ----------
    name : str
    value, valid : expression
    bins : int
        Bins below the overflow bin.
    bin_width : int
        Values per bin, a power of two.
    """

    def __init__(self, name, value, valid, *, bins, bin_width=1):
        super().__init__(name)
        self._value = value
        self._valid = valid
        self._bins = _positive_int("bins", bins)
        self._bin_width = _positive_int("bin_width", bin_width)

    def build(self, b):
        value = b.resolve(self._value, self.name)
        part = b.add(self.name, HistogramPart(len(value), bins=self._bins,
                                              bin_width=self._bin_width, bits=b.counter_bits))
        b.sample(part.value, value)
        b.sample(part.valid, b.resolve(self._valid, self.name, width=1))
        _add_histogram(b, self.name, part)


class Latency(Probe):
    """Latency of an in-order request/response channel: a histogram of every response's
    latency (``<name>.count``, ``.sum``, ``.min``, ``.max``, ``.bins``), the cycles spent waiting
    for a response (``<name>.wait_cycles``) and the responses whose latency was not measured
    because more than ``depth`` requests were outstanding (``<name>.untracked``).

    Parameters
    ----------
    name : str
    request, response : expression
        A request, a response is accepted in this cycle (for streams: ``valid & ready``).
    depth : int
        Outstanding requests tracked at once; size it to the most the design can have.
    bins, bin_width : int
        Of the histogram.
    latency_bits : int
        Width of a latency.
    """

    def __init__(self, name, request, response, *, depth, bins=32, bin_width=1, latency_bits=16):
        super().__init__(name)
        self._request = request
        self._response = response
        self._depth = _positive_int("depth", depth)
        self._bins = _positive_int("bins", bins)
        self._bin_width = _positive_int("bin_width", bin_width)
        self._latency_bits = _positive_int("latency_bits", latency_bits)

    def build(self, b):
        part = b.add(self.name, LatencyHistogram(self._depth, bins=self._bins,
                                                 bin_width=self._bin_width,
                                                 latency_bits=self._latency_bits,
                                                 bits=b.counter_bits))
        b.sample(part.request, b.resolve(self._request, self.name, width=1))
        b.sample(part.response, b.resolve(self._response, self.name, width=1))
        _add_histogram(b, self.name, part, lag=1)
        # Its three counts are of events the part gives a cycle late, in a bank if the HMM
        # has one.
        names = [f"{self.name}.{count}" for count in ("count", "wait_cycles", "untracked")]
        events = [part.measured, part.waiting, part.missed]

        def in_registers():
            for name, event in zip(names, events):
                counter = b.add(name, EventCounter(b.counter_bits, gated=False))
                b.connect(counter.valid, event)
                b.count(name, counter.value, lag=1)

        b.bank(names, events, in_registers, lagging=True)
        b.group("latency", self.name, histogram=self.name,
                wait_cycles=f"{self.name}.wait_cycles", untracked=f"{self.name}.untracked")


def _named(name, what, items):
    """``{str: x}`` or a sequence of ``(str, x)`` as a list of pairs."""
    pairs = list(items.items()) if isinstance(items, dict) else list(items)
    if not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
        raise ValueError(f"{name}: {what} must be a dict or pairs of name and expression")
    return pairs


def _trace_options(name, depth, mode):
    """Validate a trace's depth and mode up front."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1 or depth & (depth - 1):
        raise ValueError(f"{name}: depth must be a power of two, not {depth!r}")
    if mode not in TRACE_MODES:
        raise ValueError(f"{name}: mode must be one of {', '.join(TRACE_MODES)}, not {mode!r}")
    return depth, mode


def _build_trace(b, name, kind, depth, mode, triggers, payload, drive, timestamp_bits=None,
                 labels=(), period=None):
    """A TraceBuffer fed by ``triggers`` ([(name, 1-bit value)]) and ``payload``
    ([(name, value, overflow)]) through ``drive`` (``b.sample`` or ``b.connect``); ``labels``
    ([(payload name, names by code)]) and a sampler's ``period`` go into the layout."""
    timestamp_bits = timestamp_bits or b.counter_bits
    part = b.add(name, TraceBuffer(depth, timestamp_bits=timestamp_bits, triggers=len(triggers),
                                   payload_bits=sum(len(v) for _, v, _ in payload), mode=mode,
                                   bits=b.counter_bits))
    b.connect(part.timestamp, b.timestamp[:timestamp_bits])
    drive(part.trigger, Cat(*(v for _, v in triggers)))
    if payload:
        drive(part.payload, Cat(*(v for _, v, _ in payload)))
    b.plain(f"{name}.written", part.written)
    b.count(f"{name}.dropped", part.dropped)
    b.trace(name, kind, part, [n for n, _ in triggers],
            [(n, len(v) - overflow, overflow) for n, v, overflow in payload], labels, period)
    b.group(kind, name, trace=name)
    return part


class Trace(Probe):
    """Timestamped records of trigger events with a payload, in a trace buffer.

    Parameters
    ----------
    name : str
    triggers : dict of str to expression
        1-bit conditions; a cycle where any fires writes one record that says which fired.
    payload : dict of str to expression
        Values recorded with each record.
    depth : int
        Records the buffer holds, a power of two.
    mode : str
        ``"stop"`` (drained by the host; records that find it full are dropped) or ``"wrap"``
        (keeps the newest records).
    timestamp_bits : int or None
        Default: the HMM's counter width.
    """

    timestamped = True


    def __init__(self, name, triggers, payload=None, *, depth, mode="stop", timestamp_bits=None):
        super().__init__(name)
        self._triggers = _named(name, "triggers", triggers)
        if not self._triggers:
            raise ValueError(f"{name}: a trace needs at least one trigger")
        self._payload = _named(name, "payload", payload or {})
        self._depth, self._mode = _trace_options(name, depth, mode)
        self._timestamp_bits = timestamp_bits

    def build(self, b):
        triggers = [(n, b.resolve(v, self.name, width=1)) for n, v in self._triggers]
        payload = [(n, b.resolve(v, self.name), False) for n, v in self._payload]
        _build_trace(b, self.name, "trace", self._depth, self._mode, triggers, payload,
                     b.sample, self._timestamp_bits)


class Sampler(Probe):
    """Every ``period`` cycles, a record of chosen counters (values and overflow flags).

    Parameters
    ----------
    name : str
    values : sequence of str
        Names of counters built by earlier probes (``"cycles"`` is always there).
    period : int
    depth : int
        Records the buffer holds, a power of two.
    mode : str
        ``"wrap"`` (keeps the newest samples) or ``"stop"``.
    """

    timestamped = True


    def __init__(self, name, values, *, period, depth, mode="wrap"):
        super().__init__(name)
        self._values = tuple(values)
        if not self._values:
            raise ValueError(f"{name}: a sampler needs at least one value")
        self._period = _positive_int("period", period)
        self._depth, self._mode = _trace_options(name, depth, mode)

    def build(self, b):
        timer = b.add(f"{self.name}.timer", PeriodicSampler(self._period))
        payload = [(v, *b.counter_value(v, self.name)) for v in self._values]
        _build_trace(b, self.name, "sampler", self._depth, self._mode,
                     [("sample", timer.sample)], payload, b.connect, period=self._period)


class Changes(Probe):
    """A record of chosen values and a timestamp whenever any of them changes, so the records
    alone give every value in every cycle (see :mod:`hwgen.instrument.change_recorder`).

    Parameters
    ----------
    name : str
    values : dict of str to expression
        The values recorded side by side, each a payload field of the records.
    labels : dict of str to sequence of str
        Names of the codes of some values, by code (a state machine's state names in encoding
        order); the layout keeps them so a host can name what it reads.
    depth : int
        Records the buffer holds, a power of two.
    mode : str
        ``"stop"`` (drained by the host while running, drops counted) or ``"wrap"``.
    """

    timestamped = True


    kind = "changes"

    def __init__(self, name, values, *, labels=None, depth, mode="stop"):
        super().__init__(name)
        self._values = _named(name, "values", values)
        if not self._values:
            raise ValueError(f"{name}: changes need at least one value")
        labels = dict(labels or {})
        fields = [n for n, _ in self._values]
        for field, names in labels.items():
            if field not in fields:
                raise ValueError(f"{name}: labels name {field!r}, which is not one of the values "
                                 f"({', '.join(fields)})")
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"{name}: labels of {field!r} must be a sequence of names, "
                                 f"not {names!r}")
        self._labels = {field: tuple(names) for field, names in labels.items()}
        self._depth, self._mode = _trace_options(name, depth, mode)

    def _resolve(self, b):
        """``[(field, value)]`` of the recorded values."""
        return [(n, b.resolve(v, self.name)) for n, v in self._values]

    def build(self, b):
        values = self._resolve(b)
        for field, value in values:
            names = self._labels.get(field, ())
            if len(names) > 1 << len(value):
                raise ValueError(f"{self.name}: a {len(value)}-bit value {field!r} cannot take "
                                 f"{len(names)} labelled codes")
        recorder = b.add(f"{self.name}.recorder",
                         ChangeRecorder(sum(len(value) for _, value in values)))
        b.sample(recorder.value, Cat(*(value for _, value in values)))
        payload, offset = [], 0
        for field, value in values:
            payload.append((field, recorder.value[offset:offset + len(value)], False))
            offset += len(value)
        _build_trace(b, self.name, self.kind, self._depth, self._mode,
                     [("change", recorder.record)], payload, b.connect,
                     labels=[(field, self._labels[field]) for field, _ in values
                             if field in self._labels])


class ThreadStates(Changes):
    """A record of every thread's state and a timestamp whenever any thread's state changes.

    Thread ``t``'s state is the record's field ``thread<t>``, 2 bits: idle 0, running 1,
    critical 2 (holds a lock), spinning 3 (waits for one), labelled by :data:`THREAD_STATES`.

    Parameters
    ----------
    name : str
    states : expression
        ``2 * threads`` bits, thread ``t`` in bits ``2t`` and ``2t + 1``.
    threads : int
    depth : int
        Records the buffer holds, a power of two.
    mode : str
        ``"stop"`` (drained by the host while running, drops counted) or ``"wrap"``.
    """

    kind = "thread_states"

    def __init__(self, name, states, *, threads, depth, mode="stop"):
        threads = _positive_int("threads", threads)
        fields = [f"thread{t}" for t in range(threads)]
        # Every field stands for the packed states until build() takes its slice.
        super().__init__(name, [(field, states) for field in fields],
                         labels={field: THREAD_STATES for field in fields}, depth=depth,
                         mode=mode)

    def _resolve(self, b):
        states = b.resolve(self._values[0][1], self.name)
        threads = len(self._values)
        if len(states) != 2 * threads:
            raise ValueError(f"{self.name}: states must be {2 * threads} bits for {threads} "
                             f"threads, not {len(states)}")
        return [(field, states[2 * t:2 * t + 2]) for t, (field, _) in enumerate(self._values)]
