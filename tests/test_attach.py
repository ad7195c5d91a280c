"""Auto-attach on a design written without the HMM in mind: its state machines and streams are
found, measured, and the design behaves exactly as it does bare."""

import re

import pytest
from amaranth.back import verilog
from amaranth.hdl import Elaboratable, Fragment, Module, ResetInserter, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hwgen.build import design_ports
from hwgen.instrument import DesignView, attach, probe
from hwgen.instrument._amaranth import generated_fsms, subfragments
from hwgen.sim import HMMHost


class Producer(wiring.Component):
    """Sends a count in bursts of four, pausing between them."""
    o: Out(stream.Signature(8))
    go: In(1)

    def elaborate(self, platform):
        m = Module()
        count = Signal(8)
        pause = Signal(2)
        with m.FSM(name="proto"):
            with m.State("IDLE"):
                with m.If(self.go):
                    m.next = "SEND"
            with m.State("SEND"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(count)]
                with m.If(self.o.ready):
                    m.d.sync += count.eq(count + 1)
                    with m.If(count[:2] == 3):
                        m.next = "PAUSE"
            with m.State("PAUSE"):
                m.d.sync += pause.eq(pause + 1)
                with m.If(pause == 2):
                    m.next = "SEND"
        return m


class Consumer(wiring.Component):
    """Takes the stream into a FIFO when a pseudo-random pattern allows and drains it slowly."""
    i: In(stream.Signature(8))
    last: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=8, depth=16)
        lfsr = Signal(16, init=0x1D0F)
        m.d.sync += lfsr.eq((lfsr << 1) | (lfsr[15] ^ lfsr[13] ^ lfsr[12] ^ lfsr[10]))
        m.d.comb += [
            fifo.w_data.eq(self.i.payload),
            fifo.w_en.eq(self.i.valid & lfsr[0]),
            self.i.ready.eq(fifo.w_rdy & lfsr[0]),
            fifo.r_en.eq(lfsr[1] & lfsr[2] & lfsr[3]),
        ]
        with m.If(fifo.r_en & fifo.r_rdy):
            m.d.sync += self.last.eq(fifo.r_data)
        return m


class UserDesign(wiring.Component):
    go: In(1)
    restart: In(1)
    last: Out(8)

    def elaborate(self, platform):
        m = Module()
        producer, consumer = Producer(), Consumer()
        # A transformer: the producer's FSM can only be found by its state signal's decoder.
        m.submodules.producer = ResetInserter(self.restart)(producer)
        m.submodules.consumer = consumer
        wiring.connect(m, producer.o, consumer.i)
        m.d.comb += [producer.go.eq(self.go), self.last.eq(consumer.last)]
        return m


def test_view_finds_fsms_through_transformers_and_each_stream_once():
    design = UserDesign()
    fragment = Fragment.get(design, None)
    producer = dict((name, sub) for sub, name in subfragments(fragment))["producer"]
    assert generated_fsms(producer) == {}       # the transformer dropped the record
    view = DesignView(fragment)
    assert [(f.name, f.states) for f in view.fsms] == [("producer.proto",
                                                        ("IDLE", "SEND", "PAUSE"))]
    assert [s.name for s in view.streams] == ["consumer.fifo.r", "consumer.fifo.w", "producer.o"]
    assert view.signal("consumer.fifo.level").name == "level"
    with pytest.raises(KeyError, match="no submodule 'nothere'"):
        view.signal("nothere.x")
    with pytest.raises(KeyError, match="no signal named 'nothing'.*level"):
        view.signal("consumer.fifo.nothing")


def test_view_finds_generated_fsms_and_ignores_enum_and_plain_signals():
    class Plain(Elaboratable):
        def elaborate(self, platform):
            m = Module()
            counter = Signal(3, name="count_state")     # named like an FSM, no decoder
            m.d.sync += counter.eq(counter + 1)
            with m.FSM(name="main"):
                with m.State("A"):
                    with m.If(counter == 7):
                        m.next = "B"
                with m.State("B"):
                    m.next = "A"
            return m

    view = DesignView(Fragment.get(Plain(), None))
    assert [(f.name, f.states, f.domain) for f in view.fsms] == [("main", ("A", "B"), "sync")]
    assert view.streams == ()


def simulate(design, cycles, *, watch=()):
    """Run ``design`` (bare or instrumented) for ``cycles`` with go raised after 3 cycles and a
    restart pulse at cycle 40, recording ``last`` and ``watch`` in every cycle. An instrumented
    design is then frozen (in the next cycle, which is recorded and counted too) and read."""
    sim = Simulator(design)
    sim.add_clock(1e-8)
    trace = {"last": [], "watch": []}

    async def bench(ctx):
        for cycle in range(cycles + 1):
            ctx.set(design.go, cycle >= 3)
            ctx.set(design.restart, cycle == 40)
            trace["last"].append(ctx.get(design.last))
            trace["watch"].append(tuple(ctx.get(v) for v in watch))
            if cycle == cycles:
                break
            await ctx.tick()
        if hasattr(design, "hmm"):
            host = HMMHost(ctx, design.hmm, design.layout)
            await host.command("freeze", "snapshot")
            trace["readout"] = await host.read_all(freeze=False)

    sim.add_testbench(bench)
    sim.run()
    return trace


