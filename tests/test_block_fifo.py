"""The block-RAM FIFO (the iCE40's result FIFO) behaves as Amaranth's ``SyncFIFO`` in every cycle,
whatever the writes and reads, and Yosys puts its entries in block RAM."""

import random

import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib.fifo import SyncFIFO

from hwgen.catalog import resolve_board
from hwgen.kernels.block_fifo import BlockFIFO
from hwgen.sim.stimulus import run_cycles
from test_fifo_flags import _writes_and_reads


class _Pair(Elaboratable):
    """A BlockFIFO and Amaranth's SyncFIFO fed the same writes and reads."""
    def __init__(self, depth, width):
        self.block = BlockFIFO(width=width, depth=depth)
        self.reference = SyncFIFO(width=width, depth=depth)

    def elaborate(self, platform):
        m = Module()
        m.submodules.block, m.submodules.reference = self.block, self.reference
        return m


@pytest.mark.parametrize("when_full", [False, True])
@pytest.mark.parametrize("depth", [2, 3, 5, 16, 17])
def test_the_block_fifo_behaves_as_amaranths_sync_fifo(depth, when_full):
    """Cycle for cycle: flags, level and the head's data (read a cycle ahead from the memory,
    through its transparent port when the head is being written)."""
    width = 12
    dut = _Pair(depth, width)
    fifos = (dut.block, dut.reference)
    inputs = [[(fifo.w_en, int(write)) for fifo in fifos]
              + [(fifo.r_en, int(read)) for fifo in fifos]
              + [(fifo.w_data, data) for fifo in fifos]
              for write, read, data in _writes_and_reads(depth, random.Random(200 + depth),
                                                         lambda rng: rng.randrange(1 << width),
                                                         when_full)]
    names = ("w_rdy", "r_rdy", "level", "r_data")
    records = run_cycles(dut, inputs, [getattr(fifo, name) for fifo in fifos for name in names])
    assert {r[2] for r in records} >= {0, depth}, "the stimulus must reach empty and full"
    assert sum(r[1] and r[2] == 1 for r in records) > depth, "the head written while empty"
    for cycle, record in enumerate(records):
        block, reference = record[:4], record[4:]
        if not reference[1]:        # an empty FIFO's data means nothing
            block, reference = block[:3], reference[:3]
        assert block == reference, f"cycle {cycle}"


@pytest.mark.parametrize("width,blocks", [(20, 2), (45, 3)])
def test_yosys_puts_the_entries_in_block_ram_on_the_ice40(width, blocks):
    # An EBR is 16 bits wide at 256 entries or fewer: ceil(width / 16) of them; the logic is
    # the pointers, the flags and the read port's bypass of one entry, not an entry's worth of
    # flip-flops per entry.
    from hwgen.resources.synth import synthesize
    depth = 16
    fifo = BlockFIFO(width=width, depth=depth)
    ports = [fifo.w_data, fifo.w_en, fifo.w_rdy, fifo.r_data, fifo.r_en, fifo.r_rdy, fifo.level]
    result = synthesize(fifo, resolve_board("icebreaker"), name="block_fifo", ports=ports,
                        fmax=False, require_fit=False).resources()
    assert result["bram"] == blocks == -(-width // 16)
    assert result["ff"] < 2 * width + 32 < depth * width
