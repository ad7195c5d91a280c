"""The README's commands and Python examples (and those of docs/traces.md and docs/python.md) run
as written, each in a fresh folder, as a user would paste them: they cannot drift from what
hwgen does."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TRACES = ROOT / "docs" / "traces.md"
PYTHON = ROOT / "docs" / "python.md"

# Commands that run long: real synthesis, place and route, sweeps.
# Real workloads, out of Amaranth's simulator's reach: they run with the engine a user gets by
# default (the suite otherwise runs Amaranth's simulator, to spare a compile per design).
REAL_WORKLOADS = ("--dim 512", "--width 1920")
SLOW = ("hwgen synth", "hwgen overhead", "hwgen roofline", "hwgen explore", *REAL_WORKLOADS)


def indented_blocks(text):
    """The indented code blocks of a markdown text, as lists of lines (indent removed)."""
    blocks, current, previous = [], [], ""
    for line in text.splitlines():
        if line.startswith("    ") and (current or not previous.strip()):
            current.append(line[4:])
        else:
            if current:
                blocks.append(current)
            current = []
        previous = line
    if current:
        blocks.append(current)
    return blocks


def shell_commands(path):
    """``(command, expected output lines)`` of every command in ``path``'s code blocks; a
    command written ``$ command`` is followed by the output it prints."""
    found = []
    for block in indented_blocks(path.read_text()):
        lines = iter(block)
        for line in lines:
            while line.endswith("\\"):
                line = line[:-1] + next(lines).strip()
            prompt = line.startswith("$ ")
            command = line[2:] if prompt else line
            if not re.match(r"(pip|python|pytest)\b", command):
                continue
            # Synopses such as `python -m hwgen build KERNEL [options]` are not commands.
            if re.search(r"\b[A-Z]{3,}\b|\[(--|options)", command.split("#")[0]):
                continue
            output = []
            if prompt:
                output = [out for out in lines]
            found.append((command, output))
    return found


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


def _environment(command):
    environment = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="error::DeprecationWarning")
    if any(workload in command for workload in REAL_WORKLOADS):
        environment.pop("HWGEN_ENGINE", None)
    return environment


def _run(command, cwd):
    """Run one command line of the README the way its shell would (``&&`` chains, ``#``
    comments), with this interpreter as ``python``."""
    words = shlex.split(command, comments=True)
    steps, step = [], []
    for word in words:
        if word == "&&":
            steps.append(step)
            step = []
        else:
            step.append(word)
    steps.append(step)
    outputs = []
    for step in steps:
        if step[:2] == ["pip", "install"]:
            # This environment is the install the README makes (the test runs inside it).
            continue
        assert step[0] == "python", f"cannot run {step[0]!r} of {command!r}"
        done = subprocess.run([sys.executable, *step[1:]], cwd=cwd, env=_environment(command),
                              capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        outputs.append(done.stdout)
    return "".join(outputs)


def _cases(path):
    cases = []
    for command, output in shell_commands(path):
        if re.search(r"(^|&& )pytest\b", command):
            continue   # the suite itself: it is running now
        marks = [pytest.mark.slow] if any(slow in command for slow in SLOW) else []
        cases.append(pytest.param(command, output, marks=marks, id=command[:70]))
    return cases


def test_the_readme_commands_are_found():
    commands = [command for command, _ in shell_commands(README)]
    assert "pip install -e . && python -m hwgen build dilation --unroll 8" in commands
    assert "pip install -e '.[test]' && pytest" in commands
    assert any(command.startswith("python -m hwgen run pi") for command in commands)
    assert len(python_blocks(README)) == 2


@pytest.mark.parametrize("command, output", _cases(README) + _cases(TRACES))
def test_a_documented_command_runs_as_written(command, output, tmp_path):
    if "examples/" in command:
        # As the README says: from a folder that holds the repository's examples.
        shutil.copytree(ROOT / "examples", tmp_path / "examples")
    printed = _run(command, tmp_path).splitlines()
    for line in output:
        assert line in printed, f"{command}: the README shows {line!r}; it printed:\n" + \
            "\n".join(printed)


@pytest.mark.parametrize("path, index", [(path, index) for path in (README, PYTHON)
                                          for index in range(len(python_blocks(path)))])
def test_a_python_example_runs_as_written(path, index, tmp_path):
    (tmp_path / "example.py").write_text(python_blocks(path)[index])
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=_environment(""),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    if path == PYTHON:
        # What the page says the readout holds, as it prints it.
        assert done.stdout.startswith("uint8 (14, 30)\nhmm ")
        assert "{'fsm.ctrl': {'IDLE': " in done.stdout and "'transferring': " in done.stdout
