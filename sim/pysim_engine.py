"""The pysim engine: jobs run in Amaranth's simulator, with the memory server, the job hosts and
the HMM hosts as its testbenches (:class:`hwgen.sim.engine.Engine`)."""

import sys
from contextlib import contextmanager, nullcontext

import numpy as np
from amaranth.hdl import Module
from amaranth.sim import Simulator

from ..instrument import Instrumented
from ..kernels.interconnect import ChannelPort
from .protocol import Engine, JobResult
from .hmm_host import HMMHost
from .memory import MemoryServer, PortTraffic

__all__ = ["PysimEngine"]

# Amaranth's simulator compiles a concatenation of n parts into a Python expression nested n
# deep, and a PE of U lanes concatenates U elements: from U = 256 on, Python's default limit is
# too low to compile it.
_SIMULATOR_RECURSION_LIMIT = 20_000


@contextmanager
def _recursion_limit(limit):
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _simulate(sim, *, vcd, monitors, on_simulator):
    for monitor in monitors:
        sim.add_testbench(monitor, background=True)
    if on_simulator is not None:
        on_simulator(sim)
    with sim.write_vcd(vcd) if vcd else nullcontext():
        sim.run()


class PysimEngine(Engine):
    """Amaranth's simulator: slow, and the only engine that runs ``monitors`` and
    ``on_simulator`` (observers of the simulator itself)."""

    name = "pysim"
    observable = True
    #: What a run's ``engine`` field holds.
    INFO = {"name": "pysim"}

    def run_pes(self, designs, storage, *, params, memory, vcd=None, max_cycles=None,
                record_addresses=False, progress=None, drain_interval_cycles=None, monitors=(),
                on_simulator=None):
        if isinstance(storage, np.ndarray):
            # Amaranth's simulator serves Python ints faster.
            served = storage.tolist()
            results = self.run_pes(designs, served, params=params, memory=memory, vcd=vcd,
                                   max_cycles=max_cycles, record_addresses=record_addresses,
                                   progress=progress,
                                   drain_interval_cycles=drain_interval_cycles,
                                   monitors=monitors, on_simulator=on_simulator)
            storage[:] = served
            return results
        designs = list(designs)
        bare = [d.design if isinstance(d, Instrumented) else d for d in designs]
        # A system's memory channels are served like PEs' ports.
        ports = [ChannelPort.ports_of(design) for design in bare]
        server = MemoryServer(memory, storage, [p for group in ports for p in group],
                              record_addresses=record_addresses)
        first = [sum(len(group) for group in ports[:i]) for i in range(len(ports))]
        if len(designs) == 1:
            top = designs[0]
        else:
            top = Module()
            for index, design in enumerate(designs):
                top.submodules[f"pe{index}"] = design
        with _recursion_limit(_SIMULATOR_RECURSION_LIMIT):
            sim = Simulator(top)
        sim.add_clock(1e-8)
        sim.add_process(server.process())
        cycles = [0] * len(bare)
        readouts = [None] * len(bare)
        finished = []

        async def host(ctx):
            for pe, values in zip(bare, params):
                for name, value in values.items():
                    ctx.set(getattr(pe.ctrl, name), value)
                ctx.set(pe.ctrl.start, 1)
            await ctx.tick()
            for pe in bare:
                ctx.set(pe.ctrl.start, 0)
            running = set(range(len(bare)))
            elapsed = 0
            sampled = [s for pe in bare for s in (pe.ctrl.busy, pe.ctrl.done)]
            async for _, _, *values in ctx.tick().sample(*sampled):
                elapsed += 1
                for index in list(running):
                    cycles[index] += values[2 * index]
                    if values[2 * index + 1]:
                        running.discard(index)
                if not running:
                    break
                if progress is not None and not elapsed & 0xFFF:
                    progress(elapsed)
                if max_cycles is not None and elapsed > max_cycles:
                    raise RuntimeError(f"a PE was still busy after {max_cycles} cycles")
            finished.append(True)

        def hmm_host(index, design):
            async def read(ctx):
                readouts[index] = await HMMHost(ctx, design.hmm, design.layout).read_when_done(
                    lambda: bool(finished), drain_interval_cycles=drain_interval_cycles,
                    max_cycles=max_cycles)
            return read

        sim.add_testbench(host)
        for index, design in enumerate(designs):
            if isinstance(design, Instrumented):
                sim.add_testbench(hmm_host(index, design))
        _simulate(sim, vcd=vcd, monitors=monitors, on_simulator=on_simulator)
        return [JobResult(cycles[i],
                          PortTraffic.total(server.traffic(first[i] + c)
                                            for c in range(len(ports[i]))),
                          readouts[i]) for i in range(len(bare))], self.INFO

    def run_threads(self, design, storage, *, params, threads, launch_delay_cycles, memory,
                    drain_interval_cycles, max_cycles=None, vcd=None, progress=None,
                    monitors=(), on_simulator=None):
        pe = design.design
        delay = launch_delay_cycles
        server = MemoryServer(memory, storage, [pe])
        sim = Simulator(design)
        sim.add_clock(1e-8)
        sim.add_process(server.process())
        job = {"finished": False, "launch_cycles": []}

        async def software(ctx):
            for name, value in params.items():
                ctx.set(getattr(pe.ctrl, name), value)
            ctx.set(pe.ctrl.start, 1)
            await ctx.tick()
            ctx.set(pe.ctrl.start, 0)

            launch_cycles = job["launch_cycles"]
            offered = False

            def offer(cycle):
                nonlocal offered
                thread = len(launch_cycles)
                if not offered and thread < threads and cycle >= thread * delay:
                    ctx.set(pe.launch.payload, thread)
                    ctx.set(pe.launch.valid, 1)
                    offered = True

            cycle = 0
            offer(0)
            async for _, _, busy, done, ready in ctx.tick().sample(pe.ctrl.busy, pe.ctrl.done,
                                                                   pe.launch.ready):
                if not busy:
                    raise RuntimeError("the pipeline is not busy after start")
                if offered and ready:
                    launch_cycles.append(cycle)
                    offered = False
                    ctx.set(pe.launch.valid, 0)
                cycle += 1
                if done:
                    break
                if progress is not None and not cycle % 1024:
                    progress(cycle)
                if max_cycles is not None and cycle > max_cycles:
                    raise RuntimeError(f"the pipeline was still busy after {max_cycles} cycles")
                offer(cycle)
            job["finished"] = True

        async def profile(ctx):
            hmm = HMMHost(ctx, design.hmm, design.layout)
            job["readout"] = await hmm.read_when_done(
                lambda: job["finished"], drain_interval_cycles=drain_interval_cycles,
                max_cycles=max_cycles)

        sim.add_testbench(software)
        sim.add_testbench(profile)
        _simulate(sim, vcd=vcd, monitors=monitors, on_simulator=on_simulator)
        return job["readout"], job["launch_cycles"], self.INFO
