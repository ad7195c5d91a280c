"""Amaranth's simulator with the design compiled: :class:`CompiledSimulator`, a drop-in for
``amaranth.sim.Simulator`` whose design runs as C++ from Yosys's CXXRTL back-end.

A testbench sees Amaranth's interface: ``add_clock``, ``add_testbench`` and ``add_process``
with their context (``ctx.get``, ``ctx.set``, ``ctx.tick()`` with ``.sample``, ``.until`` and
``.repeat``, ``ctx.delay``, ``ctx.changed``, ``ctx.edge`` with ``ctx.posedge`` and
``ctx.negedge``, ``ctx.critical``), ``run``,
``run_until``, ``advance``, ``reset`` and ``write_vcd``. The scheduler is this module's own: it
keeps Amaranth's order of events (delta cycles: triggers sample, processes and the design run,
values commit; testbenches once the design has settled) with the design's evaluation done by the
compiled model, and without Amaranth's per-trigger machinery:

* ``ctx.tick().repeat(n)`` and ``ctx.tick().until(signal)`` wait inside the scheduler, without
  resuming the testbench at every edge;
* when every process and testbench waits like that on the one clock (or with a plain
  ``tick()``, or ``.sample()``), or on a change (or an edge) of signals of up to 64 bits other
  than a clock, or nothing waits, ``run`` and ``run_until`` step the clock in C++
  (``hw_clock_cycles``) up to the edge that wakes someone: the edge a ``tick()`` or ``repeat``
  ends at (run in C++ where the wait samples nothing, else left to Python), the one at which an
  ``until`` condition or a reset holds, the first edge after which a watched signal differs
  from its value when the clock left Python (the time is then that edge's, as Amaranth's
  change triggers have it); the step at that edge follows in the same ``advance``;
* while only testbenches run (no process, no waveform), a clock's edge and a testbench's
  ``set`` of a whole signal commit without delta cycles: the waits on the signal sample, one
  call into the model writes it, settles and brings back what changed, and the waits on
  those signals wake; with no wait on a signal other than a clock, a ``set`` only writes the
  model, which settles once when the testbench reads a value or waits. A testbench that acts
  every cycle costs what its own steps and a call or two into the model cost.

Any number of clock domains, synchronous and asynchronous resets and memories work as CXXRTL
simulates them. What cannot be mirrored is refused with an error naming it: driving a signal the
design itself drives (Amaranth's simulator lets a testbench override it), and a signal the
compiled model has no counterpart for.
"""

import ctypes
import heapq
import operator

from amaranth.back.rtlil import convert_fragment
from amaranth.hdl import (ClockDomain, Const, Shape, ShapeCastable, Signal, Value, ValueCastable,
                          ValueLike)
from amaranth.sim import BrokenTrigger, DomainReset, Simulator, SimulatorContext

from ..instrument._amaranth import (PyEngineState, PyMemoryState, PySimEngine, SignalDict,
                                    memory_names)
from .compiled import CompiledModel, Source

__all__ = ["CompiledSimulator"]

# The most cycles one call steps the clock in C++: a few milliseconds of a small design.
_BATCH_CYCLES = 1 << 16


class CompiledSimulator(Simulator):
    """A drop-in for ``amaranth.sim.Simulator`` that runs the design compiled to C++.

    The design is compiled once (seconds for a small design, up to minutes for a large one) and
    cached, like every model of the compiled engine (:mod:`hwgen.sim.compiled`); the testbench
    interface is Amaranth's.

    Parameters
    ----------
    toplevel : Elaboratable
        The design, as for ``amaranth.sim.Simulator``.
    """

    def __init__(self, toplevel):
        super().__init__(toplevel, engine=_CompiledEngine)

    @property
    def compile_seconds(self):
        """Seconds spent compiling the model now (``0.0`` when it came from the cache)."""
        return self._engine.build.compile_seconds

    @property
    def batched_cycles(self):
        """Clock cycles ``run`` and ``run_until`` stepped in C++, counted by their rising edges
        (the one a change stopped the clock after included)."""
        return self._engine.batched_cycles

    def run(self):
        # Within run() and run_until() the clock may be stepped in C++ up to the deadline;
        # advance() takes one time step, as Amaranth's.
        self._engine.deadline = float("inf")
        try:
            super().run()
        finally:
            self._engine.deadline = None

    def run_until(self, deadline, *, run_passive=None):
        self._engine.deadline = int(deadline * 1e15)
        try:
            super().run_until(deadline, run_passive=run_passive)
        finally:
            self._engine.deadline = None


