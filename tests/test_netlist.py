"""The estimator's netlist: its own emitter builds what Amaranth's netlist emitter builds."""

import warnings

import pytest
from amaranth.hdl import (Array, Cat, ClockDomain, ClockSignal, Fragment, Instance, Module,
                          Mux, ResetSignal, Signal, signed)
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from hwgen.boards import get_board
from hwgen.build import design_ports
from hwgen.catalog import make_window_filter
from hwgen.resources.estimate import count_netlist, count_primitives
from hwgen.resources import netlist
from hwgen.resources.netlist import EmitterFallbackWarning, _Unsupported, emit, from_amaranth
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import gemm
from hwgen.sim import instrument_pe


class Assorted(wiring.Component):
    """Every kind of value and statement the emitter handles, each driving an output."""

    def __init__(self):
        super().__init__({
            "a": In(8), "b": In(signed(6)), "sel": In(3), "en": In(1),
            "y_arith": Out(160), "y_select": Out(16), "y_part": Out(8), "y_mem": Out(16),
            "y_inst": Out(4), "y_fast": Out(8), "y_split": Out(8), "y_array": Out(12),
        })

    def elaborate(self, platform):
        m = Module()
        m.domains.fast = ClockDomain(async_reset=True)
        a, b, sel = self.a, self.b, self.sel
        # Signed and unsigned arithmetic, comparisons, shifts, division, reductions.
        arith = Cat(
            a + b, b - a, -b, ~a, a * b, a << sel, b >> sel, a // (sel + 1), b % (sel + 1),
            a < b, b >= 3, b == -2, a != b, a.any(), a.all(), a.xor(), a.bool(),
            Mux(sel, a, b), a & b, a | 5, b ^ a)
        assert len(arith) <= len(self.y_arith)
        # An unconditional assignment after a conditional one: it wins, as the last one does.
        last = Signal(8)
        with m.If(self.en):
            m.d.comb += last.eq(a)
        m.d.comb += last.eq(sel)
        m.d.comb += self.y_arith.eq(Cat(arith, last))
        # Switch with a default, registers with enables and resets, a reset-less register.
        plain, kept = Signal(8), Signal(8, reset_less=True)
        with m.Switch(sel):
            with m.Case(0, 1):
                m.d.sync += plain.eq(a)
            with m.Case("1-0"):
                m.d.sync += plain[2:6].eq(b)
            with m.Default():
                with m.If(self.en):
                    m.d.sync += plain.eq(plain + 1)
        m.d.sync += kept.eq(Mux(self.en, kept, a ^ plain))
        m.d.comb += self.y_select.eq(Cat(plain, kept))
        # Variable bit and word selects on both sides.
        word = Signal(8)
        m.d.comb += word.word_select(sel[:2], 2).eq(a.bit_select(sel, 2))
        m.d.comb += self.y_part.eq(word ^ a.word_select(sel[:1], 4))
        # Arrays (switch values) on both sides.
        table = Array(Signal(4, name=f"t{i}") for i in range(3))
        m.d.sync += table[sel].eq(a[:4])
        m.d.comb += self.y_array.eq(Cat(*table))
        # A memory with synchronous (transparent) and asynchronous reads.
        m.submodules.mem = mem = memory.Memory(shape=8, depth=16, init=range(16))
        write = mem.write_port(granularity=4)
        read = mem.read_port(transparent_for=[write])
        peek = mem.read_port(domain="comb")
        m.d.comb += [write.addr.eq(a), write.data.eq(b), write.en.eq(Cat(self.en, ~self.en)),
                     read.addr.eq(sel), peek.addr.eq(a[4:]),
                     self.y_mem.eq(Cat(read.data, peek.data))]
        # An instance, its clock and reset pins (one of a domain nothing else uses), an output
        # split over two signals.
        low, high = Signal(2), Signal(2)
        m.submodules.box = Instance("BOX", i_C=ClockSignal(), i_R=ResetSignal(), i_A=a,
                                    i_P=ClockSignal("pixel"), o_Y=Cat(low, high))
        m.d.comb += self.y_inst.eq(Cat(high, low))
        # A second clock domain with an asynchronous reset, and a signal two domains drive.
        fast = Signal(8)
        m.d.fast += fast.eq(fast + a)
        split = Signal(8)
        m.d.sync += split[:4].eq(a[:4])
        m.d.fast += split[4:].eq(fast[4:])
        m.d.comb += [self.y_fast.eq(fast), self.y_split.eq(split)]
        return m


