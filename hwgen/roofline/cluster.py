"""Run a sweep's tasks on a Dask distributed cluster: ``--scheduler ADDRESS`` of ``hwgen roofline``
and ``hwgen explore``.

:class:`Cluster` connects to a running scheduler (``tcp://host:8786``) or starts a
``LocalCluster`` of worker processes on this machine (``local:N``). Its :meth:`Cluster.executor`
is a :class:`concurrent.futures.Executor`, so :func:`hwgen.roofline.sweep.run_tasks` runs the same
task functions on it as on its own worker processes, and writes every result into this machine's
cache as it arrives. Each task carries the versions of the machine that sent it: a worker with
other tool versions or other hwgen code fails it with :class:`WorkerMismatch` rather than mixing
its results with this machine's.

Dask is an optional extra (``pip install -e '.[cluster]'``); nothing here imports it before a
scheduler is asked for.
"""

import concurrent.futures
import re

from ..errors import HwgenError, ParameterError
from ..versions import source_hash, tool_versions

__all__ = ["Cluster", "WorkerMismatch", "check_scheduler", "expected_versions", "run_checked"]

#: Seconds to wait for a scheduler to answer before saying it cannot be reached.
CONNECT_SECONDS = 20
#: ``local:N``: N worker processes on this machine.
_LOCAL = re.compile(r"local:(\d+)")
#: ``[protocol://]host[:port]``, as ``dask scheduler`` prints its address.
_ADDRESS = re.compile(r"([a-z][a-z0-9+]*://)?(\[[0-9a-fA-F:]+\]|[^\s:/\[\]]+)(:\d+)?")
_INSTALL = "pip install -e '.[cluster]'"


class WorkerMismatch(HwgenError):
    """A worker's tool versions or hwgen code differ from those of the machine that sent the task.

    Raised on the worker; the sweep stops and the command line prints it as one line and exits
    with status 2.
    """


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError("scheduler", f"needs Dask's distributed scheduler, which is not "
                                          f"installed: {_INSTALL}") from None
    return distributed


def check_scheduler(text):
    """Check ``--scheduler``: ``local:N`` or a scheduler's address, and Dask installed.

    Returns the address, or the number of local workers as an int.
    """
    local = _LOCAL.fullmatch(text)
    if local is None and not _ADDRESS.fullmatch(text):
        raise ParameterError("scheduler", f"must be a Dask scheduler's address such as "
                                          f"tcp://host:8786, or local:N for N worker processes "
                                          f"here, not {text!r}")
    if local is not None and int(local[1]) < 1:
        raise ParameterError("scheduler", f"local:N needs at least one worker, not {text!r}")
    _distributed()
    return int(local[1]) if local else text


def expected_versions():
    """What a worker must have to run this machine's tasks: hwgen's code (its hash) and every
    tool's version."""
    return {"hwgen code": source_hash(), **tool_versions()}


def _short(version):
    """A version as people compare them: hashes cut to 12 digits."""
    return version[:12] if isinstance(version, str) and len(version) == 64 else version


def run_checked(expected, task, *args):
    """``task(*args)`` on a worker whose versions are ``expected``, else :class:`WorkerMismatch`."""
    found = expected_versions()
    differences = [f"{name} {_short(found.get(name))} there, {_short(want)} here"
                   for name, want in expected.items() if found.get(name) != want]
    if differences:
        worker = _distributed().get_worker().address
        raise WorkerMismatch(f"worker {worker} differs from this machine: "
                             f"{'; '.join(differences)}; install the same versions on every "
                             f"worker (docs/cluster.md)")
    return task(*args)


class _CheckedExecutor(concurrent.futures.Executor):
    """Dask's executor, running every task through :func:`run_checked` with ``expected``."""

    def __init__(self, client, expected):
        # pure=False: a task that failed on one worker is sent afresh, never looked up.
        self._inner = client.get_executor(pure=False)
        self._expected = expected

    def submit(self, fn, /, *args, **kwargs):
        return self._inner.submit(run_checked, self._expected, fn, *args, **kwargs)

    def shutdown(self, wait=True, *, cancel_futures=False):
        # Dask's executor cancels what is left when it does not wait.
        self._inner.shutdown(wait=wait and not cancel_futures)


class Cluster:
    """A connection to a Dask scheduler that runs sweep tasks, as a context manager.

    Parameters
    ----------
    scheduler : str or int
        A scheduler's address (``tcp://host:8786``), or a number of worker processes to start on
        this machine in a ``LocalCluster`` (one thread each), as :func:`check_scheduler` returns.
    expected : dict or None
        Versions every worker must have (default :func:`expected_versions`: this machine's).
    """

    def __init__(self, scheduler, *, expected=None):
        distributed = _distributed()
        self._local = None
        self._expected = expected_versions() if expected is None else dict(expected)
        if isinstance(scheduler, int):
            self._local = distributed.LocalCluster(
                n_workers=scheduler, processes=True, threads_per_worker=1,
                dashboard_address=None)
            address = self._local
        else:
            address = scheduler
        try:
            self.client = distributed.Client(address, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as error:
            self.close()
            raise ParameterError("scheduler", f": no Dask scheduler answered at {scheduler}: "
                                              f"{error}") from None

    @property
    def workers(self):
        """How many workers the scheduler has now."""
        return self.client.scheduler_info(n_workers=0)["n_workers"]

    def executor(self):
        """A :class:`concurrent.futures.Executor` whose tasks run on the cluster's workers."""
        return _CheckedExecutor(self.client, self._expected)

    def close(self):
        if getattr(self, "client", None) is not None:
            self.client.close()
            self.client = None
        if self._local is not None:
            self._local.close()
            self._local = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
