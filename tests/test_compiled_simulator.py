"""hwgen.sim.CompiledSimulator against Amaranth's own simulator: the same testbench on both, over
a corpus of designs, must log the same values (the reference is Amaranth's simulator)."""

import random
import re
from pathlib import Path

import pytest
from amaranth.hdl import Cat, ClockDomain, ClockSignal, Module, Signal, signed, unsigned
from amaranth.lib import data, enum, fifo, wiring
from amaranth.lib.cdc import AsyncFFSynchronizer
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.sim import DomainReset, Simulator

from hwgen.instrument._amaranth import simulated_time, simulated_value
from hwgen.sim import CompiledSimulator

from uart_design import UART, ExampleUART, example_uart_simulation, uart_testbench


def _both(build, *, clocks=(("sync", 1e-6),), until=None, vcd=None, background=0, after=None):
    """Run ``build() -> (dut, [testbench...], log)`` on both simulators; the two logs. The last
    ``background`` testbenches run in the background; ``after(sim, dut)``, when given, is
    appended to the log once the run has ended."""
    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, benches, log = build()
        sim = kind(dut)
        for domain, period in clocks:
            sim.add_clock(period, domain=domain)
        for index, bench in enumerate(benches):
            sim.add_testbench(bench, background=index >= len(benches) - background)
        if until is None:
            sim.run()
        else:
            sim.run_until(until)
        if after is not None:
            log.append(after(sim, dut))
        logs.append(log)
    return logs


class Counter(wiring.Component):
    en: In(1)
    count: Out(16)
    wrapped: Out(1)
    next: Out(16)

    def elaborate(self, platform):
        m = Module()
        with m.If(self.en):
            m.d.sync += self.count.eq(self.count + 1)
        m.d.comb += [self.wrapped.eq(self.count == 0xFFFF), self.next.eq(self.count + self.en)]
        return m


def test_a_counter_with_its_combinational_outputs_settled_after_every_tick():
    def build():
        dut, log = Counter(), []
        top = Module()
        top.domains.sync = domain = ClockDomain()
        top.submodules.dut = dut

        async def bench(ctx):
            rng = random.Random(1)
            for _ in range(40):
                ctx.set(dut.en, rng.random() < 0.7)
                log.append(("before", ctx.get(dut.count), ctx.get(dut.next)))
                _, _, count, nxt = await ctx.tick().sample(dut.count, dut.next)
                log.append((count, nxt, ctx.get(dut.count), ctx.get(dut.next),
                            ctx.get(dut.wrapped)))
            # A synchronous reset from the testbench.
            ctx.set(domain.rst, 1)
            await ctx.tick()
            ctx.set(domain.rst, 0)
            log.append(("reset", ctx.get(dut.count), ctx.get(dut.next)))
        return top, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim
    assert pysim[-1][1] == 0


class Detector(wiring.Component):
    """A state machine that finds 1, 0, 1, 1 in its input."""

    class State(enum.Enum, shape=2):
        A = 0
        B = 1
        C = 2
        D = 3

    bit: In(1)
    found: Out(1)
    state: Out(State)

    def elaborate(self, platform):
        m = Module()
        with m.FSM():
            with m.State("start"):
                with m.If(self.bit):
                    m.next = "one"
            with m.State("one"):
                with m.If(~self.bit):
                    m.next = "onezero"
            with m.State("onezero"):
                with m.If(self.bit):
                    m.next = "onezeroone"
                with m.Else():
                    m.next = "start"
            with m.State("onezeroone"):
                with m.If(self.bit):
                    m.next = "found"
                with m.Else():
                    m.next = "onezero"
            with m.State("found"):
                m.d.comb += self.found.eq(1)
                with m.If(self.bit):
                    m.next = "one"
                with m.Else():
                    m.next = "onezero"
        m.d.sync += self.state.eq(self.State(self.bit + 1))
        return m


def test_a_state_machine_and_an_enum_output():
    def build():
        dut, log = Detector(), []

        async def bench(ctx):
            rng = random.Random(2)
            for _ in range(200):
                ctx.set(dut.bit, rng.getrandbits(1))
                await ctx.tick()
                log.append((ctx.get(dut.found), ctx.get(dut.state)))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim
    assert any(found for found, _ in pysim)


