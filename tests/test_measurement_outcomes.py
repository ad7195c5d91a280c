"""Figures that cannot be trusted are shown as such: undefined figures are None / null / n/a,
saturated counters and traffic that differs from the model make a command exit 3 after writing
outputs that say so, and a host gives up on an HMM that does not answer."""

import csv
import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In
from amaranth.sim import Simulator

import hwgen.cli.commands.run as run_command
import hwgen.sim.harness as harness
from hwgen.boards import get_board
from hwgen.cli.commands.roofline import points_csv
from hwgen.cli.figures import figure
from hwgen.cli.main import main
from hwgen.errors import EXIT_SUSPECT
from hwgen.instrument import READ_LATENCY_CYCLES, STATUS_BITS
from hwgen.instrument.port import PortSignature
from hwgen.kernels import WindowFilter
from hwgen.roofline.figure import plot_roofline
from hwgen.roofline.frame_scaling import FrameFigures
from hwgen.roofline.model import Roofline, RooflinePoint, SystemCheck
from hwgen.roofline.sweep import DesignPoint, Measurement
from hwgen.sim import CycleData, HMMError, HMMHost

SMALL = ["--width", "16", "--height", "10"]


# -- undefined figures ---------------------------------------------------------------------------

def test_rates_of_nothing_are_undefined_not_zero():
    idle = CycleData(cycles=0, outputs=0, bytes_read=0, bytes_written=0, ops=0)
    assert (idle.ci, idle.ops_per_cycle, idle.bytes_per_cycle, idle.outputs_per_cycle) \
        == (None, None, None, None)
    data = json.loads(json.dumps(idle.to_json()))
    assert data["ci"] is None and data["ops_per_cycle"] is None
    assert CycleData.from_json(data) == idle
    # Defined zeros stay zeros: a mask of one entry does no comparison.
    single = CycleData(cycles=10, outputs=5, bytes_read=5, bytes_written=5, ops=0)
    assert (single.ci, single.ops_per_cycle) == (0.0, 0.0)
    assert figure(None) == "n/a" and figure(0.0) == "0.000"


def _point(cycles, ops, devices=1):
    design = DesignPoint("dilation", 3, 3, "rect", 16, 12, 1, "line", True)
    frame = FrameFigures(width=16, height=12, cycles=cycles, outputs=140, ops=ops,
                         bytes_read=192, bytes_written=140, scaled=False,
                         simulated_heights=(12,), simulated_cycles=(cycles,))
    measurement = Measurement(point=design, name="p", frame=frame,
                              resources={"lut": 100, "ff": 50, "bram": 1, "dsp": 0},
                              resources_source="given")
    return RooflinePoint(measurement, devices, {"lut": 1000, "ff": 1000, "bram": 10, "dsp": 0},
                         100.0, "given", "link", 4.0)


def test_a_point_without_perf_pe_is_not_placed_and_every_output_says_so(tmp_path):
    unplaced, placed = _point(cycles=0, ops=1120), _point(cycles=160, ops=1120, devices=2)
    assert unplaced.ci_ops_per_byte == 1120 / 332 and unplaced.ops_per_cycle is None
    assert (unplaced.perf_pe_gbops, unplaced.cp_gbops, unplaced.attainable_gbops,
            unplaced.bound, unplaced.bound_by) == (None, None, None, None, None)
    roofline = Roofline("dilation", get_board("ulx3s-85f"), (unplaced, placed),
                        {"resources": "given", "clock": 100.0, "link": None, "devices": [1, 2],
                         "ceiling_clocks_mhz": None, "pes": None})
    assert roofline.best() is placed and roofline.ranked() == [placed, unplaced]
    assert not unplaced.placed and roofline.ceilings(unplaced) == []
    data = json.loads(json.dumps(roofline.to_json()))
    assert data["points"][0]["attainable_gbops"] is None and data["points"][0]["bound"] is None
    rows = list(csv.DictReader(points_csv(roofline).splitlines()))
    assert rows[0]["perf_pe_gbops"] == "" and rows[1]["perf_pe_gbops"] != ""
    plot_roofline(roofline, [tmp_path / "r.svg"])
    assert "CI or perf_PE undefined, not drawn: line U1" in (tmp_path / "r.svg").read_text()
    alone = Roofline("dilation", roofline.board, (unplaced,), roofline.options)
    assert alone.best() is None and alone.to_json()["best"] is None


