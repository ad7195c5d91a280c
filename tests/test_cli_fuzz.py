"""Random command lines: every one ends in exit status 0, 2 (one line of error, nothing
written) or 3 (suspect, outputs written), never in a traceback, and leaves no partial file."""

import contextlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwgen.cli.main import main

# Numbers as a user types them: valid small ones, out of range, malformed, and absurdly large.
NUMBERS = ["0", "1", "2", "3", "4", "-1", "x", "1.5", "", "1e3", "nan", "99999999999999999999"]
SMALL_NUMBERS = ["1", "2", "3", "4", "6", "8"]

# A few options of every kind, each with a value strategy. Files are names inside the example's
# folder, existing ({dir}/image.npy, {dir}/mask.txt) or not.
KERNEL_OPTIONS = {
    "--unroll": st.sampled_from(NUMBERS),
    "--width": st.sampled_from(SMALL_NUMBERS + ["0", "-4", "w", "99999999999999999999"]),
    "--height": st.sampled_from(SMALL_NUMBERS + ["0", "h"]),
    "--buffer": st.sampled_from(["none", "smart", "line", "ring", ""]),
    "--size": st.sampled_from(["3x3", "2x4", "1x1", "3", "0x3", "9x9", "axb", "3x3x3"]),
    "--mask": st.sampled_from(["rect", "cross", "ellipse", "disk", "{dir}/mask.txt",
                               "{dir}/missing.txt", "{dir}/image.npy"]),
    "--pixel-bits": st.sampled_from(["1", "8", "12", "16", "0", "17", "b"]),
    "--tree-stages": st.sampled_from(["lean", "fast", "0", "1", "9", "-1", "slow"]),
    "--credits": st.sampled_from(["1", "4", "0", "-2", "c"]),
}
SIM_OPTIONS = {
    "--input": st.sampled_from(["{dir}/image.npy", "{dir}/missing.npy", "{dir}/mask.txt"]),
    "--mem-bandwidth": st.sampled_from(["0.5", "4", "0", "-1", "inf", "nan", "fast"]),
    "--mem-latency": st.sampled_from(["1", "3", "0", "-1", "x"]),
    "--mem-backpressure": st.sampled_from(["0", "0.3", "1", "-0.1", "nan"]),
    "--pes": st.sampled_from(["1", "2", "0", "-1"]),
    "--board": st.sampled_from(["ulx3s-85f", "ex500", "nowhere", "{dir}/board.toml"]),
    "--output": st.sampled_from(["{dir}/out.npy", "{dir}/out.txt", "{dir}/no/such/out.npy"]),
    "--json": st.sampled_from(["{dir}/report.json", "{dir}/no/such/report.json", "{dir}"]),
    "--paraver": st.sampled_from(["{dir}/paraver", "{dir}/image.npy", "{dir}/no/such/dir"]),
    "--timeline-depth": st.sampled_from(["16", "5", "0"]),
    "--no-instrument": st.just(None),
}
RUN_OPTIONS = {
    "--variant": st.sampled_from(["naive", "vector", "blocked", "series", "tiled"]),
    "--threads": st.sampled_from(["1", "2", "0", "65", "t"]),
    "--dim": st.sampled_from(["2", "4", "3", "0", "5000"]),
    "--steps": st.sampled_from(["4", "0", "99999999999999999999", "s"]),
    "--frac-bits": st.sampled_from(["0", "8", "40", "-1"]),
    "--lanes": st.sampled_from(["1", "2", "3"]),
    "--mem-latency": st.sampled_from(["1", "0"]),
    "--sample-period": st.sampled_from(["16", "0"]),
    "--trace-depth": st.sampled_from(["16", "3"]),
    "--json": st.sampled_from(["{dir}/run.json", "{dir}/no/such/run.json"]),
}
SWEEP_OPTIONS = {
    "--unroll": st.sampled_from(["1", "1,2", "2,2", "0", "x", ""]),
    "--buffer": st.sampled_from(["line", "smart,line", "ring", ""]),
    "--image": st.sampled_from(["8x6", "6x4", "2x2", "x", "0x8"]),
    "--board": st.sampled_from(["ulx3s-85f", "xd1000", "nowhere"]),
    "--devices": st.sampled_from(["1", "3", "0", "a"]),
    "--clock": st.sampled_from(["board", "100", "-5", "fmax", "fast"]),
    "--pes": st.sampled_from(["0", "-1", "x"]),
    "--out": st.sampled_from(["{dir}/sweep", "{dir}/image.npy"]),
}
KERNELS = ["dilation", "erosion", "median"]
COMMANDS = {
    # command: (what it runs, arguments every run of it starts with, the options it draws from)
    "build": (KERNELS, ["--width", "8", "--height", "6"], KERNEL_OPTIONS),
    "estimate": (KERNELS, ["--width", "8", "--height", "6"], KERNEL_OPTIONS),
    "sim": (KERNELS, ["--width", "8", "--height", "6"], {**KERNEL_OPTIONS, **SIM_OPTIONS}),
    "run": (["gemm", "pi", "fft"], ["--dim", "2"], RUN_OPTIONS),
    "roofline": (KERNELS, ["--image", "8x6", "--unroll", "1"], SWEEP_OPTIONS),
    "list": ([None], [], {"--json": st.just(None)}),
}


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from([*COMMANDS, "frobnicate"]))
    if command == "frobnicate":
        return [command, "dilation"]
    targets, start, options = COMMANDS[command]
    argv = [command]
    target = draw(st.sampled_from(targets))
    if target is not None:
        argv.append(target)
    argv += start
    for option in draw(st.lists(st.sampled_from(sorted(options)), max_size=3, unique=True)):
        value = draw(options[option])
        argv += [option] if value is None else [option, value]
    if command != "list":
        argv.append("-q")
    return argv


def _files(folder):
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_random_command_lines_exit_0_2_or_3_and_leave_nothing_half_written(argv):
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "work"
        folder.mkdir()
        np.save(folder / "image.npy", np.arange(48).reshape(6, 8))
        (folder / "mask.txt").write_text("0 1 0\n1 1 1\n0 1 0\n")
        (folder / "board.toml").write_text("name = 'half a board'\n")
        before = _files(folder)
        argv = [arg.replace("{dir}", str(folder)) for arg in argv]
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(folder)
        previous = os.environ.get("HWGEN_CACHE_DIR")
        os.environ["HWGEN_CACHE_DIR"] = str(Path(scratch) / "cache")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        finally:
            os.chdir(cwd)
            if previous is None:
                del os.environ["HWGEN_CACHE_DIR"]
            else:
                os.environ["HWGEN_CACHE_DIR"] = previous
        errors = [line for line in err.getvalue().splitlines() if line.startswith("hwgen: ")]
        assert code in (0, 2, 3), (argv, err.getvalue())
        assert "Traceback" not in err.getvalue()
        after = _files(folder)
        if code == 2:
            assert len(errors) == 1 and errors[0].startswith("hwgen: error: "), err.getvalue()
            assert after == before, (argv, after - before)
        if code == 3:
            assert len(errors) == 1 and errors[0].startswith("hwgen: suspect measurement: ")
        if code == 0:
            assert not errors
        # Nothing half-written is left behind, whatever happened.
        assert not [name for name in after if ".partial" in name or name.endswith(".tmp")
                    or Path(name).name.startswith(".")], after
