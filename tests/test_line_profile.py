"""Line profiles against ground truth by construction: small designs whose per-line activity a
plain-Python model of their control gives cycle by cycle, compared without a single false
positive (a line reported active in a cycle in which it was not) or false negative (the
reverse), the metric of "HLS_Profiler: Non-Intrusive Profiling tool for HLS based
Applications"."""

import inspect
import math
import random
import re

import numpy as np
import pytest
from amaranth.hdl import Array, ClockDomain, Const, Elaboratable, Module, Signal, signed
from amaranth.sim import Simulator

from hwgen.kernels import WindowFilter
from hwgen.sim import LineProfiler, MemoryModel, run_window_filter


def tagged_lines(cls):
    """``{tag: (file, line)}`` of the lines of ``cls``'s source ending in ``# line: tag``."""
    source, first = inspect.getsourcelines(cls)
    file = inspect.getsourcefile(cls)
    tags = {}
    for offset, text in enumerate(source):
        match = re.search(r"# line: (\w+)", text)
        if match:
            tags[match[1]] = (file, first + offset)
    return tags


def simulate(design, stimulus, *, enable=None):
    """Drive ``stimulus`` (per cycle, ``[(signal, value)]``) and profile ``design``, a
    submodule of a top that has a clock even for combinational designs."""
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = design
    return profile_run(top, design, stimulus, enable=enable)


def profile_run(top, profiled, stimulus, *, enable=None):
    """Simulate ``top`` driven by ``stimulus`` and return the profiler of ``profiled``."""
    sim = Simulator(top)
    sim.add_clock(1e-8)
    profiler = LineProfiler(sim, profiled, enable=enable)

    async def bench(ctx):
        for values in stimulus:
            for signal, value in values:
                ctx.set(signal, value)
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    return profiler


def assert_exact(profiler, tags, expected, *within):
    """No false positive nor false negative, cycle by cycle, for every tagged line; and no
    profiled line in the source of the ``within`` objects that is not tagged."""
    activity = profiler.activity()
    cycles = len(expected)
    assert profiler.cycles == cycles
    spans = set()
    for obj in within:
        source, first = inspect.getsourcelines(obj)
        spans |= {(inspect.getsourcefile(obj), line) for line in range(first, first + len(source))}
    assert set(activity) & spans == set(tags.values())
    for tag, key in tags.items():
        want = np.array([tag in active for active in expected], dtype=bool)
        got = activity[key]
        false_positives = np.flatnonzero(got & ~want)
        false_negatives = np.flatnonzero(want & ~got)
        assert false_positives.size == 0, f"{tag}: false positives in cycles {false_positives}"
        assert false_negatives.size == 0, f"{tag}: false negatives in cycles {false_negatives}"


# -- a binary search, the paper's Fig. 10 example, as a state machine -------------------------

DATA = (2, 3, 5, 8, 13, 21, 34, 55)


class BinarySearch(Elaboratable):
    def __init__(self):
        self.start = Signal()
        self.probe = Signal(8)
        self.found = Signal(signed(5))
        self.done = Signal()

    def elaborate(self, platform):
        m = Module()
        data = Array(Const(value, 8) for value in DATA)
        low, high = Signal(signed(5)), Signal(signed(5))
        mid = Signal(range(len(DATA)))
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [low.eq(0), high.eq(len(DATA) - 1), self.found.eq(-1)]  # line: init
                    m.next = "LOOP"  # line: go
            with m.State("LOOP"):
                with m.If(low > high):
                    m.next = "DONE"  # line: exhausted
                with m.Else():
                    m.d.comb += mid.eq((low + high) >> 1)  # line: mid
                    with m.If(data[mid] == self.probe):
                        m.d.sync += self.found.eq(mid)  # line: hit
                        m.next = "DONE"  # line: hit_next
                    with m.Elif(data[mid] > self.probe):
                        m.d.sync += high.eq(mid - 1)  # line: left
                    with m.Else():
                        m.d.sync += low.eq(mid + 1)  # line: right
            with m.State("DONE"):
                m.d.comb += self.done.eq(1)  # line: done
                m.next = "IDLE"  # line: back
        return m


