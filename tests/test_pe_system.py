"""Systems of PEs behind the memory interconnect: the hardware `build --pes` writes is the one
`sim --pes` runs; outputs equal the reference, the HMM changes neither outputs nor cycles."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import reference as ref
from hwgen.build import convert
from hwgen.cli.main import main
from hwgen.kernels import beat_bytes, window_system
from hwgen.sim import MemoryModel, instrument_system, run_window_system
from hwgen.sim.system import frame_layout
from test_verilog import WAIVED
from verilog_tb import window_testbench

WIDTH, HEIGHT = 16, 9
BACKPRESSURE = MemoryModel(bandwidth_bytes_per_cycle=2.5, latency_cycles=4, jitter_cycles=2,
                           backpressure=0.1, seed=11)


def _images(count, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (HEIGHT, WIDTH)) for _ in range(count)]


@pytest.mark.parametrize("buffer,unroll", [("smart", 2), ("line", 4), ("none", 1)])
def test_every_pe_of_a_system_filters_its_own_frame(buffer, unroll):
    images = _images(3)
    system = window_system(3, width=WIDTH, height=HEIGHT, unroll=unroll, buffer=buffer)
    run = run_window_system(system, images, memory=BACKPRESSURE, engine="pysim")
    mask = np.ones((3, 3), bool)
    for image, out in zip(images, run.images):
        np.testing.assert_array_equal(out, ref.window_filter(image, mask, "max"))
    # Closed-form traffic: the whole system reads every PE's frame through its one port.
    outputs = (WIDTH - 2) * (HEIGHT - 2)
    assert run.ops == 3 * 8 * outputs
    assert run.bytes_written == 3 * outputs
    assert [f.bytes_written for f in run.per_pe] == [outputs] * 3
    assert [f.ops for f in run.per_pe] == [8 * outputs] * 3
    assert sum(f.bytes_read for f in run.per_pe) == run.bytes_read
    if buffer == "line":
        assert run.bytes_read == 3 * WIDTH * HEIGHT
        assert [f.bytes_read for f in run.per_pe] == [WIDTH * HEIGHT] * 3


@pytest.mark.parametrize("pes", [2, 4])
@pytest.mark.parametrize("probes", ["minimal", "default", "full"])
def test_the_system_hmm_changes_neither_outputs_nor_cycles(probes, pes):
    images = _images(pes, seed=5)
    bare = run_window_system(window_system(pes, width=WIDTH, height=HEIGHT, unroll=2),
                             images, memory=BACKPRESSURE, instrument=False, engine="pysim")
    measured = run_window_system(window_system(pes, width=WIDTH, height=HEIGHT, unroll=2),
                                 images, memory=BACKPRESSURE, probes=probes, engine="pysim")
    assert all((a == b).all() for a, b in zip(bare.images, measured.images))
    # The bare run's cycles are the testbench's count, the other the HMM's.
    assert bare.figures.measured_by == "testbench" and measured.figures.measured_by == "hmm"
    assert measured.cycles == bare.cycles
    assert (measured.bytes_read, measured.bytes_written, measured.ops) == \
        (bare.bytes_read, bare.bytes_written, bare.ops)
    assert (measured.per_pe is None) == (probes == "minimal")


def test_presets_cost_what_they_measure():
    system = window_system(2, width=WIDTH, height=HEIGHT)
    layouts = {p: instrument_system(system, probes=p).layout for p in ("minimal", "default", "full")}
    names = {p: {f.name for f in layout.fields} for p, layout in layouts.items()}
    assert names["minimal"] < names["default"] < names["full"]
    assert {"busy_cycles", "bytes_read", "bytes_written", "ops"} <= names["minimal"]
    assert "pe1.ops" in names["default"] and "pe1.ops" not in names["minimal"]
    assert not layouts["default"].tables and layouts["full"].tables   # state profiles: full only


def _system_of(pes, beats, **params):
    """A system of ``pes`` line U2 PEs on a link of ``beats`` beats per cycle (None: one each)."""
    first = window_system(1, width=WIDTH, height=HEIGHT, **params).pes[0]
    link = None if beats is None else beats * beat_bytes(first)
    return window_system(pes, width=WIDTH, height=HEIGHT, bytes_per_cycle=link, **params)


@pytest.mark.parametrize("engine", ["pysim", pytest.param("compiled", marks=pytest.mark.slow)])
@pytest.mark.parametrize("pes,beats", [(2, 1), (5, 2), (6, None), (7, 3)])
def test_systems_of_several_sizes_and_channels_match_numpy_under_backpressure(pes, beats,
                                                                              engine):
    images = _images(pes, seed=pes)
    system = _system_of(pes, beats, unroll=2, buffer="line")
    assert system.interconnect.channels == (pes if beats is None else min(pes, beats))
    memory = MemoryModel(bandwidth_bytes_per_cycle=None if beats is None else 1.5 * beats,
                         latency_cycles=3, jitter_cycles=3, backpressure=0.2, seed=pes)
    run = run_window_system(system, images, memory=memory, engine=engine)
    for image, out in zip(images, run.images):
        np.testing.assert_array_equal(out, ref.window_filter(image, np.ones((3, 3), bool), "max"))
    outputs = (WIDTH - 2) * (HEIGHT - 2)
    assert [f.bytes_read for f in run.per_pe] == [WIDTH * HEIGHT] * pes
    assert [f.ops for f in run.per_pe] == [8 * outputs] * pes
    assert run.bytes_read == pes * WIDTH * HEIGHT and run.ops == pes * 8 * outputs


def test_channels_move_several_beats_per_cycle():
    """With a channel per PE and an unlimited memory, 4 line U2 PEs take about one PE's cycles:
    the channels are independent (a closed form: one PE reads its frame in H x W / 2 beats)."""
    images = _images(4, seed=1)
    run = run_window_system(_system_of(4, None, unroll=2, buffer="line"), images,
                            instrument=False, engine="pysim")
    beats = WIDTH * HEIGHT // 2
    assert run.cycles < 1.5 * beats
    assert run.bytes_read == 4 * WIDTH * HEIGHT


def _system_verilog(tmp_path, system, design, name="top"):
    verilog_text, _ = convert(design, name)
    (tmp_path / f"{name}.v").write_text(verilog_text)
    return verilog_text


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog")
@pytest.mark.parametrize("beats", [None, 1, 2])    # 3 channels, 1 of 3 PEs, 2 of 1 and 2 PEs
def test_icarus_runs_the_built_system_as_amaranth_does(tmp_path, beats):
    count = 3
    images = _images(count, seed=9)
    system = _system_of(count, beats, unroll=2, buffer="smart")
    first = system.pes[0]
    layout = frame_layout(first, count)
    stride, out_words = layout[1][0], first.out_width * first.out_height
    memory = np.zeros(count * stride, dtype=np.int64)
    for (src, _), image in zip(layout, images):
        memory[src:src + image.size] = image.ravel()
    _system_verilog(tmp_path, system, system)
    (tmp_path / "image.hex").write_text("".join(f"{v:02x}\n" for v in memory))
    (tmp_path / "tb.v").write_text(window_testbench(
        system, "top", memory_words=len(memory), image_hex="image.hex", dst_base=layout[0][1],
        out_words=len(memory), out_hex="out.hex", frame_stride=stride, dump_base=0))
    subprocess.run(["iverilog", "-g2005", "-o", "sim.vvp", "tb.v", "top.v"], cwd=tmp_path,
                   check=True, capture_output=True)
    result = subprocess.run(["vvp", "-n", "sim.vvp"], cwd=tmp_path, capture_output=True,
                            text=True)
    assert "FAIL" not in result.stdout, result.stdout
    cycles = int(re.search(r"CYCLES (\d+)", result.stdout)[1])
    dumped = np.array([int(line, 16) for line in (tmp_path / "out.hex").read_text().split()])
    for (_, dst), image in zip(layout, images):
        np.testing.assert_array_equal(
            dumped[dst:dst + out_words].reshape(first.out_height, first.out_width),
            ref.window_filter(image, np.ones((3, 3), bool), "max"))
    run = run_window_system(_system_of(count, beats, unroll=2, buffer="smart"), images,
                            instrument=False, engine="pysim")
    assert cycles == run.cycles


@pytest.mark.skipif(shutil.which("verilator") is None, reason="needs verilator")
def test_verilator_lints_an_instrumented_system_with_only_waived_classes(tmp_path):
    system = _system_of(4, 2, unroll=2, buffer="line")
    _system_verilog(tmp_path, system, instrument_system(system))
    result = subprocess.run(["verilator", "--lint-only", "-Wall", *[f"-Wno-{w}" for w in WAIVED],
                             "top.v"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_build_writes_a_system_with_a_channel_per_pe_and_one_hmm_port(tmp_path, capsys):
    out = tmp_path / "sys"
    assert main(["build", "dilation", "--pes", "3", "--width", "16", "--height", "9",
                 "--probes", "minimal", "--out", str(out), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    ports = {p["name"] for p in manifest["ports"]}
    prefixes = {name.split("__")[0] for name in ports}
    assert prefixes == {"ctrl", "mem0", "mem1", "mem2", "hmm"}
    assert "ctrl__frame_stride" in ports
    assert manifest["system"]["pes"] == 3 and manifest["probes"] == "minimal"
    assert manifest["top"].endswith("_x3")


@pytest.mark.parametrize("argv,message", [
    (["--pes", "0"], "--pes must be a positive integer or max"),
    (["--pes", "many"], "--pes must be a positive integer or max"),
    (["--pes", "max"], "--pes max takes the PEs that fit a board: give --board"),
])
def test_build_refuses_bad_pes(tmp_path, capsys, argv, message):
    assert main(["build", "dilation", *argv, "--out", str(tmp_path / "x")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_confirmation_flags_a_system_that_does_not_fit():
    from hwgen.roofline.confirm import Confirmation
    counts = dict(lut=100, ff=100, bram=4, dsp=0)
    found = Confirmation(label="line U1", name="x", board="icebreaker", pes=4,
                         predicted=counts, synthesized=dict(counts, bram=5),
                         available=dict(lut=5280, ff=5280, bram=4, dsp=8), fmax_mhz=None,
                         fmax_source="not measured")
    assert not found.fits and found.over == ["bram"]
    assert found.error("bram") == pytest.approx(0.25) and found.error("dsp") is None
    assert found.attained_error is None and found.to_json()["attained"] is None
    attained = Confirmation(**{**found.__dict__, "attainable_gbops": 2.0,
                               "attained_gbops": 1.9})
    assert attained.attained_error == pytest.approx(-0.05)
    assert attained.to_json()["attainable"] == 2.0 and attained.to_json()["attained"] == 1.9


def test_sim_sizes_the_channels_from_the_memory_bandwidth(capsys):
    # Line U2 moves 2-byte beats: 4 bytes per cycle are 2 channels for 3 PEs.
    assert main(["sim", "dilation", "--pes", "3", "--width", "16", "--height", "9",
                 "--unroll", "2", "--buffer", "line", "--mem-bandwidth", "4",
                 "--engine", "pysim"]) == 0
    out = capsys.readouterr().out
    assert "3 PEs sharing the memory through 2 channels" in out
    assert "every result matches the numpy model" in out


@pytest.mark.slow
def test_roofline_confirm_synthesizes_the_best_point_at_sc_pes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["roofline", "dilation", "--image", "32x16", "--board", "icebreaker",
                 "--unroll", "1", "--buffer", "line", "--resources", "synth", "--confirm",
                 "--out", str(out), "-q"]) == 0
    confirm = json.loads((out / "confirm.json").read_text())
    (point,) = json.loads((out / "roofline.json").read_text())["points"]
    assert confirm["pes"] == point["sc_pes_per_device"] >= 2
    # The model counts the interconnect (estimated) beside SC synthesized PEs ...
    for r in ("lut", "ff", "bram", "dsp"):
        assert confirm["predicted"][r] >= confirm["pes"] * point["resources_per_pe"][r]
    assert confirm["predicted"]["lut"] > confirm["pes"] * point["resources_per_pe"]["lut"]
    # ... so the system of SC PEs fits this LUT-limited device by Yosys.
    assert confirm["fits"] and all(confirm["synthesized"][r] <= confirm["available"][r]
                                   for r in ("lut", "ff", "bram", "dsp"))
    # SC leaves nextpnr its headroom: the system places and routes, and what it attains is
    # at its own Fmax.
    assert confirm["fmax_mhz"] is not None and confirm["fmax_mhz"] > 0
    assert confirm["attained_clock_mhz"] == confirm["fmax_mhz"]
    assert "the system's Fmax" in confirm["attained_clock_source"]
    # The system simulated against the USB link attains what the (I/O-bound) roofline says.
    assert confirm["attained"] == pytest.approx(confirm["attainable"], rel=0.10)
    assert confirm["attainable_clock_mhz"] > 0
    out = capsys.readouterr().out
    assert "confirm: line U1, a system of SC = " in out and "attained" in out
