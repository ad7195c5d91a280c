"""A FIFO's flags as flip-flops equal Amaranth's own ``w_rdy`` / ``r_rdy`` in every cycle,
whatever the writes and reads (a read may be asked of an empty FIFO, a write only with room)."""

import random

import pytest
from amaranth.hdl import Elaboratable, Fragment, Module
from amaranth.lib.fifo import SyncFIFO

from hwgen.kernels.fifo_flags import registered_filled, registered_room
from hwgen.sim.stimulus import run_cycles


class _Flagged(Elaboratable):
    def __init__(self, depth):
        self.fifo = SyncFIFO(width=4, depth=depth)
        self.room = self.filled = None

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = self.fifo
        self.room = registered_room(m, "fifo", self.fifo)
        self.filled = registered_filled(m, "fifo", self.fifo)
        return m


@pytest.mark.parametrize("depth", [2, 3, 5, 16])
def test_registered_flags_equal_the_fifos_own(depth):
    dut = _Flagged(depth)
    fragment = Fragment.get(dut, None)      # the flags exist once it is elaborated
    fifo = dut.fifo
    rng = random.Random(depth)
    # Phases that lean to writing, then to reading, so the FIFO fills and drains; a write only
    # with room, by a count kept here independently of the flags under test.
    level, inputs = 0, []
    for phase in range(8):
        p_write, p_read = (0.8, 0.3) if phase % 2 == 0 else (0.3, 0.8)
        for _ in range(8 * depth):
            write = level < depth and rng.random() < p_write
            read = rng.random() < p_read
            inputs.append([(fifo.w_en, int(write)), (fifo.r_en, int(read)), (fifo.w_data, 5)])
            level += int(write) - int(read and level > 0)
    records = run_cycles(fragment, inputs, [fifo.w_rdy, fifo.r_rdy, dut.room, dut.filled,
                                            fifo.level])
    assert {r[4] for r in records} >= {0, depth}, "the stimulus must reach empty and full"
    for cycle, (w_rdy, r_rdy, room, filled, _) in enumerate(records):
        assert (room, filled) == (w_rdy, r_rdy), f"cycle {cycle}"