def binary_search_model(stimulus):
    state, low, high, expected = "IDLE", 0, 0, []
    for start, probe in stimulus:
        active = set()
        if state == "IDLE":
            if start:
                active |= {"init", "go"}
                low, high, state = 0, len(DATA) - 1, "LOOP"
        elif state == "LOOP":
            if low > high:
                active.add("exhausted")
                state = "DONE"
            else:
                mid = (low + high) // 2
                active.add("mid")
                if DATA[mid] == probe:
                    active |= {"hit", "hit_next"}
                    state = "DONE"
                elif DATA[mid] > probe:
                    active.add("left")
                    high = mid - 1
                else:
                    active.add("right")
                    low = mid + 1
        else:
            active |= {"done", "back"}
            state = "IDLE"
        expected.append(active)
    return expected


def test_binary_search_lines_match_the_model_cycle_by_cycle():
    rng = random.Random(14)
    stimulus = [(rng.random() < 0.7, rng.choice(DATA + (0, 4, 60))) for _ in range(400)]
    dut = BinarySearch()
    profiler = simulate(dut, [[(dut.start, s), (dut.probe, p)] for s, p in stimulus])
    expected = binary_search_model(stimulus)
    assert sum("hit" in a for a in expected) > 10 and sum("exhausted" in a for a in expected) > 5
    assert_exact(profiler, tagged_lines(BinarySearch), expected, BinarySearch)


def test_m_next_lines_count_at_their_own_line():
    dut = BinarySearch()
    profiler = simulate(dut, [[(dut.start, 1), (dut.probe, 13)]] * 6)
    tags = tagged_lines(BinarySearch)
    lines = {(entry.file, entry.line): entry for entry in profiler.profile().lines}
    assert lines[tags["go"]].code == 'm.next = "LOOP"  # line: go'
    # 13 is DATA[4]: mid 3 (8 < 13, right), then mid 5 (21 > 13, left), then mid 4: hit.
    assert lines[tags["hit_next"]].active_cycles == 1
    assert lines[tags["right"]].active_cycles == 1 and lines[tags["left"]].active_cycles == 1


# -- GCD by subtraction -------------------------------------------------------------------------

class SubtractionGCD(Elaboratable):
    def __init__(self):
        self.start = Signal()
        self.x, self.y = Signal(8), Signal(8)
        self.done = Signal()

    def elaborate(self, platform):
        m = Module()
        a, b = Signal(8), Signal(8)
        with m.If(self.start):
            m.d.sync += [a.eq(self.x), b.eq(self.y)]  # line: load
        with m.Elif(a > b):
            m.d.sync += a.eq(a - b)  # line: sub_a
        with m.Elif(b > a):
            m.d.sync += b.eq(b - a)  # line: sub_b
        m.d.comb += self.done.eq(~self.start & (a == b))  # line: done
        return m


@pytest.mark.parametrize("x, y", [(48, 18), (1, 255), (17, 17), (240, 7)])
def test_gcd_subtracts_as_many_times_as_euclid_by_subtraction(x, y):
    steps_a = steps_b = 0
    a, b = x, y
    while a != b:
        if a > b:
            a, steps_a = a - b, steps_a + 1
        else:
            b, steps_b = b - a, steps_b + 1
    assert a == math.gcd(x, y)
    idle = 3
    cycles = 1 + steps_a + steps_b + idle
    dut = SubtractionGCD()
    stimulus = [[(dut.start, 1), (dut.x, x), (dut.y, y)]] + [[(dut.start, 0)]] * (cycles - 1)
    profiler = simulate(dut, stimulus)
    # Cycle 0 loads, then the subtractions in Euclid's order, then idle cycles at a == b; the
    # unconditional comb line is active in every cycle.
    expected = [{"load", "done"}]
    a, b = x, y
    for _ in range(cycles - 1):
        if a > b:
            expected.append({"sub_a", "done"})
            a -= b
        elif b > a:
            expected.append({"sub_b", "done"})
            b -= a
        else:
            expected.append({"done"})
    assert_exact(profiler, tagged_lines(SubtractionGCD), expected, SubtractionGCD)
    totals = {entry.line: entry.active_cycles for entry in profiler.profile().lines}
    tags = tagged_lines(SubtractionGCD)
    assert totals[tags["sub_a"][1]] == steps_a and totals[tags["sub_b"][1]] == steps_b


# -- If/Elif/Else with overlapping conditions, a line in several arms ---------------------------

def flag_up(m, flag):
    m.d.comb += flag.eq(1)  # line: shared


