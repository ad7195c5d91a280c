"""The records own their JSON: what `sim`, `run`, `synth` and `overhead` write is the record's
`to_json()`, reads back with `from_json()` to the same record, is stamped with its schema and
version, documents every key in docs/json.md, and `hwgen report` refuses a schema it does not
know or a newer version with one line."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hwgen.cli.main import main
from hwgen.records import (RECORDS, OverheadRecord, RunResult, SchemaError, SimResult,
                           SynthRecord, read_record)
from hwgen.resources.overhead import Overhead
from hwgen.resources.synth import SynthResult
from hwgen.sim import STATE_NAMES

from report_pages import ReportPage

DOC = Path(__file__).resolve().parent.parent / "docs" / "json.md"

SIM = ["sim", "dilation", "--buffer", "line", "--unroll", "2", "--width", "32", "--height", "8",
       "--mem-bandwidth", "1.5", "--mem-latency", "2", "--mem-jitter", "3"]
RUN = ["run", "gemm", "--variant", "naive", "--threads", "3", "--dim", "4"]
EXPLORE = ["explore", "dilation", "--fast", "--unroll", "1,2", "--buffer", "smart,line",
           "--image", "16x8", "--max-pes", "2", "--mem-bandwidth", "2", "--verify", "1",
           "--no-verify-synth"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """``{command: JSON object}`` that ``sim`` and ``run`` wrote with ``--json`` and ``explore
    --fast`` as ``explore.json``."""
    folder = tmp_path_factory.mktemp("records")
    files = {}
    for argv in (SIM, RUN):
        path = folder / f"{argv[0]}.json"
        assert main([*argv, "--json", str(path), "-q"]) == 0
        files[argv[0]] = json.loads(path.read_text())
    assert main([*EXPLORE, "--out", str(folder / "explore"), "-q"]) == 0
    files["explore"] = json.loads((folder / "explore" / "explore.json").read_text())
    return files


def _synthesis(name, lut, ff, fmax):
    return SynthResult(name=name, board="ulx3s-85f", family="ecp5", command="synth_ecp5 -top top",
                       workarounds=(), lut=lut, lut_logic=lut - 8, lutram_luts=8, carry=4, ff=ff,
                       bram=1, dsp=0, cells={"LUT4": lut - 8, "TRELLIS_FF": ff}, unknown_cells={},
                       seeds=2, target_mhz=100.0, fmax_seeds_mhz=(fmax, fmax + 2),
                       fmax_mhz=fmax + 1, fmax_min_mhz=fmax, fmax_max_mhz=fmax + 2,
                       critical_path=("a -> b",), synth_seconds=1.5, pnr_seconds=2.5,
                       key="0123", tool_versions={"hwgen": "1"})


SYNTH = SynthRecord("kernel", "dilation", {"unroll": 2}, True, "with the HMM",
                    _synthesis("dilation_u2", 300, 200, 150.0))
OVERHEAD = OverheadRecord(
    "program", "gemm", "gemm_t2", {"threads": 2}, "minimal",
    Overhead(board="ulx3s-85f", device_lut=83640, device_ff=83640,
             bare=_synthesis("bare", 300, 200, 150.0),
             with_hmm=_synthesis("with HMM", 420, 310, 140.0), bram_block_bits=18432,
             bare_memory_bits=0, with_hmm_memory_bits=4096, tool_versions={"hwgen": "1"}))


def _through_text(obj):
    return json.loads(json.dumps(obj))


@pytest.mark.parametrize("command, cls", [("sim", SimResult), ("run", RunResult)])
def test_a_command_writes_its_record_and_the_record_reads_it_back(written, command, cls):
    data = written[command]
    assert (data["schema"], data["schema_version"]) == (cls.SCHEMA, 1)
    record = cls.from_json(data)
    assert record.to_json() == data
    assert read_record(data) == record


@pytest.mark.parametrize("record", [SYNTH, OVERHEAD])
def test_synthesis_records_read_back_to_the_same_record(record):
    data = _through_text(record.to_json())
    assert data["schema"] == type(record).SCHEMA and data["tool_versions"] == {"hwgen": "1"}
    assert type(record).from_json(data) == record
    assert read_record(data).to_json() == data


def test_overhead_figures_are_the_differences_of_the_two_syntheses():
    figures = _through_text(OVERHEAD.to_json())["figures"]
    assert figures["lut"] == {"bare": 300, "with_hmm": 420, "overhead": 120,
                              "overhead_percent": pytest.approx(40.0)}
    assert figures["block_ram_bits"]["bare"] == 18432
    assert figures["memory_bits"]["overhead_percent"] is None    # of 0 bits: undefined


def test_a_run_read_back_keeps_every_thread_s_state_cycles(written):
    data = written["run"]
    run = RunResult.from_json(data).run
    assert run.readout is None and run.layout is None
    # The state cycles of each thread add up to the job's cycles, and the percentages the file
    # holds are the shares of them.
    cycles = np.array(run.state_cycles)
    assert (cycles.sum(axis=1) == data["cycles"]).all()
    shares = [[t[f"{name}_percent"] for name in STATE_NAMES] for t in data["threads"]]
    np.testing.assert_allclose(100 * cycles / data["cycles"], shares)
    assert run.ci == pytest.approx(data["ops"] / (data["bytes_read"] + data["bytes_written"]))


def test_records_refuse_another_schema_and_a_newer_version(written):
    data = written["sim"]
    with pytest.raises(SchemaError, match="not a hwgen.run record"):
        RunResult.from_json(data)
    with pytest.raises(SchemaError, match="version 2 was written by a newer hwgen"):
        SimResult.from_json({**data, "schema_version": 2})
    with pytest.raises(SchemaError, match="unknown schema 'hwgen.power'"):
        read_record({**data, "schema": "hwgen.power"})


def _documented(section):
    """The keys docs/json.md names in the first column of a record's table."""
    text = DOC.read_text().split(f"## `{section}`", 1)[1].split("\n## ", 1)[0]
    return {key for row in re.findall(r"^\| (.*?) \|", text, re.MULTILINE)
            for key in re.findall(r"`([a-z_<>]+)`", row)}


