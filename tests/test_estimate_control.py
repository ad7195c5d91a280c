"""A program's own structures priced whole: the parking stages' round-robin thread schedulers
(``scheduler``) and a restoring divider's conditional subtraction (``csub``)."""

import pytest
from amaranth.hdl import Fragment, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hwgen.boards import cost_table
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.pipeline.arbiter import RoundRobin
from hwgen.kernels.pipeline.parking import ParkingStage
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.estimate import count_primitives, price


class ConditionalSubtraction(wiring.Component):
    """``y = a - b if a >= b else a``; with ``share``, ``a - b`` is an output too."""

    def __init__(self, width, share=False):
        self._share = share
        super().__init__({"a": In(width), "b": In(width), "y": Out(width),
                          "d": Out(width + 1)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(Mux(self.a >= self.b, self.a - self.b, self.a))
        if self._share:
            m.d.comb += self.d.eq(self.a - self.b)
        return m


class TakenRoundRobin(wiring.Component):
    """A round robin whose every grant is taken, as a parking stage's scheduler."""

    def __init__(self, threads):
        self._threads = threads
        super().__init__({"requests": In(threads), "grant": Out(threads), "valid": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.arbiter = arbiter = RoundRobin(self._threads)
        m.d.comb += [arbiter.requests.eq(self.requests), arbiter.accept.eq(1),
                     self.grant.eq(arbiter.grant), self.valid.eq(arbiter.valid)]
        return m


def schedulers_in(design):
    """Round robins of ``design``'s hierarchy whose every grant is taken, found by
    elaborating it, not in its netlist: all but the memory ports' (they hold their grant) and
    the locks' (they wait for the lock)."""
    found = []

    def walk(fragment):
        for sub, name, _src in fragment.subfragments:
            found.extend(o for o in sub.origins or () if isinstance(o, RoundRobin)
                         and not o.hold and not name.startswith("lock_"))
            walk(sub)

    walk(Fragment.get(design, None))
    return found


@pytest.mark.parametrize("threads", [2, 5, 8, 16])
def test_a_round_robin_whose_grants_are_all_taken_is_one_scheduler_of_its_threads(threads):
    kinds, _, _, _ = count_primitives(TakenRoundRobin(threads))
    assert kinds["scheduler", threads] == 1
    # Its search, update and any-request are in the scheduler: left is its register, whose
    # enable is its valid (anded with a constant accept: a wire).
    assert {key for key in kinds if key[0] != "ff"} == {("scheduler", threads)}


@pytest.mark.parametrize("hold", [False, True])
def test_a_round_robin_that_waits_for_its_consumer_is_counted_cell_by_cell(hold):
    kinds, _, _, _ = count_primitives(RoundRobin(4, hold=hold))
    assert not any(kind == "scheduler" for kind, _ in kinds)


@pytest.mark.parametrize("threads, sources", [(4, 1), (8, 2)])
def test_a_parking_stage_has_one_scheduler(threads, sources):
    context = data.StructLayout({"tid": range(threads), "x": 16})
    kinds, _, _, _ = count_primitives(ParkingStage(context, threads=threads, sources=sources))
    assert kinds["scheduler", threads] == 1


@pytest.mark.parametrize("job", [GemmJob("naive", dim=8, threads=8),
                                 PiJob(steps=64, threads=4, frac_bits=12)])
def test_a_program_has_a_scheduler_per_round_robin_that_does_not_hold(job):
    expected = schedulers_in(Pipeline(job.program))
    kinds, _, _, _ = count_primitives(Pipeline(job.program))
    assert expected
    assert sum(n for (kind, _), n in kinds.items() if kind == "scheduler") == len(expected)


def test_a_conditional_subtraction_is_one_csub():
    kinds, _, _, _ = count_primitives(ConditionalSubtraction(20))
    assert dict(kinds) == {("csub", 20): 1}


def test_a_subtraction_read_elsewhere_is_not_folded_into_a_csub():
    kinds, _, _, _ = count_primitives(ConditionalSubtraction(20, share=True))
    assert not any(kind == "csub" for kind, _ in kinds)
    assert kinds["add", 21] == 1


def test_the_pi_divider_is_a_csub_of_its_remainder():
    job = PiJob(steps=64, threads=8, frac_bits=20)
    kinds, _, _, _ = count_primitives(Pipeline(job.program))
    # The remainder is 2 f + 3 bits: 43 at 20 fraction bits.
    assert kinds["csub", 43] == 1


@pytest.mark.parametrize("family", ["ecp5", "xilinx-xc7", "xilinx-xcup", "ice40"])
def test_a_scheduler_is_priced_at_its_characterised_cost_without_its_register(family):
    table = cost_table(family)
    entry = table["operators"]["scheduler"]
    for threads, luts in zip(entry["widths"], entry["lut"]):
        cost = price(table, {("scheduler", threads): 1}, [])
        assert cost["lut"] == pytest.approx(luts)
        assert cost["ff"] == 0      # the last thread served is counted as ff


class LoopTest(wiring.Component):
    """A counter set to a ``tid_bits``-bit thread id in a 5-bit register, then the test
    ``k < 8`` choosing ``a`` or ``b``: a loop's entry test, which Yosys folds when the thread
    id cannot reach 8."""

    def __init__(self, tid_bits):
        super().__init__({"tid": In(tid_bits), "a": In(8), "b": In(8), "y": Out(8)})

    def elaborate(self, platform):
        m = Module()
        k = Signal(5)
        m.d.sync += k.eq(self.tid)
        m.d.comb += self.y.eq(Mux(k < 8, self.a, self.b))
        return m


def test_a_comparison_its_constant_bits_decide_is_folded_with_what_it_chooses():
    # k's top bits are stuck at 0 with a 3-bit id: k < 8 always holds, y is a wire of a, and
    # neither the register nor the comparison nor the multiplexer is left.
    kinds, _, _, _ = count_primitives(LoopTest(3))
    assert dict(kinds) == {}
    kinds, _, _, _ = count_primitives(LoopTest(4))
    assert dict(kinds) == {("ff", 4): 1, ("cmp_const", 5): 1, ("mux", 8): 1}


class DeadSource(wiring.Component):
    """A parking stage of ``sources`` sources whose first is never valid when ``dead``."""

    def __init__(self, threads, sources, dead):
        self._stage = ParkingStage(data.StructLayout({"tid": range(threads), "x": 16}),
                                   threads=threads, sources=sources)
        self._dead = dead
        super().__init__({"valid": In(sources), "ctx": In(self._stage.arrive_ctx.shape()),
                          "issue": In(threads), "complete": In(threads),
                          "out": Out(self._stage.out_ctx.shape()), "out_valid": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.stage = stage = self._stage
        valid = self.valid & ~1 if self._dead else self.valid
        m.d.comb += [stage.arrive_valid.eq(valid), stage.arrive_ctx.eq(self.ctx),
                     stage.issue.eq(self.issue), stage.complete.eq(self.complete),
                     self.out.eq(stage.out_ctx), self.out_valid.eq(stage.out_valid)]
        return m


def test_a_parking_stage_loads_its_slots_only_from_sources_that_can_be_valid():
    # Two sources, the first never valid: each slot is loaded from the second alone, as from a
    # single source (no slot multiplexer), where two live sources need one per context bit.
    def slot_mux_bits(dead):
        kinds = count_primitives(DeadSource(4, 2, dead=dead))[0]
        return sum(w * n for (k, w), n in kinds.items() if k == "mux_ff")
    # 4 slots of 18 context bits (a 2-bit tid and x).
    assert slot_mux_bits(dead=False) - slot_mux_bits(dead=True) == 4 * 18