class Overlapping(Elaboratable):
    def __init__(self):
        self.x = Signal(4)
        self.o = Signal(3)
        self.flag = Signal()

    def elaborate(self, platform):
        m = Module()
        with m.If(self.x[0]):
            m.d.comb += self.o.eq(1)  # line: first
        with m.Elif(self.x[0] | self.x[1]):
            m.d.comb += self.o.eq(2)  # line: second
            flag_up(m, self.flag)
        with m.Elif(self.x > 2):
            m.d.comb += [self.o.eq(3), self.o[0].eq(0)]  # line: third
        with m.Else():
            m.d.comb += self.o.eq(4)  # line: other
            flag_up(m, self.flag)
        return m


def test_if_elif_else_takes_the_first_true_arm_only():
    xs = list(range(16)) * 3
    dut = Overlapping()
    profiler = simulate(dut, [[(dut.x, x)] for x in xs])
    expected = []
    for x in xs:
        if x & 1:
            active = {"first"}
        elif x & 2:            # x[0] | x[1] with x[0] false
            active = {"second", "shared"}
        elif x > 2:
            active = {"third"}
        else:
            active = {"other", "shared"}
        expected.append(active)
    # The helper's line builds a statement in two arms: active when either is taken.
    tags = tagged_lines(Overlapping) | tagged_lines(flag_up)
    assert_exact(profiler, tags, expected, Overlapping, flag_up)


# -- a Switch with overlapping and default cases ------------------------------------------------

class Overlaps(Elaboratable):
    def __init__(self):
        self.x = Signal(4)
        self.o = Signal(4)

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.x):
            with m.Case("1---"):
                m.d.comb += self.o.eq(1)  # line: top_half
            with m.Case("1-1-", 3):
                m.d.comb += self.o.eq(2)  # line: twos
            with m.Case(3, 5, 6):
                m.d.comb += self.o.eq(3)  # line: small
            with m.Case():
                m.d.comb += self.o.eq(4)  # line: never
            with m.Default():
                m.d.comb += self.o.eq(5)  # line: rest
        return m


def test_switch_takes_the_first_matching_case():
    rng = random.Random(5)
    xs = [rng.randrange(16) for _ in range(200)]
    dut = Overlaps()
    profiler = simulate(dut, [[(dut.x, x)] for x in xs])
    expected = []
    for x in xs:
        if x >= 8:
            expected.append({"top_half"})
        elif x == 3 or (x & 0b1010) == 0b1010:
            expected.append({"twos"})
        elif x in (5, 6):
            expected.append({"small"})
        else:
            expected.append({"rest"})
    assert_exact(profiler, tagged_lines(Overlaps), expected, Overlaps)


# -- an FSM whose states assign under nested conditions, restricted by an enable ----------------

class Handshake(Elaboratable):
    def __init__(self):
        self.go, self.ack, self.err = Signal(), Signal(), Signal()
        self.busy = Signal()
        self.retries = Signal(2)

    def elaborate(self, platform):
        m = Module()
        with m.FSM():
            with m.State("WAIT"):
                with m.If(self.go):
                    m.next = "SEND"  # line: start
            with m.State("SEND"):
                m.d.comb += self.busy.eq(1)  # line: busy
                with m.If(self.ack):
                    with m.If(self.err):
                        with m.If(self.retries == 3):
                            m.next = "WAIT"  # line: give_up
                        with m.Else():
                            m.d.sync += self.retries.eq(self.retries + 1)  # line: retry
                    with m.Else():
                        m.d.sync += self.retries.eq(0); m.next = "WAIT"  # line: ok
        return m


def handshake_model(stimulus, enable=None):
    state, retries, expected = "WAIT", 0, []
    for cycle, (go, ack, err) in enumerate(stimulus):
        active = set()
        if state == "WAIT":
            if go:
                active.add("start")
                state = "SEND"
        else:
            active.add("busy")
            if ack and err:
                if retries == 3:
                    active.add("give_up")
                    state = "WAIT"
                else:
                    active.add("retry")
                    retries += 1
            elif ack:
                active.add("ok")
                retries, state = 0, "WAIT"
        if enable is not None and not enable[cycle]:
            active = set()
        expected.append(active)
    return expected


