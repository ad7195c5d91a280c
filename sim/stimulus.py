"""Drive a component cycle by cycle from a list of input values and record what it outputs."""

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

__all__ = ["run_cycles"]


def run_cycles(dut, inputs, outputs, *, vcd=None):
    """Simulate ``dut`` for ``len(inputs)`` cycles.

    Parameters
    ----------
    dut : Elaboratable
    inputs : list of sequence of (Value, int)
        What to drive in each cycle; a value keeps what it was last set to.
    outputs : list of Value
        What to record.
    vcd : str or None
        Write a waveform here.

    Returns
    -------
    list of tuple of int
        Per cycle, the outputs during that cycle (after its inputs were applied, before the
        clock edge that ends it).
    """
    top = Module()
    top.domains.sync = ClockDomain()      # the clock is there even for a combinational dut
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    recorded = []

    async def bench(ctx):
        for values in inputs:
            for signal, value in values:
                ctx.set(signal, value)
            recorded.append(tuple(ctx.get(value) for value in outputs))
            await ctx.tick()

    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return recorded
