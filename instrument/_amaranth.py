"""The parts of Amaranth's internals that hwgen uses, all in this one module.

Amaranth has no public interface for what hwgen does to designs it did not write: attaching an
HMM from outside means reading a design after elaboration (its fragment tree, the statements of
each fragment and the signals they drive, the state machines ``m.FSM()`` left behind); a line
profile needs the fragment a ``Simulator`` simulates and the source line of every ``m.next``;
building a design with named, directed ports and counting its netlist cells for the estimator
need the port directions Amaranth's back-ends take, the syntax-tree classes of values and
statements, memory and instance fragments, and its netlist emitter. This module is the only one
of hwgen (its packages, benchmarks and tools) that imports Amaranth's private modules or names
(``tests/test_amaranth_layers.py`` checks it); the rest gets plain data from it (tuples, names,
dicts; only the estimator's netlist emitter, :mod:`hwgen.resources.netlist`, still dispatches on
the syntax-tree classes it hands out), so the next Amaranth release breaks here, loudly, and not
deep inside a measurement. It
sits in :mod:`hwgen.instrument`, which imports nothing else of hwgen, so that every package may
import it.

It was written for Amaranth 0.5.x (tested with 0.5.10). On any other release importing it fails
with one line that names this layer; with ``HWGEN_AMARANTH_UNCHECKED=1`` in the environment it
only warns, and ``tests/test_amaranth_layers.py`` names every access that broke (one test per
access).

The accesses, and what Amaranth's main branch (0.6.0.dev) has already changed:

* :func:`elaborate` (``Fragment.get``) and the fragment's ``statements`` (domain -> statements),
  ``subfragments`` (fragment, name, source location) and ``generated`` (name -> ``_dsl.FSM``,
  whose ``encoding`` maps state names to their codes): :func:`statements`,
  :func:`subfragments`, :func:`generated_fsms`.
* The signals a statement drives and reads (``_lhs_signals()``, ``_rhs_signals()``), the
  ``_ast.Assign`` statement and the ``SignalSet`` / ``SignalDict`` containers (signals are not
  hashable): :func:`lhs_signals`, :func:`rhs_signals`, :func:`assignment`.
* The state names of an ``m.FSM()`` state signal: in 0.5 the signal ``<name>_state`` is a plain
  unsigned signal whose ``decoder`` turns code ``n`` into ``"<state name>/<n>"``. On main the
  state signal has an enum shape instead (an ``Enum`` named ``<name>State`` whose members are
  named ``"<state name>/<n>"``) and no decoder: :func:`fsm_state_names` must then read the enum.
* Renaming a signal (``Signal.name`` is a plain attribute) and moving statements between
  fragments (``Fragment.add_statements``, ``add_subfragment``): :func:`embed_parts`, the
  HMM's own embedding of its parts.
* What a line profile reads (:mod:`hwgen.sim.line_profile`): the fragment an Amaranth
  ``Simulator`` simulates (``Simulator._design.fragment``, after ``Fragment.prepare``):
  :func:`simulated_fragment`; the elaboratables a fragment came from (``Fragment.origins``):
  :func:`fragment_origins`; a ``Switch`` statement's test and its cases
  ``(patterns, statements, src_loc)``, patterns as strings of ``0``/``1``/``-`` (the first
  case that matches wins; ``None`` is the default): :func:`switch_cases`; the syntax tree of a
  value (``_ast.Operator``'s ``operator``/``operands``, ``Slice``'s ``value``/``start``/``stop``,
  ``Part``'s ``value``/``offset``/``width``/``stride``, ``Concat``'s ``parts``,
  ``SwitchValue``'s ``test``/``cases``), to evaluate it with numpy: :func:`value_node`; and
  the same nodes built again over other signals (the HMM computes a probe's expression from its
  registered copies of the design's signals): :func:`substitute`.
* ``m.next = ...`` loses its source line: ``_dsl.FSMNextStatement`` is resolved into an
  assignment whose ``src_loc`` is inside Amaranth. :func:`elaborate_with_next_lines` elaborates
  a design again with ``FSMNextStatement`` wrapped so that the assignment keeps the line of the
  first caller outside Amaranth, and puts back the attributes (``vars()``) that elaborating
  again rebinds on the design's elaboratables.
* :class:`PortDirection` (``_ir``): the direction of each named port given to
  ``rtlil.convert`` / ``verilog.convert`` / ``Fragment.prepare``.
* The value and statement classes the fast netlist emitter dispatches on (``_ast``:
  :data:`Operator`, :data:`Slice`, :data:`Concat`, :data:`Part`, :data:`SwitchValue`,
  :data:`Assign`, :data:`Switch`, :data:`Property`, :data:`IOValue`; ``_ir``:
  :data:`RequirePosedge`) with the attributes it reads (``operator``/``operands``,
  ``value``/``start``/``stop``, ``parts``, ``value``/``offset``/``width``/``stride``,
  ``test``/``cases``, ``lhs``/``rhs``), a fragment's clock domains (:func:`domains`), an
  instance's type and ports (:func:`instance_ports`) and a memory's data and ports
  (:func:`memory_ports`).
* Amaranth's own netlist emitter (``Fragment.prepare``, ``_ir.NetlistEmitter`` without its
  debug information, the ``_nir`` cells): :func:`amaranth_netlist`. In 0.5 a switch becomes
  ``Matches`` cells (one bit per case: the value matches one of the case's patterns) and a
  ``PriorityMatch`` cell (the first case that matches, under an enable); on main both are one
  ``Match`` cell (enable, value, the patterns of every case; one bit per case, the first that
  matches). The netlist's ``matches`` and ``priority`` cells, and the estimator's reading of
  them, follow 0.5.
* Amaranth's simulation engine (``sim.pysim``: :class:`PySimEngine`, its engine state
  :class:`PyEngineState` with signal and memory states :class:`PySignalState` and
  :class:`PyMemoryState`; ``_mem``: ``MemoryInstance``, whose memories :func:`memory_names`
  names), which :class:`hwgen.sim.CompiledSimulator` runs with the design's evaluation replaced
  by a compiled model. ``Simulator(engine=...)`` takes an engine class, but the engine
  interface is private.
* The clock domains a simulated design has (``Fragment.domains`` of every fragment, after
  ``Fragment.prepare``): :func:`clock_domains`, so that a profiler refuses a domain the design
  does not have before it runs.
"""

