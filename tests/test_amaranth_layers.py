"""Every access of the Amaranth compatibility layer (``hwgen.instrument._amaranth``), one test
each: an Amaranth release that changes one fails the test named after it; and no other module
of hwgen reaches into Amaranth's internals."""

import ast
import importlib
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from amaranth.back import rtlil
from amaranth.hdl import (Array, Assert, Cat, ClockDomain, Const, DomainRenamer, Fragment, Instance,
                          IOPort, Module, Print, Signal)
from amaranth.lib import enum, memory, wiring
from amaranth.lib.cdc import AsyncFFSynchronizer
from amaranth.lib.wiring import In, Out

import amaranth
from hwgen.instrument import _amaranth as layer


class Blinker(wiring.Component):
    """A counter, a state machine, a memory and an instance: every kind of thing the layers read."""

    def __init__(self):
        super().__init__({"go": In(1), "addr": In(4), "led": Out(1), "word": Out(8)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(4)
        m.d.sync += count.eq(count + 1)
        m.d.comb += self.led.eq(count[3])
        with m.FSM(name="blink"):
            with m.State("OFF"):
                with m.If(self.go):
                    m.next = "ON"
            with m.State("ON"):
                m.next = "OFF"
        m.submodules.ram = ram = memory.Memory(shape=8, depth=16, init=range(16))
        write = ram.write_port(granularity=4)
        read = ram.read_port()
        m.d.comb += [write.addr.eq(count), write.data.eq(count), write.en.eq(0b11),
                     read.addr.eq(self.addr), self.word.eq(read.data)]
        m.submodules.box = Instance("BOX", i_A=self.go, o_Y=Signal(name="box_y"))
        return m


def fragment_of(design):
    return Fragment.get(design, None)


def child(fragment, name):
    return dict((n, sub) for sub, n in layer.subfragments(fragment))[name]


# -- the version check -------------------------------------------------------------------------

def test_check_amaranth_accepts_the_series_it_was_written_for():
    for version in ("0.5.0", "0.5.10", "0.5.11.dev3+g1234"):
        layer.check_amaranth("some.layer", version)


def test_check_amaranth_refuses_another_release_in_one_line_naming_the_layer(monkeypatch):
    monkeypatch.delenv(layer.UNCHECKED_VARIABLE, raising=False)
    for version in ("0.6.0", "0.6.0.dev0", "0.4.5", "1.0.0"):
        with pytest.raises(ImportError) as error:
            layer.check_amaranth("some.layer", version)
        message = str(error.value)
        assert "\n" not in message
        assert message.startswith(f"some.layer was written for Amaranth 0.5.x, not {version}")


def test_check_amaranth_only_warns_when_told_to_try_anyway(monkeypatch):
    monkeypatch.setenv(layer.UNCHECKED_VARIABLE, "1")
    with pytest.warns(layer.AmaranthVersionWarning, match="some.layer was written for"):
        layer.check_amaranth("some.layer", "0.6.0")


def test_importing_the_layer_on_another_release_fails_loudly():
    code = "import amaranth; amaranth.__version__ = '0.6.0'; import hwgen.instrument._amaranth"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PATH": ""})
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: hwgen.instrument._amaranth was written for Amaranth "
                           "0.5.x, not 0.6.0")


# -- fragments, statements and values (the HMM, the profilers) ------------------------------

def test_elaborate_gives_the_fragment_the_design_is_built_from():
    design = Blinker()
    fragment = layer.elaborate(design, None)
    assert isinstance(fragment, Fragment)
    assert any(design.led is signal for signal in layer.lhs_signals(
        layer.statements(fragment)["comb"]))


def test_statements_are_per_domain():
    fragment = fragment_of(Blinker())
    domains = layer.statements(fragment)
    assert set(domains) == {"comb", "sync"}
    assert all(len(statements) for statements in domains.values())


def test_subfragments_are_named():
    fragment = fragment_of(Blinker())
    names = [name for _, name in layer.subfragments(fragment)]
    assert names == ["ram", "box"]
    assert all(isinstance(sub, Fragment) for sub, _ in layer.subfragments(fragment))


def test_generated_fsms_give_each_state_its_code():
    assert layer.generated_fsms(fragment_of(Blinker())) == {"blink": {"OFF": 0, "ON": 1}}
    renamed = fragment_of(DomainRenamer("fast")(Blinker()))
    assert layer.generated_fsms(renamed) == {}          # the transformer dropped the record


def test_fsm_state_names_read_the_state_signal():
    fragment = fragment_of(Blinker())
    state = next(s for s in layer.lhs_signals(layer.statements(fragment)["sync"])
                 if s.name == "blink_state")
    assert layer.fsm_state_names(state) == ("OFF", "ON")

    class Mode(enum.Enum, shape=2):
        A = 0
        B = 1
    assert layer.fsm_state_names(Signal(2, name="mode_state", decoder=Mode)) is None
    assert layer.fsm_state_names(Signal(2, name="plain_state")) is None
    assert layer.fsm_state_names(Signal(2, name="x_state", decoder=lambda n: f"{n}")) is None


def test_simulated_fragment_holds_the_simulated_signals():
    from amaranth.sim import Simulator
    design = Blinker()
    fragment = layer.simulated_fragment(Simulator(design))
    assert isinstance(fragment, Fragment)
    assert any(design.led is signal for signal in layer.lhs_signals(
        layer.statements(fragment)["comb"]))


def test_fragment_origins_name_the_elaboratable():
    design = Blinker()
    assert layer.fragment_origins(fragment_of(design))[0] is design


def test_switch_cases_give_patterns_bodies_and_lines():
    x, y = Signal(3), Signal(2)
    m = Module()
    with m.Switch(x):
        with m.Case("1 -0"):
            m.d.comb += y.eq(1)
        with m.Default():
            m.d.comb += y.eq(2)
    (switch,) = layer.statements(fragment_of(m))["comb"]
    test, cases = layer.switch_cases(switch)
    assert test is x
    assert [patterns for patterns, _, _ in cases] == [("1-0",), None]
    assert all(len(body) == 1 and src_loc[0] == __file__ for _, body, src_loc in cases)
    assert layer.switch_cases(y.eq(1)) is None


def test_elaborate_with_next_lines_keeps_the_line_of_m_next():
    import inspect
    design = Blinker()
    fragment = layer.elaborate_with_next_lines(fragment_of(design))
    (fsm,) = [s for s in layer.statements(fragment)["sync"] if layer.switch_cases(s)]
    (go,) = layer.switch_cases(layer.switch_cases(fsm)[1][0][1][0])[1][0][1]
    source, first = inspect.getsourcelines(Blinker.elaborate)
    assert go.src_loc[:2] == (__file__, first + next(
        i for i, text in enumerate(source) if 'm.next = "ON"' in text))
    # Outside it, Amaranth's lowering places the same statement in its own files.
    (fsm,) = [s for s in layer.statements(fragment_of(Blinker()))["sync"]
              if layer.switch_cases(s)]
    (go,) = layer.switch_cases(layer.switch_cases(fsm)[1][0][1][0])[1][0][1]
    assert layer.is_amaranth_source(go.src_loc[0])
    assert not layer.is_amaranth_source(__file__)


def test_elaborate_with_next_lines_keeps_the_design_s_attributes_and_finds_a_part():
    class Counter(wiring.Component):
        def __init__(self):
            super().__init__({"o": Out(4)})

        def elaborate(self, platform):
            m = Module()
            self.count = Signal(4)
            m.d.sync += self.count.eq(self.count + 1)
            m.d.comb += self.o.eq(self.count)
            return m

    design, top = Counter(), Module()
    top.submodules.inner = DomainRenamer("fast")(design)
    fragment = fragment_of(top)
    count = design.count
    part = child(fragment, "inner")
    twin = layer.elaborate_with_next_lines(fragment, part)
    assert design.count is count                       # the second elaboration's is dropped
    assert list(layer.statements(twin)) == list(layer.statements(part)) == ["fast", "comb"]
    assert [s.name for s in layer.lhs_signals(layer.statements(twin)["fast"])] == ["count"]
    assert layer.clock_domains(Fragment.get(top, None).prepare().fragment) == ["fast"]


def test_value_node_names_each_kind_of_value():
    from amaranth.hdl import Array, Mux
    a, b = Signal(4, name="a"), Signal(4, name="b")
    assert layer.value_node(Const(5, 4)) == ("const", 5)
    assert layer.value_node(a)[1] is a
    kind, operator, operands = layer.value_node(a + b)
    assert (kind, operator) == ("op", "+") and operands[0] is a and operands[1] is b
    assert layer.value_node(Mux(a[0], a, b))[0] == "switch"          # Mux is a switch in 0.5
    kind, inner, start, stop = layer.value_node(a[1:3])
    assert (kind, start, stop) == ("slice", 1, 3) and inner is a
    kind, inner, offset, width, stride = layer.value_node(a.bit_select(b, 2))
    assert (kind, width, stride) == ("part", 2, 1) and offset is b
    kind, parts = layer.value_node(Cat(a, b))
    assert kind == "concat" and [p.name for p in parts] == ["a", "b"]
    kind, test, cases = layer.value_node(Array([a, b])[b[0]])
    assert kind == "switch" and [patterns for patterns, _ in cases][0] == ("0",)
    from amaranth.lib.memory import MemoryData
    assert layer.value_node(MemoryData(shape=8, depth=2, init=[])[0])[0] == "other"


def test_substitute_rebuilds_a_value_over_other_signals():
    from amaranth.hdl import Mux
    from amaranth.sim import Simulator
    a, b, c = Signal(4, name="a"), Signal(4, name="b"), Signal(2, name="c")
    x, y, z = Signal(4, name="x"), Signal(4, name="y"), Signal(2, name="z")
    expression = Cat(Mux(c[0], a + b, a[1:3]), a.bit_select(c, 2), (a & ~b).any())
    swapped = layer.substitute(expression, lambda s: {"a": x, "b": y, "c": z}[s.name])
    assert len(swapped) == len(expression)
    from amaranth.lib.memory import MemoryData
    assert layer.substitute(MemoryData(shape=8, depth=2, init=[])[0] + a, lambda s: s) is None
    seen = []

    async def tb(ctx):
        for av, bv, cv in [(5, 9, 1), (12, 3, 2), (0, 15, 3), (7, 7, 0)]:
            ctx.set(a, av), ctx.set(b, bv), ctx.set(c, cv)
            ctx.set(x, av), ctx.set(y, bv), ctx.set(z, cv)
            seen.append((ctx.get(expression), ctx.get(swapped)))
    sim = Simulator(Module())
    sim.add_testbench(tb)
    sim.run()
    assert all(e == s for e, s in seen) and len(seen) == 4


def test_lhs_and_rhs_signals_of_statements():
    a, b, y = Signal(name="a"), Signal(name="b"), Signal(name="y")
    statement = y.eq(a & b)
    assert {s.name for s in layer.lhs_signals(statement)} == {"y"}
    assert {"a", "b"} <= {s.name for s in layer.rhs_signals(statement)}
    m = Module()
    with m.If(a):
        m.d.comb += y.eq(b)
    switch, = layer.statements(fragment_of(m))["comb"]
    assert {s.name for s in layer.lhs_signals(switch)} == {"y"}
    assert {"a", "b"} <= {s.name for s in layer.rhs_signals(switch)}


def test_assignment_gives_both_sides_of_an_assignment_only():
    a, y = Signal(name="a"), Signal(name="y")
    lhs, rhs = layer.assignment(y.eq(a))
    assert lhs is y and rhs is a
    m = Module()
    with m.If(a):
        m.d.comb += y.eq(1)
    m.d.comb += Print("hello")
    switch, printed = layer.statements(fragment_of(m))["comb"]
    assert layer.assignment(switch) is None
    assert layer.assignment(printed) is None


def test_signal_set_and_dict_key_signals_by_identity():
    a, b = Signal(name="same"), Signal(name="same")
    assert len(layer.SignalSet([a, b, a])) == 2
    table = layer.SignalDict([(a, 1), (b, 2)])
    assert table[a] == 1 and table[b] == 2


def test_embed_parts_moves_clocked_logic_and_keeps_part_names():
    class Part(wiring.Component):
        def __init__(self):
            super().__init__({"i": In(8), "o": Out(8)})

        def elaborate(self, platform):
            m = Module()
            total = Signal(8, name="total")
            m.d.sync += total.eq(total + self.i)
            m.d.comb += self.o.eq(~total)
            return m

    part = Part()
    top = Module()
    done = Signal(name="done")
    top.d.sync += done.eq(part.o == 0)
    fragment = layer.embed_parts(top, {"adder": part}, None)
    driven = {s.name for s in layer.lhs_signals(layer.statements(fragment)["sync"])}
    assert driven == {"done", "adder__total"}
    sub = child(fragment, "adder")
    assert "sync" not in layer.statements(sub) and "comb" in layer.statements(sub)
    assert part.i.name == "adder__i" and part.o.name == "adder__o"


# -- ports, syntax-tree classes and netlists (the build, the estimator) -----------------------

def test_port_direction_names_the_ports_of_a_conversion():
    a, y = Signal(4, name="a"), Signal(4, name="y")
    m = Module()
    m.d.comb += y.eq(~a)
    text = rtlil.convert(m, name="top", ports={"in_a": (a, layer.PortDirection.Input),
                                                "out_y": (y, layer.PortDirection.Output)},
                         emit_src=False)
    wires = [line.split() for line in text.splitlines() if "wire" in line]
    assert ["wire", "width", "4", "input", "0", "\\in_a"] in wires
    assert ["wire", "width", "4", "output", "1", "\\out_y"] in wires


def test_operator_values():
    a, b = Signal(4), Signal(4)
    value = a + b
    assert type(value) is layer.Operator
    assert value.operator == "+" and value.operands[0] is a and value.operands[1] is b


def test_slice_values():
    a = Signal(8)
    value = a[2:5]
    assert type(value) is layer.Slice
    assert value.value is a and (value.start, value.stop) == (2, 5)


def test_concat_values():
    a, b = Signal(2), Signal(3)
    value = Cat(a, b)
    assert type(value) is layer.Concat
    assert len(value.parts) == 2 and value.parts[0] is a and value.parts[1] is b


def test_part_values():
    a, sel = Signal(8), Signal(2)
    value = a.word_select(sel, 2)
    assert type(value) is layer.Part
    assert value.value is a and value.offset is sel and (value.width, value.stride) == (2, 2)


def test_switch_values():
    sel = Signal(2)
    value = Array([Const(1, 4), Const(2, 4), Const(3, 4)])[sel].as_value()
    assert type(value) is layer.SwitchValue
    assert value.test is sel
    patterns, element = value.cases[0]
    assert patterns == ("00",) and element.value == 1


def test_assign_statements():
    a, y = Signal(), Signal()
    statement = y.eq(a)
    assert type(statement) is layer.Assign and statement.lhs is y and statement.rhs is a


def test_switch_statements():
    sel, y = Signal(2), Signal()
    m = Module()
    with m.Switch(sel):
        with m.Case(1):
            m.d.comb += y.eq(1)
        with m.Default():
            m.d.comb += y.eq(0)
    switch, = layer.statements(fragment_of(m))["comb"]
    assert type(switch) is layer.Switch and switch.test is sel
    (patterns, statements, _src_loc), (default, _, _) = switch.cases
    assert patterns == ("01",) and default is None
    assert type(statements[0]) is layer.Assign


def test_property_statements():
    a = Signal()
    m = Module()
    m.d.comb += Assert(a)
    statement, = layer.statements(fragment_of(m))["comb"]
    assert isinstance(statement, layer.Property)


def test_io_values():
    assert isinstance(IOPort(1, name="pad"), layer.IOValue)


def test_require_posedge_fragments():
    i, o = Signal(), Signal()
    fragment = fragment_of(AsyncFFSynchronizer(i, o))
    assert any(type(sub) is layer.RequirePosedge for sub, _ in layer.subfragments(fragment))


def test_domains_of_a_fragment():
    m = Module()
    m.domains.fast = fast = ClockDomain(async_reset=True)
    m.d.fast += Signal().eq(1)
    assert layer.domains(fragment_of(m)) == {"fast": fast}


def test_instance_ports():
    instance = child(fragment_of(Blinker()), "box")
    kind, ports = layer.instance_ports(instance)
    assert kind == "BOX"
    assert [direction for _, direction in ports] == ["i", "o"]
    assert ports[1][0].name == "box_y"


def test_memory_ports():
    design = Blinker()
    depth, width, attrs, writes, reads = layer.memory_ports(child(fragment_of(design), "ram"))
    assert (depth, width) == (16, 8) and isinstance(attrs, dict)
    (data, addr, en, granularity), = writes
    assert (len(data), len(addr), len(en), granularity) == (8, 4, 2, 4)
    (data, addr, en, domain), = reads
    assert (len(data), len(addr), len(en), domain) == (8, 4, 1, "sync")


def test_amaranth_netlist_cells():
    design = Blinker()
    from hwgen.build import design_ports
    cells, connections, outputs = layer.amaranth_netlist(fragment_of(design), design_ports(design))
    kinds = {cell[0] for cell in cells}
    assert cells[0] == ("top",)
    assert {"op", "ff", "matches", "priority", "memory", "read", "write", "instance"} <= kinds
    assert ("memory", 16, 8) in cells
    assert len(outputs) == 1 + 8 and all(isinstance(net, int) for net in outputs)
    assert all(late < 0 for late in connections)


# -- nothing else reaches into Amaranth ----------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "instrument" / "_amaranth.py"
#: Every folder of Python the project ships or runs: packages, benchmarks, tools, tests, examples.
SOURCES = sorted(path for folder in ("hwgen", "kernels", "instrument", "sim", "boards",
                                      "benchmarks", "tools", "tests", "examples")
                 for path in (ROOT / folder).rglob("*.py") if path != LAYER)


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _private_imports(tree):
    """``(line, what)`` of every import of a private Amaranth module or name, and of every
    ``amaranth.<...>._<name>`` reached through the package."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names
                      if alias.name.split(".")[0] == "amaranth"
                      and any(map(_private, alias.name.split(".")))]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "amaranth":
            parts = node.module.split(".")
            names = [alias.name for alias in node.names]
            if any(map(_private, parts)) or any(map(_private, names)):
                found.append((node.lineno, f"{node.module}: {', '.join(names)}"))
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "amaranth":
                found.append((node.lineno, ".".join(["amaranth", *reversed(chain)])))
    return found


def _amaranth_private_attributes():
    """The private attribute names of Amaranth's classes (``_lhs_signals``, ``_design``...)."""
    names = set()
    for module in pkgutil.walk_packages(amaranth.__path__, "amaranth."):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                loaded = importlib.import_module(module.name)
        except Exception:       # a back-end whose tool is missing, say: it has no classes here
            continue
        for value in vars(loaded).values():
            if isinstance(value, type) and value.__module__.startswith("amaranth"):
                names.update(name for name in vars(value) if _private(name))
    return names


def test_no_module_but_the_layer_imports_amaranth_internals():
    """A private module (``amaranth.hdl._ast``) or name (``from amaranth.hdl import _nir``) of
    Amaranth is imported by the layer alone."""
    found = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in SOURCES
             for line, what in _private_imports(ast.parse(path.read_text(), str(path)))]
    assert found == []