def test_a_system_of_no_cycles_has_no_prediction_error():
    check = SystemCheck(pes=2, height=10, bandwidth_bytes_per_cycle=4.0, pe_ops_per_cycle=None,
                        pe_ci_ops_per_byte=2.0, cycles=0, ops=0, bytes_read=0, bytes_written=0)
    assert (check.compute_ops_per_cycle, check.predicted_ops_per_cycle, check.predicted_bound,
            check.simulated_ops_per_cycle, check.error) == (None, None, None, None, None)
    assert check.io_ops_per_cycle == 8.0


# -- suspect measurements ------------------------------------------------------------------------

@pytest.fixture
def narrow_counters(monkeypatch):
    """Every HMM the commands attach counts in 8 bits, so the figures of a small run saturate."""
    # Every PE's HMM is made by the harness's one instrumenting function, cached or not.
    pe_hmm, pipeline_hmm = harness._instrument, run_command.instrument_pipeline
    monkeypatch.setattr(harness, "_instrument", lambda pe, depth, probes, options, **cache:
                        pe_hmm(pe, depth, probes, {**options, "counter_bits": 8}, **cache))
    monkeypatch.setattr(run_command, "instrument_pipeline",
                        lambda pe, **options: pipeline_hmm(pe, counter_bits=8, **options))


def _suspect_line(capsys):
    err = capsys.readouterr().err
    assert err.startswith("hwgen: suspect measurement: ") and err.count("\n") == 1, err
    return err


def test_sim_with_a_saturated_counter_writes_its_outputs_and_exits_3(narrow_counters, tmp_path,
                                                                     capsys):
    report, output = tmp_path / "sim.json", tmp_path / "out.npy"
    # Half a byte per cycle: the 160 bytes a line buffer reads take more than 255 cycles.
    assert main(["sim", "dilation", *SMALL, "--buffer", "line", "--mem-bandwidth", "0.5",
                 "--json", str(report), "--output", str(output), "-q"]) == EXIT_SUSPECT == 3
    err = _suspect_line(capsys)
    data = json.loads(report.read_text())
    assert {"cycles", "busy_cycles"} <= set(data["saturated"]) == set(data["hmm"]["saturated"])
    assert data["cycles"] == 255 and data["bytes_read"] == 160 and data["fetch_model_matches"]
    # ops = 8 x 112 outputs = 896 is 8 times the bytes written, which fit: exact, not saturated.
    assert data["ops"] == 896 and "ops" not in data["saturated"]
    assert data["suspect"] == ["HMM values saturated, their figures are lower bounds: "
                               + ", ".join(data["saturated"])]
    assert "cycles" in err and output.is_file()


def test_sim_whose_byte_count_saturated_leaves_the_fetch_model_unchecked(narrow_counters,
                                                                           tmp_path, capsys):
    report = tmp_path / "sim.json"
    # Rows of 80 pixels: the line buffer reads 4 x 80 = 320 bytes, beyond an 8-bit count.
    assert main(["sim", "dilation", "--width", "80", "--height", "4", "--buffer", "line",
                 "--json", str(report)]) == EXIT_SUSPECT
    out, err = capsys.readouterr()
    data = json.loads(report.read_text())
    assert "bytes_read" in data["saturated"] and data["bytes_read"] == 255
    # 255 bytes are a lower bound of the 320 the model reads: no mismatch, only no check.
    assert data["fetch_model"]["bytes_read"] == 320 and data["fetch_model_matches"] is None
    assert "fetch model cannot be checked (its byte counts saturated)" in out
    assert not any("fetch model" in reason for reason in data["suspect"])


def test_a_saturated_byte_count_refutes_the_model_only_from_above():
    def figures(read, saturated=("bytes_read",)):
        return CycleData(cycles=10, outputs=5, bytes_read=read, bytes_written=5, ops=5,
                         saturated=saturated)
    assert figures(255).traffic_matches(320, 5) is None
    assert figures(255).traffic_matches(200, 5) is False
    assert figures(255).traffic_matches(320, 6) is False     # the exact count still decides
    assert figures(255, ()).traffic_matches(255, 5) is True
    assert figures(255, ()).traffic_matches(320, 5) is False


