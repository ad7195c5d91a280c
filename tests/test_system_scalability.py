"""SC counts the whole system: the most PEs whose system (PEs, memory interconnect, HMM when
instrumented) fits one device, the same number in the roofline, `--pes max` and confirm."""

import argparse
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from hwgen.catalog import make_window_filter, resolve_board
from hwgen.cli.options import pes_from_args
from hwgen.kernels import beat_bytes, channels_for, window_system_of, window_system_pe
from hwgen.resources.estimate import estimate
from hwgen.resources.estimate_system import EXACT_CONTROL_PES, estimate_overhead, estimate_rest
from hwgen.roofline.model import (RESOURCES, board_scalability, build_roofline, logic_cells,
                                  placeable, scalability, system_bytes_per_cycle,
                                  system_scalability)
from hwgen.roofline.sweep import DesignPoint
from hwgen.sim import instrument_system

AVAILABLE = {"lut": 1000, "ff": 2000, "bram": 30, "dsp": 0}


def _fits(used, available, cells=None):
    """Within ``available`` and, with ``cells``, LUT + FF within that many logic cells."""
    return all(used[r] <= available[r] for r in RESOURCES) \
        and (cells is None or used["lut"] + used["ff"] <= cells)


def _room(board):
    """What SC may fill on one device of ``board``: its resources, less the headroom nextpnr
    needs (ECP5: 90% of LUT and FF; iCE40: LUT + FF within 75% of its logic cells)."""
    counts = board.resources.as_counts()
    if board.family == "ecp5":
        counts = {r: int(v * 0.9) if r in ("lut", "ff") else v for r, v in counts.items()}
    return counts, int(counts["lut"] * 0.75) if board.family == "ice40" else None


def _pe(unroll):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        return make_window_filter("dilation", width=32, height=16, unroll=unroll, buffer="line")