def test_attached_hmm_measures_the_user_design_and_leaves_it_unchanged():
    bare = simulate(UserDesign(), 300)

    design = UserDesign()
    high = probe.Count("fifo_above_12", lambda d: d["consumer.fifo.level"] > 12)
    inst = attach(design, [high])
    assert inst.design is design and inst.last is design.last
    assert {name: m for name, m in inst.signature.members.items() if name != "hmm"} == \
        dict(design.signature.members)

    # The observer samples the design's own signals, found by the view the HMM was built on.
    view = inst.view
    streams = list(view.streams)
    watch = [view.fsms[0].signal, view.signal("consumer.fifo.level")]
    watch += [v for s in streams for v in (s.valid, s.ready)]
    run = simulate(inst, 300, watch=watch)
    assert run["last"] == bare["last"]

    observed, readout = run["watch"], run["readout"]
    assert readout["cycles"] == len(observed) == 301
    states = [row[0] for row in observed]
    assert readout.fsms()["fsm.producer.proto"] == {
        name: states.count(index) for index, name in enumerate(["IDLE", "SEND", "PAUSE"])}
    assert readout["fifo_above_12"] == sum(row[1] > 12 for row in observed) > 0
    for k, s in enumerate(streams):
        handshakes = [(row[2 + 2 * k], row[3 + 2 * k]) for row in observed]
        assert readout.streams()[f"stream.{s.name}"] == {
            "transferring": sum(v and r for v, r in handshakes),
            "blocking": sum(v and not r for v, r in handshakes),
            "idle": sum(not v for v, _ in handshakes),
        }
    assert readout.streams()["stream.producer.o"]["blocking"] > 0


def test_instrumented_design_converts_to_verilog_with_the_hmm_port_every_time():
    inst = attach(UserDesign())
    ports = design_ports(inst)
    assert {"go", "restart", "last", "hmm__addr", "hmm__rdata"} <= set(ports)
    first = verilog.convert(inst, name="top", ports=ports, emit_src=False)
    second = verilog.convert(inst, name="top", ports=ports, emit_src=False)
    assert first == second
    assert re.search(r"input \[\d+:0\] hmm__addr", first)
    assert re.search(r"output \[31:0\] hmm__rdata", first)


def test_attach_with_a_known_layout_attaches_the_hmm_only_when_needed():
    known = attach(UserDesign()).layout
    inst = attach(UserDesign(), layout=known)
    assert not inst.attached and inst.layout is known
    # Simulated, it is elaborated: the HMM is attached then and measures as attach()'s does.
    readout = simulate(inst, 120)["readout"]
    assert inst.attached
    assert readout == simulate(attach(UserDesign()), 120)["readout"]
    assert readout.fsms()["fsm.producer.proto"]["SEND"] > 0
    # A layout the HMM does not have is refused once the HMM is attached.
    wrong = attach(UserDesign(), layout=attach(UserDesign(), fsms=False).layout)
    assert not wrong.attached
    with pytest.raises(RuntimeError, match="another layout than the one given"):
        wrong.view


def test_attach_refuses_a_design_with_an_hmm_member():
    class Clash(wiring.Component):
        hmm: In(1)

        def elaborate(self, platform):
            return Module()

    with pytest.raises(ValueError, match="already has a member named 'hmm'"):
        attach(Clash())


def test_attach_keeps_counts_in_registers_on_an_ice40_however_its_platform_names_the_family():
    """The iCE40 has no LUT RAM, so ``bank=None`` keeps counts in registers there: for hwgen's
    board ("ice40") and Amaranth's SiliconBlue platform ("iCE40") alike; ECP5 banks them."""
    from amaranth_boards.icebreaker import ICEBreakerPlatform
    from amaranth_boards.ulx3s import ULX3S_85F_Platform

    from hwgen.catalog import make_window_filter, resolve_board

    def layout_on(platform):
        pe = make_window_filter("dilation", width=32, height=16, unroll=1, buffer="line")
        return attach(pe, platform=platform).layout

    ours = layout_on(resolve_board("icebreaker").elaboration_platform())
    amaranths = layout_on(ICEBreakerPlatform())
    banked = layout_on(ULX3S_85F_Platform())
    assert ours.layout_id == amaranths.layout_id != banked.layout_id
    assert ours.fields[0].name == banked.fields[0].name == "cycles"
    assert ours.fields[0].offset < banked.fields[0].offset     # the bank's counts follow its tables
