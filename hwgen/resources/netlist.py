"""A design's bit-level netlist in plain tuples, as the estimator counts it.

The cells are Amaranth's netlist (NIR) cells; the nets are NIR's integers (0 and 1 the
constants, ``cell << 16 | bit`` a cell's output bit, the top cell 0 the design's inputs,
negative a signal's late net until its driver is known). Each cell is a tuple whose first item
is its kind:

========================================  ================================================
``("top",)``                              cell 0: its nets are the design's inputs
``("op", operator, inputs)``              an NIR operator; ``inputs`` a tuple of values
``("ff", data, init, clock)``             a flip-flop; ``clock`` tells clock domains apart
``("assign", default, assignments)``      an assignment list of ``(cond, start, value)``
``("matches", value, patterns)``          one bit: ``value`` matches one of ``patterns``
``("priority", en, inputs)``              the first of ``inputs`` that is set, under ``en``
``("part", value, signed, offset, width, stride)``  a variable bit or word select
``("memory", depth, width)``              a memory array
``("read", memory, addr, en)``            a read port; ``en`` is None when asynchronous
``("write", memory, data, addr, en)``     a write port
``("instance", type, inputs)``            an instance, its input values in a tuple
``("other", type, nets)``                 anything else, with the nets it reads
========================================  ================================================

A value is a tuple of nets. :func:`emit` builds this netlist from the elaborated fragments
directly, doing only what counting needs: several times faster than Amaranth's own netlist
emitter (:func:`from_amaranth`), whose debug information, port and driver checks and per-net
validation the estimator does not use.

The two do not build the same raw netlist. Amaranth's emitter works on the copy of the
statements ``Fragment.prepare`` makes, in which a value used twice may be two objects, and keeps
the match cells of switches per module and source line; :func:`emit` works on the statements
themselves and shares every cell of the same value object or the same match across the design.
So Amaranth's raw netlist has more cells (282 against 254 for a 4-lane smart-buffered 3x3
dilation), in another order, with other late nets. What agrees is what the estimator counts:
once :func:`merge_duplicates` has merged the cells that compute the same function of the same
inputs, the live cells (:func:`live_cells`) are the same, kind, operator and width for each
(``tests/test_netlist.py`` checks the counts on every construct :func:`emit` handles, on the
window filters, an instrumented design and a pipeline).

:func:`netlist` leaves to Amaranth's emitter the designs that use what :func:`emit` does not
model (local or conflicting clock domains, I/O buffers, formal values, ports that are not
signals), and any design on which :func:`emit` fails for another reason, with an
:class:`EmitterFallbackWarning` that names the failure: a change that breaks :func:`emit` slows
an estimate down instead of stopping it.
"""

import warnings

from amaranth.hdl import (ClockDomain, ClockSignal, Const, Fragment, Instance, MemoryInstance, Print,
                          ResetSignal, Signal)

from ..instrument import _amaranth as internals
from ..instrument._amaranth import PortDirection, amaranth_netlist, elaborate
from ..build import _ports

__all__ = ["EmitterFallbackWarning", "Netlist", "emit", "from_amaranth", "netlist", "input_nets",
           "merge_duplicates", "live_cells", "live_bits", "bit_assignments", "BitAssignments",
           "substitute"]

_ONE_BIT = {"u<", "u>", "u<=", "u>=", "s<", "s>", "s<=", "s>=", "==", "!=", "b", "r|", "r&", "r^"}
_MERGED = {"op", "ff", "assign", "matches", "priority", "part"}


class Netlist:
    """Cells (see the module's table), the connections of late nets, and the nets of the
    design's outputs."""

    def __init__(self, cells, connections, outputs):
        self.cells = cells
        self.connections = connections
        self.outputs = outputs


class _Unsupported(Exception):
    """The design uses a construct :func:`emit` leaves to Amaranth's emitter."""


class EmitterFallbackWarning(UserWarning):
    """:func:`emit` failed on a design; its netlist came from Amaranth's emitter instead."""


