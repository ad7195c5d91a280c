"""Sweeps on a Dask cluster (``--scheduler``): the same files as a local sweep, the client's cache,
a worker that dies, workers with other versions, and Dask not installed."""

import os
import sys
import threading
import time

import pytest

import hwgen.roofline.cluster as cluster_module
import hwgen.roofline.sweep as sweep
from hwgen.cli.main import main
from hwgen.errors import ParameterError
from hwgen.roofline.cluster import Cluster, WorkerMismatch, check_scheduler, expected_versions
from hwgen.roofline.sweep import DesignPoint, measure

SWEEP = ["dilation", "--image", "16x12", "--board", "ulx3s-85f", "--engine", "pysim", "-q"]


def _points(unrolls, height=20):
    return [DesignPoint("dilation", 3, 3, "rect", 16, height, u, buffer, True)
            for buffer in ("smart", "line") for u in unrolls]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a LocalCluster of two worker processes, with a cache of their own."""
    distributed = pytest.importorskip("distributed")
    workers_cache = tmp_path_factory.mktemp("workers-cache")
    local = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
        env={"HWGEN_CACHE_DIR": str(workers_cache)})
    try:
        yield local.scheduler_address
    finally:
        local.close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache for this machine (the client)."""
    def use(name):
        monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / name))
        return tmp_path / name / "sweep"
    return use


def _outputs(folder):
    return {name: (folder / name).read_bytes() for name in ("points.csv", "roofline.json")}


# -- without a cluster -----------------------------------------------------------------------