import os
import re
import sys
import warnings
from contextlib import contextmanager

import amaranth
from amaranth.hdl import Const, Fragment, Shape, Signal, Value
from amaranth.hdl import _nir
from amaranth.hdl._ast import (Assign, Concat, IOValue, Operator, Part, Property, SignalDict,
                               SignalSet, Slice, Switch, SwitchValue)
from amaranth.hdl._dsl import FSM, FSMNextStatement
from amaranth.hdl._ir import NetlistEmitter, PortDirection, RequirePosedge
from amaranth.hdl._mem import MemoryInstance
from amaranth.sim.pysim import PySimEngine
from amaranth.sim.pysim import _PyEngineState as PyEngineState
from amaranth.sim.pysim import _PyMemoryState as PyMemoryState
from amaranth.sim.pysim import _PySignalState as PySignalState

__all__ = ["AMARANTH_SERIES", "AmaranthVersionWarning", "Assign", "Concat", "IOValue", "Operator",
           "Part", "PortDirection", "Property", "PyEngineState", "PyMemoryState", "PySignalState",
           "PySimEngine", "RequirePosedge", "SignalDict", "SignalSet",
           "Slice", "Switch", "SwitchValue", "amaranth_netlist", "assignment", "check_amaranth",
           "clock_domains", "domains", "elaborate", "elaborate_with_next_lines", "embed_parts",
           "fragment_origins", "fsm_state_names", "generated_fsms", "instance_ports",
           "is_amaranth_source", "lhs_signals", "mark_used", "memory_names", "memory_ports", "rhs_signals",
           "simulated_fragment", "simulated_time", "simulated_value", "statements", "subfragments",
           "substitute", "switch_cases",
           "value_node"]

#: The Amaranth release series (major, minor) the layers of hwgen were written for.
AMARANTH_SERIES = (0, 5)