def netlist(design, ports=None, platform=None):
    """The netlist of ``design`` elaborated for ``platform``, late nets not yet resolved
    (:func:`merge_duplicates` resolves them).

    Built by :func:`emit`, or by :func:`from_amaranth` where :func:`emit` does not model the
    design or fails on it (then with an :class:`EmitterFallbackWarning`).
    """
    fragment = elaborate(design, platform)
    ports = _ports(design, ports)
    # emit() only reads the fragment, so Amaranth's emitter can always take it over.
    try:
        return emit(fragment, ports)
    except _Unsupported:
        pass
    except Exception as error:
        warnings.warn(f"the estimator's netlist emitter failed ({type(error).__name__}: {error}); "
                      f"using Amaranth's emitter instead", EmitterFallbackWarning, stacklevel=2)
    return from_amaranth(fragment, ports)


def emit(fragment, ports):
    """The netlist of an elaborated ``fragment`` with top-level ``ports``
    (``{name: (signal, PortDirection)}``), with the cells Amaranth's netlist emitter would build
    but shared more (see the module's notes): after :func:`merge_duplicates` it counts as
    Amaranth's does. Raises ``_Unsupported`` for what it does not model."""
    return _Emitter(fragment, ports).netlist


def from_amaranth(fragment, ports):
    """The netlist of ``fragment`` through Amaranth's own (complete, slower) netlist emitter."""
    return Netlist(*amaranth_netlist(fragment, ports))


