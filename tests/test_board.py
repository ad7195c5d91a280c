"""The board path: UART, bridge, deployed top, host, and `deploy` / `board run` end to end in
co-simulation (pyserial talking to the simulated top through a pseudo-terminal)."""

import json
import os
import threading

import numpy as np
import pytest
import serial
from amaranth.hdl import Module
from amaranth.sim import Simulator

import reference as ref
from hwgen.board.cosim import simulated_board
from hwgen.board.manifest import Deployment
from hwgen.board.protocol import ACK, NAK, command_frame
from hwgen.board.uart import UARTReceiver, UARTTransmitter
from hwgen.cli.main import main
from hwgen.sim import instrument_pe, run_pe

SMALL = ["--buffer", "line", "--unroll", "4", "--width", "16", "--height", "8"]

# HMM values that count every cycle the HMM observed, the job's and those around it (the host
# reads a board later than a testbench reads a simulation).
_AROUND_THE_JOB = ("cycles", "fsm.ctrl.IDLE", "stream.rd_req.idle", "stream.rd_rsp.idle",
                   "stream.wr_req.idle", "stream.out_fifo.w.idle")


@pytest.mark.parametrize("divisor", [2, 5])
def test_uart_carries_bytes_both_ways(divisor):
    tx, rx = UARTTransmitter(divisor), UARTReceiver(divisor)
    m = Module()
    m.submodules.tx, m.submodules.rx = tx, rx
    m.d.comb += rx.rx.eq(tx.tx)
    sent = list(np.random.default_rng(3).integers(0, 256, size=12))
    got = []

    async def bench(ctx):
        ctx.set(rx.bytes.ready, 1)
        queue = list(sent)
        for _ in range(12 * 10 * divisor + 40):
            if queue and ctx.get(tx.bytes.ready):
                ctx.set(tx.bytes.payload, int(queue.pop(0)))
                ctx.set(tx.bytes.valid, 1)
            else:
                ctx.set(tx.bytes.valid, 0)
            await ctx.tick()
            if ctx.get(rx.bytes.valid):
                got.append(ctx.get(rx.bytes.payload))
            assert not ctx.get(rx.frame_error)

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == [int(b) for b in sent]


def _deploy(tmp_path, board, *extra):
    out = tmp_path / board
    assert main(["deploy", "dilation", *SMALL, *extra, "--board", board, "--no-build",
                 "--out", str(out), "-q"]) == 0
    return out


# What fits each board: the iCEBreaker's UP5K takes the PE with the minimal HMM (line U4: 73% of
# its logic cells, the result FIFO in block RAM).
FITS = {"ulx3s-85f": ("default", []), "icebreaker": ("minimal", ["--probes", "minimal"])}


@pytest.mark.parametrize("board", FITS)
def test_simulated_board_gives_the_output_and_hmm_figures_of_sim(tmp_path, board):
    probes, options = FITS[board]
    out = _deploy(tmp_path, board, *options)
    image = np.random.default_rng(7).integers(0, 256, size=(8, 16)).astype(np.uint8)
    np.save(tmp_path / "in.npy", image)
    assert main(["board", "run", str(out), "--simulate", "--input", str(tmp_path / "in.npy"),
                 "--output", str(tmp_path / "out.npy"), "--json", str(tmp_path / "run.json"),
                 "-q"]) == 0
    result = json.loads((tmp_path / "run.json").read_text())
    output = np.load(tmp_path / "out.npy")
    assert np.array_equal(output, ref.window_filter(image, np.ones((3, 3), bool), "max"))
    assert result["measured_on"] == "simulated board"
    assert result["result_matches_numpy_model"] is True

    # The same job in the simulation `sim` runs, with the memory model it uses by default.
    pe = Deployment(json.loads((out / "manifest.json").read_text())).pe
    sim = simulate(pe, image, probes)
    hmm = sim.readout
    # The memory model's own count, independent of the HMM.
    assert (result["bytes_read"], result["bytes_written"]) == (sim.traffic.bytes_read,
                                                               sim.traffic.bytes_written)
    for key, name in (("cycles", "busy_cycles"), ("ops", "ops")):
        assert result[key] == hmm.values[name], key
    board_values = result["hmm"]["values"]
    assert board_values.keys() == hmm.values.keys()
    offset = result["total_cycles"] - hmm.values["cycles"]
    assert offset > 0
    for name, value in hmm.values.items():
        expected = value + offset if name in _AROUND_THE_JOB else value
        assert board_values[name] == expected, name
    if probes == "default":
        assert result["hmm"]["fsms"]["fsm.ctrl"]["RUN"] == hmm.fsms()["fsm.ctrl"]["RUN"]
        assert result["rd_data_wait_cycles"] == hmm.values["rd_latency.wait_cycles"]
    else:
        assert result["rd_data_wait_cycles"] is None    # not measured: n/a, not 0


