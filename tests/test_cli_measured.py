"""synth, estimate and overhead measure the design `build` writes and say which one; `list`
shows run's programs."""

import json

import pytest

from hwgen.boards import get_board
from hwgen.catalog import make_window_filter
from hwgen.cli.main import main
from hwgen.resources import estimate
from hwgen.sim import instrument_pe

SMALL = ["--width", "16", "--height", "6"]


def test_estimate_measures_the_pe_with_its_hmm_unless_told(tmp_path, capsys):
    with_hmm, bare = tmp_path / "hmm.json", tmp_path / "bare.json"
    assert main(["estimate", "dilation", *SMALL, "--board", "arty-a7-100t", "--json",
                 str(with_hmm)]) == 0
    assert main(["estimate", "dilation", *SMALL, "--board", "arty-a7-100t", "--no-instrument",
                 "--json", str(bare)]) == 0
    heads = [line for line in capsys.readouterr().out.splitlines() if " on arty-a7-100t" in line]
    assert len(heads) == 2
    assert "(with HMM) on arty-a7-100t" in heads[0] and "(bare) on arty-a7-100t" in heads[1]
    with_hmm, bare = json.loads(with_hmm.read_text()), json.loads(bare.read_text())
    assert (with_hmm["instrumented"], with_hmm["measured"]) == (True, "with HMM")
    assert (bare["instrumented"], bare["measured"]) == (False, "bare")
    pe = make_window_filter("dilation", width=16, height=6, tree_stages="lean")
    board = get_board("arty-a7-100t")
    assert with_hmm["lut"] == estimate(instrument_pe(pe, platform=board.elaboration_platform()),
                                       board).lut
    assert bare["lut"] == estimate(pe, board).lut < with_hmm["lut"]


@pytest.mark.slow
def test_synth_measures_what_build_writes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    reports = {}
    for name, extra in (("hmm", []), ("bare", ["--no-instrument"])):
        reports[name] = tmp_path / f"{name}.json"
        assert main(["synth", "dilation", *SMALL, "--board", "ulx3s-85f", "--no-fmax",
                     "--json", str(reports[name]), *extra]) == 0
    out = capsys.readouterr().out
    assert "(with HMM) on ulx3s-85f" in out and "(bare) on ulx3s-85f" in out
    with_hmm, bare = (json.loads(path.read_text()) for path in reports.values())
    assert with_hmm["instrumented"] and not bare["instrumented"]
    assert with_hmm["lut"] > 2 * bare["lut"] and with_hmm["ff"] > bare["ff"]


def test_list_shows_the_programs_of_run_and_their_options(tmp_path, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "programs (hwgen run PROGRAM;" in out
    assert "--variant      default naive; naive, nocritical, vector, blocked" in out
    assert "--variant      default series; series" in out
    assert "--dim          default 8; 1..4096" in out and "--steps        default 64;" in out
    assert main(["list", "--json"]) == 0
    programs = {p["name"]: p for p in json.loads(capsys.readouterr().out)["programs"]}
    assert set(programs) == {"gemm", "pi"}
    assert programs["gemm"]["variants"] == ["naive", "nocritical", "vector", "blocked"]
    # What list says are the defaults is what run takes when given nothing.
    for program, size in (("gemm", "dim"), ("pi", "steps")):
        report = tmp_path / f"{program}.json"
        assert main(["run", program, "-q", "--json", str(report)]) == 0
        parameters = json.loads(report.read_text())["parameters"]
        for name in (size, "threads", "frac_bits", "variant"):
            options = {option["name"]: option for option in programs[program]["options"]}
            assert parameters[name] == options[name]["default"], name