#: Set to anything but ``""`` or ``"0"`` to turn a layer's version check into a warning.
UNCHECKED_VARIABLE = "HWGEN_AMARANTH_UNCHECKED"


class AmaranthVersionWarning(Warning):
    """A compatibility layer runs on an Amaranth release it was not written for."""


def check_amaranth(layer, version=None):
    """Fail, naming ``layer``, unless Amaranth's ``version`` (default: the installed one) belongs
    to :data:`AMARANTH_SERIES`; warn instead when :data:`UNCHECKED_VARIABLE` is set."""
    version = amaranth.__version__ if version is None else version
    match = re.match(r"(\d+)\.(\d+)", version)
    if match and (int(match[1]), int(match[2])) == AMARANTH_SERIES:
        return
    series = ".".join(map(str, AMARANTH_SERIES))
    message = (f"{layer} was written for Amaranth {series}.x, not {version}: its accesses to "
               f"Amaranth's internals may have changed (set {UNCHECKED_VARIABLE}=1 to try anyway)")
    if os.environ.get(UNCHECKED_VARIABLE, "") not in ("", "0"):
        warnings.warn(message, AmaranthVersionWarning, stacklevel=3)
    else:
        raise ImportError(message)


check_amaranth(__name__)


# -- fragments -------------------------------------------------------------------------------

def elaborate(design, platform):
    """The fragment ``design`` elaborates to: the signals it will be built from."""
    return Fragment.get(design, platform)


def mark_used(elaboratable):
    """Keep Amaranth from warning that ``elaboratable`` was never elaborated: something else
    stands for its elaboration (a compiled model of it, from a cache)."""
    elaboratable._MustUse__used = True


def statements(fragment):
    """``{domain name: statements}`` of one fragment (not of its subfragments)."""
    return fragment.statements


def subfragments(fragment):
    """``[(subfragment, name or None)]`` of a fragment."""
    return [(sub, name) for sub, name, _src_loc in fragment.subfragments]


def generated_fsms(fragment):
    """``{FSM name: {state name: code}}`` of the ``m.FSM()`` blocks of one fragment.

    Transformers such as ``DomainRenamer`` drop this record; :func:`fsm_state_names` still finds
    their state signals.
    """
    return {name: dict(fsm.encoding) for name, fsm in fragment.generated.items()
            if isinstance(fsm, FSM)}


def fsm_state_names(signal):
    """State names, by code, of an ``m.FSM()`` state signal; None for any other signal."""
    decoder = signal.decoder
    if not callable(decoder) or isinstance(decoder, type) or not signal.name.endswith("_state"):
        return None
    names = []
    for code in range(1 << len(signal)):
        try:
            text = decoder(code)
        except (KeyError, IndexError):
            break
        match = re.fullmatch(rf"(.+)/{code}", str(text))
        if not match:
            return None
        names.append(match[1])
    return tuple(names) or None


def simulated_fragment(simulator):
    """The fragment (after ``Fragment.prepare``) an Amaranth ``Simulator`` simulates: its
    signals are the ones the simulation drives."""
    return simulator._design.fragment


def simulated_time(simulator):
    """Femtoseconds an Amaranth ``Simulator`` (or :class:`hwgen.sim.CompiledSimulator`) has
    simulated: Amaranth 0.5 tells a testbench the time only by its waits."""
    return simulator._engine.now


def simulated_value(simulator, signal):
    """The value ``signal`` has in ``simulator`` between two runs, outside any testbench."""
    return simulator._engine.get_value(signal)


def fragment_origins(fragment):
    """The elaboratables (outermost first) whose elaboration gave ``fragment``."""
    return tuple(fragment.origins or ())


_AMARANTH_DIR = os.path.dirname(amaranth.__file__) + os.sep


def is_amaranth_source(filename):
    """Whether a source location's file belongs to Amaranth itself (its lowering of ``m.FSM``,
    its library), not to the design's author."""
    return filename.startswith(_AMARANTH_DIR)


