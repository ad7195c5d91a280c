"""The window filter as each family builds it. Where the family has LUT RAM the result FIFO is a
``FlaggedFIFO`` (distributed RAM read combinationally); the iCE40 has none, so there it is a
``BlockFIFO`` (block RAM read a cycle ahead). Both hold each result's pixels, write address, mask
and "last" flag, and the PE runs cycle for cycle alike on the port, in both engines and in the
emitted Verilog, so a simulation without a platform describes what an iCE40 build does."""

import warnings

import numpy as np
import pytest
from amaranth.hdl import Fragment, UnusedElaboratable

import reference as ref
from hwgen.catalog import resolve_board
from hwgen.kernels import WindowFilter
from hwgen.kernels.block_fifo import BlockFIFO
from hwgen.kernels.fifo_flags import FlaggedFIFO
from hwgen.kernels.window import has_lut_ram
from hwgen.sim import MemoryModel, instrument_pe, run_pe, run_window_filter

ICE40 = resolve_board("icebreaker").elaboration_platform()


class _ICE40Filter(WindowFilter):
    """A window filter elaborated, every submodule with it, for the iCE40, whatever the
    simulator passes as platform."""

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(ICE40), ICE40)


def _result_fifo(pe, platform):
    """The FIFO that ``pe`` elaborated for ``platform`` builds as its result FIFO."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        fragment = Fragment.get(pe, platform)
    (fifo,) = [sub for sub, name, _ in fragment.subfragments if name == "out_fifo"]
    return next(o for o in fifo.origins if isinstance(o, FlaggedFIFO))


@pytest.mark.parametrize("buffer,unroll", [("none", 2), ("smart", 3), ("line", 4), ("line", 1)])
@pytest.mark.parametrize("board", ["icebreaker", "ulx3s-85f", "arty-a7-100t", None])
def test_the_result_fifo_is_block_ram_only_where_the_family_has_no_lut_ram(board, buffer, unroll):
    pe = WindowFilter("max", (3, 3), width=16, height=10, unroll=unroll, buffer=buffer)
    platform = resolve_board(board).elaboration_platform() if board else None
    fifo = _result_fifo(pe, platform)
    assert type(fifo) is (BlockFIFO if board == "icebreaker" else FlaggedFIFO)
    # Pixels, then the tag: an element address, a mask bit per lane and the "last" flag.
    assert fifo.width == unroll * pe.pixel_bits + pe.addr_width + unroll + 1
    assert fifo.depth == max(2, pe.credits)


def test_lut_ram_by_family_as_hwgen_and_amaranth_name_it():
    from amaranth_boards.icebreaker import ICEBreakerPlatform
    from amaranth_boards.ulx3s import ULX3S_85F_Platform
    assert not has_lut_ram(ICE40) and not has_lut_ram(ICEBreakerPlatform())
    assert has_lut_ram(ULX3S_85F_Platform()) and has_lut_ram(None)
    assert all(has_lut_ram(resolve_board(name).elaboration_platform())
               for name in ("ulx3s-85f", "arty-a7-100t", "alveo-u280", "d5005"))


def _port_trace(pe, trace):
    """A monitor that records both memory ports' handshakes in every cycle, and their payloads
    where they are valid (the port defines nothing else)."""
    ports = (pe.rd_req.valid, pe.rd_req.ready, pe.rd_req.payload.as_value(),
             pe.wr_req.valid, pe.wr_req.ready, pe.wr_req.payload.as_value(), pe.ctrl.done)

    async def monitor(ctx):
        async for _, _, rd_valid, rd_ready, rd, wr_valid, wr_ready, wr, done in \
                ctx.tick().sample(*ports):
            trace.append((rd_valid, rd_ready, rd if rd_valid else None,
                          wr_valid, wr_ready, wr if wr_valid else None, done))
    return monitor


MEMORIES = {
    "ideal": MemoryModel(),
    "jitter": MemoryModel(latency_cycles=2, jitter_cycles=5, backpressure=0.4, seed=7),
    "bandwidth": MemoryModel(bandwidth_bytes_per_cycle=1.5, latency_cycles=3),
}
DESIGNS = [
    dict(buffer="line", unroll=4, size=(3, 3), mask="rect"),
    dict(buffer="line", unroll=1, size=(2, 5), mask="cross"),
    dict(buffer="smart", unroll=3, size=(3, 3), mask="ellipse"),
    dict(buffer="none", unroll=2, size=(3, 2), mask="rect"),
    dict(buffer="line", unroll=2, size=(3, 3), mask="rect", pipeline=False),
]


def _designs(params, width, height):
    params = dict(params)
    size = params.pop("size")
    return [kind("max", size, width=width, height=height, **params)
            for kind in (WindowFilter, _ICE40Filter)]


def _element(params):
    return ref.MASKS[params["mask"]](*params["size"])


def _closed_form_cycles(params, width, height, latency):
    """Busy cycles with the ideal memory (as tests/test_window_filter.py counts them): pipelined,
    one beat per cycle plus the datapath's latency and 3; one step at a time, beats + 3 +
    latency per step that writes and beats + 2 + latency per step that does not."""
    (n, m), unroll = params["size"], params["unroll"]
    out_h, out_w = height - n + 1, width - m + 1
    if params["buffer"] == "none":
        beats, steps = n * m, out_h * -(-out_w // unroll)     # rect masks: K = N x M
    elif params["buffer"] == "smart":
        beats, steps = 1, -(-out_h // unroll) * width
    else:
        beats, steps = 1, height * width // unroll
    if params.get("pipeline", True):
        return steps * beats + latency + 3
    assert params["buffer"] == "line"
    writing = out_h * (width // unroll - max(0, -(-(m - unroll) // unroll)))
    return writing * (beats + 3 + latency) + (steps - writing) * (beats + 2 + latency)


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("params", DESIGNS, ids=lambda p: f"{p['buffer']}-u{p['unroll']}"
                         + ("-nopipe" if p.get("pipeline") is False else ""))
def test_the_ice40_build_runs_cycle_for_cycle_as_the_generic_one(params, memory):
    width, height = 16, 9
    image = np.random.default_rng(len(str(params))).integers(0, 256, (height, width))
    runs, traces = [], []
    designs = _designs(params, width, height)
    for pe in designs:
        trace = []
        runs.append(run_window_filter(pe, image, memory=MEMORIES[memory], instrument=False,
                                      record_addresses=True, engine="pysim",
                                      monitors=[_port_trace(pe, trace)]))
        traces.append(trace)
    generic, ice40 = runs
    np.testing.assert_array_equal(ice40.image, ref.window_filter(image, _element(params), "max"))
    assert ice40.figures.cycles == generic.figures.cycles
    if memory == "ideal":
        latency = designs[0].datapath_latency
        assert ice40.figures.cycles == _closed_form_cycles(params, width, height, latency)
    assert ice40.traffic.write_addresses == generic.traffic.write_addresses
    # Every cycle's requests, handshakes and payloads, up to the job's end.
    done = traces[0].index(next(t for t in traces[0] if t[-1]))
    assert traces[1][:done + 1] == traces[0][:done + 1]


@pytest.mark.parametrize("params", DESIGNS[:2], ids=["line-u4", "line-u1"])
def test_the_ice40_build_in_the_compiled_engine(params):
    width, height = 16, 9
    image = np.random.default_rng(3).integers(0, 256, (height, width))
    memory = MEMORIES["jitter"]
    generic, ice40 = (run_window_filter(pe, image, memory=memory, instrument=False,
                                        record_addresses=True, engine=engine)
                      for pe, engine in zip(_designs(params, width, height),
                                            ("pysim", "compiled")))
    np.testing.assert_array_equal(ice40.image, ref.window_filter(image, _element(params), "max"))
    assert ice40.figures.cycles == generic.figures.cycles
    assert ice40.traffic.write_addresses == generic.traffic.write_addresses
    assert (generic.engine["name"], ice40.engine["name"]) == ("pysim", "compiled")


@pytest.mark.parametrize("probes", ["minimal", "default"])
def test_the_hmm_reads_the_same_values_on_the_ice40_build(probes):
    # Every value the HMM holds (counts, stream categories, state profiles), read through its
    # port after the job, equal; the written frame is numpy's.
    width, height = 16, 8
    image = np.random.default_rng(5).integers(0, 256, (height, width))
    readouts = []
    for pe in _designs(DESIGNS[0], width, height):
        storage = image.ravel().tolist() + [0] * (pe.out_width * pe.out_height)
        run = run_pe(instrument_pe(pe, probes=probes), storage, memory=MEMORIES["jitter"],
                     params={"src_base": 0, "dst_base": width * height}, engine="pysim")
        output = np.array(storage[width * height:]).reshape(pe.out_height, pe.out_width)
        np.testing.assert_array_equal(output, ref.window_filter(image, _element(DESIGNS[0]),
                                                                "max"))
        readouts.append(run.readout.values)
    generic, ice40 = readouts
    assert generic["busy_cycles"] > 0
    assert ice40 == generic
