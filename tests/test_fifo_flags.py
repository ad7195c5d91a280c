"""A FIFO whose flags are flip-flops, and the two-entry buffer in flip-flops, behave as Amaranth's
``SyncFIFO`` in every cycle, whatever the writes and reads (a read may be asked of an empty FIFO,
a write of a full one)."""

import random

import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib.fifo import SyncFIFO

from hwgen.kernels.fifo_flags import FlaggedFIFO
from hwgen.kernels.skid_buffer import SkidBuffer
from hwgen.sim.stimulus import run_cycles


def _writes_and_reads(depth, rng, data=lambda rng: 5, when_full=False):
    """``(write, read, data)`` per cycle, in phases that lean to writing, then to reading, so a
    FIFO of ``depth`` fills and drains; a write only with room, by a count kept here
    independently of the flags under test, unless ``when_full`` (a read may be asked of an
    empty FIFO)."""
    level = 0
    for phase in range(8):
        p_write, p_read = (0.8, 0.3) if phase % 2 == 0 else (0.3, 0.8)
        for _ in range(8 * depth):
            write = (when_full or level < depth) and rng.random() < p_write
            read = rng.random() < p_read
            yield write, read, data(rng)
            level += int(write and level < depth) - int(read and level > 0)


class _Pair(Elaboratable):
    """A FIFO under test and Amaranth's SyncFIFO fed the same writes and reads."""
    def __init__(self, depth, fifo=None):
        self.flagged = FlaggedFIFO(width=4, depth=depth) if fifo is None else fifo
        self.reference = SyncFIFO(width=4, depth=depth)

    def elaborate(self, platform):
        m = Module()
        m.submodules.flagged, m.submodules.reference = self.flagged, self.reference
        return m


@pytest.mark.parametrize("when_full", [False, True])
@pytest.mark.parametrize("depth", [2, 3, 16, 17, 40])
def test_the_flagged_fifo_behaves_as_amaranths_sync_fifo(depth, when_full):
    """Cycle for cycle, also when writes are offered to a full FIFO (both ignore them): up to
    16 entries its occupancy is a thermometer code, beyond a count."""
    _check_against_sync_fifo(_Pair(depth), depth, when_full)


@pytest.mark.parametrize("depth", [2, 16, 17])
def test_a_credited_flagged_fifo_behaves_as_amaranths_sync_fifo(depth):
    """A credited FIFO's writer never writes into it when full; for such writers it is
    ``SyncFIFO`` cycle for cycle (its write enable is ``w_en`` alone)."""
    _check_against_sync_fifo(_Pair(depth, FlaggedFIFO(width=4, depth=depth, credited=True)),
                             depth, when_full=False)


@pytest.mark.parametrize("when_full", [False, True])
def test_the_skid_buffer_behaves_as_a_two_entry_sync_fifo(when_full):
    """Cycle for cycle: the same flags, level and head as ``SyncFIFO(depth=2)``."""
    _check_against_sync_fifo(_Pair(2, SkidBuffer(width=4)), 2, when_full)


def _check_against_sync_fifo(dut, depth, when_full):
    fifos = (dut.flagged, dut.reference)
    inputs = [[(fifo.w_en, int(write)) for fifo in fifos]
              + [(fifo.r_en, int(read)) for fifo in fifos]
              + [(fifo.w_data, data) for fifo in fifos]
              for write, read, data in _writes_and_reads(depth, random.Random(100 + depth),
                                                         lambda rng: rng.randrange(16),
                                                         when_full)]
    names = ("w_rdy", "r_rdy", "level", "r_data")
    records = run_cycles(dut, inputs, [getattr(fifo, name) for fifo in (dut.flagged,
                                                                         dut.reference)
                                       for name in names])
    assert {r[2] for r in records} >= {0, depth}, "the stimulus must reach empty and full"
    for cycle, record in enumerate(records):
        flagged, reference = record[:4], record[4:]
        if not reference[1]:        # an empty FIFO's data means nothing
            flagged, reference = flagged[:3], reference[:3]
        assert flagged == reference, f"cycle {cycle}"