def test_a_synchronous_fifo_with_tick_until():
    def build():
        dut, log = fifo.SyncFIFO(width=12, depth=5), []

        async def writer(ctx):
            rng = random.Random(3)
            for value in range(60):
                ctx.set(dut.w_data, value * 37 % 4096)
                ctx.set(dut.w_en, 1)
                await ctx.tick().until(dut.w_rdy)
                ctx.set(dut.w_en, 0)
                for _ in range(rng.randrange(3)):
                    await ctx.tick()

        async def reader(ctx):
            rng = random.Random(4)
            for _ in range(60):
                ctx.set(dut.r_en, 1)
                value, = await ctx.tick().sample(dut.r_data).until(dut.r_rdy)
                ctx.set(dut.r_en, 0)
                log.append((value, ctx.get(dut.r_level), ctx.get(dut.level)))
                for _ in range(rng.randrange(3)):
                    await ctx.tick()
                log.append(ctx.get(dut.r_data))
        return dut, [writer, reader], log

    pysim, compiled = _both(build)
    assert compiled == pysim


def test_an_asynchronous_fifo_across_two_clocks():
    def build():
        dut, log = fifo.AsyncFIFO(width=16, depth=8, r_domain="read", w_domain="write"), []

        async def writer(ctx):
            for value in range(50):
                ctx.set(dut.w_data, value * 1009 % 65536)
                ctx.set(dut.w_en, 1)
                await ctx.tick("write").until(dut.w_rdy)
                ctx.set(dut.w_en, 0)
                log.append(("w", ctx.get(dut.w_level)))

        async def reader(ctx):
            for _ in range(50):
                ctx.set(dut.r_en, 1)
                value, = await ctx.tick("read").sample(dut.r_data).until(dut.r_rdy)
                log.append(("r", value, ctx.get(dut.r_level)))
            ctx.set(dut.r_en, 0)
        return dut, [writer, reader], log

    pysim, compiled = _both(build, clocks=(("read", 1.3e-6), ("write", 1e-6)))
    assert compiled == pysim
    assert [entry[1] for entry in pysim if entry[0] == "r"] == [v * 1009 % 65536
                                                                for v in range(50)]


class Memories(wiring.Component):
    addr: In(5)
    wdata: In(32)
    we: In(1)
    rdata: Out(32)
    async_rdata: Out(32)

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = self.mem = Memory(shape=unsigned(32), depth=32,
                                             init=[i * 3 for i in range(32)])
        wr = self.mem.write_port()
        rd = self.mem.read_port()
        comb = self.mem.read_port(domain="comb")
        m.d.comb += [wr.addr.eq(self.addr), wr.data.eq(self.wdata), wr.en.eq(self.we),
                     rd.addr.eq(self.addr), self.rdata.eq(rd.data),
                     comb.addr.eq(self.addr + 1), self.async_rdata.eq(comb.data)]
        return m


def test_memories_read_and_written_by_the_design_and_the_testbench():
    def build():
        dut, log = Memories(), []

        async def bench(ctx):
            rng = random.Random(5)
            for step in range(80):
                ctx.set(dut.addr, rng.randrange(32))
                ctx.set(dut.wdata, rng.getrandbits(32))
                ctx.set(dut.we, rng.random() < 0.4)
                if step % 7 == 0:
                    ctx.set(dut.mem.data[rng.randrange(32)], rng.getrandbits(32))
                log.append(ctx.get(dut.async_rdata))
                await ctx.tick()
                log.append((ctx.get(dut.rdata), ctx.get(dut.async_rdata),
                            ctx.get(dut.mem.data[step % 32])))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim


class Arithmetic(wiring.Component):
    a: In(signed(24))
    b: In(signed(13))
    wide: In(100)
    product: Out(signed(37))
    quotient: Out(signed(24))
    shifted: Out(signed(24))
    less: Out(1)
    wide_product: Out(200)
    wide_sum: Out(signed(101))
    record: Out(data.StructLayout({"low": 7, "high": signed(9)}))
    accumulated: Out(signed(40))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.product.eq(self.a * self.b),
                     self.quotient.eq(self.a // (self.b | 1)),
                     self.shifted.eq(self.a >> 3),
                     self.less.eq(self.a < self.b),
                     self.wide_product.eq(self.wide * self.wide),
                     self.wide_sum.eq(self.wide.as_signed() - self.a),
                     self.record.low.eq(self.a[:7]),
                     self.record.high.eq(self.b[:9])]
        m.d.sync += self.accumulated.eq(self.accumulated + self.product)
        return m