def _system(pe, pes, link, board, probes=None):
    """What the system ``--pes`` builds needs: P of its PEs by the estimate, and the rest with
    the PEs as black boxes, the interconnect at its calibrated price (``benchmarks/
    interconnect_estimate.py`` checks that against Yosys)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        inner = estimate(window_system_pe(pe, pes), board).resources()
        if probes is None:
            system_pe = window_system_pe(pe, pes)
            rest = estimate_rest(system_pe, pes,
                                 channels_for(pes, beat_bytes(system_pe), link), board)
        else:
            rest = estimate_overhead(window_system_of(pe, pes, bytes_per_cycle=link), board,
                                     instrument=lambda d: instrument_system(
                                         d, probes=probes, platform=board.elaboration_platform()))
        return {r: pes * inner[r] + rest[r] for r in RESOURCES}


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
    available, cells = _room(board)
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = _pe(unroll)
    sc, limiting = board_scalability(pe, board, bytes_per_cycle=link)
    assert sc >= 1
    assert _fits(_system(pe, sc, link, board), available, cells)
    over = _system(pe, sc + 1, link, board)
    assert not _fits(over, available, cells)
    assert over[limiting] > available[limiting] or (
        limiting == "lut" and over["lut"] + over["ff"] > cells)


def test_sc_on_icebreaker_counts_the_interconnect_and_the_hmm():
    board = resolve_board("icebreaker")
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = _pe(1)
    bare = scalability(estimate(pe, board).resources(), board.resources.as_counts())[0]
    sc = board_scalability(pe, board, bytes_per_cycle=link)[0]
    most = {probes: board_scalability(pe, board, bytes_per_cycle=link, probes=probes)[0]
            for probes in ("minimal", "default")}
    # Bare PEs alone would overflow the LUT once their interconnect is added; each HMM takes
    # room of its own, and a PE with the default one still fits (its result FIFO is block RAM
    # on the iCE40, not flip-flops).
    assert 1 <= most["default"] <= most["minimal"] <= sc < bare
    available, cells = _room(board)
    bare_system = _system(pe, sc, link, board)
    minimal_system = _system(pe, sc, link, board, "minimal")
    assert minimal_system["lut"] + minimal_system["ff"] > bare_system["lut"] + bare_system["ff"]
    for probes, pes in most.items():
        assert _fits(_system(pe, pes, link, board, probes), available, cells)
        assert not _fits(_system(pe, pes + 1, link, board, probes), available, cells)


def test_the_pe_on_icebreaker_keeps_its_results_in_block_ram():
    # The line U1 PE's blocks: its line buffer (2 rows of 32 pixels, one EBR) and its result
    # FIFO, 16 results of 8 pixel bits, a 10-bit address, a mask bit and the "last" flag: 20
    # bits, two EBRs of 16 bits. Its flip-flops are then far fewer than 16 x 20.
    board = resolve_board("icebreaker")
    pe = _pe(1)
    assert pe.credits == 16 and pe.addr_width == 10
    used = estimate(pe, board).resources()
    assert used["bram"] == 1 + -(-(8 + 10 + 1 + 1) // 16)
    assert used["ff"] < 16 * 20


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
    pe = _pe(1)
    available, cells = _room(board)
    assert _fits(_system(pe, sc, placed.channel_link, board), available, cells)
    assert not _fits(_system(pe, sc + 1, placed.channel_link, board), available, cells)
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
    assert largest.resources == _system(pe, largest.pes, memory.bandwidth_bytes_per_cycle, board)


def test_the_pes_as_black_boxes_leave_the_rest_of_the_system():
    # The system besides its PEs, estimated with the PEs as black boxes, is the whole system's
    # estimate less P PEs inside it (the estimate merges identical cells across PEs: at most one
    # per PE; and each of the P + 2 estimates is rounded to whole LUTs).
    board = resolve_board("icebreaker")
    pe = _pe(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        design = window_system_of(pe, 3, bytes_per_cycle=None)
        whole = estimate(design, board).resources()
        inner = estimate(design.pes[0], board).resources()
        rest = estimate_overhead(window_system_of(pe, 3, bytes_per_cycle=None), board)
    for r in RESOURCES:
        assert rest[r] == pytest.approx(whole[r] - 3 * inner[r], rel=0.02, abs=4)


@pytest.mark.parametrize("pes,link", [(5, 5.0), (12, 5.0), (24, 5.0), (40, None)])
def test_the_rest_of_a_system_is_estimated_without_building_it(pes, link):
    # The interconnect summed over its channels, the control extrapolated above 24 PEs: the
    # system of shells' estimate within 1% of the system.
    board = resolve_board("ulx3s-85f")
    pe = _pe(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        system = window_system_of(pe, pes, bytes_per_cycle=link)
        built = estimate_overhead(system, board)
        system_pe = window_system_pe(pe, pes)
        inner = estimate(system_pe, board).resources()
        rest = estimate_rest(system_pe, pes, system.interconnect.channels, board)
    for r in RESOURCES:
        whole = pes * inner[r] + built[r]
        assert pes * inner[r] + rest[r] == pytest.approx(whole, rel=0.01, abs=2)
        if pes <= EXACT_CONTROL_PES:
            assert rest[r] == built[r]


@pytest.mark.parametrize("board_name", ["icebreaker", "ulx3s-85f", "arty-a7-100t"])
def test_sc_leaves_placement_headroom_where_nextpnr_places(board_name):
    board = resolve_board(board_name)
    assert (placeable(board), logic_cells(board)) == _room(board)
    # A PE of 100 LUT and 100 FF: 19 fill 75% of the iCE40UP5K's 5,280 logic cells, though 52
    # fit its LUT and FF counted apart.
    per_pe = {"lut": 100, "ff": 100, "bram": 0, "dsp": 0}
    available, cells = _room(board)
    expected = min(available["lut"], available["ff"]) // 100
    if cells is not None:
        expected = min(expected, cells // 200)
    assert system_scalability(per_pe, available, lambda p: dict.fromkeys(RESOURCES, 0),
                              cells=cells) == (expected, "lut")


@pytest.mark.slow
@pytest.mark.parametrize("board_name", ["icebreaker", "ulx3s-85f", "arty-a7-100t"])
@pytest.mark.parametrize("unroll,pes,channels", [(1, 6, 2), (8, 6, 2), (2, 12, 3)])
def test_the_interconnect_estimate_is_within_ten_percent_of_yosys(board_name, unroll, pes,
                                                                  channels):
    # Interconnects the calibration did not see (channels of 3 or 4 PEs, narrower addresses)
    # against Yosys.
    from hwgen.kernels import Interconnect
    from hwgen.resources.estimate_system import estimate_interconnect
    from hwgen.resources.synth import synthesize
    board = resolve_board(board_name)
    pe = _pe(unroll)

    def interconnect():
        return Interconnect(pes=pes, channels=channels, addr_width=pe.addr_width + 3,
                            rd_beat=pe.rd_beat, wr_beat=pe.wr_beat,
                            reads_in_flight=pe.max_outstanding_reads)
    estimated = estimate_interconnect(interconnect(), board)
    synthesized = synthesize(interconnect(), board, name="interconnect", fmax=False,
                             require_fit=False).resources()
    for r in ("lut", "ff"):
        assert estimated[r] == pytest.approx(synthesized[r], rel=0.10)


def test_the_estimate_of_a_system_prices_its_interconnect_calibrated():
    # estimate() of an interconnect or a system carries the interconnect's own LUT factors,
    # as SC does: the interconnect alone is its channels' calibrated prices summed.
    from hwgen.kernels import Interconnect
    from hwgen.resources.estimate_system import estimate_interconnect
    board = resolve_board("ulx3s-85f")
    pe = _pe(8)

    def interconnect():
        return Interconnect(pes=8, channels=2, addr_width=pe.addr_width + 3, rd_beat=pe.rd_beat,
                            wr_beat=pe.wr_beat, reads_in_flight=pe.max_outstanding_reads)
    whole = estimate(interconnect(), board).resources()
    summed = estimate_interconnect(interconnect(), board)
    assert whole["lut"] == pytest.approx(summed["lut"], rel=0.01)
    assert whole["ff"] == summed["ff"]


def test_sc_of_an_image_pe_of_the_users_is_the_system_that_fits():
    # --pes max of the Sobel example: the system catalog.system_of builds of SC copies fits the
    # icebreaker's logic cells by the estimate, and that of one more does not.
    from pathlib import Path
    from hwgen.catalog import system_of
    from hwgen.discovery import load_spec
    example = Path(__file__).resolve().parents[1] / "examples" / "sobel.py"
    kind = load_spec(f"{example}:SobelMagnitude", "KERNEL")
    board = resolve_board("icebreaker")
    link = system_bytes_per_cycle(board, board.clock_mhz)
    pe = kind(width=8, height=5)
    sc, _ = board_scalability(pe, board, bytes_per_cycle=link)
    available, cells = _room(board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        used = estimate(system_of(pe, sc, bytes_per_cycle=link), board).resources()
        over = estimate(system_of(pe, sc + 1, bytes_per_cycle=link), board).resources()
    assert sc >= 1
    assert _fits(used, available, cells) and not _fits(over, available, cells)
