"""The worked examples in docs/ run as written."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
DOC = DOCS / "pipeline.md"


def test_pipeline_guide_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert len(blocks) == 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert "cycles;" in capsys.readouterr().out


def test_traces_guide_example_runs(capsys):
    doc = DOCS / "traces.md"
    (block,) = re.findall(r"```python\n(.*?)```", doc.read_text(), re.DOTALL)
    namespace = {}
    exec(compile(block, str(doc), "exec"), namespace)
    assert set(namespace["files"]) == {".prv", ".pcf", ".row", ".readme.txt"}
    assert namespace["trace"]["traceEvents"] and namespace["run"].state_records_dropped == 0


def test_profile_guide_example_runs(capsys, tmp_path):
    doc = DOCS / "profile.md"
    (block,) = re.findall(r"```python\n(.*?)```", doc.read_text(), re.DOTALL)
    script = tmp_path / "gcd.py"          # the profile shows lines of the file, as a user's
    script.write_text(block)
    exec(compile(block, str(script), "exec"), {})
    printed = capsys.readouterr().out
    shown = doc.read_text().split("prints (", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    assert printed == shown