def test_signed_arithmetic_wide_values_and_structures():
    def build():
        dut, log = Arithmetic(), []

        async def bench(ctx):
            rng = random.Random(6)
            for _ in range(100):
                ctx.set(dut.a, rng.randrange(-(1 << 23), 1 << 23))
                ctx.set(dut.b, rng.randrange(-(1 << 12), 1 << 12))
                ctx.set(dut.wide, rng.getrandbits(100))
                log.append((ctx.get(dut.product), ctx.get(dut.quotient), ctx.get(dut.shifted),
                            ctx.get(dut.less), ctx.get(dut.wide_product), ctx.get(dut.wide_sum),
                            ctx.get(dut.record.low), ctx.get(dut.record.high),
                            ctx.get(dut.record)))
                await ctx.tick()
                log.append(ctx.get(dut.accumulated))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim
    assert any(entry[0] < 0 for entry in pysim if isinstance(entry, tuple))


def test_amaranths_example_uart_looped_back():
    data_bytes = [0x55, 0x00, 0xFF, 0xA7, 0x3C]

    def build_with_loop():
        log = []
        dut = UART(divisor=5)
        loop, send, receive = uart_testbench(dut, data_bytes, log)
        return dut, [send, receive], log, loop

    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, benches, log, loop = build_with_loop()
        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_testbench(loop, background=True)
        for bench in benches:
            sim.add_testbench(bench)
        sim.run()
        logs.append(log)
    assert logs[1] == logs[0]
    assert [entry[1:] for entry in logs[0] if entry[0] == "received"] == [
        (byte, 0, 0) for byte in data_bytes]



def _example_uart_run(kind, divisor, data):
    log = []
    sim = example_uart_simulation(kind, divisor, data, log)
    sim.run()
    return sim, log


@pytest.mark.parametrize("divisor", [5, 104])
def test_amaranths_example_testbench_changed_loopback_and_repeat(divisor):
    """The example's own testbench: a background loop over `ctx.changed(tx_o)` setting `rx_i`,
    bytes sent with `tick()` and checked after `tick().repeat(12 * divisor)`."""
    data = [0x5A, 0x00, 0xFF, 0xA7, 0x3C, 0x81]
    _, pysim = _example_uart_run(Simulator, divisor, data)
    sim, compiled = _example_uart_run(CompiledSimulator, divisor, data)
    assert compiled == pysim
    assert [entry[:4] for entry in pysim] == [(byte, byte, 0, 0) for byte in data]


def test_the_examples_loopback_as_published_fails_alike():
    """`async for val in ctx.changed(uart.tx_o): ctx.set(uart.rx_i, val)` sets a 1-tuple, which
    both simulators refuse with the same error."""
    errors = []
    for kind in (Simulator, CompiledSimulator):
        dut = ExampleUART(5)

        async def loopback(ctx):
            async for val in ctx.changed(dut.tx_o):
                ctx.set(dut.rx_i, val)

        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_testbench(loopback)
        with pytest.raises(TypeError) as error:
            sim.run()
        errors.append(str(error.value))
    assert errors[1] == errors[0] == "Object (1,) cannot be converted to an Amaranth value"

class Synchronized(wiring.Component):
    """An asynchronous reset, synchronized into ``sync`` (AsyncFFSynchronizer with
    ``o_domain="sync"``), holding a counter in reset."""

    arst: In(1)
    count: Out(8)
    held: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.submodules.sync_reset = AsyncFFSynchronizer(self.arst, self.held, o_domain="sync")
        with m.If(self.held):
            m.d.sync += self.count.eq(0)
        with m.Else():
            m.d.sync += self.count.eq(self.count + 1)
        return m


def test_an_asynchronous_reset_synchronized_into_the_only_clock():
    def build():
        dut, log = Synchronized(), []

        async def bench(ctx):
            for step in range(30):
                if step in (5, 17):
                    await ctx.delay(0.3e-6)     # between edges
                    ctx.set(dut.arst, 1)
                    log.append(("held at once", ctx.get(dut.held)))
                if step in (9, 20):
                    ctx.set(dut.arst, 0)
                await ctx.tick()
                log.append((ctx.get(dut.held), ctx.get(dut.count)))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim
    assert ("held at once", 1) in pysim


class AsyncResetCounter(wiring.Component):
    count: Out(8)

    def __init__(self):
        self.domain = ClockDomain("sync", async_reset=True)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = self.domain
        m.d.sync += self.count.eq(self.count + 1)
        return m


def test_an_asynchronous_reset_domain_with_delays_and_changes():
    def build():
        dut, log = AsyncResetCounter(), []

        async def bench(ctx):
            await ctx.tick().repeat(7)
            log.append(ctx.get(dut.count))
            await ctx.delay(0.25e-6)
            ctx.set(dut.domain.rst, 1)
            log.append(("in reset", ctx.get(dut.count)))
            await ctx.delay(2e-6)
            ctx.set(dut.domain.rst, 0)
            for _ in range(5):
                await ctx.tick()
                log.append(ctx.get(dut.count))

        async def watcher(ctx):
            async for count, in ctx.changed(dut.count):
                log.append(("changed", count))
                if count == 3:
                    return
        return dut, [bench, watcher], log

    pysim, compiled = _both(build)
    assert compiled == pysim
    assert ("in reset", 0) in pysim