@contextmanager
def _fsm_next_keeps_its_line():
    init, resolve = FSMNextStatement.__init__, FSMNextStatement.resolve

    def init_at_caller(self, *args, **kwargs):
        init(self, *args, **kwargs)
        frame = sys._getframe(1)
        while frame is not None and is_amaranth_source(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is not None:
            self.src_loc = (frame.f_code.co_filename, frame.f_lineno)

    def resolve_at_caller(self):
        statement = resolve(self)
        statement.src_loc = self.src_loc
        return statement

    FSMNextStatement.__init__, FSMNextStatement.resolve = init_at_caller, resolve_at_caller
    try:
        yield
    finally:
        FSMNextStatement.__init__, FSMNextStatement.resolve = init, resolve


def _path(fragment, part):
    """The subfragment indices from ``fragment`` down to ``part``; None when it is not there."""
    if fragment is part:
        return []
    for index, (sub, _name) in enumerate(subfragments(fragment)):
        found = _path(sub, part)
        if found is not None:
            return [index, *found]
    return None


@contextmanager
def _attributes_kept(fragment):
    """Restore, on leaving, the attributes of every elaboratable ``fragment`` came from, which
    elaborating them again rebinds (a ``self.count = Signal()`` in ``elaborate()``)."""
    kept, stack = [], [fragment]
    while stack:
        fragment = stack.pop()
        kept += [(origin, dict(vars(origin))) for origin in fragment_origins(fragment)
                 if hasattr(origin, "__dict__")]
        stack.extend(sub for sub, _name in subfragments(fragment))
    try:
        yield
    finally:
        for origin, attributes in kept:
            vars(origin).clear()
            vars(origin).update(attributes)


def elaborate_with_next_lines(fragment, part=None):
    """Elaborate the design ``fragment`` came from again (its outermost elaboratable, so with
    the ``DomainRenamer``, ``EnableInserter`` or ``ResetInserter`` that wrap it) and prepare it,
    as a ``Simulator`` does, but with each ``m.next = ...`` assignment located at its own line;
    the twin of ``part`` (a fragment under ``fragment``, by default ``fragment`` itself) in it.

    The signals are new ones (elaborating twice makes new signals); the statement tree has the
    same shape as the first, so a walk of both side by side finds each line. The elaboratables
    keep the attributes the first elaboration gave them. None when the second elaboration has
    no twin of ``part`` (the design elaborates differently each time), or when ``fragment``
    came from no elaboratable.
    """
    path = _path(fragment, fragment if part is None else part)
    if path is None:
        raise ValueError("part must be a fragment under fragment")
    origins = fragment_origins(fragment)
    if not origins:         # a fragment built by hand: there is nothing to elaborate again
        return None
    with _attributes_kept(fragment), _fsm_next_keeps_its_line():
        twin = Fragment.get(origins[0], None).prepare().fragment
    for index in path:
        subs = subfragments(twin)
        if index >= len(subs):
            return None
        twin = subs[index][0]
    return twin


# -- statements ------------------------------------------------------------------------------

def lhs_signals(statement):
    """The :class:`SignalSet` a statement (or a list of them) assigns."""
    return statement._lhs_signals()


def rhs_signals(statement):
    """The :class:`SignalSet` a statement (or a list of them) reads (an assignment's may hold the
    signal it assigns too)."""
    return statement._rhs_signals()


def switch_cases(statement):
    """``(test, [(patterns, statements, src_loc)])`` of a ``Switch`` statement, None for any
    other; ``patterns`` is a tuple of strings of ``0``, ``1`` and ``-`` (most significant bit
    first), or None for the default case."""
    if not isinstance(statement, Switch):
        return None
    cases = []
    for patterns, body, src_loc in statement.cases:
        if patterns is not None:
            patterns = tuple(pattern.replace(" ", "") for pattern in patterns)
        cases.append((patterns, list(body), src_loc))
    return statement.test, cases


def value_node(value):
    """One node of a value's syntax tree, as plain data.

    Returns
    -------
    tuple
        ``("const", int)``, ``("signal", Signal)``, ``("op", operator, [operands])``,
        ``("slice", value, start, stop)``, ``("part", value, offset, width, stride)``,
        ``("concat", [parts])``, ``("switch", test, [(patterns or None, value)])`` with
        patterns as in :func:`switch_cases`, or ``("other", value)`` for anything else (a
        memory row, for example).
    """
    value = Value.cast(value)
    if isinstance(value, Const):
        return ("const", value.value)
    if isinstance(value, Signal):
        return ("signal", value)
    if isinstance(value, Operator):
        return ("op", value.operator, list(value.operands))
    if isinstance(value, Slice):
        return ("slice", value.value, value.start, value.stop)
    if isinstance(value, Part):
        return ("part", value.value, value.offset, value.width, value.stride)
    if isinstance(value, Concat):
        return ("concat", list(value.parts))
    if isinstance(value, SwitchValue):
        return ("switch", value.test,
                [(None if patterns is None else tuple(p.replace(" ", "") for p in patterns), case)
                 for patterns, case in value.cases])
    return ("other", value)


def substitute(value, replace):
    """``value`` with every signal ``s`` it reads replaced by ``replace(s)`` (a value of the same
    shape), rebuilt from the same operators, slices, parts, concatenations and switches; ``None``
    when it holds anything else (a memory row, for example)."""
    value = Value.cast(value)
    if isinstance(value, Const):
        return value
    if isinstance(value, Signal):
        return replace(value)
    if isinstance(value, Operator):
        children = list(value.operands)
    elif isinstance(value, (Slice, Part)):
        children = [value.value] + ([value.offset] if isinstance(value, Part) else [])
    elif isinstance(value, Concat):
        children = list(value.parts)
    elif isinstance(value, SwitchValue):
        children = [value.test] + [case for _, case in value.cases]
    else:
        return None
    new = [substitute(child, replace) for child in children]
    if any(child is None for child in new):
        return None
    if isinstance(value, Operator):
        return Operator(value.operator, new)
    if isinstance(value, Slice):
        return Slice(new[0], value.start, value.stop)
    if isinstance(value, Part):
        return Part(new[0], new[1], value.width, value.stride)
    if isinstance(value, Concat):
        return Concat(new)
    return SwitchValue(new[0], [(patterns, case)
                                for (patterns, _), case in zip(value.cases, new[1:])])


def assignment(statement):
    """``(lhs, rhs)`` of an assignment statement; None for a switch, a print, an assertion."""
    if isinstance(statement, Assign):
        return statement.lhs, statement.rhs
    return None


# -- embedding -------------------------------------------------------------------------------

def embed_parts(module, parts, platform, *, domain="sync"):
    """Elaborate ``module`` with ``parts`` as named subfragments, their ``domain`` logic merged.

    Each part (``{name: wiring.Component}``) becomes a subfragment named ``name`` whose
    statements in ``domain`` move into ``module``'s own fragment; its ports and the signals those
    statements drive are renamed ``<name>__<signal>`` (unless they already are), so they keep
    the part's name in waveforms although they now belong to ``module``. The netlist is the same
    as with plain submodules.

    Returns
    -------
    Fragment
    """
    fragment = Fragment.get(module, platform)
    for name, part in parts.items():
        part_fragment = Fragment.get(part, platform)
        moved = part_fragment.statements.pop(domain, None)
        signals = [Value.cast(value) for _, _, value in part.signature.flatten(part)]
        if moved is not None:
            signals += list(moved._lhs_signals())
            fragment.add_statements(domain, moved)
        for signal in signals:
            if isinstance(signal, Signal) and not signal.name.startswith(f"{name}__"):
                signal.name = f"{name}__{signal.name}"
        fragment.add_subfragment(part_fragment, name)
    return fragment


# -- netlists and ports (the estimator, the build) -------------------------------------------

def domains(fragment):
    """``{name: ClockDomain}`` a fragment defines (not its subfragments)."""
    return fragment.domains


def clock_domains(fragment):
    """The names of the clock domains ``fragment`` and its subfragments define, sorted: after
    ``Fragment.prepare`` (a simulator's fragment) every domain the design uses."""
    names, stack = set(), [fragment]
    while stack:
        fragment = stack.pop()
        names.update(fragment.domains)
        stack.extend(sub for sub, _name in subfragments(fragment))
    return sorted(names)


def instance_ports(instance):
    """``(type, [(value, direction)])`` of an ``Instance``; direction ``"i"``, ``"o"`` or
    ``"io"``."""
    return instance.type, list(instance.ports.values())


def memory_names(design):
    """``{MemoryData: name}`` of every memory in a prepared ``design`` (``Fragment.prepare``),
    each named by its place in the hierarchy below the top, joined by spaces (as CXXRTL names
    it)."""
    return {fragment._data: " ".join(info.name[1:])
            for fragment, info in design.fragments.items() if isinstance(fragment, MemoryInstance)}


def memory_ports(instance):
    """What a ``MemoryInstance`` holds, as plain data.

    Returns
    -------
    (int, int, dict, list, list)
        Depth, width, attributes (such as ``ram_style``), the write ports as
        ``(data, addr, en, granularity)`` (one ``en`` bit per ``granularity`` data bits) and the
        read ports as ``(data, addr, en, domain)`` (``domain == "comb"`` for an asynchronous
        read, whose ``en`` is the constant 1).
    """
    data = instance._data
    writes = [(port._data, port._addr, port._en, port._granularity)
              for port in instance._write_ports]
    reads = [(port._data, port._addr, port._en, port._domain) for port in instance._read_ports]
    return data.depth, Shape.cast(data.shape).width, dict(instance._attrs), writes, reads


class _LeanEmitter(NetlistEmitter):
    """Amaranth's netlist emitter without the debug information (signal fields) it records."""

    def emit_signal_fields(self):
        pass


def amaranth_netlist(fragment, ports):
    """A fragment's netlist through Amaranth's own (complete, slower) netlist emitter.

    Parameters
    ----------
    fragment : Fragment
    ports : dict
        ``{name: (signal, PortDirection)}``.

    Returns
    -------
    (list, dict, list)
        The cells as :mod:`hwgen.resources.netlist` tuples, the connections of late nets
        ``{late net: net}``, and the nets of the outputs.
    """
    prepared = fragment.prepare(ports=ports, hierarchy=("top",))
    netlist = _nir.Netlist()
    _LeanEmitter(netlist, prepared).emit_fragment(prepared.fragment, None)
    cells = [_cell(cell) for cell in netlist.cells]
    connections = {int(late): int(net) for late, net in netlist.connections.items()}
    outputs = [int(net) for value in netlist.top.ports_o.values() for net in value]
    return cells, connections, outputs


def _nets(value):
    return tuple(map(int, value))


def _cell(cell):
    """An NIR cell as a :mod:`hwgen.resources.netlist` tuple."""
    if isinstance(cell, _nir.Top):
        return ("top",)
    if isinstance(cell, _nir.Operator):
        return ("op", cell.operator, tuple(map(_nets, cell.inputs)))
    if isinstance(cell, _nir.FlipFlop):
        return ("ff", _nets(cell.data), cell.init, (int(cell.clk), cell.clk_edge, int(cell.arst)))
    if isinstance(cell, _nir.AssignmentList):
        return ("assign", _nets(cell.default),
                tuple((int(a.cond), a.start, _nets(a.value)) for a in cell.assignments))
    if isinstance(cell, _nir.Matches):
        return ("matches", _nets(cell.value), tuple(cell.patterns))
    if isinstance(cell, _nir.PriorityMatch):
        return ("priority", int(cell.en), _nets(cell.inputs))
    if isinstance(cell, _nir.Part):
        return ("part", _nets(cell.value), cell.value_signed, _nets(cell.offset), cell.width,
                cell.stride)
    if isinstance(cell, _nir.Memory):
        return ("memory", cell.depth, cell.width)
    if isinstance(cell, _nir.SyncReadPort):
        return ("read", cell.memory, _nets(cell.addr), int(cell.en))
    if isinstance(cell, _nir.AsyncReadPort):
        return ("read", cell.memory, _nets(cell.addr), None)
    if isinstance(cell, _nir.SyncWritePort):
        return ("write", cell.memory, _nets(cell.data), _nets(cell.addr), _nets(cell.en))
    if isinstance(cell, _nir.Instance):
        return ("instance", cell.type, tuple(_nets(v) for v in cell.ports_i.values()))
    return ("other", type(cell).__name__, _nets(cell.input_nets()))