def _chunks(width):
    return (ctypes.c_uint32 * max(1, (width + 31) // 32))()


class _Item:
    """A signal or memory of the compiled model."""

    def __init__(self, sim, name):
        width, depth, writable = ctypes.c_long(), ctypes.c_long(), ctypes.c_int()
        self.index = sim.lib.hw_item(sim.handle, name.encode(), ctypes.byref(width),
                                     ctypes.byref(depth), ctypes.byref(writable))
        self.name, self.width, self.depth = name, width.value, depth.value
        self.mask = (1 << self.width) - 1
        self.writable = bool(writable.value)
        self._sim = sim     # kept alive while its handle is used
        self._lib, self._handle = sim.lib, sim.handle
        self._buffer = _chunks(self.width)

    @property
    def found(self):
        return self.index >= 0

    def get(self, row=0):
        self._lib.hw_item_get(self._handle, self.index, row, self._buffer)
        value = 0
        for i, chunk in enumerate(self._buffer):
            value |= chunk << (32 * i)
        return value

    def set(self, value, row=0):
        value &= self.mask
        if self.width <= 64 and self.depth == 1:
            self._lib.hw_item_set64(self._handle, self.index, value)
            return
        for i in range(len(self._buffer)):
            self._buffer[i] = (value >> (32 * i)) & 0xFFFFFFFF
        self._lib.hw_item_set(self._handle, self.index, row, self._buffer)


def _signed(value, shape):
    if shape.signed and value >> (shape.width - 1) & 1:
        return value - (1 << shape.width)
    return value


class _MirroredMemory(PyMemoryState):
    """A memory whose rows live in the compiled model: reads come from it, writes go to it."""

    __slots__ = ("engine", "item")

    def __init__(self, memory, pending, engine, item):
        self.engine, self.item = engine, item
        super().__init__(memory, pending)

    def reset(self):
        self.write_queue = {}

    def read(self, addr):
        if addr in range(self.memory.depth):
            return _signed(self.item.get(addr), self.shape)
        return 0

    def write(self, addr, value, mask=None):
        if addr in range(self.memory.depth) and addr not in self.write_queue:
            self.write_queue[addr] = self.read(addr)
        super().write(addr, value, mask)

    def commit(self):
        changed = False
        for addr, value in self.write_queue.items():
            if self.read(addr) != value:
                self.item.set(value, addr)
                changed = True
        self.write_queue.clear()
        if changed:
            self.engine.model_dirty = True
        return changed


class _MirrorState(PyEngineState):
    """Amaranth's simulator state (the values an expression is evaluated over), every signal of
    it mirroring the compiled model."""

    def __init__(self, engine):
        super().__init__()
        self._engine = engine
        self.pulled = set()

    def get_signal(self, signal):
        try:
            return self.signals[signal]
        except KeyError:
            index = super().get_signal(signal)
            self._engine.mirror(self.slots[index])
            return index

    def get_memory(self, memory):
        index = self.memories.get(memory)
        if index is None:
            index = len(self.slots)
            self.slots.append(_MirroredMemory(memory, self.pending, self._engine,
                                              self._engine.memory_item(memory)))
            self.memories[memory] = index
        return index


def _shape_of(expr):
    return expr.shape() if isinstance(expr, ValueCastable) else Value.cast(expr).shape()


def _edge_trigger(signal, polarity):
    value = Value.cast(signal)
    if isinstance(value, Signal) and len(value) == 1:
        trigger = ("edge", value, 0, polarity)
    elif (len(value) == 1 and isinstance(getattr(value, "value", None), Signal)
          and hasattr(value, "start")):
        trigger = ("edge", value.value, value.start, polarity)     # a one-bit slice
    else:
        raise TypeError(f"Edge trigger can only be used with a single-bit signal or a "
                        f"single-bit slice of a signal, not {signal!r}")
    if polarity not in (0, 1):
        raise ValueError(f"Edge trigger polarity must be 0 or 1, not {polarity!r}")
    return trigger


class _Triggers:
    """A combination of triggers, as ``amaranth.sim.TriggerCombination``: awaiting it wakes the
    caller when any of them activates, with the values it samples."""

    def __init__(self, engine, runner, triggers=()):
        self._engine, self._runner, self._triggers = engine, runner, triggers

    def _with(self, *triggers):
        return _Triggers(self._engine, self._runner, (*self._triggers, *triggers))

    def sample(self, *exprs):
        return self._with(*(("sample", expr) for expr in exprs))

    def delay(self, interval):
        if interval < 0:
            raise ValueError("Delay cannot be negative")
        return self._with(("delay", round(float(interval) * 1e15)))

    def changed(self, *signals):
        for signal in signals:
            if not isinstance(Value.cast(signal), Signal):
                raise TypeError(f"Change trigger can only be used with a signal, not {signal!r}")
        return self._with(*(("changed", signal) for signal in signals))

    def edge(self, signal, polarity):
        return self._with(_edge_trigger(signal, polarity))

    def posedge(self, signal):
        return self.edge(signal, 1)

    def negedge(self, signal):
        return self.edge(signal, 0)

    def __await__(self):
        wait = _Wait(self._engine, self._runner, self._triggers, oneshot=True)
        return wait.__await__()

    async def __aiter__(self):
        wait = _Wait(self._engine, self._runner, self._triggers, oneshot=False)
        try:
            while True:
                yield await wait
        finally:
            self._engine.forget(wait)


class _Tick:
    """A clock domain's active edge (or its asynchronous reset), as ``amaranth.sim.TickTrigger``;
    ``repeat`` and ``until`` wait in the scheduler, without resuming the caller at every edge."""

    def __init__(self, engine, runner, domain, sampled=()):
        self._engine, self._runner, self._domain, self._sampled = engine, runner, domain, sampled
        self._own = None    # its triggers, made once

    def sample(self, *exprs):
        return _Tick(self._engine, self._runner, self._domain, (*self._sampled, *exprs))

    def _triggers(self, *extra):
        if self._own is None:
            domain = self._domain
            triggers = [("edge", domain.clk, 0, 1 if domain.clk_edge == "pos" else 0)]
            if domain.async_reset and domain.rst is not None:
                triggers += [("edge", domain.rst, 0, 1), ("sample", domain.rst)]
            else:
                triggers += [("sample", Const(0)),
                             ("sample", Const(0) if domain.rst is None else domain.rst)]
            self._own = (*triggers, *(("sample", expr) for expr in self._sampled))
        return (*self._own, *(("sample", expr) for expr in extra)) if extra else self._own

    def __await__(self):
        if self._sampled:
            wait = _Wait(self._engine, self._runner, self._triggers(), oneshot=True,
                         tick=self._domain)
        else:
            wait = self._runner.tick_wait(self._domain, self._triggers)
        clk, rst_edge, rst, *values = yield from wait.__await__()
        return (clk, bool(rst_edge or rst), *values)

    async def __aiter__(self):
        wait = _Wait(self._engine, self._runner, self._triggers(), oneshot=False,
                     tick=self._domain)
        try:
            while True:
                clk, rst_edge, rst, *values = await wait
                yield (clk, bool(rst_edge or rst), *values)
        finally:
            self._engine.forget(wait)

    async def _wait(self, wait):
        try:
            clk, rst_edge, rst, *values = await wait
        finally:
            self._engine.forget(wait)
        if rst_edge or rst:
            raise DomainReset
        return values

    async def until(self, condition):
        if not isinstance(condition, ValueLike):
            raise TypeError(f"Condition must be a value-like object, not {condition!r}")
        if isinstance(condition, ValueCastable):
            shape = condition.shape()
            if not isinstance(shape, Shape):
                raise TypeError(f"The shape of a condition may only be `signed` or `unsigned`, "
                                f"not {shape!r}")
        wait = _Wait(self._engine, self._runner, self._triggers(condition), oneshot=False,
                     tick=self._domain, until=condition)
        *values, _ = await self._wait(wait)
        return tuple(values)

    async def repeat(self, count):
        count = operator.index(count)
        if count <= 0:
            raise ValueError(f"Repeat count must be a positive integer, not {count!r}")
        if self._sampled:
            wait = _Wait(self._engine, self._runner, self._triggers(), oneshot=False,
                         tick=self._domain, count=count)
        else:
            wait = self._runner.tick_wait(self._domain, self._triggers, count)
        return tuple(await self._wait(wait))


class _Wait:
    """One wait of a process or testbench on a combination of triggers: what activates it, what
    it samples when it fires. A tick wait with ``count`` fires after that many edges, one with
    ``until`` at the first edge where the condition (sampled at the edge) holds, either at once
    on a reset."""

    __slots__ = ("engine", "runner", "oneshot", "parts", "watched", "delays", "timers", "hits",
                 "result", "broken", "queued", "tick", "count", "until", "clock_plan")

    def __init__(self, engine, runner, triggers, *, oneshot, tick=None, count=None, until=None):
        self.engine, self.runner, self.oneshot = engine, runner, oneshot
        self.tick, self.count, self.until = tick, count, until
        self.parts, self.watched, self.delays, self.timers = [], [], {}, {}
        self.hits, self.result, self.broken, self.queued = set(), None, False, False
        self.clock_plan = None  # the clock loop's, made when it first sees the wait
        for index, trigger in enumerate(triggers):
            kind = trigger[0]
            if kind in ("sample", "changed"):
                self.parts.append(engine.sampler(trigger[1], _shape_of(trigger[1])))
            else:
                self.parts.append(lambda index=index, hits=self.hits: index in hits)
            if kind == "changed":
                self.watched.append((engine.signal_state(trigger[1]), None))
            elif kind == "edge":
                _, signal, bit, polarity = trigger
                self.watched.append((engine.signal_state(signal), (index, bit, polarity)))
            elif kind == "delay":
                self.delays[index] = trigger[1]
        engine.register(self)

    def renew(self):
        """Make a wait that fired (or broke) and was forgotten wait again."""
        self.hits.clear()
        self.result, self.broken, self.queued = None, False, False
        self.engine.register(self)

    def arm(self):
        """Start the timers of the delays it waits on."""
        for index, interval in self.delays.items():
            if index in self.timers:
                self.timers[index].live = False
            self.timers[index] = self.engine.schedule(interval, lambda i=index: self.delay_hit(i))

    def notice(self, edge, old, new):
        """A watched signal changed from ``old`` to ``new``."""
        if edge is not None:
            index, bit, polarity = edge
            if (new >> bit) & 1 == (old >> bit) & 1 or (new >> bit) & 1 != polarity:
                return
            self.hits.add(index)
        self.activate()

    def delay_hit(self, index):
        self.hits.add(index)
        self.activate()

    def activate(self):
        if self.runner.waits_on is self:
            if not self.queued:
                self.queued = True
                self.engine.activated.append(self)
        else:
            self.broken = True
            self.engine.forget(self)

    def fire(self):
        """Sample, and wake the waiting process or testbench unless a tick wait goes on."""
        self.queued = False
        hits, parts = self.hits, self.parts
        # A tick wait that goes on (no reset, its condition or count not met) samples nothing.
        if self.tick is not None and not (parts[1]() or parts[2]()):
            if self.until is not None and not parts[-1]():
                hits.clear()
                return
            if self.count is not None:
                self.count -= 1
                if self.count:
                    hits.clear()
                    return
        self.wake(tuple([part() for part in parts]))

    def wake(self, result):
        """Wake the waiting process or testbench with ``result``."""
        self.result = result
        self.hits.clear()
        self.runner.runnable = True
        self.runner.waits_on = None
        if self.oneshot:
            self.engine.forget(self)
        elif self.delays:
            self.arm()

    def initially_eligible(self):
        return not self.oneshot and any(edge is None for _, edge in self.watched)

    def __await__(self):
        self.result = None
        if self.broken:
            raise BrokenTrigger
        yield self
        if self.broken:
            raise BrokenTrigger
        return self.result


class _Timer:
    __slots__ = ("time", "action", "live")

    def __init__(self, time, action):
        self.time, self.action, self.live = time, action, True

    def __lt__(self, other):
        return False


class _Clock:
    """A clock that toggles its signal every half period from ``phase`` on."""

    def __init__(self, engine, state, phase, period):
        self.engine, self.state, self.phase, self.half = engine, state, phase, period // 2
        self.timer = None

    def start(self):
        self.timer = self.engine.schedule(self.phase, self.toggle)

    def toggle(self):
        self.state.update(0 if self.state.curr else 1)
        self.timer = self.engine.schedule(self.half, self.toggle)


class _TestbenchContext(SimulatorContext):
    """The context of a testbench: ``set`` settles the design before it returns."""

    def __init__(self, engine, runner):
        super().__init__(None, engine, runner)
        self._scheduler, self._runner = engine, runner
        self._ticks = {}    # domain name -> its _Tick (immutable)

    def get(self, expr):
        scheduler = self._scheduler
        if scheduler.unsettled:
            scheduler.settle_sets()
        if type(expr) is Signal:
            try:
                return scheduler.signal_states[id(expr)][1].curr
            except KeyError:
                return scheduler.signal_state(expr).curr
        value = scheduler.get_value(expr)
        if isinstance(expr, ValueCastable):
            shape = expr.shape()
            if isinstance(shape, ShapeCastable):
                return shape.from_bits(value)
        return value

    def set(self, expr, value):
        if type(value) is int and type(expr) is Signal and self._scheduler.set_quietly(expr,
                                                                                       value):
            return
        self._assign(expr, value)
        self._scheduler.step_design()

    def _assign(self, expr, value):
        if type(value) is int and type(expr) is Signal:
            self._scheduler.set_value(expr, value)
            return
        if isinstance(expr, ValueCastable):
            shape = expr.shape()
            if isinstance(shape, ShapeCastable):
                value = shape.const(value)
        self._scheduler.set_value(expr, Const.cast(value).value)

    def tick(self, domain="sync", *, context=None):
        if context is None and type(domain) is str:
            tick = self._ticks.get(domain)
            if tick is None:
                tick = self._ticks[domain] = self._tick(domain, context)
            return tick
        return self._tick(domain, context)

    def _tick(self, domain, context):
        if domain == "comb":
            raise ValueError("Combinational domain does not have a clock")
        if isinstance(domain, ClockDomain):
            if context is not None:
                raise ValueError("Context cannot be provided if a clock domain is specified "
                                 "directly")
        else:
            domain = self._scheduler.lookup_domain(domain, context)
        return _Tick(self._scheduler, self._runner, domain)

    def delay(self, interval):
        return _Triggers(self._scheduler, self._runner).delay(interval)

    def changed(self, *signals):
        return _Triggers(self._scheduler, self._runner).changed(*signals)

    def edge(self, signal, polarity):
        return _Triggers(self._scheduler, self._runner).edge(signal, polarity)

    def posedge(self, signal):
        return self.edge(signal, 1)

    def negedge(self, signal):
        return self.edge(signal, 0)


class _ProcessContext(_TestbenchContext):
    """The context of a process: it samples through triggers, and its ``set`` takes effect with
    the design's next delta cycle."""

    def get(self, expr):
        raise TypeError("`.get()` cannot be used to sample values in simulator processes; use "
                        "`.sample()` on a trigger object instead")

    def set(self, expr, value):
        self._assign(expr, value)


class _Runner:
    """A process or testbench: its coroutine and what it waits on."""

    def __init__(self, engine, constructor, *, testbench, background):
        self.engine, self.constructor, self.background = engine, constructor, background
        self.context = (_TestbenchContext if testbench else _ProcessContext)(engine, self)
        self.reset()

    def reset(self):
        self.runnable = True
        self.critical = not self.background
        self.waits_on = None
        self.coroutine = self.constructor(self.context)
        self.first_await = True
        self._tick_waits = {}

    def tick_wait(self, domain, triggers, count=None):
        """The wait of a plain ``await ctx.tick()`` on ``domain``, or of its ``repeat(count)``
        (nothing sampled): made once, registered again at every await (a testbench acting
        every cycle allocates nothing for it)."""
        key = (domain, count is None)
        wait = self._tick_waits.get(key)
        if wait is None:
            wait = self._tick_waits[key] = _Wait(self.context._scheduler, self, triggers(),
                                                 oneshot=count is None, tick=domain,
                                                 count=count)
        else:
            wait.count = count
            wait.renew()
        return wait

    def run(self):
        try:
            wait = self.coroutine.send(None)
            if type(wait) is not _Wait:
                raise TypeError(f"Testbenches and processes may only await simulation triggers, "
                                f"not {wait!r}")
            self.waits_on = wait
            # A process looping over `changed()` sees the initial values at time 0.
            if self.first_await and wait.initially_eligible():
                self.engine.settle_sets()
                wait.result = tuple([part() for part in wait.parts])
                self.waits_on = self.coroutine.send(None)
            self.first_await = False
        except StopIteration:
            self.critical = False
            self.waits_on = None
            self.coroutine = None
        finally:
            if self.engine.unsettled:
                self.engine.settle_sets()


class _CompiledEngine(PySimEngine):
    """A simulation engine for Amaranth's ``Simulator``: the design evaluated by a compiled
    model, the processes and testbenches scheduled here."""

    def __init__(self, design):
        self._design = design
        text, self._names = convert_fragment(design, name="top", emit_src=False,
                                             all_undef_to_ff=True)
        # The top's ports (the clocks and resets of domains the design leaves to the simulator)
        # by their port names; every other signal by its place in the hierarchy.
        self._ports = SignalDict((signal, name) for name, signal, _ in design.ports
                                 if isinstance(signal, Signal))
        self._memory_names = memory_names(design)
        self._model, self.build = CompiledModel.build(None, source=Source.from_rtlil(text))
        self._sim = self._model.simulation()
        self._items = {}          # signal state -> _Item
        self.signal_states = {}   # id(signal or value) -> (it, state, mask, sign bit)
        self._stop_items = {}     # id(expression) -> (it, its item's index or None)
        self._narrow = _Pulled(self._sim)  # the signals of up to 64 bits, pulled at once
        self._wide = {}           # the wider ones
        self._state = _MirrorState(self)
        self.model_dirty = True
        self.unsettled = False    # a testbench set values quietly; the model has not settled
        self.deadline = None      # set by run() and run_until(): the clock may run in C++
        self.batched_cycles = 0
        self.activated = []       # waits to fire in the next delta cycle
        self._clocks, self._processes, self._testbenches = [], [], []
        self._clock_states = set()
        self._waits = {}          # every wait still registered -> None
        self._watchers = {}       # signal state -> {wait: edge or None}
        self._signal_watches = 0  # (wait, state) in it where the state is not a clock's
        self._timeline = []       # (time, timer)
        self._delta_cycles = 0
        self._vcd_writers = []

    # -- the model's values ----------------------------------------------------------------

    def reset(self):
        self._sim = self._model.simulation()
        self._narrow = _Pulled(self._sim)
        self._wide = {}
        for state in list(self._items):
            self._track(state, _Item(self._sim, self._items[state].name))
        for state in self._state.slots:
            if isinstance(state, _MirroredMemory):
                state.item = _Item(self._sim, state.item.name)
        self._state.reset()
        for state in self._items:
            state.curr = state.next = _signed(self._items[state].get(), state.signal.shape())
        self.model_dirty = True
        self.unsettled = False
        self.activated, self._waits, self._watchers, self._timeline = [], {}, {}, []
        self._signal_watches = 0
        for runner in (*self._processes, *self._testbenches):
            runner.reset()
        for clock in self._clocks:
            clock.start()

    def _item_name(self, signal):
        if signal in self._ports:
            return self._ports[signal]
        try:
            path = self._names[signal]
        except KeyError:
            raise ValueError(f"CompiledSimulator: the compiled model has no signal {signal.name!r}: "
                             f"it is not part of the simulated design") from None
        return " ".join(path[1:])

    def mirror(self, state):
        """Start mirroring ``state``'s signal: its value now comes from the model."""
        name = self._item_name(state.signal)
        item = _Item(self._sim, name)
        if not item.found:
            raise ValueError(f"CompiledSimulator: the compiled model has no counterpart of "
                             f"signal {state.signal.name!r} (CXXRTL name {name!r})")
        self._track(state, item)
        state.curr = state.next = _signed(item.get(), state.signal.shape())

    def _track(self, state, item):
        self._items[state] = item
        if item.width <= 64:
            self._narrow.add(state, item)
        else:
            self._wide[state] = item

    def memory_item(self, memory):
        name = self._memory_names.get(memory)
        item = None if name is None else _Item(self._sim, name)
        if item is None or not item.found:
            raise ValueError(f"CompiledSimulator: the compiled model has no counterpart of "
                             f"memory {getattr(memory, 'name', memory)!r}")
        return item

    def signal_state(self, signal):
        try:
            return self.signal_states[id(signal)][1]
        except KeyError:
            return self._signal_entry(signal)[1]

    def _signal_entry(self, signal):
        """``(signal, its state, the mask of its width, its sign bit or 0)``."""
        try:
            return self.signal_states[id(signal)]
        except KeyError:
            state = self._state
            found = state.slots[state.get_signal(Value.cast(signal))]
            shape = found.signal.shape()
            # Keyed by identity, the signal kept alive beside its state.
            entry = self.signal_states[id(signal)] = (
                signal, found, (1 << shape.width) - 1,
                1 << (shape.width - 1) if shape.signed and shape.width else 0)
            return entry

    def sampler(self, expr, shape):
        """A function that gives ``expr``'s value now (``shape.from_bits`` of it where the shape
        is a ``ShapeCastable``)."""
        value = Value.cast(expr)
        if isinstance(value, Signal):
            state = self.signal_state(value)
            get = lambda: state.curr
        elif isinstance(value, Const):
            get = lambda: value.value
        else:
            get = lambda: self.get_value(value)
        if isinstance(shape, ShapeCastable):
            return lambda: shape.from_bits(get())
        return get

    def get_value(self, expr):
        if type(expr) is Signal:
            return self.signal_state(expr).curr
        return super().get_value(expr)

    def set_value(self, expr, value):
        if type(expr) is Signal:
            shape = expr.shape()
            value &= (1 << shape.width) - 1
            self.signal_state(expr).update(_signed(value, shape))
        else:
            super().set_value(expr, value)

    def push(self, state):
        """Hand the value a testbench, process or clock committed to ``state`` to the model."""
        item = self._items[state]
        if not item.writable:
            raise ValueError(f"CompiledSimulator: signal {state.signal.name!r} is driven by the "
                             f"design; the compiled engine cannot override it from a testbench "
                             f"(Amaranth's simulator can)")
        item.set(state.next)
        self.model_dirty = True

    def settle(self):
        """Let the model settle and queue the values that changed."""
        self.model_dirty = False
        pending, pulled = self._state.pending, self._state.pulled
        for state, value in self._with_wide(self._narrow.settle()):
            if value != state.curr:
                state.next = value
                pending.add(state)
                pulled.add(state)

    def _with_wide(self, changes):
        """``changes`` of the narrow signals, and ``(state, value)`` of every wide one."""
        if not self._wide:
            return changes
        return [*changes, *((state, _signed(item.get(), state.signal.shape()))
                            for state, item in self._wide.items())]

    def _commit(self):
        """Commit every queued value (to the model too, unless it came from there), noticing
        the waits on the signals that changed; whether anything changed."""
        pending = self._state.pending
        if not pending:
            return False
        pulled, writers, changed = self._state.pulled, self._vcd_writers, False
        now = self._state.timeline.now
        for state in pending:
            if type(state) is _MirroredMemory:
                addresses = list(state.write_queue)
                if state.commit():
                    changed = True
                    for writer in writers:
                        for address in addresses:
                            writer.update_memory(now + self._delta_cycles * writer.fs_per_delta,
                                                 state.memory, address)
                continue
            if state not in pulled:
                self.push(state)
            old, new = state.curr, state.next
            if new == old:
                continue
            state.curr = new
            changed = True
            watchers = self._watchers.get(state)
            if watchers:
                for wait, edge in list(watchers.items()):
                    wait.notice(edge, old, new)
            for writer in writers:
                writer.update_signal(now + self._delta_cycles * writer.fs_per_delta,
                                     state.signal)
        pending.clear()
        pulled.clear()
        return changed

    # -- scheduling -------------------------------------------------------------------------

    @property
    def now(self):
        return self._state.timeline.now

    def lookup_domain(self, name, context):
        try:
            return self._design.lookup_domain(name, context)
        except KeyError:
            raise NameError(f"Clock domain named {name!r} does not exist") from None

    def add_clock_process(self, clock, *, phase, period):
        clock = _Clock(self, self.signal_state(clock), phase, period)
        self._clocks.append(clock)
        self._clock_states.add(clock.state)
        clock.start()

    def add_async_process(self, simulator, process):
        self._processes.append(_Runner(self, process, testbench=False, background=True))

    def add_async_testbench(self, simulator, process, *, background):
        self._testbenches.append(_Runner(self, process, testbench=True, background=background))

    def register(self, wait):
        self._waits[wait] = None
        for state, edge in wait.watched:
            self._watchers.setdefault(state, {})[wait] = edge
            if state not in self._clock_states:
                self._signal_watches += 1
        if wait.delays:
            wait.arm()

    def forget(self, wait):
        if self._waits.pop(wait, 0) is None:
            for state, _ in wait.watched:
                self._watchers[state].pop(wait, None)
                if state not in self._clock_states:
                    self._signal_watches -= 1
            for timer in wait.timers.values():
                timer.live = False

    def schedule(self, interval, action):
        timer = _Timer(self._state.timeline.now + interval, action)
        heapq.heappush(self._timeline, (timer.time, timer))
        return timer

    def step_design(self):
        # Delta cycles, as Amaranth's: the activated waits sample and wake their processes,
        # processes run and the design settles, the values commit; until nothing changes.
        if self.unsettled:
            self.settle_sets()
        while True:
            activated, self.activated = self.activated, []
            for wait in activated:
                wait.fire()
            for runner in self._processes:
                if runner.runnable:
                    runner.runnable = False
                    runner.run()
            if self.model_dirty:
                self.settle()
            changed = self._state.pending and self._commit()
            self._delta_cycles += 1
            if not changed:
                return

    def _direct(self):
        """Whether a value can be committed without delta cycles: no process (only testbenches
        run, once the design has settled, and they see no step between), no waveform, no wait
        to fire, the model settled."""
        return not (self._processes or self._vcd_writers or self.activated or self.model_dirty)

    def _clock_edge(self):
        """Take the step that starts with only a clock's edge to commit, as ``step_design``
        would in its delta cycles, if nothing else needs them; whether it did."""
        pending = self._state.pending
        if len(pending) != 1 or not self._direct():
            return False
        state, = pending
        if state not in self._clock_states or state in self._state.pulled:
            return False
        pending.clear()
        self._commit_directly(state, state.next)
        return True

    def _commit_directly(self, state, value):
        """Commit ``value`` to ``state`` and let the model settle, as ``step_design`` would
        where :meth:`_direct` holds: the waits on ``state`` fire (sampling the values from before
        the design reacts), then those on the signals the model changed."""
        item = self._items[state]
        if state in self._watchers:
            self._take(((state, value),))
            self._fire()
        else:
            state.curr = state.next = value
        if item.width <= 64:
            changes = self._narrow.settle(item.index, value & item.mask)
        else:
            item.set(value)
            changes = self._narrow.settle()
        if self._wide:
            changes = self._with_wide(changes)
        if changes:
            self._take(changes)
            self._fire()
        self._delta_cycles += 3

    def _take(self, changes):
        """Take the values ``changes`` (``(state, value)``) as they are now, noticing the waits
        on those that changed."""
        watching = self._watchers
        for state, value in changes:
            old = state.curr
            if value != old:
                state.curr = state.next = value
                watchers = watching.get(state)
                if watchers:
                    for wait, edge in list(watchers.items()):
                        wait.notice(edge, old, value)

    def _fire(self):
        if self.activated:
            activated, self.activated = self.activated, []
            for wait in activated:
                wait.fire()

    def set_quietly(self, signal, value):
        """A testbench's ``set`` of a whole signal where :meth:`_direct` holds: committed at
        once, or, with no wait on a signal other than a clock (which only its timer drives),
        given to the model, which settles once the testbench reads a value or waits
        (:meth:`settle_sets`); ``False`` where that is not the case."""
        if self._state.pending or not self._direct():
            return False
        _, state, mask, sign = self._signal_entry(signal)
        if state in self._clock_states:
            return False
        value &= mask
        if value & sign:
            value -= sign << 1
        if value != state.curr:
            item = self._items[state]
            if not item.writable:
                return False    # the general path names the error
            if not self._signal_watches:
                state.curr = state.next = value
                item.set(value)
                self.unsettled = True
            else:
                if self.unsettled:
                    self.settle_sets()
                self._commit_directly(state, value)
        return True

    def settle_sets(self):
        """Let the model settle after the values :meth:`set_quietly` gave it, if any: what a
        testbench reads, and anything after it, sees every ``set`` before it settled, as
        Amaranth's settling after each would leave it (nothing saw the values between)."""
        if self.unsettled:
            self.unsettled = False
            self._pull()
            self._delta_cycles += 3

    def _pull(self):
        """Let the model settle and take the values that changed, in a quiet simulation (no
        wait sees them change)."""
        self.model_dirty = False
        for state, value in self._with_wide(self._narrow.settle()):
            state.curr = state.next = value

    def advance(self):
        # One time step, or several where the clock runs in C++ and stops at the edge a wait
        # woke at (the step at that edge follows at once, as run() and run_until() would
        # take it next).
        while True:
            if not (self._state.pending and self._clock_edge()):
                self.step_design()
            # Testbenches run once the design has settled, in the order they were added.
            ran = True
            while ran:
                ran = False
                for testbench in self._testbenches:
                    if testbench.runnable:
                        testbench.runnable = False
                        testbench.run()
                        ran = True
            if not self._advance_time():
                return self._critical()

    def _critical(self):
        for runners in (self._processes, self._testbenches):
            for runner in runners:
                if runner.critical:
                    return True
        return False

    def _advance_time(self):
        """Go to the next time anything happens at, or step the clock in C++ up to the edge a
        wait woke at: whether the latter."""
        if not self._live_timer():
            return False
        if self.deadline is not None and self._run_clock():
            return True
        # The clock may have run (its next edge then comes in Python, in this step).
        self._live_timer()
        timeline = self._timeline
        time = timeline[0][0]
        due = []
        while timeline and (timeline[0][0] == time or not timeline[0][1].live):
            _, timer = heapq.heappop(timeline)
            if timer.live:
                due.append(timer)
        self._state.timeline.now = time
        for timer in due:
            timer.live = False
            timer.action()
        return False

    def _live_timer(self):
        """Drop the timers that no longer act from the timeline's head; whether any is left."""
        timeline = self._timeline
        while timeline and not timeline[0][1].live:
            heapq.heappop(timeline)
        return bool(timeline)

    def _run_clock(self):
        """Step the one clock in C++ while nothing but tick waits of its domain and waits on
        changes of other signals would see it: up to the edge a ``tick()`` or ``repeat`` ends
        at (through it where the wait samples nothing, before it otherwise), an ``until``
        condition or a reset holds at, the first edge after which a watched signal has changed,
        or the deadline. Whether a wait woke at the edge the clock stopped after (the time is
        then that edge's)."""
        if (len(self._clocks) != 1 or self._vcd_writers or self.activated or self._state.pending
                or self.model_dirty):
            return False
        clock = self._clocks[0]
        timer = self._timeline[0][1]
        if timer is not clock.timer:
            return False
        high = clock.state.curr
        edges, stops, unheard, counting = 2 * _BATCH_CYCLES, [], [], []
        for wait in self._waits:
            plan = wait.clock_plan or self._clock_plan(wait, clock.state)
            if wait.runner.waits_on is not wait:
                if plan[1] is None:
                    return False
                if plan[1]:
                    unheard.append(wait)
                continue
            if plan[0] is None:
                return False
            wait_stops, repeat, through = plan[0]
            stops += wait_stops
            if repeat:
                # Up to the rising edge a `tick()` or `repeat` ends at, or the edge before it.
                edges = min(edges, high + 2 * ((wait.count or 1) - 1) + through)
                counting.append(wait)
        if self.deadline == float("inf") and not self._critical():
            return False
        if self.deadline != float("inf"):
            edges = min(edges, -(-(self.deadline - timer.time) // clock.half))
        if not edges:
            return False
        # The model settled and was pulled before: nothing changed where no edge ran.
        edges, changes = self._narrow.clock_cycles(self._items[clock.state].index, edges, stops)
        if not edges:
            return False
        rising = (edges + 1 - high) // 2
        self.batched_cycles += rising
        woke = False
        for wait in counting:
            left = (wait.count or 1) - rising
            if wait.count is not None:
                wait.count = left
            if not left:
                # Its last edge ran here, its reset low before it (a stop): the active edge
                # without a reset, as a wait on an edge taken in Python samples it.
                wait.wake((True, 0, 0))
                woke = True
        for wait in unheard:
            if any(edge is None or (rising if edge[2] else edges - rising)
                   for _, edge in wait.watched):
                wait.broken = True
                self.forget(wait)
        # The last edge run: its time and the level it left; the clock's timer, at the head of
        # the timeline, moves to the next edge.
        now = self._state.timeline.now = timer.time + (edges - 1) * clock.half
        clock.state.curr = clock.state.next = high ^ (edges & 1)
        timer.time = now + clock.half
        heapq.heapreplace(self._timeline, (timer.time, timer))
        self._take(self._with_wide(changes) if self._wide else changes)
        return woke or bool(self.activated)

    def _clock_plan(self, wait, clock):
        """What stepping the one clock, whose signal state is ``clock``, makes of ``wait``: while
        awaited, ``None`` where the loop cannot run, else the stops it adds
        (``hw_clock_cycles``'s), whether it counts edges and whether the loop may run the edge
        it ends at (it samples nothing; its domain's reset, a stop, was low before that edge);
        while not awaited, ``None`` where the loop cannot run, else whether an edge of the clock
        may activate it (and so break it). Made once for a wait (its triggers do not change)."""
        awaited = None
        if wait.delays:
            unawaited = None
        elif not wait.watched:
            unawaited = False       # nothing can activate it
        else:
            unawaited = True if all(state is clock for state, _ in wait.watched) else None
        domain = wait.tick
        if wait.delays:
            pass
        elif domain is None:
            # `changed` or `edge`: the loop stops at any change of the signal, and the wait then
            # sees it as at any other change (an edge of the other polarity goes on).
            stops = [None if state in self._clock_states else self._stop_item(state.signal)
                     for state, _ in wait.watched]
            if None not in stops:
                awaited = (tuple(~index for index in stops), False, False)
        elif (domain.clk_edge == "pos" and not domain.async_reset
              and wait.watched[0][0] is clock):
            stops = [] if wait.until is None else [self._stop_item(wait.until)]
            if domain.rst is not None:
                stops.append(self._stop_item(domain.rst))
            if None not in stops:
                through = wait.until is None and len(wait.parts) == 3
                awaited = (tuple(stops), wait.until is None, through)
        wait.clock_plan = (awaited, unawaited)
        return wait.clock_plan

    def _stop_item(self, expr):
        """The model's item of ``expr`` if it is a signal of up to 64 bits, else ``None``."""
        try:
            return self._stop_items[id(expr)][1]
        except KeyError:
            pass
        value = Value.cast(expr)
        index = None
        if isinstance(value, Signal):
            item = self._items[self.signal_state(value)]
            index = item.index if item.width <= 64 else None
        self._stop_items[id(expr)] = (expr, index)     # the expression kept alive beside it
        return index


class _Pulled:
    """Signals of up to 64 bits whose values the model brings back after it settles, the changed
    ones only (its ``hw_pull_into``)."""

    def __init__(self, sim):
        self._lib, self._handle = sim.lib, sim.handle
        self._sim = sim     # kept alive while its handle is used
        self._states, self._signed = [], []
        self._positions = {}    # the model's index of a signal -> its place here
        self._count = ctypes.c_size_t()
        self._stops = None  # hw_clock_cycles's, as the model has them
        self._grow(16)

    def _grow(self, capacity):
        """Arrays for ``capacity`` signals, those pulled so far copied into them."""
        count = len(self._states)
        indices, values = (ctypes.c_long * capacity)(), (ctypes.c_uint64 * capacity)()
        if count:
            indices[:count], values[:count] = self._indices[:count], self._values[:count]
        self._indices, self._values = indices, values
        self._changed = (ctypes.c_size_t * capacity)()
        self._register()

    def _register(self):
        self._lib.hw_pull_into(self._handle, self._indices, len(self._states), self._values,
                               self._changed, self._count)

    def add(self, state, item):
        count = len(self._states)
        if count == len(self._indices):
            self._grow(2 * count)
        self._indices[count] = item.index
        self._values[count] = item.get()
        self._positions[item.index] = count
        self._states.append(state)
        shape = state.signal.shape()
        self._signed.append(shape.width if shape.signed else 0)
        self._register()

    def settle(self, index=-1, value=0):
        """Write ``value`` to the model's signal ``index`` first unless it is negative, let the
        model settle; ``(state, value)`` of every signal whose value changed since the last
        pull, but for the one written (its writer knows it)."""
        position = self._positions.get(index)
        if position is not None:
            self._values[position] = value
        return self._changes(self._lib.hw_settle_pull(self._handle, index, value))

    def clock_cycles(self, clock, edges, stops):
        """Step the clock ``clock`` (the model's ``hw_clock_cycles``, stopped by ``stops``): the
        edges run, and ``(state, value)`` of every signal whose value changed."""
        if stops != self._stops:
            self._stops = stops
            self._lib.hw_clock_stops(self._handle, (ctypes.c_long * max(1, len(stops)))(*stops),
                                     len(stops))
        edges = self._lib.hw_clock_cycles(self._handle, clock, edges)
        return edges, self._changes(self._count.value)

    def _changes(self, count):
        if not count:
            return ()
        states, signed, values = self._states, self._signed, self._values
        changed = []
        for i in self._changed[:count]:
            value, width = values[i], signed[i]
            if width and value >> (width - 1):
                value -= 1 << width
            changed.append((states[i], value))
        return changed