def test_run_until_and_a_waveform(tmp_path):
    dut = Counter()
    sim = CompiledSimulator(dut)
    sim.add_clock(1e-6)

    async def bench(ctx):
        ctx.set(dut.en, 1)

    sim.add_testbench(bench)
    with sim.write_vcd(str(tmp_path / "counter.vcd")):
        sim.run_until(10.5e-6)
    text = (tmp_path / "counter.vcd").read_text()
    assert "count" in text and "$enddefinitions" in text
    # Ten rising edges, at 0.5, 1.5, ... 9.5 us.
    assert simulated_value(sim, dut.count) == 10


def test_ports_named_as_a_models_module_would_be():
    """A port named ``top`` (the name hwgen converts a design under) and one named like the
    model's module: the model is built and runs as pysim does."""
    class Named(wiring.Component):
        top: In(4)
        hwgenmodel: Out(5)

        def elaborate(self, platform):
            m = Module()
            m.d.sync += self.hwgenmodel.eq(self.hwgenmodel + self.top)
            return m

    def build():
        dut, log = Named(), []

        async def bench(ctx):
            for value in (3, 7, 15, 1, 9):
                ctx.set(dut.top, value)
                await ctx.tick()
                log.append(ctx.get(dut.hwgenmodel))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim == [3, 10, 25, 26, 3]


def test_overriding_a_signal_the_design_drives_is_refused():
    dut = Counter()
    sim = CompiledSimulator(dut)
    sim.add_clock(1e-6)

    async def bench(ctx):
        ctx.set(dut.next, 5)

    sim.add_testbench(bench)
    with pytest.raises(ValueError, match="signal 'next' is driven by the design"):
        sim.run()


def test_a_register_set_by_the_testbench_holds_until_the_next_edge():
    def build():
        dut, log = Counter(), []

        async def bench(ctx):
            ctx.set(dut.en, 1)
            await ctx.tick().repeat(3)
            ctx.set(dut.count, 100)
            log.append((ctx.get(dut.count), ctx.get(dut.next)))
            await ctx.tick()
            log.append((ctx.get(dut.count), ctx.get(dut.next)))
        return dut, [bench], log

    pysim, compiled = _both(build)
    assert compiled == pysim == [(100, 101), (101, 102)]


def test_a_signal_outside_the_design_is_named():
    dut = Counter()
    stray = Signal(4, name="stray")
    sim = CompiledSimulator(dut)

    async def bench(ctx):
        ctx.get(stray)

    sim.add_testbench(bench)
    with pytest.raises(ValueError, match="no signal 'stray'"):
        sim.run()


