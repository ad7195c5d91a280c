"""What a new user hits first: help, typos, options that do not apply, where outputs go, the
exit status of a measurement that dropped records, sizes that cannot fit, and the caches on a
locked-down machine."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hwgen.cli.commands.sim import BYTES_PER_PIXEL, check_fits
from hwgen.cli.main import main, make_parser
from hwgen.errors import HwgenError
from hwgen.sim.cache import CacheUnwritable, cache_dir, cache_root, tool_environment

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--width", "12", "--height", "6"]


def hwgen(*args, cwd=None, env=None):
    """Run ``python -m hwgen`` as a user would."""
    env = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "hwgen", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def one_line_error(capsys, argv, status=2):
    """The one line ``main(argv)`` prints on standard error, checking its status."""
    assert main(argv) == status
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.err


# -- help, typos, choices ------------------------------------------------------------------------

def test_hwgen_alone_prints_help_on_stdout_and_succeeds(capsys):
    # As git and pip do.
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: hwgen") and "commands:" in captured.out
    assert captured.err == ""


@pytest.mark.parametrize("argv, message", [
    (["sim", "dilation", "--unrol", "2"], "unrecognized arguments: --unrol 2; did you mean "
                                          "'--unroll'?"),
    (["sim", "dilation", "--engine", "pysm"], "--engine must be one of auto, pysim, compiled, not "
                                              "'pysm'; did you mean 'pysim'?"),
    (["sm", "dilation"], "COMMAND must be one of list, build, sim"),
    (["sm", "dilation"], "did you mean 'sim'?"),
    (["sim", "dilation", "--buffer", "smrt"], "--buffer must be one of none, smart, line, not "
                                              "'smrt'; did you mean 'smart'?"),
    (["run", "pi", "--probes", "ful"], "did you mean 'full'?"),
])
def test_a_typo_gets_one_line_and_a_suggestion(capsys, argv, message):
    assert message in one_line_error(capsys, argv)


def test_options_are_not_abbreviated():
    # `--unrol 2` is a typo, not --unroll: argparse's prefix matching is off everywhere.
    parser = make_parser()
    assert all(not sub.allow_abbrev for sub in parser.commands.values())
    with pytest.raises(HwgenError, match="--unrol"):
        parser.parse_args(["sim", "dilation", "--unrol", "2"])


def test_every_choice_reads_the_same_in_every_help():
    # A|B|C, as --buffer none|smart|line; never argparse's {a,b,c}.
    for name, sub in make_parser().commands.items():
        text = sub.format_help()
        assert "{" not in text, f"{name}: {text}"
    roofline = make_parser().commands["roofline"].format_help()
    assert "--pipeline on|off|both" in roofline and "--resources estimate|synth" in roofline


def test_sim_help_names_both_engines():
    text = make_parser().commands["sim"].format_help()
    assert "compiled to C++" in text and "Amaranth's simulator" in text


def test_jobs_default_alike_in_roofline_and_explore():
    parser = make_parser()
    jobs = {command: parser.parse_args([command, "dilation"]).jobs
            for command in ("roofline", "explore")}
    assert jobs == {"roofline": os.cpu_count(), "explore": os.cpu_count()}


def test_profile_html_is_an_alias_of_report(capsys):
    parser = make_parser()
    assert parser.parse_args(["profile", "dilation", "--report", "p.html"]).report == "p.html"
    assert parser.parse_args(["profile", "dilation", "--html", "p.html"]).report == "p.html"
    assert "--html is deprecated, use --report" in capsys.readouterr().err
    assert "--html" not in parser.commands["profile"].format_help()


# -- bad values, one line each -------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["sim", "dilation", *TINY, "--seed", "-1"], "--seed must be an integer >= 0, not -1"),
    (["run", "pi", "--seed", "-3"], "--seed must be an integer >= 0, not -3"),
    (["sim", "dilation", "--mem-bandwidth", "-1"], "--mem-bandwidth must be a positive number, "
                                                   "not -1.0\n"),
    (["roofline", "dilation", "--image", "512"], "--image must be WxH with positive integers, "
                                                 "such as 512x512, not '512'"),
    (["explore", "gemm", "--fast", "--variant", "tiled"], "--variant must be one of naive, "
                                                          "nocritical, vector, blocked, not 'tiled'"),
    (["explore", "pi", "--fast", "--lanes", "2"], "--lanes applies to gemm, not pi"),
    (["run", "gemm", "--variant", "vector", "--dim", "6"],
     "--lanes must divide dim 6, not 4 (4 is the default of --lanes: give --lanes)"),
])
def test_bad_values_get_one_line(capsys, argv, message):
    assert message in one_line_error(capsys, argv)


def test_an_empty_mask_file_says_so(capsys, tmp_path):
    (tmp_path / "mask.txt").write_text("\n")
    err = one_line_error(capsys, ["build", "dilation", "--mask", str(tmp_path / "mask.txt")])
    assert "the file is empty" in err and "different lengths" not in err


@pytest.mark.parametrize("argv, message", [
    (["profile", "dilation", "--threads", "4"], "--threads is one of the program options; it "
                                                "does not apply to kernel dilation"),
    (["profile", "gemm", "--unroll", "4"], "--unroll is one of the kernel options; it does not "
                                           "apply to program gemm"),
    (["estimate", "gemm", "--unroll", "8"], "--unroll is one of the kernel options; it does not "
                                            "apply to program gemm"),
    (["synth", "pi", "--mask=cross"], "--mask is one of the kernel options"),
    (["estimate", "dilation", "--dim", "8"], "--dim is one of the program options"),
])
def test_an_option_that_does_not_apply_is_refused(capsys, argv, message):
    assert message in one_line_error(capsys, argv)


# -- sizes that cannot fit -----------------------------------------------------------------------

def test_a_frame_that_cannot_fit_is_refused_before_any_work(capsys):
    err = one_line_error(capsys, ["sim", "dilation", "--width", "100000000", "--height",
                                  "100000000"])
    assert "needs about" in err and "PiB" in err and "the largest square frame that fits" in err


def test_check_fits_names_the_largest_square_frame():
    available = 10 * 2**30
    side = int((available / BYTES_PER_PIXEL) ** 0.5)
    check_fits(side, side, 1, available=available)
    with pytest.raises(HwgenError, match=f"about {side}x{side}$"):
        check_fits(side + 1, side + 1, 1, available=available)
    pes_side = int((available / (4 * BYTES_PER_PIXEL)) ** 0.5)
    with pytest.raises(HwgenError, match=f"4 frames of .* about {pes_side}x{pes_side}$"):
        check_fits(side, side, 4, available=available)


# -- where outputs go ----------------------------------------------------------------------------

def test_json_dash_is_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sim", "dilation", *TINY, "--json", "-"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)           # nothing else on standard output
    assert report["kernel"] == "dilation" and report["result_matches_numpy_model"]
    assert "outputs/cycle" in captured.err        # the summary went aside
    assert list(tmp_path.iterdir()) == []         # no file named "-"


def test_a_path_ending_in_slash_names_a_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sim", "dilation", *TINY, "--json", "js/", "--perfetto", "traces/",
                 "--report", "pages/", "-q"]) == 0
    trace = json.loads((tmp_path / "traces" / "sim-dilation.perfetto.json").read_text())
    assert trace["traceEvents"]
    assert json.loads((tmp_path / "js" / "sim-dilation.json").read_text())["kernel"] == "dilation"
    assert (tmp_path / "pages" / "sim-dilation.html").read_text().startswith("<!DOCTYPE html>")


def test_only_json_takes_dash_for_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["sim", "dilation", *TINY, "--perfetto", "-"])
    assert "--perfetto writes a file" in err and list(tmp_path.iterdir()) == []


def test_an_existing_folder_without_slash_is_not_taken_for_a_file(capsys, tmp_path):
    err = one_line_error(capsys, ["sim", "dilation", *TINY, "--json", str(tmp_path)])
    assert "is a folder, not a file; end it in / to write a file into it" in err


def test_build_writes_under_a_name_no_module_can_have(tmp_path):
    done = hwgen("build", "dilation", *TINY, "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = tmp_path.iterdir()
    assert folder.name == "hwgen-build" and not folder.name.isidentifier()


# -- measurements that dropped records exit 3 ----------------------------------------------------

def test_run_that_dropped_records_exits_3(capsys, tmp_path):
    # A one-record trace buffer that is read only at the end must drop thread-state records.
    out = tmp_path / "pi.json"
    assert main(["run", "pi", "--steps", "16", "--threads", "4", "--trace-depth", "1",
                 "--drain-interval", "0", "--json", str(out)]) == 3
    captured = capsys.readouterr()
    assert "hwgen: suspect measurement:" in captured.err and "dropped" in captured.err
    report = json.loads(out.read_text())
    assert report["state_records_dropped"] > 0
    assert any("dropped" in reason for reason in report["suspect"])


def test_sim_whose_timeline_dropped_records_exits_3(capsys, tmp_path):
    out = tmp_path / "sim.json"
    assert main(["sim", "dilation", *TINY, "--timeline-depth", "1", "--drain-interval", "0",
                 "--perfetto", str(tmp_path / "t.json"), "--json", str(out), "-q"]) == 3
    report = json.loads(out.read_text())
    assert report["timeline"]["records_dropped"] > 0
    assert any("dropped" in reason for reason in report["suspect"])


# -- masks from files in the sweeps --------------------------------------------------------------

def test_explore_takes_a_mask_file(tmp_path):
    (tmp_path / "cross.txt").write_text("010\n111\n010\n")
    done = hwgen("explore", "dilation", "--fast", "--mask", "cross.txt", "--unroll", "1",
                 "--buffer", "line", "--image", "32x16", "--verify", "0", "--out", "x", "-q",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "x" / "pareto.csv", newline="") as table:
        rows = list(csv.DictReader(table))
    # A cross has 5 entries, 4 comparisons per output (a full 3x3 has 8): with at most one
    # output per cycle per PE, a cross PE does at most 4 ops per cycle.
    one_pe = [row for row in rows if row["pes"] == "1"]
    assert one_pe and all(0 < float(row["ops_per_cycle"]) <= 4 for row in one_pe)
    assert max(float(row["ops_per_cycle"]) for row in one_pe) > 2


# -- caches --------------------------------------------------------------------------------------

@pytest.fixture
def clean_cache_env(monkeypatch):
    for name in ("HWGEN_CACHE_DIR", "XDG_CACHE_HOME", "YOWASP_CACHE_DIR", "MPLCONFIGDIR",
                 "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_cache_follows_xdg_then_hwgen_cache_dir(clean_cache_env, tmp_path):
    clean_cache_env.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "hwgen"
    clean_cache_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("synth") == tmp_path / "xdg" / "hwgen" / "synth"
    assert (tmp_path / "xdg" / "hwgen" / "synth").is_dir()
    clean_cache_env.setenv("XDG_CACHE_HOME", "relative")      # ignored, as the convention says
    assert cache_root() == tmp_path / "home" / ".cache" / "hwgen"
    clean_cache_env.setenv("HWGEN_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir("sweep") == tmp_path / "mine" / "sweep"


def test_every_cache_of_hwgen_is_in_the_one_folder(clean_cache_env, tmp_path):
    from hwgen.resources import synth
    from hwgen.roofline import sweep
    from hwgen.sim import compiled
    clean_cache_env.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    assert {compiled.cache_dir(), sweep.cache_dir(), synth.cache_dir()} == {
        tmp_path / "compiled", tmp_path / "sweep", tmp_path / "synth"}


def test_an_unwritable_cache_gets_one_line(clean_cache_env, tmp_path):
    (tmp_path / "file").write_text("")
    clean_cache_env.setenv("HWGEN_CACHE_DIR", str(tmp_path / "file" / "cache"))
    with pytest.raises(CacheUnwritable, match="point HWGEN_CACHE_DIR at a writable folder"):
        cache_dir("synth")
    done = hwgen("synth", "dilation", *TINY, "--board", "arty-a7-100t",
                 env=dict(os.environ, HWGEN_CACHE_DIR=str(tmp_path / "file" / "cache")))
    assert done.returncode == 2
    assert done.stderr.startswith("hwgen: error: cannot write the cache folder")
    assert done.stderr.count("\n") == 1


def test_a_read_only_home_sends_the_tools_caches_into_hwgens(clean_cache_env, tmp_path):
    # HOME is a file: nothing can be made under it (as a read-only home, even for root).
    (tmp_path / "home").write_text("")
    clean_cache_env.setenv("HOME", str(tmp_path / "home"))
    clean_cache_env.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    assert tool_environment() == {"XDG_CACHE_HOME": str(tmp_path / "cache" / "tools"),
                                  "MPLCONFIGDIR": str(tmp_path / "cache" / "matplotlib")}
    # A writable home: every tool keeps its own place.
    clean_cache_env.setenv("HOME", str(tmp_path / "home2"))
    assert tool_environment() == {}


def test_matplotlib_keeps_quiet_with_a_read_only_home(tmp_path):
    # A command imports matplotlib where it draws, after the command line has placed its cache:
    # as `hwgen list` and then a figure in the same process.
    (tmp_path / "home").write_text("")
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "MPLCONFIGDIR", "XDG_CONFIG_HOME")}
    env.update(HOME=str(tmp_path / "home"), HWGEN_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT))
    code = ("import sys\nfrom hwgen.cli.main import main\nstatus = main(['list'])\n"
            "from matplotlib.figure import Figure\nFigure().savefig('f.svg')\nsys.exit(status)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert (tmp_path / "cache" / "matplotlib").is_dir() and (tmp_path / "f.svg").is_file()


@pytest.mark.slow
def test_synthesis_runs_with_a_read_only_home(tmp_path):
    # YoWASP (and the wasmtime under it) and matplotlib get a writable cache: no traceback.
    (tmp_path / "home").write_text("")
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "YOWASP_CACHE_DIR", "MPLCONFIGDIR", "XDG_CONFIG_HOME")}
    env.update(HOME=str(tmp_path / "home"), HWGEN_CACHE_DIR=str(tmp_path / "cache"))
    done = hwgen("synth", "dilation", *TINY, "--board", "arty-a7-100t", "-q", cwd=tmp_path,
                 env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cache" / "synth").is_dir()
    assert any((tmp_path / "cache" / "tools").iterdir())


# -- the Pareto figures --------------------------------------------------------------------------

def _boxes_overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("luts", [
    np.geomspace(300, 80_000, 40),          # a kernel's points over 2.5 decades
    np.geomspace(1_900, 60_000, 12),        # pi's, over 1.5 decades: minor ticks get labels
])
def test_the_pareto_legend_covers_no_point_and_tick_labels_do_not_overlap(luts):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hwgen.roofline.fast import front_figure
    rng = np.random.default_rng(3)
    gops = 0.03 * (1 - np.exp(-luts / luts[0])) * rng.uniform(0.5, 1.0, len(luts))
    points = [SimpleNamespace(lut=lut, gops=g) for lut, g in zip(luts, gops)]
    front = [points[0], *sorted(points[1:], key=lambda p: -p.gops)[:3]]
    front.sort(key=lambda p: p.lut)
    figure = front_figure(points, front, title="t")
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    (ax,) = figure.axes
    legend = figure.legends[0].get_window_extent(renderer)
    assert not _boxes_overlap(legend, ax.get_window_extent(renderer))
    for axis in (ax.xaxis, ax.yaxis):
        low, high = sorted(axis.get_view_interval())
        labels = [tick.label1.get_window_extent(renderer)
                  for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]
                  if tick.label1.get_text() and tick.label1.get_visible()
                  and low <= tick.get_loc() <= high]
        assert len(labels) >= 2
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                assert not _boxes_overlap(a, b)


# -- benchmarks from anywhere ----------------------------------------------------------------------

def test_a_benchmark_runs_from_any_folder(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "profile_cost.py"), "200",
                           "1"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "200 cycles, best of 1" in done.stdout


# -- the library speaks Python, the command line speaks flags ------------------------------------

def test_the_library_names_parameters_and_the_cli_names_options(capsys):
    from hwgen.errors import ParameterError
    from hwgen.programs import GemmJob
    from hwgen.roofline.sweep import run_tasks
    with pytest.raises(ValueError, match="^jobs must be a positive integer, not 0$") as error:
        run_tasks([], jobs=0)
    assert isinstance(error.value, ParameterError) and error.value.parameter == "jobs"
    with pytest.raises(ValueError, match="^element_bits must be between 2 and 64, not 1$"):
        GemmJob("naive", dim=4, threads=2, element_bits=1)
    # The same checks from the command line: one line, the option's name, status 2.
    assert one_line_error(capsys, ["run", "gemm", "--element-bits", "1"]) == (
        "hwgen: error: --element-bits must be between 2 and 64, not 1\n")


def test_a_bug_is_not_taken_for_bad_input(monkeypatch):
    # A ValueError that no validation raised is a bug: it keeps its traceback.
    from hwgen.cli.commands import listing

    def broken(args):
        raise ValueError("a bug")
    monkeypatch.setattr(listing, "run", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["list"])
