"""What a line profile costs: a 100,000-cycle run of a design in Amaranth's simulator, plain and
with a :class:`hwgen.sim.LineProfiler` attached (the goal: at most twice the plain time).

The design is the binary-search state machine of the verification suite driven by a seeded
random testbench, so both runs simulate the very same cycles. Plain and profiled runs alternate,
``REPEATS`` times each, and the best time of each counts (the machine is shared and noisy).

    python benchmarks/profile_cost.py [CYCLES [REPEATS]]
"""

import random
import sys
import time

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from hwgen.sim import LineProfiler

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0] + "/tests")
from test_line_profile import DATA, BinarySearch  # noqa: E402  (the suite's design)


def simulate(cycles, profiled):
    dut = BinarySearch()
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    rng = random.Random(14)
    stimulus = [(rng.random() < 0.7, rng.choice(DATA)) for _ in range(cycles)]
    started = time.perf_counter()
    profiler = LineProfiler(sim, dut) if profiled else None

    async def bench(ctx):
        for start, probe in stimulus:
            ctx.set(dut.start, start)
            ctx.set(dut.probe, probe)
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    if profiler is not None:
        profile = profiler.profile()
        assert profile.cycles == cycles
    return time.perf_counter() - started


def main(cycles=100_000, repeats=3):
    times = {False: [], True: []}
    for _ in range(repeats):
        for profiled in (False, True):
            times[profiled].append(simulate(cycles, profiled))
    plain, profiled = min(times[False]), min(times[True])
    print(f"{cycles} cycles, best of {repeats}: plain {plain:.2f} s, profiled {profiled:.2f} s, "
          f"ratio {profiled / plain:.2f}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