def test_without_dask_the_scheduler_option_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)   # import distributed fails
    out = tmp_path / "out"
    code = main(["explore", *SWEEP, "--unroll", "1", "--buffer", "line",
                 "--scheduler", "local:2", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err == ("hwgen: error: --scheduler needs Dask's distributed scheduler, which is not "
                   "installed: pip install -e '.[cluster]'\n")
    assert not out.exists()


@pytest.mark.parametrize("text, expected", [
    ("local:3", 3), ("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786"), ("node7:8786", "node7:8786"),
    ("tls://[fe80::1]:8786", "tls://[fe80::1]:8786")])
def test_scheduler_is_an_address_or_local_workers(text, expected):
    pytest.importorskip("distributed")
    assert check_scheduler(text) == expected


@pytest.mark.parametrize("text, message", [
    ("local:0", "local:N needs at least one worker"), ("local:two", "must be a Dask scheduler"),
    ("tcp://host:port", "must be a Dask scheduler"), ("", "must be a Dask scheduler")])
def test_a_bad_scheduler_is_one_line(text, message):
    with pytest.raises(ParameterError, match=f"^scheduler .*{message}"):
        check_scheduler(text)


def test_the_progress_bar_counts_design_points(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    bars, seen = [], []

    def task(spec):
        seen.append(bars[-1].n)   # finished points as the task starts
        return spec["n"] * 10

    monkeypatch.setitem(sweep._TASKS, "frame", task)

    class Bar:
        def __init__(self, desc, *, total, unit, enabled):
            self.desc, self.total, self.unit, self.n = desc, total, unit, 0
            bars.append(self)

        def update(self, count):
            self.n += count

        def update_to(self, count):
            self.n = count

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            pass

    monkeypatch.setattr(sweep, "Progress", Bar)
    tasks = [("frame", {"n": n}) for n in range(5)]
    # Points of 2, 1 and 2 tasks; the first is answered by the cache the second time.
    assert sweep.run_tasks(tasks[:2], points=[2]) == [0, 10]
    seen.clear()
    assert sweep.run_tasks(tasks, points=[2, 1, 2]) == [0, 10, 20, 30, 40]
    bar = bars[-1]
    assert (bar.total, bar.unit, bar.desc) == (3, "point", "measuring")
    # One point from the cache, the second after its one task, the third after both of its.
    assert seen == [1, 2, 2] and bar.n == 3


# -- on a LocalCluster of two worker processes -----------------------------------------------

def _same_files(argv, scheduler, cache, folder):
    """Run ``argv`` here and on the cluster, each with a cache of its own: their files."""
    cache("local")
    assert main([*argv, "--out", str(folder / "local")]) == 0
    cache("cluster")
    assert main([*argv, "--scheduler", scheduler, "--out", str(folder / "cluster")]) == 0
    return _outputs(folder / "local"), _outputs(folder / "cluster")


def test_a_sweep_of_estimates_on_the_cluster_writes_the_same_files(scheduler, cache, tmp_path,
                                                                   capsys):
    local, cluster = _same_files(["roofline", *SWEEP, "--unroll", "1", "--buffer", "smart,line"],
                                 scheduler, cache, tmp_path)
    assert cluster == local
    assert local["points.csv"].count(b"estimate (ecp5 cost table)") == 2
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_a_synthesis_on_the_cluster_gives_the_same_files(scheduler, cache, tmp_path):
    local, cluster = _same_files(["explore", *SWEEP, "--unroll", "1", "--buffer", "line",
                                  "--resources", "synth"], scheduler, cache, tmp_path)
    assert cluster == local
    assert b"synth (Yosys synth_ecp5" in local["points.csv"]


def test_a_sweep_resumes_from_the_cache_with_the_missing_points_only(scheduler, cache):
    distributed = pytest.importorskip("distributed")
    folder = cache("client")
    points = _points([1, 2])
    bars = []

    class Bar(sweep.Progress):
        def __init__(self, desc, **kwargs):
            super().__init__(desc, **kwargs)
            self.descs, self.counts = [desc], []
            bars.append(self)

        def describe(self, desc):
            self.descs.append(desc)

        def update_to(self, count):
            super().update_to(count)
            self.counts.append(count)

    with Cluster(scheduler) as cluster:
        first = measure(points[:2], "ulx3s-85f", cluster=cluster)
        finished = {path.name: path.stat().st_mtime_ns for path in folder.glob("*.json")}
        # Two short frames and an estimate per point.
        assert len(finished) == 6
        with (distributed.get_task_stream(cluster.client) as stream,
              pytest.MonkeyPatch.context() as patch):
            patch.setattr(sweep, "Progress", Bar)
            every = measure(points, "ulx3s-85f", progress=True, cluster=cluster)
    assert len(stream.data) == 6
    assert every[:2] == first
    after = {path.name: path.stat().st_mtime_ns for path in folder.glob("*.json")}
    assert len(after) == 12 and {name: after[name] for name in finished} == finished
    (bar,) = bars
    assert bar.counts[0] == 2 and bar.counts[-1] == 4 and bar._total == 4
    assert set(bar.descs) == {"measuring on 2 Dask workers"}


def test_the_tasks_of_a_worker_killed_mid_sweep_run_on_another(scheduler, cache):
    points = _points([1, 2, 4])
    cache("local")
    local = measure(points, "ulx3s-85f")
    folder = cache("cluster")
    with Cluster(scheduler) as cluster:
        pids = cluster.client.run(os.getpid)
        killed = []

        def kill_a_busy_worker():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                busy = [worker for worker, keys in cluster.client.processing().items() if keys]
                if busy and any(folder.glob("*.json")):
                    killed.append(busy[0])
                    os.kill(pids[busy[0]], 9)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_a_busy_worker)
        killer.start()
        try:
            found = measure(points, "ulx3s-85f", cluster=cluster)
        finally:
            killer.join()
        assert killed, "no worker was busy while the sweep ran"
        assert pids[killed[0]] not in cluster.client.run(os.getpid).values()
    assert found == local
    assert len(list(folder.glob("*.json"))) == 3 * len(points)


def test_a_worker_with_other_versions_fails_the_sweep_in_one_line(scheduler, cache, tmp_path,
                                                                  monkeypatch, capsys):
    cache("client")
    other = dict(expected_versions(), amaranth="0.0-other")
    with Cluster(scheduler, expected=other) as cluster:
        with pytest.raises(WorkerMismatch, match=r"^worker tcp://\S+ differs from this machine: "
                                                 r"amaranth \S+ there, 0\.0-other here; "):
            measure(_points([1])[:1], "ulx3s-85f", cluster=cluster)
    monkeypatch.setattr(cluster_module, "expected_versions",
                        lambda: dict(other, **{"hwgen code": "0" * 64}))
    out = tmp_path / "out"
    code = main(["explore", *SWEEP, "--unroll", "1", "--buffer", "line",
                 "--scheduler", scheduler, "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("hwgen: error: worker tcp://")
    assert "hwgen code " in err and "there, 000000000000 here" in err
    assert "amaranth " in err and not out.exists()