@pytest.mark.parametrize("restricted", [None, "part", "design"])
def test_nested_fsm_conditions_and_an_enable(restricted):
    rng = random.Random(7)
    stimulus = [(rng.random() < 0.5, rng.random() < 0.6, rng.random() < 0.7) for _ in range(300)]
    gate = [rng.random() < 0.5 for _ in stimulus]
    dut = Handshake()
    enable_signal = Signal()
    driven = [[(dut.go, g), (dut.ack, a), (dut.err, e), (enable_signal, int(on))]
              for (g, a, e), on in zip(stimulus, gate)]
    top = Module()
    top.submodules.dut = dut
    top.d.comb += Signal().eq(enable_signal)     # a signal of the simulated design
    enable = {None: None, "part": {dut: enable_signal}, "design": enable_signal}[restricted]
    profiler = profile_run(top, top, driven, enable=enable)
    expected = handshake_model(stimulus, gate if restricted else None)
    assert any("give_up" in a for a in expected) and any("ok" in a for a in expected)
    assert_exact(profiler, tagged_lines(Handshake), expected, Handshake)
    # A design-wide enable also restricts the profile's cycles, and its percentages, to its own.
    profiled = sum(gate) if restricted == "design" else len(gate)
    profile = profiler.profile()
    assert profile.cycles == profiled
    busiest = profile.lines[0]
    assert busiest.percent == pytest.approx(100 * busiest.active_cycles / profiled)


def test_profile_percentages_and_window():
    dut = SubtractionGCD()
    profiler = simulate(dut, [[(dut.start, 1), (dut.x, 6), (dut.y, 4)]] + [[(dut.start, 0)]] * 4)
    tags = tagged_lines(SubtractionGCD)
    profile = profiler.profile(cycles=(0, 3))
    by_line = {entry.line: entry for entry in profile.lines}
    assert profile.cycles == 5
    assert by_line[tags["done"][1]].percent == 100.0
    assert by_line[tags["sub_a"][1]].percent == pytest.approx(100 * 1 / 5)
    # 6, 4 -> 2, 4 -> 2, 2: cycle 1 subtracts from a, cycle 2 from b.
    assert [[line for _, line in active] for _, active in profile.window] == [
        [tags["load"][1], tags["done"][1]], [tags["sub_a"][1], tags["done"][1]],
        [tags["sub_b"][1], tags["done"][1]]]
    with pytest.raises(ValueError, match="cycles must be a window"):
        profiler.profile(cycles=(3, 3))


def test_design_outside_the_simulation_is_refused():
    sim = Simulator(SubtractionGCD())
    with pytest.raises(ValueError, match="design must be part of the simulated design"):
        LineProfiler(sim, SubtractionGCD())


# -- a window filter: the line that writes a result is active once per output beat --------------

@pytest.mark.parametrize("buffer, unroll", [("line", 2), ("smart", 1), ("none", 1)])
def test_window_filter_writes_one_line_activation_per_output_beat(buffer, unroll):
    pe = WindowFilter("max", (3, 3), mask="rect", width=8, height=6, unroll=unroll, buffer=buffer)
    image = np.random.default_rng(3).integers(0, 256, (6, 8))
    beats = []
    profilers = []

    async def watch(ctx):
        async for _, _, valid, ready in ctx.tick().sample(pe.wr_req.valid, pe.wr_req.ready):
            beats.append(bool(valid and ready))

    run_window_filter(pe, image, instrument=False, engine="pysim",
                      memory=MemoryModel(bandwidth_bytes_per_cycle=2, latency_cycles=3), monitors=[watch],
                      on_simulator=lambda sim: profilers.append(LineProfiler(sim, pe)))
    source = inspect.getsourcefile(WindowFilter)
    lines, _ = inspect.getsourcelines(WindowFilter.elaborate)
    offset = next(i for i, text in enumerate(lines) if "a result beat is written" in text)
    key = (source, inspect.getsourcelines(WindowFilter.elaborate)[1] + offset)
    writes = profilers[0].activity()[key]
    assert int(writes.sum()) == pe.out_height * pe.out_width // unroll
    n = min(len(beats), len(writes))
    assert np.array_equal(writes[:n], np.array(beats[:n]))
    assert not writes[n:].any()


# -- designs wrapped by transformers, the user's design object, the clock domain ----------------