class LocalDomain(wiring.Component):
    """A local clock domain: left to Amaranth's emitter."""

    def __init__(self):
        super().__init__({"a": In(8), "y": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.domains.here = ClockDomain(local=True)
        m.d.here += self.y.eq(self.y + self.a)
        return m


def window_filter(buffer, unroll):
    return make_window_filter("dilation", size=(3, 3), mask="rect", pixel_bits=8, width=64,
                              height=16, unroll=unroll, buffer=buffer, pipeline=True,
                              tree_stages=None, credits=None)


def both_ways(make, platform=None):
    """Counts through this project's emitter and through Amaranth's, each on a fresh design."""
    design = make()
    lean = count_netlist(emit(Fragment.get(design, platform), design_ports(design)))
    design = make()
    amaranth = count_netlist(from_amaranth(Fragment.get(design, platform), design_ports(design)))
    return lean, amaranth


def test_every_construct_is_emitted_as_amaranth_emits_it():
    lean, amaranth = both_ways(Assorted)
    assert lean == amaranth
    kinds, memories, _, unmodelled = lean
    assert memories == [(16, 8, "async")]
    assert unmodelled["instance BOX"] == 1 and not any("*" in what for what in unmodelled)
    # 8 bits unsigned times 6 bits signed: both signed as Amaranth writes them, 9 x 6 bits.
    assert kinds["mul", (9, 6, 14, True)] == 1
    assert kinds["shift", (15, 3)] == 1 and kinds["shift", (6, 3)] == 1


@pytest.mark.parametrize("buffer", ["none", "smart", "line"])
@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t"])
def test_window_filters_are_emitted_as_amaranth_emits_them(buffer, board):
    platform = get_board(board).elaboration_platform()
    lean, amaranth = both_ways(lambda: window_filter(buffer, unroll=4), platform)
    assert lean == amaranth
    assert lean[0]    # something was counted


@pytest.mark.parametrize("make", [
    lambda: instrument_pe(window_filter("line", unroll=2), timeline_depth=64),
    lambda: Pipeline(gemm("blocked", dim=4, threads=2, element_bits=16, frac_bits=0, lanes=2)),
], ids=["instrumented", "pipeline"])
def test_larger_designs_are_emitted_as_amaranth_emits_them(make):
    lean, amaranth = both_ways(make)
    assert lean == amaranth
    assert lean[0]


def test_what_the_emitter_leaves_goes_through_amaranth_without_a_warning():
    design = LocalDomain()
    with pytest.raises(_Unsupported):
        emit(Fragment.get(design, None), design_ports(design))
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmitterFallbackWarning)
        kinds, _, _, _ = count_primitives(LocalDomain())
    assert dict(kinds) == {("add", 9): 1, ("ff", 8): 1}


@pytest.mark.parametrize("internal", ["emit_memory", "rhs_switch", "top_ports"])
def test_any_failure_of_the_emitter_falls_back_to_amaranths_with_a_warning(monkeypatch, internal):
    platform = get_board("ulx3s-85f").elaboration_platform()
    design = window_filter("line", unroll=4)
    expected = count_netlist(from_amaranth(Fragment.get(design, platform), design_ports(design)))

    def broken(*args, **kwargs):
        raise AttributeError("'MemoryInstance' object has no attribute '_data'")
    monkeypatch.setattr(netlist._Emitter, internal, broken)
    with pytest.warns(EmitterFallbackWarning, match=r"emitter failed \(AttributeError: "
                                                    r"'MemoryInstance' object has no attribute"):
        counted = count_primitives(window_filter("line", unroll=4), platform=platform)
    assert counted == expected
    assert counted[0]


def test_a_driver_conflict_is_amaranths_error():
    class Conflict(wiring.Component):
        def __init__(self):
            super().__init__({"a": In(1), "y": Out(1)})

        def elaborate(self, platform):
            m = Module()
            m.d.comb += self.y.eq(self.a)
            m.submodules.box = Instance("BOX", o_Y=self.y)
            return m

    with pytest.raises(Exception, match="multiple drivers"):
        count_primitives(Conflict())
