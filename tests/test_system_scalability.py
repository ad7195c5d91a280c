"""SC counts the whole system: the most PEs whose system (PEs, memory interconnect, HMM when
instrumented) fits one device, the same number in the roofline, `--pes max` and confirm."""

import argparse
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from hwgen.catalog import make_window_filter, resolve_board
from hwgen.cli.options import pes_from_args
from hwgen.kernels import window_system_of
from hwgen.resources.estimate import estimate
from hwgen.roofline.model import (RESOURCES, board_scalability, build_roofline, scalability,
                                  system_bytes_per_cycle, system_scalability)
from hwgen.roofline.sweep import DesignPoint
from hwgen.sim import instrument_system

AVAILABLE = {"lut": 1000, "ff": 2000, "bram": 30, "dsp": 0}


def _fits(used, available):
    return all(used[r] <= available[r] for r in RESOURCES)


def _pe(unroll):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        return make_window_filter("dilation", width=32, height=16, unroll=unroll, buffer="line")


def _system(pe, pes, link, board, probes=None):
    """The system ``--pes`` builds, estimated independently of the search."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        design = window_system_of(pe, pes, bytes_per_cycle=link)
        if probes is not None:
            design = instrument_system(design, probes=probes,
                                       platform=board.elaboration_platform())
        return estimate(design, board).resources()


def test_system_scalability_counts_an_overhead_that_grows_with_the_pes():
    per_pe = {"lut": 100, "ff": 50, "bram": 2, "dsp": 0}
    # Without overhead: floor(1000 / 100) = 10 by LUT.
    assert system_scalability(per_pe, AVAILABLE) == scalability(per_pe, AVAILABLE) == (10, "lut")
    # 30 LUT per PE of interconnect: floor(1000 / 130) = 7.
    assert system_scalability(per_pe, AVAILABLE,
                              lambda p: {"lut": 30 * p, "ff": 0, "bram": 0, "dsp": 0}) \
        == (7, "lut")
    # An HMM of 1,800 FF leaves room for 4 PEs (2,000 FF); 5 overflow FF most.
    assert system_scalability(per_pe, AVAILABLE,
                              lambda p: {"lut": 0, "ff": 1800, "bram": 0, "dsp": 0}) == (4, "ff")
    # An overhead that alone overflows the device: no system fits.
    assert system_scalability(per_pe, AVAILABLE,
                              lambda p: {"lut": 0, "ff": 0, "bram": 31, "dsp": 0}) == (0, "bram")


@pytest.mark.parametrize("board_name,unroll", [("icebreaker", 1), ("icebreaker", 8),
                                               ("ulx3s-85f", 8)])
def test_the_system_of_sc_pes_fits_and_one_more_does_not(board_name, unroll):
    board = resolve_board(board_name)
    available = board.resources.as_counts()
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = _pe(unroll)
    sc, limiting = board_scalability(pe, board, bytes_per_cycle=link)
    assert sc >= 1
    assert _fits(_system(pe, sc, link, board), available)
    over = _system(pe, sc + 1, link, board)
    assert not _fits(over, available)
    assert over[limiting] > available[limiting]


def test_sc_on_icebreaker_counts_the_interconnect_and_the_hmm():
    board = resolve_board("icebreaker")
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = _pe(1)
    bare = scalability(estimate(pe, board).resources(), board.resources.as_counts())[0]
    sc = board_scalability(pe, board, bytes_per_cycle=link)[0]
    instrumented = board_scalability(pe, board, bytes_per_cycle=link, probes="default")[0]
    # Bare PEs alone would overflow the LUT once their interconnect is added.
    assert 1 <= instrumented < sc < bare
    available = board.resources.as_counts()
    assert _fits(_system(pe, instrumented, link, board, "default"), available)
    assert not _fits(_system(pe, instrumented + 1, link, board, "default"), available)


@pytest.mark.parametrize("instrument", [True, False])
def test_pes_max_builds_the_sc_system(instrument):
    board = resolve_board("icebreaker")
    args = argparse.Namespace(pes="max", instrument=instrument, probes="minimal", clock=None,
                              link=None)
    pe = _pe(1)
    link = system_bytes_per_cycle(board, board.clock_mhz)
    expected = board_scalability(pe, board, bytes_per_cycle=link,
                                 probes="minimal" if instrument else None)[0]
    assert pes_from_args(args, pe, board) == expected


def test_the_roofline_sc_is_the_system_that_fits():
    board = resolve_board("icebreaker")
    point = DesignPoint("dilation", 3, 3, "rect", 32, 16, 1, "line", True)
    roofline = build_roofline([point], board, resources="estimate")
    (placed,) = roofline.points
    sc = placed.sc_pes_per_device
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        used = estimate(point.system(sc, point.height, placed.channel_link), board).resources()
        over = estimate(point.system(sc + 1, point.height, placed.channel_link),
                        board).resources()
    assert _fits(used, board.resources.as_counts())
    assert not _fits(over, board.resources.as_counts())
    assert placed.cp_gbops == pytest.approx(sc * placed.perf_pe_gbops)
    # The JSON keeps it.
    again = type(roofline).from_json(roofline.to_json()).points[0]
    assert (again.sc_pes_per_device, again.limiting_resource) == (sc, placed.limiting_resource)


@pytest.mark.slow
def test_yosys_fits_the_sc_system_on_icebreaker():
    from hwgen.resources.synth import synthesize
    board = resolve_board("icebreaker")
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = _pe(1)
    sc = board_scalability(pe, board, bytes_per_cycle=link)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        system = window_system_of(pe, sc, bytes_per_cycle=link)
    result = synthesize(system, board, name="sc_system", fmax=False, require_fit=False)
    assert result.resources()["lut"] <= 5280
    assert all(result.resources()[r] <= board.resources.as_counts()[r] for r in RESOURCES)


def test_explore_fast_stops_at_sc_and_prices_the_interconnect():
    from hwgen.roofline.fast import explore_fast
    from hwgen.sim import MemoryModel
    board = resolve_board("icebreaker")
    memory = MemoryModel(bandwidth_bytes_per_cycle=system_bytes_per_cycle(board, board.clock_mhz))
    point = DesignPoint("dilation", 3, 3, "rect", 32, 16, 1, "line", True)
    found = explore_fast([point], board, memory, tree_policies=("lean",))
    largest = max(found, key=lambda p: p.pes)
    pe = _pe(1)
    assert largest.pes == board_scalability(
        pe, board, bytes_per_cycle=memory.bandwidth_bytes_per_cycle)[0]
    # Priced as P PEs and the rest with the PEs as black boxes: the whole system's estimate
    # within 1% (it merges a few cells across PEs).
    whole = _system(pe, largest.pes, memory.bandwidth_bytes_per_cycle, board)
    for r in RESOURCES:
        assert largest.resources[r] == pytest.approx(whole[r], rel=0.01, abs=1)
