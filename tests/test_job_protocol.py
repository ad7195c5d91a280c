"""The job protocol: declared options, a program found by place or entry point, its options on
the command line, its cycle model from its own shape; checked on the histogram example."""

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from hwgen.cli.main import main
from hwgen.discovery import Registry, load_spec
from hwgen.errors import HwgenError
from hwgen.kernels.pipeline import Job, Option, Pipeline
from hwgen.model import predict_program
from hwgen.model.program import DEFAULT_FACTORS, factors
from hwgen.programs import PROGRAMS
from hwgen.sim import HostModel, MemoryModel, run_threads

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "histogram.py"
SPEC = f"{EXAMPLE}:Histogram"


@pytest.mark.parametrize("value, error, match", [
    (0, ValueError, "count must be between 1 and 9, not 0"),
    (10, ValueError, "count must be between 1 and 9, not 10"),
    ("3", TypeError, "count must be of type int"),
    (True, TypeError, "count must be of type int"),
])
def test_option_refuses_values_out_of_its_range(value, error, match):
    with pytest.raises(error, match=match):
        Option("count", int, 1, "a count", low=1, high=9).check(value)


def test_option_choices_and_flag():
    option = Option("frac_bits", str, "a", "x", choices=("a", "b"))
    assert option.flag == "--frac-bits" and option.allowed == "a, b"
    with pytest.raises(ValueError, match="frac_bits must be one of a, b, not 'c'"):
        option.check("c")


def test_file_spec_loads_the_job_once():
    histogram = load_spec(SPEC, "PROGRAM")
    assert issubclass(histogram, Job) and histogram is load_spec(SPEC, "PROGRAM")
    assert SPEC in PROGRAMS and PROGRAMS[SPEC] is histogram
    assert "gemm" in PROGRAMS and "fft" not in PROGRAMS
    with pytest.raises(HwgenError, match="no file"):
        load_spec("nowhere/none.py:X", "PROGRAM")
    with pytest.raises(HwgenError, match="has no 'Nothing'"):
        load_spec(f"{EXAMPLE}:Nothing", "PROGRAM")


def test_entry_points_add_programs(monkeypatch):
    point = metadata.EntryPoint(name="hist", value=f"{SPEC}", group="hwgen.programs")
    # An entry point names a module; the example's file is loaded as one to stand for it.
    module = load_spec(SPEC, "PROGRAM").__module__
    point = metadata.EntryPoint(name="hist", value=f"{module}:Histogram", group="hwgen.programs")
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group: [point] if group == "hwgen.programs" else [])
    registry = Registry("PROGRAM", dict(PROGRAMS.items()), group="hwgen.programs",
                        accepts=lambda obj: isinstance(obj, type) and issubclass(obj, Job),
                        kind="job")
    assert list(registry) == ["gemm", "pi", "hist"]
    assert registry["hist"] is load_spec(SPEC, "PROGRAM")


def _histogram(**options):
    return load_spec(SPEC, "PROGRAM")(**options)


@pytest.mark.parametrize("n, bins, threads, latency", [(40, 4, 3, 1), (48, 16, 2, 4)])
def test_histogram_counts_as_numpy_and_the_model_follows(n, bins, threads, latency):
    job = _histogram(n=n, bins=bins, threads=threads, seed=3)
    storage, params = job.memory()
    values = np.array(storage[:n])
    host, memory = HostModel(launch_delay_cycles=3), MemoryModel(latency_cycles=latency)
    run = run_threads(Pipeline(job.program), storage, params=params, host=host, memory=memory,
                      max_cycles=job.cycle_budget(memory, host), engine="pysim")
    # The reference: numpy's own histogram of the values in memory, bins of equal width.
    reference, _ = np.histogram(values, bins=bins, range=(0, 256))
    assert list(storage[n:n + bins]) == list(reference)
    assert run.ops == 2 * n
    # A kind the characterisation never saw: the model's stated default applies.
    assert factors("histogram") == DEFAULT_FACTORS
    prediction = predict_program(job, memory, host)
    assert abs(prediction.cycles / run.cycles - 1) < 0.15
    assert prediction.bytes_read == run.bytes_read and prediction.bytes_written == run.bytes_written


def test_histogram_options_on_the_command_line(capsys):
    with pytest.raises(SystemExit):
        main(["run", SPEC, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--bins BINS histogram: bins, a power of two (2..256) (default: 16)" in out
    assert main(["run", SPEC, "--bins", "3"]) == 2
    err = capsys.readouterr().err
    assert err == "hwgen: error: --bins must be a power of two, not 3\n"
    assert main(["run", "gemm", "--variant", "naive", "--lanes", "4"]) == 2
    assert ("--lanes applies to the vector and blocked variants of gemm, not to naive"
            in capsys.readouterr().err)
    assert main(["run", f"{EXAMPLE}:Nothing"]) == 2
    assert "has no 'Nothing'" in capsys.readouterr().err


def test_list_shows_declared_options(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "--frac-bits" in out and "4..28" in out and "hwgen.programs" in out


@pytest.mark.slow
def test_histogram_example_runs_from_any_folder(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result matches numpy" in done.stdout