def test_the_documented_example_runs():
    text = (Path(__file__).parent.parent / "docs" / "simulation.md").read_text()
    block = re.search(r"```python\n(# test_counter\.py\n.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(block, "docs/simulation.md", "exec"), namespace)
    namespace["test_counter_wraps"]()


class ResettableCounter(wiring.Component):
    """A counter in a domain with a synchronous reset the testbench drives, with a flag at a
    given count."""

    en: In(1)
    count: Out(16)
    at_target: Out(1)

    def __init__(self, target):
        self.target = target
        self.domain = ClockDomain("sync")
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = self.domain
        with m.If(self.en):
            m.d.sync += self.count.eq(self.count + 1)
        m.d.comb += self.at_target.eq(self.count == self.target)
        return m


def test_tick_waits_step_the_clock_in_cpp_with_every_value_as_pysim():
    """`repeat`, `until` and `run_until` with nothing else waiting run the clock in C++; a reset
    mid-`repeat` raises DomainReset; an `async for` left by `break` does not stop it."""
    batched = []

    def build():
        dut, log = ResettableCounter(target=1234), []

        async def counting(ctx):
            ctx.set(dut.en, 1)
            await ctx.tick().repeat(100)     # ends before the last deadline
            log.append(("after 1000", ctx.get(dut.count), ctx.get(dut.at_target)))
            count, = await ctx.tick().sample(dut.count).until(dut.at_target)
            log.append(("at target", count, ctx.get(dut.count)))
            async for _, _, count in ctx.tick().sample(dut.count):
                if count >= 1240:
                    break
            values = await ctx.tick().sample(dut.count, dut.at_target).repeat(700)
            log.append(("sampled", *values, ctx.get(dut.count)))
            await ctx.tick().repeat(3)
            ctx.set(dut.domain.rst, 1)
            await ctx.tick()
            ctx.set(dut.domain.rst, 0)
            log.append(("reset", ctx.get(dut.count)))
            await ctx.tick().repeat(5000)

        async def waiting(ctx):
            try:
                await ctx.tick().repeat(100_000)
            except DomainReset:
                log.append(("domain reset", ctx.get(dut.count)))
            await ctx.tick().until(dut.at_target)
            log.append(("target again", ctx.get(dut.count)))

        return dut, [counting, waiting], log

    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, benches, log = build()
        sim = kind(dut)
        sim.add_clock(1e-6)
        for bench in benches:
            sim.add_testbench(bench)
        sim.run()
        sim.run_until(simulated_time(sim) / 1e15 + 300.3e-6)   # nothing waits: only the clock
        log.append(("count at the end", simulated_value(sim, dut.count)))
        logs.append(log)
        if kind is CompiledSimulator:
            batched.append(sim.batched_cycles)
    assert logs[1] == logs[0]
    assert ("domain reset", 0) in logs[0] and logs[0][-1][1] > 5000
    # Nearly every one of the ~7,500 cycles ran in C++.
    assert batched[0] > 7_000


def test_a_process_that_waits_every_tick_keeps_python_in_the_loop():
    def build():
        dut, log = ResettableCounter(target=50), []

        async def watcher(ctx):
            async for _, _, count, hit in ctx.tick().sample(dut.count, dut.at_target):
                if hit:
                    ctx.set(dut.en, 0)

        async def bench(ctx):
            ctx.set(dut.en, 1)
            await ctx.tick().repeat(80)
            log.append((ctx.get(dut.count), ctx.get(dut.en)))
        return dut, [watcher, bench], log

    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, benches, log = build()
        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_process(benches[0])
        sim.add_testbench(benches[1])
        sim.run()
        logs.append(log)
    assert logs[1] == logs[0] == [(51, 0)]
    assert sim.batched_cycles == 0


def test_run_until_stops_where_pysim_does_with_the_clock_in_cpp():
    """Deadlines on and between edges, with the clock running in C++ between them: the same
    time, count and wait as Amaranth's simulator after each."""
    deadlines = [0.5e-6, 0.75e-6, 3e-6, 10.5e-6, 10.6e-6, 50.25e-6, 120e-6, 120.5e-6, 400.999e-6]
    results = []
    for kind in (Simulator, CompiledSimulator):
        dut, seen = ResettableCounter(target=90), []

        async def bench(ctx):
            ctx.set(dut.en, 1)
            await ctx.tick().until(dut.at_target)
            seen.append(("target", ctx.get(dut.count)))
            await ctx.tick().repeat(200)
            seen.append(("repeated", ctx.get(dut.count)))

        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_testbench(bench)
        log = []
        for deadline in deadlines:
            sim.run_until(deadline)
            log.append((simulated_time(sim), simulated_value(sim, dut.count), list(seen)))
        results.append(log)
    assert results[1] == results[0]
    assert sim.batched_cycles > 300
    # `until` wakes after the edge at which the flag (count 90) was sampled.
    assert results[0][-1][2] == [("target", 91), ("repeated", 291)]


def test_testbenches_acting_every_cycle_with_waits_that_come_and_go():
    """Testbenches that set and read every cycle (the short path of a quiet simulation, where
    only clock edges wake anyone) next to one that sometimes waits on a change (the general
    path): every value as Amaranth's simulator."""
    def build():
        dut, log = Counter(), []
        top = Module()
        top.domains.sync = domain = ClockDomain()
        top.submodules.dut = dut

        async def driver(ctx):
            rng = random.Random(7)
            for step in range(300):
                ctx.set(dut.en, rng.random() < 0.8)
                ctx.set(dut.en, rng.random() < 0.8)     # the second set wins
                log.append(("next", ctx.get(dut.next), ctx.get(dut.count)))
                if step % 50 == 49:
                    ctx.set(domain.rst, 1)
                await ctx.tick()
                ctx.set(domain.rst, 0)
                log.append(("count", ctx.get(dut.count), ctx.get(dut.wrapped)))
            ctx.set(dut.en, 1 - ctx.get(dut.en))    # the last thing it does: seen after run()

        async def watcher(ctx):
            for step in range(120):
                if step % 5 == 0:
                    count, = await ctx.changed(dut.count)
                    log.append(("changed", count, ctx.get(dut.next)))
                else:
                    _, reset, count = await ctx.tick().sample(dut.count)
                    log.append(("tick", reset, count, ctx.get(dut.count)))

        async def sampler(ctx):
            async for _, _, nxt in ctx.tick().sample(dut.next):
                log.append(("sampled", nxt))

        return top, [driver, watcher, sampler], log

    logs = _both(build, background=1,
                 after=lambda sim, top: ("after run",
                                         simulated_value(sim, top.submodules.dut.next)))
    assert logs[1] == logs[0]
    assert ("count", 0, 0) in logs[0] and any(e[0] == "changed" for e in logs[0])


def test_what_a_testbench_sets_last_is_settled_after_run():
    results = []
    for kind in (Simulator, CompiledSimulator):
        dut = Counter()

        async def bench(ctx):
            ctx.set(dut.en, 1)
            await ctx.tick().repeat(3)
            ctx.set(dut.en, 0)      # settled once the testbench has ended

        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_testbench(bench)
        sim.run()
        results.append((simulated_value(sim, dut.count), simulated_value(sim, dut.next)))
    assert results[1] == results[0] == (3, 3)


class Watched(wiring.Component):
    """Signals that change at different rates, for waits on their changes: a counter (a
    register), a bit of it (combinational), its top bits a cycle later (a register), that bit
    gated by the clock (it changes at falling edges too), the clock gated by an input, a
    follower of an input, and a wide register."""

    en: In(1)
    follow_i: In(1)
    count: Out(8)
    slow: Out(1)
    upper: Out(2)
    gated: Out(1)
    pulse: Out(1)
    follow_o: Out(1)
    wide: Out(100)

    def elaborate(self, platform):
        m = Module()
        with m.If(self.en):
            m.d.sync += self.count.eq(self.count + 1)
        m.d.sync += [self.upper.eq(self.count[6:8]), self.follow_o.eq(self.follow_i),
                     self.wide.eq(Cat(self.count, self.wide[:-8]))]
        m.d.comb += [self.slow.eq(self.count[4]), self.gated.eq(ClockSignal() & self.slow),
                     self.pulse.eq(ClockSignal() & self.en)]
        return m


def _both_watched(benches, *, deadlines=None, background=()):
    """Run the testbenches ``benches(dut, log)`` (those named in ``background`` in the
    background) on both simulators: the two logs and the share of the cycles the compiled
    simulator ran in C++."""
    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, log = Watched(), []
        sim = kind(dut)
        sim.add_clock(1e-6)
        for bench in benches(dut, log):
            sim.add_testbench(bench, background=bench.__name__ in background)
        if deadlines is None:
            sim.run()
        else:
            for deadline in deadlines:
                sim.run_until(deadline)
                log.append(("deadline", simulated_time(sim), simulated_value(sim, dut.count)))
        log.append(("end", simulated_time(sim), simulated_value(sim, dut.count)))
        logs.append(log)
    return logs, sim.batched_cycles / round(simulated_time(sim) / 1e9)


def test_changed_on_a_register_a_combinational_output_and_several_signals():
    def benches(dut, log):
        async def watcher(ctx):
            ctx.set(dut.en, 1)
            for _ in range(4):
                count, = await ctx.changed(dut.count)
                log.append(("count", count, ctx.get(dut.count), ctx.get(dut.slow)))
            for _ in range(8):
                slow, = await ctx.changed(dut.slow)
                log.append(("slow", slow, ctx.get(dut.count), ctx.get(dut.upper)))
            for _ in range(6):
                values = await ctx.changed(dut.upper, dut.slow)
                log.append(("several", *values, ctx.get(dut.count)))
            for _ in range(5):
                gated, = await ctx.changed(dut.gated)
                log.append(("gated", gated, ctx.get(dut.count), ctx.get(dut.gated)))
            _, count = await ctx.changed(dut.upper).sample(dut.count)
            log.append(("sampled", count, ctx.get(dut.wide)))

        return [watcher]

    (pysim, compiled), in_cpp = _both_watched(benches)
    assert compiled == pysim
    assert [entry[1] for entry in pysim if entry[0] == "slow"] == [1, 0] * 4
    # Only changes were waited on: every rising edge ran in C++, the clock stopping after each
    # edge that changed a watched signal.
    assert in_cpp == 1


def test_changed_beside_tick_repeat_in_another_testbench():
    def benches(dut, log):
        async def repeating(ctx):
            for step in range(12):
                ctx.set(dut.en, step % 3 != 2)
                await ctx.tick().repeat(23)
                log.append(("repeat", ctx.get(dut.count), ctx.get(dut.slow)))

        async def watcher(ctx):
            async for slow, upper in ctx.changed(dut.slow, dut.upper):
                log.append(("changed", slow, upper, ctx.get(dut.count), ctx.get(dut.en)))

        return [repeating, watcher]

    (pysim, compiled), in_cpp = _both_watched(benches, background=("watcher",))
    assert compiled == pysim
    assert sum(entry[0] == "changed" for entry in pysim) > 5
    assert in_cpp > 0.9     # all but the edges of plain `tick()`s


def test_an_async_for_over_changed_that_sets_an_input_the_design_reads():
    def benches(dut, log):
        async def loopback(ctx):
            async for slow, in ctx.changed(dut.slow):
                ctx.set(dut.follow_i, slow)
                log.append(("set", slow, ctx.get(dut.follow_o)))

        async def main(ctx):
            ctx.set(dut.en, 1)
            for _ in range(6):
                await ctx.tick().until(dut.follow_o)
                log.append(("high", ctx.get(dut.count), ctx.get(dut.follow_i)))
                await ctx.tick().repeat(5)
                log.append(("later", ctx.get(dut.count), ctx.get(dut.follow_o)))
                await ctx.tick().until(~dut.follow_o)
                log.append(("low", ctx.get(dut.count)))

        return [loopback, main]

    (pysim, compiled), in_cpp = _both_watched(benches, background=("loopback",))
    assert compiled == pysim
    assert [entry[1] for entry in pysim if entry[0] == "high"] == [
        18 + 32 * i for i in range(6)]     # follow_o rises at edge 17, seen by `until` at 18
    # All but the waits of `until(~follow_o)`, whose condition is no signal (Python's edges).
    assert in_cpp > 0.5


def test_edges_of_a_register_bit_and_a_combinational_output():
    def benches(dut, log):
        async def edges(ctx):
            ctx.set(dut.en, 1)
            for _ in range(4):
                await ctx.posedge(dut.slow)
                log.append(("posedge", ctx.get(dut.count)))
                await ctx.negedge(dut.upper[0])
                log.append(("negedge", ctx.get(dut.count), ctx.get(dut.upper)))

        return [edges]

    (pysim, compiled), in_cpp = _both_watched(benches)
    assert compiled == pysim
    assert in_cpp == 1


def test_changed_waits_under_run_until_and_on_a_wide_signal():
    """Deadlines between the changes the clock stops at, then a wait on a signal of more than
    64 bits (every edge in Python): the same times and values as Amaranth's simulator."""
    def benches(dut, log):
        async def watcher(ctx):
            ctx.set(dut.en, 1)
            for _ in range(5):
                slow, = await ctx.changed(dut.slow)
                log.append(("slow", slow, ctx.get(dut.count)))
            for _ in range(3):
                wide, = await ctx.changed(dut.wide)
                log.append(("wide", wide, ctx.get(dut.count)))
            await ctx.tick().repeat(100)     # ends before the last deadline

        return [watcher]

    deadlines = [3.25e-6, 16.5e-6, 17e-6, 17.6e-6, 40.5e-6, 100e-6, 101.5e-6, 300e-6]
    (pysim, compiled), in_cpp = _both_watched(benches, deadlines=deadlines)
    assert compiled == pysim
    assert sum(entry[0] == "wide" for entry in pysim) == 3
    assert in_cpp > 0.9


def test_a_process_over_changed_with_the_clock_in_cpp():
    """A process (not a testbench) looping over a change, setting an input in its delta cycle,
    beside a testbench that waits with `until`: the clock still runs in C++ between changes."""
    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, log = Watched(), []

        async def follower(ctx):
            async for slow, count in ctx.changed(dut.slow).sample(dut.count):
                ctx.set(dut.follow_i, slow)

        async def bench(ctx):
            ctx.set(dut.en, 1)
            for _ in range(5):
                await ctx.tick().until(dut.follow_o)
                log.append(("high", ctx.get(dut.count), ctx.get(dut.follow_i)))
                await ctx.tick().until(dut.follow_i == 0)
                log.append(("low", ctx.get(dut.count), ctx.get(dut.follow_o)))

        sim = kind(dut)
        sim.add_clock(1e-6)
        sim.add_process(follower)
        sim.add_testbench(bench)
        sim.run()
        logs.append(log)
    assert logs[1] == logs[0]
    assert [entry[1] for entry in logs[0] if entry[0] == "high"] == [18 + 32 * i for i in range(5)]
    assert sim.batched_cycles > 0.4 * logs[0][-1][1]    # the `until(follow_o)` phases


class Incrementer(wiring.Component):
    """``b`` follows ``a`` combinationally, ``c`` follows ``b``; ``r`` registers ``a``."""

    a: In(4)
    b: Out(4)
    c: Out(1)
    r: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.b.eq(self.a + 1), self.c.eq(self.b[0])]
        m.d.sync += self.r.eq(self.a)
        return m


