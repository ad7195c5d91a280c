"""Amaranth's simulator with the design compiled: :class:`CompiledSimulator`, a drop-in for
``amaranth.sim.Simulator`` whose design runs as C++ from Yosys's CXXRTL back-end.

Everything a testbench sees is Amaranth's own: ``add_clock``, ``add_testbench`` and
``add_process`` with their context (``ctx.get``, ``ctx.set``, ``ctx.tick()`` with ``.sample``,
``.until`` and ``.repeat``, ``ctx.delay``, ``ctx.changed``, ``ctx.edge``), ``run``,
``run_until``, ``advance``, ``reset`` and ``write_vcd`` come from ``amaranth.sim.Simulator``. Only
the design's evaluation differs: where Amaranth's simulator runs the design compiled to Python,
this engine hands every value a testbench or a clock drives to the compiled model, lets the model
settle, and brings back the values of every signal anything observes. Any number of clock
domains, synchronous and asynchronous resets and memories work as CXXRTL simulates them.

What cannot be mirrored is refused with an error naming it: driving a signal the design itself
drives (Amaranth's simulator lets a testbench override it), and a signal the compiled model has
no counterpart for.
"""

import ctypes

from amaranth.back.rtlil import convert_fragment
from amaranth.hdl import Signal
from amaranth.sim import Simulator

from ..instrument._amaranth import (PyEngineState, PyMemoryState, PySignalState, PySimEngine,
                                    SignalDict, memory_names)
from .compiled import CompiledModel, Source

__all__ = ["CompiledSimulator"]


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


def _chunks(width):
    return (ctypes.c_uint32 * max(1, (width + 31) // 32))()


class _Item:
    """A signal or memory of the compiled model."""

    def __init__(self, sim, name):
        width, depth, writable = ctypes.c_long(), ctypes.c_long(), ctypes.c_int()
        self.index = sim.lib.hw_item(sim.handle, name.encode(), ctypes.byref(width),
                                     ctypes.byref(depth), ctypes.byref(writable))
        self.name, self.width, self.depth = name, width.value, depth.value
        self.writable = bool(writable.value)
        self._sim = sim
        self._buffer = _chunks(self.width)

    @property
    def found(self):
        return self.index >= 0

    def get(self, row=0):
        self._sim.lib.hw_item_get(self._sim.handle, self.index, row, self._buffer)
        value = 0
        for i, chunk in enumerate(self._buffer):
            value |= chunk << (32 * i)
        return value

    def set(self, value, row=0):
        value &= (1 << self.width) - 1
        for i in range(len(self._buffer)):
            self._buffer[i] = (value >> (32 * i)) & 0xFFFFFFFF
        self._sim.lib.hw_item_set(self._sim.handle, self.index, row, self._buffer)


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
        for waker in list(self.wakers):
            waker()
        changed = False
        for addr, value in self.write_queue.items():
            if self.read(addr) != value:
                self.item.set(value, addr)
                changed = True
        self.write_queue.clear()
        if changed:
            self.engine.model_process.runnable = True
        return changed


class _MirrorState(PyEngineState):
    """Amaranth's simulator state, every signal of it mirroring the compiled model: a value a
    testbench or a clock commits goes to the model, and the model's values come back after it
    settles."""

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

    def commit(self, changed=None):
        for state in self.pending:
            if isinstance(state, PySignalState) and state not in self.pulled:
                self._engine.push(state)
        self.pulled.clear()
        return super().commit(changed)


class _ModelProcess:
    """The compiled design as a process of Amaranth's simulator: when a value it reads was
    driven, it settles and brings back what changed."""

    critical = False

    def __init__(self, engine):
        self._engine = engine
        self.runnable = True

    def reset(self):
        self.runnable = True

    def run(self):
        self.runnable = False
        self._engine.settle()


class _CompiledEngine(PySimEngine):
    """Amaranth's simulation engine with the design's evaluation done by a compiled model."""

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
        self._testbenches = []
        self._delta_cycles = 0
        self._vcd_writers = []
        self._active_triggers = set()
        self._sim = self._model.simulation()
        self._items = {}          # signal state -> _Item
        self._narrow = _Pulled()  # the signals of up to 64 bits, pulled at once
        self._wide = {}           # the wider ones
        self._state = _MirrorState(self)
        self.model_process = _ModelProcess(self)
        self._processes = {self.model_process}

    def reset(self):
        self._sim = self._model.simulation()
        self._narrow = _Pulled()
        self._wide = {}
        for state in list(self._items):
            self._track(state, _Item(self._sim, self._items[state].name))
        for state in self._state.slots:
            if isinstance(state, _MirroredMemory):
                state.item = _Item(self._sim, state.item.name)
        super().reset()
        for state in self._items:
            state.curr = state.next = _signed(self._items[state].get(), state.signal.shape())

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

    def push(self, state):
        """Hand the value a testbench or a clock committed to ``state`` to the model."""
        item = self._items[state]
        if not item.writable:
            raise ValueError(f"CompiledSimulator: signal {state.signal.name!r} is driven by the "
                             f"design; the compiled engine cannot override it from a testbench "
                             f"(Amaranth's simulator can)")
        item.set(state.next)
        self.model_process.runnable = True

    def settle(self):
        lib, handle = self._sim.lib, self._sim.handle
        lib.hw_settle(handle)
        pending, pulled = self._state.pending, self._state.pulled
        changed = [(state, _signed(value, shape))
                   for state, value, shape in self._narrow.changed(lib, handle)]
        changed += [(state, _signed(item.get(), state.signal.shape()))
                    for state, item in self._wide.items()]
        for state, value in changed:
            if value != state.curr:
                state.next = value
                pending.add(state)
                pulled.add(state)


class _Pulled:
    """Signals of up to 64 bits whose values one call brings back, the changed ones only."""

    def __init__(self):
        self._states, self._shapes = [], []
        self._capacity = 0

    def add(self, state, item):
        if len(self._states) == self._capacity:
            self._capacity = max(16, 2 * self._capacity)
            indices = (ctypes.c_long * self._capacity)()
            values = (ctypes.c_uint64 * self._capacity)()
            for i in range(len(self._states)):
                indices[i], values[i] = self._indices[i], self._values[i]
            self._indices, self._values = indices, values
            self._changed = (ctypes.c_size_t * self._capacity)()
        count = len(self._states)
        self._indices[count] = item.index
        self._values[count] = item.get()
        self._states.append(state)
        self._shapes.append(state.signal.shape())

    def changed(self, lib, handle):
        """``(state, raw value, shape)`` of every signal whose value changed since the last
        call."""
        if not self._states:
            return []
        count = lib.hw_pull(handle, self._indices, len(self._states), self._values,
                            self._changed)
        states, shapes, values, changed = self._states, self._shapes, self._values, self._changed
        return [(states[i], values[i], shapes[i]) for i in changed[:count]]
