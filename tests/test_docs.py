"""The worked example in docs/pipeline.md runs as written."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "pipeline.md"


def test_pipeline_guide_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert len(blocks) == 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert "cycles;" in capsys.readouterr().out