@pytest.mark.parametrize("clocked", [False, True])
def test_sets_committed_directly_wake_changed_waits_with_pysims_samples(clocked):
    """A testbench's `set` while other testbenches wait on changes (of what it sets and of
    what the design computes from it) commits at once, in and out of the clock loop: the
    waits wake, sample and see the same values as in Amaranth's simulator, a set to the same
    value included."""
    def build():
        dut, log = Incrementer(), []

        async def driver(ctx):
            for values in ([3], [3], [5], [7, 7], [15], [0], [1]):
                for value in values:
                    ctx.set(dut.a, value)
                    log.append(("set", value, ctx.get(dut.b), ctx.get(dut.r)))
                if clocked:
                    await ctx.tick().repeat(2)
                else:
                    await ctx.delay(1e-6)
                log.append(("after", ctx.get(dut.b), ctx.get(dut.c)))

        async def on_a(ctx):
            async for a, b, c in ctx.changed(dut.a).sample(dut.b, dut.c):
                log.append(("a", a, b, c, ctx.get(dut.b)))

        async def on_b(ctx):
            async for b, a in ctx.changed(dut.b).sample(dut.a):
                log.append(("b", b, a, ctx.get(dut.r)))

        async def on_c(ctx):
            while True:
                await ctx.posedge(dut.c)
                log.append(("c", ctx.get(dut.a)))

        return dut, [driver, on_a, on_b, on_c], log

    logs = _both(build, clocks=(("sync", 1e-6),) if clocked else (), background=3)
    assert logs[1] == logs[0]
    assert sum(entry[0] == "b" for entry in logs[0]) == 6