def simulate(pe, image, probes):
    """This job as `sim` runs it: its memory model, Amaranth's simulator, the HMM read after."""
    h, w = image.shape
    storage = [int(v) for v in image.ravel()] + [0] * (pe.out_height * pe.out_width)
    return run_pe(instrument_pe(pe, probes=probes), storage,
                  params={"src_base": 0, "dst_base": h * w}, engine="pysim")


def test_bridge_refuses_unknown_commands_and_stays_in_step(tmp_path):
    deployment = Deployment(json.loads((_deploy(tmp_path, "ulx3s-85f") / "manifest.json")
                                       .read_text()))
    with simulated_board(deployment.top(2)) as path:
        port = serial.Serial(path, timeout=60)
        port.write(command_frame("identify")[:1].replace(b"P", b"X") + bytes(8))
        assert port.read(1) == bytes([NAK])
        port.write(command_frame("write_memory", 3, 2) + bytes([11, 22]))
        assert port.read(1) == bytes([ACK])
        port.write(command_frame("read_memory", 2, 4))
        assert port.read(5) == bytes([ACK, 0, 11, 22, 0])
        port.write(command_frame("set_parameter", 7, 1))   # only 2 parameters
        assert port.read(1) == bytes([NAK])
        port.close()


def _fails(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("hwgen: error:"), err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture
def deployed(tmp_path):
    return _deploy(tmp_path, "ulx3s-85f")


def test_board_run_without_a_port_fails_cleanly(tmp_path, deployed, capsys):
    json_path = tmp_path / "r" / "run.json"
    _fails(capsys, ["board", "run", str(deployed), "--serial", str(tmp_path / "ttyNONE"),
                    "--json", str(json_path)], "cannot open serial port")
    assert not json_path.exists() and not json_path.parent.exists()


def test_board_run_on_a_busy_port_fails_cleanly(tmp_path, deployed, capsys):
    master, slave = os.openpty()
    holder = serial.Serial(os.ttyname(slave), exclusive=True)
    try:
        _fails(capsys, ["board", "run", str(deployed), "--serial", os.ttyname(slave)],
               "in use")
    finally:
        holder.close()
        os.close(master)
        os.close(slave)


def _answering(answer):
    """A pseudo-terminal whose far end answers every byte it gets with ``answer(data)``."""
    master, slave = os.openpty()
    stop = threading.Event()

    def far_end():
        os.set_blocking(master, False)
        while not stop.is_set():
            try:
                data = os.read(master, 64)
            except BlockingIOError:
                stop.wait(0.01)
                continue
            except OSError:
                return
            os.write(master, answer(data))

    thread = threading.Thread(target=far_end, daemon=True)
    thread.start()
    return os.ttyname(slave), lambda: (stop.set(), thread.join(), os.close(master),
                                       os.close(slave))


def test_board_run_against_garbage_fails_cleanly(tmp_path, deployed, capsys):
    path, close = _answering(lambda data: b"\x00garbage" * len(data))
    try:
        _fails(capsys, ["board", "run", str(deployed), "--serial", path, "--timeout", "1",
                        "--json", str(tmp_path / "run.json")], "garbage")
    finally:
        close()
    assert not (tmp_path / "run.json").exists()


def test_board_run_against_silence_times_out_cleanly(tmp_path, deployed, capsys):
    path, close = _answering(lambda data: b"")
    try:
        _fails(capsys, ["board", "run", str(deployed), "--serial", path, "--timeout", "0.3"],
               "did not answer", "0.3 s")
    finally:
        close()


def test_deploy_refuses_a_frame_too_large_and_names_the_largest(tmp_path, capsys):
    out = tmp_path / "big"
    err = _fails(capsys, ["deploy", "dilation", "--buffer", "line", "--unroll", "4", "--width",
                          "256", "--height", "256", "--board", "icebreaker", "--no-build",
                          "--out", str(out)], "--width/--height", "largest frame")
    assert not out.exists()
    # The largest frame it names fits: deploying it succeeds.
    width, height = err.split("largest frame that fits is ")[1].split(" at this width")[0].split("x")
    assert int(width) == 256 and 3 <= int(height) < 256
    assert main(["deploy", "dilation", "--buffer", "line", "--unroll", "4", "--width", width,
                 "--height", height, "--board", "icebreaker", "--no-build", "--out",
                 str(out), "-q"]) == 0
    assert main(["deploy", "dilation", "--buffer", "line", "--unroll", "4", "--width", width,
                 "--height", str(int(height) + 1), "--board", "icebreaker", "--no-build",
                 "--out", str(tmp_path / "big2"), "-q"]) == 2


def test_board_run_rejects_a_folder_that_is_no_deployment(tmp_path, capsys):
    _fails(capsys, ["board", "run", str(tmp_path), "--simulate"], "no manifest.json")


@pytest.mark.parametrize("delay, busy_cycles", [(0, set()), (4, set()), (3, {0, 1, 2, 7})])
def test_launcher_offers_each_thread_at_its_cycle(delay, busy_cycles):
    from hwgen.board.launcher import Launcher
    launcher = Launcher(3, delay, 2)
    launches = []

    async def bench(ctx):
        ctx.set(launcher.start, 1)
        await ctx.tick()
        ctx.set(launcher.start, 0)
        for cycle in range(20):
            ctx.set(launcher.launch.ready, cycle not in busy_cycles)
            valid, tid = ctx.get(launcher.launch.valid), ctx.get(launcher.launch.payload)
            await ctx.tick()
            if valid and cycle not in busy_cycles:
                launches.append((cycle, tid))

    sim = Simulator(launcher)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    # Thread t is offered from cycle t * delay on and goes at the first cycle the pipeline takes it.
    expected, cycle = [], 0
    for thread in range(3):
        cycle = max(cycle, thread * delay)
        while cycle in busy_cycles:
            cycle += 1
        expected.append((cycle, thread))
        cycle += 1
    assert launches == expected


@pytest.mark.slow
def test_simulated_board_runs_a_program_as_run_does(tmp_path):
    from hwgen.kernels.pipeline import Pipeline
    from hwgen.programs import GemmJob
    from hwgen.sim import instrument_pipeline, run_threads

    out = tmp_path / "gemm"
    assert main(["deploy", "gemm", "--dim", "4", "--threads", "4", "--board", "ulx3s-85f",
                 "--no-build", "--out", str(out), "-q"]) == 0
    assert main(["board", "run", str(out), "--simulate", "--json", str(tmp_path / "run.json"),
                 "-q"]) == 0
    result = json.loads((tmp_path / "run.json").read_text())
    assert result["measured_on"] == "simulated board"
    assert result["result_matches_numpy_model"] is True

    job = GemmJob("naive", dim=4, threads=4)
    storage, params = job.memory()
    sim = run_threads(instrument_pipeline(Pipeline(job.program)), storage, params=params,
                      engine="pysim")
    assert job.matches(storage)
    for key in ("cycles", "ops", "bytes_read", "bytes_written"):
        assert result[key] == getattr(sim, key), key
    for thread, figures in enumerate(result["threads"]):
        assert figures["stall_cycles"] == sim.stall_cycles[thread]
        for name, percent in sim.state_percent()[thread].items():
            assert figures[f"{name}_percent"] == pytest.approx(percent), (thread, name)


def test_registered_io_wrapper_puts_every_port_bit_behind_a_register():
    """The harness `synth --board icebreaker` places a PE in: the design's inputs come from the
    input chain, its outputs are captured and come out of the output chain, bit for bit."""
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    from hwgen.build import design_ports
    from hwgen.resources.synth import RegisteredIO

    class Adder(wiring.Component):
        a: In(3)
        b: In(2)
        y: Out(4)

        def elaborate(self, platform):
            m = Module()
            m.d.comb += self.y.eq(self.a + self.b)
            return m

    adder = Adder()
    harness = RegisteredIO(adder, design_ports(adder))
    shifted_out = []

    async def bench(ctx):
        a, b = 5, 3
        # Input chain: the last bit shifted in ends at its bottom, so send the top bit first.
        for bit in reversed(range(5)):
            ctx.set(harness.si, ((b << 3 | a) >> bit) & 1)
            await ctx.tick()
        assert (ctx.get(adder.a), ctx.get(adder.b)) == (a, b)
        await ctx.tick()                      # the capture registers take y
        ctx.set(harness.load, 1)
        await ctx.tick()
        ctx.set(harness.load, 0)
        for _ in range(4):
            shifted_out.append(ctx.get(harness.so))
            await ctx.tick()

    sim = Simulator(harness)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert sum(bit << i for i, bit in enumerate(shifted_out)) == 5 + 3


@pytest.mark.slow
@pytest.mark.parametrize("board, bitstream", [("icebreaker", "top.bin"), ("ulx3s-85f", "top.bit")])
def test_deploy_builds_a_bitstream_that_meets_timing(tmp_path, monkeypatch, capsys, board,
                                                     bitstream):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    options = FITS[board][1]
    assert main(["deploy", "dilation", *SMALL, *options, "--board", board, "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"bitstream: {out / bitstream}" in printed and "timing met" in printed
    assert sorted(p.name for p in out.iterdir()) == sorted([bitstream, "manifest.json",
                                                            "top.rpt", "top.tim"])
    manifest = json.loads((out / "manifest.json").read_text())
    built = manifest["bitstream"]
    assert built["timing_met"] and built["fmax_mhz"] > manifest["clock_mhz"]
    assert (out / bitstream).stat().st_size > 10_000
    # A second deploy reads the cache.
    assert main(["deploy", "dilation", *SMALL, *options, "--board", board, "--out",
                 str(out)]) == 0
    assert "[cached]" in capsys.readouterr().out