def test_sim_whose_traffic_differs_from_the_fetch_model_exits_3(monkeypatch, tmp_path, capsys):
    model = WindowFilter.traffic
    monkeypatch.setattr(WindowFilter, "traffic",
                        lambda pe: replace(model(pe), bytes_read=model(pe).bytes_read + 1))
    report = tmp_path / "sim.json"
    assert main(["sim", "dilation", *SMALL, "--json", str(report)]) == 3
    out, err = capsys.readouterr()
    assert "fetch model DOES NOT MATCH" in out
    last = err.replace("\r", "\n").splitlines()[-1]     # after the progress bar's lines
    assert last == ("hwgen: suspect measurement: the traffic measured does not match the fetch "
                    "model")
    data = json.loads(report.read_text())
    assert data["fetch_model_matches"] is False and data["suspect"]


def test_run_with_saturated_counters_exits_3(narrow_counters, tmp_path, capsys):
    # 12 steps: the job alone lasts more than 255 cycles (with 8 steps the HMM counted 252 to
    # 256 cycles up to the host's freeze, as the host's drain loop happened to meet the end).
    report = tmp_path / "run.json"
    assert main(["run", "pi", "--steps", "12", "--threads", "2", "--json", str(report), "-q"]) == 3
    err = _suspect_line(capsys)
    data = json.loads(report.read_text())
    assert data["result_matches_numpy_model"] and "cycles" in data["saturated"]
    assert data["suspect"] and "cycles" in err


def test_roofline_point_measured_with_a_saturated_counter_is_flagged(narrow_counters, tmp_path,
                                                                     monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    # Short frames of 3 and 4 rows of 80 pixels: 4 x 80 = 320 bytes read > 255.
    assert main(["roofline", "dilation", "--board", "ulx3s-85f", "--image", "80x10",
                 "--unroll", "1,2", "--buffer", "line", "--out", str(out), "-q",
                 "-j", "1"]) == 3     # in this process, where the HMM is narrowed
    err = _suspect_line(capsys)
    assert "2 design point(s) measured with saturated HMM counters" in err
    assert {p.name for p in out.iterdir()} == {"roofline.png", "roofline.svg", "points.csv",
                                               "roofline.json"}
    rows = list(csv.DictReader((out / "points.csv").read_text().splitlines()))
    assert all("bytes_read" in row["saturated"].split() for row in rows)
    data = json.loads((out / "roofline.json").read_text())
    assert [s["label"] for s in data["suspect"]] == ["line U1", "line U2"]
    assert all(p["frame"]["saturated"] for p in data["points"])
    assert "SUSPECT" in (out / "roofline.svg").read_text()


def test_roofline_measured_within_the_counters_is_not_flagged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["roofline", "dilation", "--board", "ulx3s-85f", "--image", "16x10",
                 "--unroll", "1", "--buffer", "line", "--out", str(out), "-q"]) == 0
    data = json.loads((out / "roofline.json").read_text())
    assert data["suspect"] == [] and data["points"][0]["saturated"] == []
    assert data["points"][0]["resources_unmodelled"] == {}


# -- a host that waits, but not forever ----------------------------------------------------------

class StuckBusyHMM(wiring.Component):
    """An HMM port that answers every read, always with the status "busy"."""

    def __init__(self):
        super().__init__({"hmm": In(PortSignature(4))})

    def elaborate(self, platform):
        m = Module()
        reads = Signal(READ_LATENCY_CYCLES)
        m.d.sync += reads.eq(Cat(self.hmm.read, reads[:-1]))
        m.d.comb += [self.hmm.rvalid.eq(reads[-1]),
                     self.hmm.rdata.eq(1 << STATUS_BITS["busy"])]
        return m


def test_the_host_gives_up_on_an_hmm_that_stays_busy_and_a_job_that_never_ends():
    dut = StuckBusyHMM()
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    raised = []

    async def host(ctx):
        hmm = HMMHost(ctx, dut.hmm, SimpleNamespace(tables=(), traces=()))
        with pytest.raises(HMMError, match=r"still busy 66 cycles after the command clear "
                                           r"\(it ends within 64\)"):
            await hmm.command("clear")
        raised.append("command")
        with pytest.raises(HMMError, match=r"not finished after the host waited 64 cycles"):
            await hmm.read_when_done(lambda: False, max_cycles=64)
        raised.append("poll")

    sim.add_testbench(host)
    sim.run()
    assert raised == ["command", "poll"]
