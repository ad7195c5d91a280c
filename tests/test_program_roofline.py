"""Pipeline programs on the extended roofline: ``roofline PROGRAM`` and
:mod:`hwgen.roofline.program`, its figures held against ``hwgen run``'s simulation and the
roofline's formulas worked out here."""

import csv
import json
import math
from pathlib import Path

import pytest

from hwgen.boards import get_board
from hwgen.cli.main import main
from hwgen.discovery import load_spec
from hwgen.roofline.model import Roofline
from hwgen.roofline.program import ProgramDesignPoint, build_program_roofline, program_points

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "histogram.py"
SPEC = f"{EXAMPLE}:Histogram"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))


def _run(tmp_path, program, *options):
    """``hwgen run``'s JSON of one job (ideal memory, the default host)."""
    path = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}.json"
    assert main(["run", program, *options, "--engine", "pysim", "--json", str(path), "-q"]) == 0
    return json.loads(path.read_text())


def test_histogram_points_follow_the_simulation_and_the_roofline_formulas(tmp_path):
    histogram = load_spec(SPEC, "PROGRAM")
    jobs = [histogram(n=48, bins=8, threads=threads) for threads in (1, 2)]
    points = program_points(SPEC, jobs)
    assert [p.label for p in points] == ["1 thread", "2 threads"]
    board = get_board("ulx3s-85f")
    roofline = build_program_roofline(points, board, jobs=1)
    assert len(roofline.points) == 2 * board.device_count
    available = board.resources.as_counts()
    for placed in roofline.points:
        run = _run(tmp_path, SPEC, "--n", "48", "--bins", "8", "--threads",
                   str(placed.measurement.point.threads))
        frame = placed.measurement.frame
        # The job's closed-form traffic is what the simulation's HMM counted at the port.
        assert (frame.ops, frame.bytes_read, frame.bytes_written) == (
            run["ops"], run["bytes_read"], run["bytes_written"])
        assert placed.ci_ops_per_byte == pytest.approx(
            run["ops"] / (run["bytes_read"] + run["bytes_written"]))
        # The cycle model's ops per cycle, within 15% of the simulation's.
        assert placed.ops_per_cycle == pytest.approx(run["ops"] / run["cycles"], rel=0.15)
        resources = placed.measurement.resources
        sc = min(available[r] // resources[r] for r in resources if resources[r])
        assert placed.sc_pes_per_device == sc
        perf = placed.ops_per_cycle * placed.clock_mhz / 1e3
        io = placed.ci_ops_per_byte * placed.bandwidth_gbps
        assert placed.attainable_gbops == pytest.approx(min(sc * perf * placed.devices, io))
    # The JSON reads back to the same points.
    again = Roofline.from_json(json.loads(json.dumps(roofline.to_json())))
    assert again.points[0].measurement.point == points[0]
    assert isinstance(points[0], ProgramDesignPoint)


def test_roofline_gemm_from_the_command_line_with_confirm(tmp_path, capsys):
    out = tmp_path / "gemm"
    assert main(["roofline", "gemm", "--dim", "4", "--variant", "naive,nocritical",
                 "--threads", "2", "--confirm", "--engine", "pysim", "-j", "1",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "gemm on ulx3s-85f: 2 design points" in text and "confirm:" in text
    with open(out / "points.csv") as rows:
        labels = [row["label"] for row in csv.DictReader(rows)]
    assert labels == ["naive, 2 threads", "nocritical, 2 threads"]
    confirm = json.loads((out / "confirm.json").read_text())
    # GEMM of dim 4: 4**3 multiply-accumulates of 2 ops, as the simulation counts them.
    assert confirm["simulated"]["ops"] == 2 * 4 ** 3
    assert all(confirm["errors"][name] == 0 for name in ("ops", "bytes_read", "bytes_written"))
    assert abs(confirm["errors"]["cycles"]) < 0.25
    run = _run(tmp_path, "gemm", "--dim", "4", "--threads", "2",
               "--variant", confirm["label"].split(",")[0])
    assert confirm["simulated"]["cycles"] == run["cycles"]
    assert main(["report", str(out / "roofline.json"), "--out", str(tmp_path / "r.html"),
                 "-q"]) == 0


UNSHAPED = f'''
from hwgen.discovery import load_spec

Histogram = load_spec({str(EXAMPLE)!r} + ":Histogram", "PROGRAM")


class UnshapedHistogram(Histogram):
    """The histogram without its declared shape: no cycle model."""
    name = "unshaped-histogram"

    def shape(self):
        return None

    def cycle_budget(self, memory, host):
        return 200 * self.n + host.launch_delay_cycles * self.threads
'''


def test_a_job_without_a_shape_is_measured_by_one_simulation(tmp_path):
    path = tmp_path / "unshaped.py"
    path.write_text(UNSHAPED)
    spec = f"{path}:UnshapedHistogram"
    out = tmp_path / "roofline"
    assert main(["roofline", spec, "--n", "24", "--bins", "4", "--threads", "2",
                 "--engine", "pysim", "-j", "1", "--out", str(out), "-q"]) == 0
    (point,) = json.loads((out / "roofline.json").read_text())["points"]
    run = _run(tmp_path, spec, "--n", "24", "--bins", "4", "--threads", "2")
    frame = point["frame"]
    assert (frame["cycles"], frame["ops"], frame["bytes_read"], frame["bytes_written"]) == (
        run["cycles"], run["ops"], run["bytes_read"], run["bytes_written"])
    assert "simulation" in point["resources_source"]


@pytest.mark.parametrize("argv, message", [
    (["gemm", "--unroll", "2"], "--unroll applies to a kernel, not to gemm"),
    (["gemm", "--image", "8x8"], "--image applies to a kernel, not to gemm"),
    (["gemm", "--pes", "2"], "--pes simulates systems of window filters"),
    (["gemm", "--resources", "synth"], "--resources of a program's pipeline come from the "
                                       "estimate"),
    (["gemm", "--clock", "fmax"], "--clock fmax is measured for PEs"),
    (["gemm", "--threads", "0"], "--threads must be between 1 and 64, not 0"),
    (["dilation", "--dim", "4"], "--dim"),
])
def test_bad_program_roofline_options_are_one_line(argv, message, tmp_path, capsys):
    assert main(["roofline", *argv, "--out", str(tmp_path / "r"), "-q"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_sc_is_the_scarcest_resource():
    # A closed-form check of the SC the roofline uses for a pipeline: floor of available/used.
    histogram = load_spec(SPEC, "PROGRAM")
    (point,) = program_points(SPEC, [histogram(n=16, bins=4, threads=1)])
    roofline = build_program_roofline([point], "ulx3s-85f", devices=[1], clock=50.0)
    placed = roofline.points[0]
    used, available = placed.measurement.resources, placed.available_per_device
    ratios = {r: available[r] / used[r] for r in used if used[r]}
    assert placed.sc_pes_per_device == math.floor(min(ratios.values()))
    assert placed.limiting_resource == min(ratios, key=ratios.get)
    assert placed.clock_mhz == 50.0