def test_no_module_but_the_layer_reads_private_attributes_of_amaranth_objects():
    """``x._name`` where ``_name`` is private to Amaranth's classes and is not a name of ours
    (an attribute this project sets, a function or class it defines) is the layer's alone."""
    trees = {path: ast.parse(path.read_text(), str(path)) for path in [*SOURCES, LAYER]}
    ours = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                ours.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
    theirs = _amaranth_private_attributes() - ours
    # What the layer itself reads shows the check sees such accesses at all.
    assert {"_lhs_signals", "_rhs_signals"} <= {
        node.attr for node in ast.walk(trees[LAYER]) if isinstance(node, ast.Attribute)} & theirs
    found = [f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
             for path, tree in trees.items() if path != LAYER for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr in theirs]
    assert found == []


def test_the_import_check_sees_each_way_to_reach_in():
    code = ("import amaranth.hdl._ast\nfrom amaranth.hdl._ir import PortDirection\n"
            "from amaranth.hdl import _nir, Signal\nimport amaranth\nx = amaranth.hdl._dsl.FSM\n"
            "from amaranth.hdl import Signal\ny = amaranth.__version__\n")
    assert [line for line, _ in _private_imports(ast.parse(code))] == [1, 2, 3, 5]


def test_memory_names_follow_the_hierarchy():
    design = Blinker()
    prepared = Fragment.get(design, None).prepare()
    names = layer.memory_names(prepared)
    (data, name), = names.items()
    assert name == "ram" and isinstance(data, memory.MemoryData) and data.depth == 16


def test_simulation_engine_state_and_signal_states():
    """The parts of Amaranth's simulation engine hwgen.sim.CompiledSimulator builds on."""
    signal = Signal(4, init=3)
    state = layer.PyEngineState()
    index = state.get_signal(signal)
    slot = state.slots[index]
    assert isinstance(slot, layer.PySignalState) and slot.signal is signal
    assert (slot.curr, slot.next) == (3, 3)
    slot.update(5)
    assert slot in state.pending and not state.commit() and slot.curr == 5
    assert isinstance(state.signals, layer.SignalDict)
    ram = memory.MemoryData(shape=8, depth=4, init=[1, 2, 3, 4])
    mem = state.slots[state.get_memory(ram)]
    assert isinstance(mem, layer.PyMemoryState) and mem.memory is ram and mem.read(2) == 3
    mem.write(2, 9)
    assert mem.write_queue == {2: 9} and mem.shape.width == 8
    assert issubclass(layer.PySimEngine, object) and hasattr(layer.PySimEngine, "step_design")