def test_a_falling_edge_run_in_cpp_that_changes_a_watched_signal():
    """A testbench acting at every tick and another waiting on a signal the clock's falling
    edge changes (`pulse` is the clock anded with an input): the falling edge that a tick's
    wait runs in C++ wakes the watcher at its time, as in Amaranth's simulator."""
    logs = []
    for kind in (Simulator, CompiledSimulator):
        dut, log = Watched(), []
        sim = kind(dut)

        async def ticking(ctx):
            ctx.set(dut.en, 1)
            for step in range(40):
                await ctx.tick()
                ctx.set(dut.follow_i, step % 3 == 0)
                log.append(("tick", ctx.get(dut.count), ctx.get(dut.pulse)))

        async def watcher(ctx):
            async for pulse, in ctx.changed(dut.pulse):
                log.append(("pulse", pulse, simulated_time(sim), ctx.get(dut.count),
                            ctx.get(dut.follow_o)))

        sim.add_clock(1e-6)
        sim.add_testbench(ticking)
        sim.add_testbench(watcher, background=True)
        sim.run()
        logs.append(log)
    assert logs[1] == logs[0]
    assert sum(entry[0] == "pulse" for entry in logs[0]) >= 40


def test_ticks_and_repeats_ending_at_an_edge_run_in_cpp():
    """Plain `tick()`s and `repeat`s whose last edge the clock loop runs in C++ (they sample
    nothing), with a change wait waking at some of the same edges and a synchronous reset the
    testbench asserts between them: what each returns or raises, the values read after it and
    the times, as in Amaranth's simulator."""
    def build():
        dut, log = ResettableCounter(target=40), []

        async def ticker(ctx):
            ctx.set(dut.en, 1)
            for step in range(60):
                result = await ctx.tick()
                log.append(("tick", step, *result, ctx.get(dut.count)))
                if step in (20, 45):
                    ctx.set(dut.domain.rst, 1)
                elif step in (21, 46):
                    ctx.set(dut.domain.rst, 0)

        async def repeater(ctx):
            for count in (1, 2, 3, 5, 8, 13, 1, 1, 21):
                try:
                    await ctx.tick().repeat(count)
                    log.append(("repeat", count, ctx.get(dut.count)))
                except DomainReset:
                    log.append(("reset during repeat", count, ctx.get(dut.count)))
            while True:
                try:
                    await ctx.tick().until(dut.at_target)
                    break
                except DomainReset:
                    log.append(("reset during until", ctx.get(dut.count)))
            log.append(("target", ctx.get(dut.count)))

        async def watcher(ctx):
            async for at_target, in ctx.changed(dut.at_target):
                log.append(("at target", at_target, ctx.get(dut.count)))

        return dut, [ticker, repeater, watcher], log

    logs = _both(build, background=1, after=lambda sim, dut: ("end", simulated_time(sim)))
    assert logs[1] == logs[0]
    assert any(entry[0] == "reset during repeat" for entry in logs[0])
