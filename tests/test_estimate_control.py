"""A program's own structures priced whole: the parking stages' round-robin thread schedulers
(``scheduler``) and a restoring divider's conditional subtraction (``csub``)."""

import pytest
from amaranth.hdl import Fragment, Module, Mux
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
