"""The parts of Amaranth's internals that hwgen's own modules use, all in this one module.

Building a design with named, directed ports and counting its netlist cells for the estimator
need what Amaranth does not export: the port directions its back-ends take, the syntax-tree
classes of values and statements, memory and instance fragments, and its netlist emitter. This
layer is the only place that reaches into them (it passes on the fragment walks of
:mod:`hwgen.instrument._amaranth`, for hwgen and its benchmarks), so the next Amaranth release
breaks here, loudly.

It was written for Amaranth 0.5.x (tested with 0.5.10). On any other release importing it fails
with one line that names this layer; with ``HWGEN_AMARANTH_UNCHECKED=1`` in the environment it
only warns, and ``tests/test_amaranth_layers.py`` names every access that broke (one test per
access).

The accesses, and what Amaranth's main branch (0.6.0.dev) has already changed:

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
* Amaranth's simulation engine (``sim.pysim``: :class:`PySimEngine`, its engine state
  :class:`PyEngineState` with signal and memory states :class:`PySignalState` and
  :class:`PyMemoryState`; ``_mem``: :class:`MemoryInstance`), which
  :class:`hwgen.sim.CompiledSimulator` runs with the design's evaluation replaced by a compiled
  model. ``Simulator(engine=...)`` takes an engine class, but the engine interface is private.
  ``_ast``: :class:`SignalDict`, a dictionary keyed by signals.
* Amaranth's own netlist emitter (``Fragment.prepare``, ``_ir.NetlistEmitter`` without its
  debug information, the ``_nir`` cells): :func:`amaranth_netlist`. In 0.5 a switch becomes
  ``Matches`` cells (one bit per case: the value matches one of the case's patterns) and a
  ``PriorityMatch`` cell (the first case that matches, under an enable); on main both are one
  ``Match`` cell (enable, value, the patterns of every case; one bit per case, the first that
  matches). The netlist's ``matches`` and ``priority`` cells, and the estimator's reading of
  them, follow 0.5.
"""

from amaranth.hdl import Shape
from amaranth.hdl import _nir
from amaranth.hdl._ast import Assign, Concat, IOValue, Operator, Part, Property, SignalDict, \
    Slice, Switch, SwitchValue
from amaranth.hdl._ir import NetlistEmitter, PortDirection, RequirePosedge
from amaranth.hdl._mem import MemoryInstance
from amaranth.sim.pysim import PySimEngine
from amaranth.sim.pysim import _PyEngineState as PyEngineState
from amaranth.sim.pysim import _PyMemoryState as PyMemoryState
from amaranth.sim.pysim import _PySignalState as PySignalState

from .instrument._amaranth import check_amaranth, elaborate, lhs_signals, statements, subfragments

__all__ = ["Assign", "Concat", "IOValue", "Operator", "Part", "PortDirection", "Property",
           "PyEngineState", "PyMemoryState", "PySignalState", "PySimEngine", "RequirePosedge",
           "SignalDict", "Slice", "Switch", "SwitchValue", "amaranth_netlist", "domains",
           "elaborate", "instance_ports", "lhs_signals", "memory_names", "memory_ports",
           "statements", "subfragments"]

check_amaranth(__name__)


def domains(fragment):
    """``{name: ClockDomain}`` a fragment defines (not its subfragments)."""
    return fragment.domains


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
