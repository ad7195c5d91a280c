"""Every output option makes its folders, is checked before the work, leaves nothing
half-written, and is announced."""

import json

import numpy as np
import pytest

from hwgen.cli.main import main

SMALL = ["--width", "16", "--height", "6"]


@pytest.mark.parametrize("argv, written", [
    (["sim", "dilation", *SMALL, "--perfetto", "a/b/t.json"], ["a/b/t.json"]),
    (["sim", "dilation", *SMALL, "--paraver", "a/b"],
     [f"a/b/dilation_3x3_rect_u1_smart_p8_16x6{s}" for s in (".prv", ".pcf", ".row")]),
    (["sim", "dilation", *SMALL, "--json", "a/b/r.json"], ["a/b/r.json"]),
    (["sim", "dilation", *SMALL, "--output", "a/b/o.png"], ["a/b/o.png"]),
    (["sim", "dilation", *SMALL, "--vcd", "a/b/w.vcd"], ["a/b/w.vcd"]),
    (["run", "pi", "--steps", "8", "--threads", "2", "--perfetto", "a/b/pi.json"], ["a/b/pi.json"]),
    (["run", "pi", "--steps", "8", "--threads", "2", "--vcd", "a/b/pi.vcd"], ["a/b/pi.vcd"]),
    (["run", "pi", "--steps", "8", "--threads", "2", "--paraver", "a/b"],
     [f"a/b/pi-series{s}" for s in (".prv", ".pcf", ".row")]),
    (["estimate", "dilation", *SMALL, "--json", "a/b/e.json"], ["a/b/e.json"]),
    (["build", "dilation", *SMALL, "--out", "a/b"], ["a/b/dilation_3x3_rect_u1_smart_p8_16x6.v"]),
])
def test_every_output_option_makes_its_folders_and_says_what_it_wrote(
        argv, written, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    out = capsys.readouterr().out
    for path in written:
        assert (tmp_path / path).is_file()
        assert path in out
    # Nothing is left under a temporary name.
    assert not [p for p in (tmp_path / "a").rglob(".*")]


def test_quiet_announces_nothing(tmp_path, capsys):
    assert main(["sim", "dilation", *SMALL, "--json", str(tmp_path / "x/r.json"), "--vcd",
                 str(tmp_path / "x/w.vcd"), "--output", str(tmp_path / "x/o.npy"), "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["o.npy", "r.json", "w.vcd"]


@pytest.mark.parametrize("argv, message", [
    (["sim", "dilation", *SMALL, "--vcd", "{tmp}/file/w.vcd"], "--vcd: "),
    (["sim", "dilation", *SMALL, "--output", "{tmp}/file/o.npy"], "--output: "),
    (["sim", "dilation", *SMALL, "--json", "{tmp}"], "is a folder, not a file"),
    (["sim", "dilation", *SMALL, "--paraver", "{tmp}/file"], "exists and is not a folder"),
    (["build", "dilation", *SMALL, "--out", "{tmp}/file/deeper"], "--out: "),
    (["estimate", "dilation", *SMALL, "--json", "{tmp}/file/e.json"], "--json: "),
    (["roofline", "dilation", "--image", "16x6", "--out", "{tmp}/file/r"], "--out: "),
])
def test_an_unwritable_output_fails_before_the_work_and_makes_nothing(argv, message, tmp_path,
                                                                        capsys):
    (tmp_path / "file").write_text("a file, not a folder\n")
    before = sorted(tmp_path.rglob("*"))
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("hwgen: error: ") and message in captured.err
    assert captured.err.count("\n") == 1
    assert sorted(tmp_path.rglob("*")) == before


def test_a_failing_run_leaves_no_waveform_and_no_folder(tmp_path, capsys, monkeypatch):
    # The simulation fails after the waveform was started (a PE that never finishes).
    import hwgen.cli.commands.sim as sim_command

    def stuck(*args, vcd=None, **kwargs):
        with open(vcd, "w") as stream:
            stream.write("$date partial $end\n")
        raise KeyboardInterrupt
    monkeypatch.setattr(sim_command, "run_window_filter", stuck)
    assert main(["sim", "dilation", *SMALL, "--vcd", str(tmp_path / "new/deep/w.vcd"),
                 "--json", str(tmp_path / "new/r.json")]) == 130
    assert capsys.readouterr().err == "hwgen: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_json_of_estimate_is_written_whole(tmp_path, capsys):
    path = tmp_path / "deep" / "e.json"
    assert main(["estimate", "dilation", *SMALL, "--json", str(path), "-q"]) == 0
    data = json.loads(path.read_text())
    assert data["lut"] > 0 and data["instrumented"] is True


def test_npy_output_holds_the_smallest_unsigned_type(tmp_path, capsys):
    for bits, dtype in ((1, np.uint8), (8, np.uint8), (9, np.uint16), (16, np.uint16)):
        path = tmp_path / f"o{bits}.npy"
        assert main(["sim", "erosion", *SMALL, "--pixel-bits", str(bits), "--output", str(path),
                     "-q"]) == 0
        assert np.load(path).dtype == dtype