@pytest.mark.parametrize("schema, make", [
    ("hwgen.sim", lambda w: w["sim"]), ("hwgen.run", lambda w: w["run"]),
    ("hwgen.synth", lambda w: SYNTH.to_json()), ("hwgen.overhead", lambda w: OVERHEAD.to_json()),
    ("hwgen.explore", lambda w: w["explore"]),
])
def test_every_key_a_record_writes_is_documented(written, schema, make):
    data = make(written)
    documented = _documented(schema) | {"schema", "schema_version", "tool_versions"}
    if schema == "hwgen.synth":
        documented |= {"kernel", "program"}
    assert set(data) - documented == set()
    if schema == "hwgen.explore":
        row_keys = set(data["points"][0]) | set(data["remeasured"][0]) | set(data["budgets"][0])
        section = DOC.read_text().split(f"## `{schema}`", 1)[1].split("\n## ", 1)[0]
        assert row_keys - set(re.findall(r"`([a-z_]+)`", section)) == set()
    assert schema in RECORDS and f"| `{schema}` | 1 |" in DOC.read_text()


@pytest.mark.parametrize("change, message", [
    ({"schema_version": 7}, "hwgen.sim version 7 was written by a newer hwgen; this one reads up "
                            "to version 1: upgrade hwgen"),
    ({"schema": "hwgen.power"}, "unknown schema 'hwgen.power' (this hwgen reads hwgen.sim, "
                                "hwgen.run, hwgen.synth, hwgen.overhead, hwgen.explore)"),
])
def test_report_refuses_an_unknown_or_newer_schema_in_one_line(written, tmp_path, capsys,
                                                               change, message):
    path = tmp_path / "sim.json"
    path.write_text(json.dumps({**written["sim"], **change}))
    assert main(["report", str(path), "--out", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert err == f"hwgen: error: DIR_OR_JSON: {str(path)!r}: {message}\n"
    assert not (tmp_path / "page.html").exists()


def test_report_of_a_folder_skips_a_newer_record_and_says_why(written, tmp_path, capsys):
    (tmp_path / "a.json").write_text(json.dumps(written["run"]))
    (tmp_path / "b.json").write_text(json.dumps({**written["sim"], "schema_version": 2}))
    assert main(["report", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"skipped {tmp_path / 'b.json'}: hwgen.sim version 2 was written by a newer" in err
    assert (tmp_path / "report.html").exists()


def test_report_reads_the_figures_through_the_record(written, tmp_path):
    """A stamped file is drawn as its record reads it: a CI the file contradicts is derived
    again from the counts."""
    data = {**written["sim"], "ci": 12345.0}
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(data))
    assert main(["report", str(path), "-q"]) == 0
    page = (tmp_path / "sim.html").read_text()
    assert "12345" not in page
    ci = data["ops"] / (data["bytes_read"] + data["bytes_written"])
    assert f"{ci:.3f}" in page


def test_a_record_without_a_stamp_is_not_read_as_one(written):
    with pytest.raises(SchemaError, match="no schema"):
        read_record({key: value for key, value in written["sim"].items() if key != "schema"})


def _front_by_brute_force(rows):
    """The labels of the points no other point beats in both Gops/s and LUTs."""
    return {r["label"] for r in rows
            if not any(o["lut"] <= r["lut"] and o["gops"] > r["gops"]
                       or o["lut"] < r["lut"] and o["gops"] >= r["gops"] for o in rows)}


def test_explore_fast_writes_its_record_and_the_page_report_reads(tmp_path, capsys):
    out, page_path = tmp_path / "fast", tmp_path / "fast.html"
    assert main([*EXPLORE, "--out", str(out), "--report", str(page_path)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out / 'explore.json'}, {page_path}" in printed
    data = json.loads((out / "explore.json").read_text())
    assert (data["schema"], data["kernel"]) == ("hwgen.explore", "dilation")
    assert read_record(data).to_json() == data
    # 2 U x 2 buffers x (2 register policies pipelined) x PE counts 1, 2.
    assert len(data["points"]) == 16
    front = {p["label"] for p in data["points"] if p["on_front"]}
    assert front == _front_by_brute_force(data["points"])
    (checked,) = data["remeasured"]
    assert checked["label"] in front and checked["synthesized_lut"] is None
    assert checked["cycle_error_percent"] == pytest.approx(
        100 * (checked["predicted_cycles"] - checked["simulated_cycles"])
        / checked["simulated_cycles"])
    page = ReportPage(page_path.read_text())
    assert page.sections == [["explore", "explore --fast: dilation on ulx3s-85f, 16x8"]]
    shown = page.tables["Pareto front, by LUTs"]
    assert {row[0] for row in shown[1:]} == front
    luts = [int(row[shown[0].index("LUT")].replace(",", "")) for row in shown[1:]]
    assert luts == sorted(luts)
    assert page.cards[0]["design points"] == "16"
    assert ("pareto" in {name for _, name in page.figures}
            and page.tables["The front re-measured"][1][0] == checked["label"])
    # `hwgen report` of the folder explore wrote gives the same page.
    assert main(["report", str(out), "-q"]) == 0
    assert (out / "report.html").read_text() == page_path.read_text()


def test_report_refuses_an_incomplete_record_in_one_line(written, tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({k: v for k, v in written["run"].items() if k != "host"}))
    assert main(["report", str(path), "--out", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert err == (f"hwgen: error: DIR_OR_JSON: {str(path)!r}: not a complete hwgen.run record "
                   f"(KeyError: 'host')\n")


def test_report_draws_a_program_s_synthesis(tmp_path):
    path = tmp_path / "synth.json"
    record = SynthRecord("program", "gemm", {"threads": 2}, True, "with the HMM",
                         _synthesis("gemm_t2", 900, 700, 90.0))
    path.write_text(json.dumps(record.to_json()))
    assert main(["report", str(path), "-q"]) == 0
    page = ReportPage((tmp_path / "synth.html").read_text())
    assert page.sections == [["synth", "synth: gemm on ulx3s-85f, with the HMM"]]
    assert page.cards[0]["LUT"] == "900 LUT" and page.cards[0]["Fmax"] == "91.0 MHz"