class _Emitter:
    """Emits a fragment hierarchy as :class:`Netlist` cells, mirroring Amaranth 0.5's
    ``NetlistEmitter`` (the same kinds of cell for the same statements, shared where the same
    value object or match recurs) without its bookkeeping."""

    def __init__(self, fragment, ports):
        self.cells = [("top",)]
        self.connections = {}
        self.signals = {}           # id(signal) -> (late value, signed, signal)
        self.drivers = {}           # id(signal) -> {(id(fragment), domain name): assignments}
        self.cache = {}             # id(value) -> (value, signed, the object: keeps its id)
        self.matches = {}
        self.priorities = {}
        self.next_late = -1
        self.domains = self.find_domains(fragment)
        self.created = []           # domains used but not defined: their clock and reset are inputs
        self.emit_fragment(fragment)
        self.emit_drivers()
        self.netlist = Netlist(self.cells, self.connections, self.top_ports(ports))

    # -- clock domains -----------------------------------------------------------------------

    def find_domains(self, fragment):
        """Every clock domain the fragments define, by name (:meth:`domain` creates the rest)."""
        domains = {}
        stack = [fragment]
        while stack:
            frag = stack.pop()
            for name, domain in internals.domains(frag).items():
                if domain.local or domains.setdefault(name, domain) is not domain:
                    raise _Unsupported   # scoped or renamed domains
            stack.extend(sub for sub, _name in internals.subfragments(frag))
        return domains

    # -- values ------------------------------------------------------------------------------

    def signal(self, signal):
        entry = self.signals.get(id(signal))
        if entry is None:
            width = len(signal)
            start = self.next_late
            self.next_late -= width
            entry = (tuple(range(start, start - width, -1)), signal.shape().signed, signal)
            self.signals[id(signal)] = entry
        return entry[0]

    def cell(self, cell, width):
        index = len(self.cells)
        self.cells.append(cell)
        base = index << 16
        return tuple(range(base, base + width))

    def operator(self, operator, *inputs):
        if operator in _ONE_BIT:
            width = 1
        else:
            width = len(inputs[1] if operator == "m" else inputs[0])
        return self.cell(("op", operator, inputs), width)

    def match(self, value, patterns):
        key = (value, patterns)
        net = self.matches.get(key)
        if net is None:
            net = self.matches[key] = self.cell(("matches", value, patterns), 1)[0]
        return net

    def priority(self, en, inputs):
        key = (en, inputs)
        nets = self.priorities.get(key)
        if nets is None:
            nets = self.priorities[key] = self.cell(("priority", en, inputs), len(inputs))
        return nets

    def rhs(self, value):
        """``(value, signed)`` of an Amaranth value."""
        cached = self.cache.get(id(value))
        if cached is not None:
            return cached[0], cached[1]
        kind = type(value)
        if kind is Const:
            number, shape = value.value, value.shape()
            result = tuple((number >> bit) & 1 for bit in range(shape.width))
            signed = shape.signed
        elif kind is internals.Operator:
            result, signed = self.rhs_operator(value.operator, value.operands)
        elif kind is internals.Slice:
            result, signed = self.rhs(value.value)[0][value.start:value.stop], False
        elif kind is internals.Concat:
            result = ()
            for part in value.parts:
                result += self.rhs(part)[0]
            signed = False
        elif kind is internals.SwitchValue:
            result, signed = self.rhs_switch(value)
        elif kind is internals.Part:
            inner, inner_signed = self.rhs(value.value)
            offset = self.rhs(value.offset)[0]
            result = self.cell(("part", inner, inner_signed, offset, value.width, value.stride),
                               value.width)
            signed = False
        elif kind is ClockSignal:
            result, signed = self.signal(self.domain(value.domain).clk), False
        elif kind is ResetSignal:
            rst = self.domain(value.domain).rst
            if rst is None:
                if not value.allow_reset_less:
                    raise _Unsupported  # Amaranth reports the error
                result = (0,)
            else:
                result = self.signal(rst)
            signed = False
        elif isinstance(value, Signal):
            result = self.signal(value)
            signed = self.signals[id(value)][1]
        else:
            raise _Unsupported          # AnyValue, Initial: formal verification only
        self.cache[id(value)] = (result, signed, value)
        return result, signed

    def rhs_operator(self, operator, operands):
        if len(operands) == 1:
            a, signed = self.rhs(operands[0])
            if operator == "s":
                return a, True
            if operator == "u":
                return a, False
            if operator == "-":
                return self.operator("-", _extend(a, signed, len(a) + 1)), True
            if operator == "~":
                return self.operator("~", a), signed
            return self.operator(operator, a), False      # b, r|, r&, r^
        (a, signed_a), (b, signed_b) = self.rhs(operands[0]), self.rhs(operands[1])
        if operator in ("|", "&", "^"):
            a, b, signed = _unify(a, signed_a, b, signed_b)
            return self.operator(operator, a, b), signed
        if operator in ("+", "-"):
            a, b, signed = _unify(a, signed_a, b, signed_b)
            width = len(a) + 1
            result = self.operator(operator, _extend(a, signed, width), _extend(b, signed, width))
            return result, signed or operator == "-"
        if operator in ("==", "!="):
            a, b, _ = _unify(a, signed_a, b, signed_b)
            return self.operator(operator, a, b), False
        if operator in ("<", ">", "<=", ">="):
            a, b, signed = _unify(a, signed_a, b, signed_b)
            return self.operator(("s" if signed else "u") + operator, a, b), False
        if operator == "*":
            width = len(a) + len(b)
            return (self.operator("*", _extend(a, signed_a, width), _extend(b, signed_b, width)),
                    signed_a or signed_b)
        if operator == "<<":
            return (self.operator("<<", _extend(a, signed_a, len(a) + 2 ** len(b) - 1), b),
                    signed_a)
        if operator == ">>":
            return self.operator("s>>" if signed_a else "u>>", a, b), signed_a
        if operator == "//":
            width = len(a) + signed_b
            a, b, signed = _unify(a, signed_a, b, signed_b)
            if len(a) < width:
                a, b = _extend(a, signed, width), _extend(b, signed, width)
            return self.operator("s//" if signed else "u//", a, b)[:width], signed
        if operator == "%":
            width = len(b)
            a, b, signed = _unify(a, signed_a, b, signed_b)
            return self.operator("s%" if signed else "u%", a, b)[:width], signed_b
        raise _Unsupported

    def rhs_switch(self, value):
        test = self.rhs(value.test)[0]
        cases = value.cases
        if len(cases) == 2 and cases[0][0] == ("0" * len(test),) and cases[1][0] is None:
            a, signed_a = self.rhs(cases[1][1])
            b, signed_b = self.rhs(cases[0][1])
            if len(test) != 1:
                test = self.operator("b", test)
            a, b, signed = _unify(a, signed_a, b, signed_b)
            return self.operator("m", test, a, b), signed
        conds = tuple(1 if patterns is None else self.match(test, patterns)
                      for patterns, _elem in cases)
        conds = self.priority(1, conds)
        elems = [self.rhs(elem) for _patterns, elem in cases]
        signed = any(s for _v, s in elems)
        width = max((len(v) + (signed and not s) for v, s in elems), default=0)
        assignments = tuple((cond, 0, _extend(v, s, width)) for cond, (v, s) in zip(conds, elems))
        return self.cell(("assign", (0,) * width, assignments), width), signed

    def lhs(self, value):
        """Nets an instance output or a read port drives."""
        kind = type(value)
        if kind is internals.Concat:
            return sum((self.lhs(part) for part in value.parts), ())
        if kind is internals.Slice:
            return self.lhs(value.value)[value.start:value.stop]
        if kind is internals.Operator:     # u() or s()
            return self.lhs(value.operands[0])
        if isinstance(value, Signal):
            return self.signal(value)
        raise _Unsupported

    def connect(self, late, value):
        for net, driver in zip(late, value):
            if net in self.connections:
                raise _Unsupported      # a driver conflict: Amaranth reports it
            self.connections[net] = driver

    def domain(self, name):
        if name not in self.domains:     # used but not defined: Amaranth creates it
            self.domains[name] = ClockDomain(name)
            self.created.append(self.domains[name])
        return self.domains[name]

    # -- statements --------------------------------------------------------------------------

    def emit_fragment(self, fragment):
        kind = type(fragment)
        if kind is Instance:
            self.emit_instance(fragment)
            return
        if kind is MemoryInstance:
            self.emit_memory(fragment)
            return
        if kind is internals.RequirePosedge:
            return
        if kind is not Fragment:
            raise _Unsupported
        for domain, statements in internals.statements(fragment).items():
            for statement in statements:
                self.emit_statement(fragment, domain, statement, 1)
        for subfragment, _name in internals.subfragments(fragment):
            self.emit_fragment(subfragment)

    def emit_statement(self, fragment, domain, statement, cond):
        kind = type(statement)
        if kind is internals.Assign:
            rhs, signed = self.rhs(statement.rhs)
            lhs = statement.lhs
            width = len(lhs)
            if len(rhs) > width:
                rhs = rhs[:width]
            elif len(rhs) < width:
                rhs = _extend(rhs, signed, width)
            self.emit_assign(fragment, domain, lhs, 0, rhs, cond)
        elif kind is internals.Switch:
            test = self.rhs(statement.test)[0]
            conds = tuple(1 if patterns is None else self.match(test, patterns)
                          for patterns, _stmts, _src_loc in statement.cases)
            conds = self.priority(cond, conds)
            for subcond, (_patterns, statements, _src_loc) in zip(conds, statement.cases):
                for substatement in statements:
                    self.emit_statement(fragment, domain, substatement, subcond)
        elif not isinstance(statement, (Print, internals.Property)):
            raise _Unsupported      # prints and assertions drive no logic

    def emit_assign(self, fragment, domain, lhs, start, rhs, cond):
        kind = type(lhs)
        if kind is internals.Slice:
            self.emit_assign(fragment, domain, lhs.value, start + lhs.start, rhs, cond)
        elif kind is internals.Concat:
            stop = 0
            for part in lhs.parts:
                part_start, stop = stop, stop + len(part)
                if start >= stop or start + len(rhs) <= part_start:
                    continue
                lhs_start = max(0, start - part_start)
                rhs_start = max(0, part_start - start)
                rhs_stop = min(len(rhs), stop - start)
                self.emit_assign(fragment, domain, part, lhs_start, rhs[rhs_start:rhs_stop], cond)
        elif kind is internals.Part:
            offset = self.rhs(lhs.offset)[0]
            width = len(lhs.value)
            cases = min(-(-width // lhs.stride), 1 << len(offset))
            conds = tuple(self.match(offset, (format(case, f"0{len(offset)}b"),))
                          for case in range(cases))
            for index, subcond in enumerate(self.priority(cond, conds)):
                at = start + index * lhs.stride
                if at < width:
                    self.emit_assign(fragment, domain, lhs.value, at, rhs[:width - at], subcond)
        elif kind is internals.SwitchValue:
            test = self.rhs(lhs.test)[0]
            conds = tuple(1 if patterns is None else self.match(test, patterns)
                          for patterns, _elem in lhs.cases)
            for subcond, (_patterns, elem) in zip(self.priority(cond, conds), lhs.cases):
                self.emit_assign(fragment, domain, elem, start, rhs[:len(elem)], subcond)
        elif kind is internals.Operator:     # u() or s()
            self.emit_assign(fragment, domain, lhs.operands[0], start, rhs, cond)
        elif isinstance(lhs, Signal):
            self.signal(lhs)
            drivers = self.drivers.setdefault(id(lhs), {})
            drivers.setdefault((id(fragment), domain), []).append((cond, start, rhs))
        else:
            raise _Unsupported

    def emit_instance(self, instance):
        inputs, outputs = [], []
        kind, ports = internals.instance_ports(instance)
        for connection, direction in ports:
            if isinstance(connection, internals.IOValue):
                raise _Unsupported
            if direction == "i":
                inputs.append(self.rhs(connection)[0])
            else:
                outputs.append(self.lhs(connection))
        nets = self.cell(("instance", kind, tuple(inputs)), sum(map(len, outputs)))
        at = 0
        for late in outputs:
            self.connect(late, nets[at:at + len(late)])
            at += len(late)

    def emit_memory(self, fragment):
        depth, width, _attrs, writes, reads = internals.memory_ports(fragment)
        memory = len(self.cells)
        self.cells.append(("memory", depth, width))
        for data, addr, en, granularity in writes:
            values = self.rhs(data)[0]
            en = self.rhs(en)[0]
            en = tuple(en[bit // granularity] for bit in range(len(values)))
            self.cells.append(("write", memory, values, self.rhs(addr)[0], en))
        for data, addr, en, domain in reads:
            addr = self.rhs(addr)[0]
            en = None if domain == "comb" else self.rhs(en)[0][0]
            self.connect(self.lhs(data), self.cell(("read", memory, addr, en), len(data)))

    # -- drivers and ports -------------------------------------------------------------------

    def emit_drivers(self):
        for key, drivers in self.drivers.items():
            late, _signed, signal = self.signals[key]
            for (_fragment, domain), assignments in drivers.items():
                if len(drivers) == 1 and not any(net in self.connections for net in late):
                    chunks = [(0, len(late))]
                else:
                    chunks = _chunks(assignments)
                clocked = domain != "comb"
                if clocked:
                    cd = self.domain(domain)
                    if cd.rst is not None and not cd.async_reset and not signal.reset_less:
                        cond, = self.priority(1, (self.match(self.signal(cd.rst), ("1",)),))
                        init = tuple((signal.init >> bit) & 1 for bit in range(len(late)))
                        assignments = assignments + [(cond, 0, init)]
                    arst = (self.signal(cd.rst)[0] if cd.rst is not None and cd.async_reset
                            and not signal.reset_less else 0)
                    clock = (self.signal(cd.clk)[0], cd.clk_edge, arst)
                for start, stop in chunks:
                    if clocked:
                        default = late[start:stop]
                    else:
                        default = tuple((signal.init >> bit) & 1 for bit in range(start, stop))
                    value = _driver_value(self, default, assignments, start, stop)
                    if clocked:
                        init = (signal.init >> start) & ((1 << (stop - start)) - 1)
                        value = self.cell(("ff", value, init, clock), stop - start)
                    self.connect(late[start:stop], value)

    def top_ports(self, ports):
        """Connect the inputs (the ports' and those of the clock domains Amaranth would create)
        to the top cell and undriven signals to their initial values; returns the outputs' nets."""
        inputs = [(signal, PortDirection.Input) for domain in self.created
                  for signal in (domain.clk, domain.rst) if signal is not None]
        if not isinstance(ports, dict):
            raise _Unsupported
        outputs, next_bit = [], 2
        for signal, direction in [*ports.values(), *inputs]:
            if not isinstance(signal, Signal):
                raise _Unsupported
            late = self.signal(signal)
            if direction == PortDirection.Input:
                self.connect(late, tuple(range(next_bit, next_bit + len(late))))
                next_bit += len(late)
            elif direction == PortDirection.Output:
                outputs.extend(late)
            else:
                raise _Unsupported
        for late, _signed, signal in self.signals.values():
            for bit, net in enumerate(late):
                if net not in self.connections:
                    self.connections[net] = (signal.init >> bit) & 1
        return outputs


def _driver_value(emitter, default, assignments, start, stop):
    """A driver's value over bits ``start:stop``: its default, or an assignment list."""
    width = stop - start
    clipped = []
    for cond, at, value in assignments:
        if at >= stop or at + len(value) <= start:
            continue
        if cond == 1 and at == start and len(value) == width and not clipped:
            default = value
            continue
        if at < start:
            value, at = value[start - at:], 0
        else:
            at -= start
        clipped.append((cond, at, value[:width - at]))
    if not clipped:
        return default
    return emitter.cell(("assign", default, tuple(clipped)), width)


def _chunks(assignments):
    """Runs of the bits the assignments drive."""
    driven = set()
    for _cond, start, value in assignments:
        driven.update(range(start, start + len(value)))
    chunks = []
    for bit in sorted(driven):
        if chunks and chunks[-1][1] == bit:
            chunks[-1] = (chunks[-1][0], bit + 1)
        else:
            chunks.append((bit, bit + 1))
    return chunks


def _extend(value, signed, width):
    if len(value) >= width:
        return value
    fill = value[-1] if signed else 0
    return value + (fill,) * (width - len(value))


def _unify(a, signed_a, b, signed_b):
    """Operands extended to their common shape (``Shape._unify``), and its signedness."""
    if signed_a == signed_b:
        width = max(len(a), len(b))
    elif signed_a:
        width = max(len(a), len(b) + 1)
    else:
        width = max(len(a) + 1, len(b))
    signed = signed_a or signed_b
    return _extend(a, signed_a, width), _extend(b, signed_b, width), signed


# -- after emission ----------------------------------------------------------------------------

def input_nets(cell):
    """Every net ``cell`` reads."""
    kind = cell[0]
    if kind == "op":
        return [net for value in cell[2] for net in value]
    if kind == "ff":
        return [*cell[1], cell[3][0], cell[3][2]]
    if kind == "assign":
        nets = list(cell[1])
        for cond, _start, value in cell[2]:
            nets.append(cond)
            nets.extend(value)
        return nets
    if kind == "matches":
        return list(cell[1])
    if kind == "priority":
        return [cell[1], *cell[2]]
    if kind == "part":
        return [*cell[1], *cell[3]]
    if kind == "read":
        return list(cell[2]) if cell[3] is None else [*cell[2], cell[3]]
    if kind == "write":
        return [*cell[2], *cell[3], *cell[4]]
    if kind == "instance":
        return [net for value in cell[2] for net in value]
    if kind == "other":
        return list(cell[2])
    return []


def _resolve(cell, net):
    """``cell`` with every net it reads passed through ``net``."""
    kind = cell[0]

    def value(nets):
        return tuple(map(net, nets))
    if kind == "op":
        return ("op", cell[1], tuple(map(value, cell[2])))
    if kind == "ff":
        clk, edge, arst = cell[3]
        return ("ff", value(cell[1]), cell[2], (net(clk), edge, net(arst)))
    if kind == "assign":
        return ("assign", value(cell[1]),
                tuple((net(cond), start, value(v)) for cond, start, v in cell[2]))
    if kind == "matches":
        return ("matches", value(cell[1]), cell[2])
    if kind == "priority":
        return ("priority", net(cell[1]), value(cell[2]))
    if kind == "part":
        return ("part", value(cell[1]), cell[2], value(cell[3]), cell[4], cell[5])
    if kind == "read":
        return ("read", cell[1], value(cell[2]), None if cell[3] is None else net(cell[3]))
    if kind == "write":
        return ("write", cell[1], value(cell[2]), value(cell[3]), value(cell[4]))
    if kind == "instance":
        return ("instance", cell[1], tuple(map(value, cell[2])))
    if kind == "other":
        return ("other", cell[1], value(cell[2]))
    return cell


def merge_duplicates(netlist):
    """Resolve the netlist's late nets, merging cells that compute the same function of the
    same inputs as Yosys's ``opt_merge`` does (registers included): window lanes and tree
    levels built separately often compare or register the same pixels. Repeats until no merge
    enables another. Memories, their ports and instances are never merged."""
    cells = netlist.cells
    connections = netlist.connections
    into = {}

    def net(n):
        while n < 0:
            n = connections[n]
        if n < 2 or n >> 16 not in into:
            return n
        cell = n >> 16
        while cell in into:
            cell = into[cell]
        return cell << 16 | n & 0xffff

    readers = {}
    for index, cell in enumerate(cells):
        cell = cells[index] = _resolve(cell, net)
        for source in {n >> 16 for n in input_nets(cell) if n >= 2}:
            readers.setdefault(source, set()).add(index)
    seen, keys, stale = {}, {}, set()
    pending = list(range(len(cells)))
    while pending:
        index = pending.pop()
        if index in into:
            continue
        cell = cells[index]
        if cell[0] not in _MERGED:
            continue
        if index in stale:      # an input was merged: read it from its representative
            cell = cells[index] = _resolve(cell, net)
            stale.discard(index)
        if keys.get(index) not in (None, cell) and seen.get(keys[index]) == index:
            del seen[keys[index]]
        keys[index] = cell
        first = seen.setdefault(cell, index)
        if first != index:
            into[index] = first
            moved = readers.get(index, set())
            readers.setdefault(first, set()).update(moved)
            stale.update(moved)
            pending.extend(moved)
    netlist.outputs = [net(n) for n in netlist.outputs]
    for index in stale:
        cells[index] = _resolve(cells[index], net)


def live_cells(netlist):
    """Indices of cells whose outputs reach a top-level output (memories through their ports)."""
    cells = netlist.cells
    writers = {}
    for index, cell in enumerate(cells):
        if cell[0] == "write":
            writers.setdefault(cell[1], []).append(index)
    live = set()
    stack = list(netlist.outputs)
    while stack:
        n = stack.pop()
        index = n >> 16
        if n < 2 or index in live or index == 0:
            continue
        live.add(index)
        cell = cells[index]
        stack.extend(input_nets(cell))
        if cell[0] == "read" and cell[1] not in live:
            live.add(cell[1])
            for port in writers.get(cell[1], ()):
                live.add(port)
                stack.extend(input_nets(cells[port]))
    return live


def bit_assignments(cell, bit):
    """What bit ``bit`` of an assignment list can take: its ``(cond, net)`` pairs from the last
    assignment back, without an assignment shadowed by a later one under the same condition (a
    pipeline stage writes its context, then a field of it, under one enable), and whether the
    default still shows (no later assignment is unconditional)."""
    pairs, seen = [], set()
    for cond, start, value in reversed(cell[2]):
        if not start <= bit < start + len(value) or cond in seen:
            continue
        pairs.append((cond, value[bit - start]))
        if cond == 1:
            return pairs, False
        seen.add(cond)
    return pairs, True


class BitAssignments(dict):
    """:func:`bit_assignments` of every bit of a netlist's assignment lists, keyed by the bit's
    net and computed once: the register analysis asks for the same bits many times over."""

    def __init__(self, cells):
        super().__init__()
        self.cells = cells

    def __missing__(self, net):
        found = self[net] = bit_assignments(self.cells[net >> 16], net & 0xffff)
        return found


def live_bits(netlist, cells_live, constant=(), assignments=None):
    """``{cell index: bit mask}`` of the output bits of the live cells that something reads, as
    Yosys's ``opt_clean`` and ``wreduce`` keep them: through bitwise gates, multiplexers,
    assignments, registers and shifts by a constant, a bit reads only its own bits; an adder's or
    a multiplier's bit reads the bits below it; every other cell reads all its inputs.
    ``cells_live`` is :func:`live_cells`; a memory and its write ports count as read whole
    (mask -1). An
    assignment's bit does not read the values later assignments shadow (:func:`bit_assignments`).
    Register bits in ``constant`` (nets: bits stuck at their initial value) read nothing.
    ``assignments`` is the netlist's :class:`BitAssignments`, if there is one already."""
    cells = netlist.cells
    if assignments is None:
        assignments = BitAssignments(cells)
    read = {index: -1 for index in cells_live if cells[index][0] in ("memory", "write")}
    whole = set(read)
    stack = list(netlist.outputs)
    for index in read:
        stack.extend(input_nets(cells[index]))
    # The bits read, as nets in a set: a mask per cell, widened bit by bit, costs a new integer
    # of the cell's width at every bit.
    seen = set()
    push, extend = stack.append, stack.extend
    while stack:
        n = stack.pop()
        if n < 2 or n in seen:
            continue
        index, bit = n >> 16, n & 0xffff
        if index == 0 or index in read:
            continue
        seen.add(n)
        if index in whole:
            continue
        cell = cells[index]
        kind = cell[0]
        op = cell[1] if kind == "op" else None
        if op in ("&", "|", "^", "~"):
            extend(value[bit] for value in cell[2])
        elif op == "m":
            (sel,), a, b = cell[2]
            extend((sel, a[bit], b[bit]))
        elif op in ("+", "-", "*"):
            for value in cell[2]:
                extend(value[:bit + 1])
        elif op in ("<<", "u>>", "s>>") and all(net < 2 for net in cell[2][1]):
            value, amount = cell[2][0], sum(net << i for i, net in enumerate(cell[2][1]))
            source = bit - amount if op == "<<" else bit + amount
            if op == "s>>":
                source = min(source, len(value) - 1)
            if 0 <= source < len(value):
                push(value[source])
        elif kind == "ff":
            if n not in constant:
                extend((cell[1][bit], cell[3][0], cell[3][2]))
        elif kind == "assign":
            pairs, default = assignments[n]
            for pair in pairs:
                extend(pair)
            if default:
                push(cell[1][bit])
        else:
            whole.add(index)
            extend(input_nets(cell))
    used = dict(read)
    for n in seen:
        index = n >> 16
        used[index] = used.get(index, 0) | 1 << (n & 0xffff)
    return used


def substitute(netlist, replacement):
    """Read every net through ``replacement`` (``{net: constant or net}``: what Yosys's
    ``opt_expr`` folds a net into), in every cell and output; an assignment whose condition is
    then 0 is dropped, and one whose condition is 1 and that sets every bit replaces the
    default and the assignments before it."""
    cells = netlist.cells

    def net(n):
        return replacement.get(n, n)
    for index, cell in enumerate(cells):
        if index == 0 or not any(n in replacement for n in input_nets(cell)):
            continue
        cell = _resolve(cell, net)
        if cell[0] == "assign":
            default, assignments = cell[1], []
            for cond, start, value in cell[2]:
                if cond == 0:
                    continue
                if cond == 1 and start == 0 and len(value) == len(default):
                    default, assignments = value, []
                    continue
                assignments.append((cond, start, value))
            cell = ("assign", default, tuple(assignments))
        cells[index] = cell
    netlist.outputs = [net(n) for n in netlist.outputs]