class Toggle(Elaboratable):
    """An FSM that leaves IDLE when ``go`` holds and comes back the cycle after; ``count``
    (made in ``elaborate()``, as many designs do) counts the cycles."""

    def __init__(self):
        self.go = Signal()
        self.busy = Signal()

    def elaborate(self, platform):
        m = Module()
        self.count = Signal(8)
        m.d.sync += self.count.eq(self.count + 1)  # line: count
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.go):
                    m.next = "BUSY"  # line: leave
            with m.State("BUSY"):
                m.d.comb += self.busy.eq(1)  # line: busy
                m.next = "IDLE"  # line: back
        return m


def _toggle_model(go, control, wrapper):
    """Per cycle, the tagged lines active, by a plain-Python model of :class:`Toggle` under
    ``wrapper`` (``control``: the enable or reset of each cycle)."""
    busy, expected = False, {"count": [], "leave": [], "busy": [], "back": []}
    for cycle, (go_now, ctl) in enumerate(zip(go, control)):
        enabled = ctl if wrapper == "enable" else True
        expected["count"].append(enabled)
        expected["leave"].append(enabled and not busy and go_now)
        expected["back"].append(enabled and busy)
        expected["busy"].append(busy)
        if wrapper == "reset" and ctl:
            busy = False
        elif enabled:
            busy = not busy and go_now
    return {tag: np.array(active) for tag, active in expected.items()}


@pytest.mark.parametrize("wrapper", ["rename", "enable", "reset"])
def test_wrapped_designs_are_profiled_with_their_m_next_lines(wrapper, recwarn):
    """DomainRenamer, EnableInserter and ResetInserter around the profiled design: every line,
    ``m.next`` included, exactly as the model of the wrapped design says."""
    from amaranth.hdl import DomainRenamer, EnableInserter, ResetInserter
    rng = random.Random(7)
    go = [rng.random() < 0.6 for _ in range(40)]
    control = [rng.random() < 0.5 for _ in range(40)]
    dut, ctl = Toggle(), Signal(name="ctl")
    wrap = {"rename": DomainRenamer("fast"), "enable": EnableInserter(ctl),
            "reset": ResetInserter(ctl)}[wrapper]
    top = Module()
    domain = "fast" if wrapper == "rename" else "sync"
    top.domains += ClockDomain(domain)
    top.submodules.dut = wrap(dut)
    sim = Simulator(top)
    sim.add_clock(1e-8, domain=domain)
    profiler = LineProfiler(sim, dut, domain=domain)

    async def bench(ctx):
        for go_now, ctl_now in zip(go, control):
            ctx.set(dut.go, go_now)
            ctx.set(ctl, ctl_now)
            await ctx.tick(domain)

    sim.add_testbench(bench)
    sim.run()
    assert not [w for w in recwarn if "m.next" in str(w.message)]
    tags = tagged_lines(Toggle)
    activity = profiler.activity()
    assert set(activity) == set(tags.values())
    for tag, expected in _toggle_model(go, control, wrapper).items():
        np.testing.assert_array_equal(activity[tags[tag]], expected, err_msg=tag)


def test_profiling_leaves_the_design_s_attributes_as_the_simulation_made_them():
    """The profiler elaborates the design again to find its m.next lines; ``dut.count`` (set in
    ``elaborate()``) stays the simulated signal, so the testbench reads the real count."""
    dut = Toggle()
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    before = dict(vars(dut))
    LineProfiler(sim, dut)
    assert vars(dut).keys() == before.keys()
    assert all(vars(dut)[name] is value for name, value in before.items())
    seen = []

    async def bench(ctx):
        for _ in range(5):
            await ctx.tick()
            seen.append(ctx.get(dut.count))

    sim.add_testbench(bench)
    sim.run()
    assert seen == [1, 2, 3, 4, 5]


def test_a_design_without_the_clock_domain_is_refused_at_construction():
    from hwgen.sim import StepProfiler
    m = Module()
    a, y = Signal(), Signal()
    m.d.comb += y.eq(~a)
    for make in (lambda sim: LineProfiler(sim, m), lambda sim: StepProfiler(sim, m)):
        with pytest.raises(ValueError, match=r"domain must be a clock domain of the simulated "
                                             r"design, not 'sync': it has none"):
            make(Simulator(m))
    with pytest.raises(ValueError, match=r"not 'fast': its domains are 'sync'"):
        LineProfiler(Simulator(Toggle()), Toggle(), domain="fast")
