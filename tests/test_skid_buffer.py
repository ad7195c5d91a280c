"""The two-entry buffer in flip-flops says a cycle ahead whether it will hold a beat."""

import random

import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib.fifo import SyncFIFO

from hwgen.kernels.skid_buffer import SkidBuffer
from hwgen.sim.stimulus import run_cycles


class _Pair(Elaboratable):
    """A skid buffer and Amaranth's two-entry SyncFIFO fed the same writes and reads."""
    def __init__(self):
        self.buffer = SkidBuffer(width=4)
        self.reference = SyncFIFO(width=4, depth=2)

    def elaborate(self, platform):
        m = Module()
        m.submodules.buffer, m.submodules.reference = self.buffer, self.reference
        return m


@pytest.mark.parametrize("seed", [1, 2])
def test_the_next_flags_are_what_the_reference_holds_in_the_next_cycle(seed):
    """Under random writes (also to a full buffer) and reads (also of an empty one),
    ``r_rdy_next`` and ``w_rdy_next`` in each cycle are the ``r_rdy`` and ``w_rdy`` of
    Amaranth's ``SyncFIFO(depth=2)`` in the cycle after."""
    rng = random.Random(seed)
    dut = _Pair()
    fifos = (dut.buffer, dut.reference)
    inputs = []
    for cycle in range(400):
        p_write = 0.8 if cycle // 25 % 2 == 0 else 0.3
        write, read = rng.random() < p_write, rng.random() < 1.1 - p_write
        inputs.append([(fifo.w_en, int(write)) for fifo in fifos]
                      + [(fifo.r_en, int(read)) for fifo in fifos]
                      + [(fifo.w_data, rng.randrange(16)) for fifo in fifos])
    records = run_cycles(dut, inputs, [dut.buffer.r_rdy_next, dut.buffer.w_rdy_next,
                                       dut.reference.r_rdy, dut.reference.w_rdy,
                                       dut.reference.level])
    assert {record[-1] for record in records} == {0, 1, 2}, "the stimulus must fill and drain"
    for cycle in range(len(records) - 1):
        assert records[cycle][:2] == records[cycle + 1][2:4], f"cycle {cycle}"
