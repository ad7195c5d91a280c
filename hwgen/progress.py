"""Progress of long work, on stderr: a bar on a terminal; in a log file or a pipe, where a bar's
frames would pile up, a line whenever a step has gone :data:`SLOW_SECONDS` without one."""

import sys
import threading
import time

from tqdm import tqdm

__all__ = ["Progress", "note", "SLOW_SECONDS"]

#: How long a step runs before a log (stderr not a terminal) hears about it, and then how often.
SLOW_SECONDS = 60.0


def _duration(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def note(text):
    """A line on stderr that does not tear a progress bar."""
    tqdm.write(text, file=sys.stderr)


class Progress:
    """Progress of one step, as a context manager: ``update(n)`` adds ``n`` to the count,
    ``update_to(n)`` sets it.

    On a terminal it is a bar (the elapsed time when nothing is counted); ``describe(desc)``
    changes what it says the step is. Elsewhere every
    :data:`SLOW_SECONDS` a line says how far the step is ("simulating: 4,096 of 65,028 cycles
    after 1 min 0 s") or, when nothing is counted (a tool that prints nothing until it ends),
    that it is still running.

    Parameters
    ----------
    desc : str
        What the step does ("simulating").
    total : int or None
        The count at the end, when known.
    unit : str or None
        What is counted ("cycle", "task"); ``None``: nothing is.
    enabled : bool
        ``False`` shows nothing (quiet mode).
    """

    def __init__(self, desc, *, total=None, unit=None, enabled=True):
        self._desc, self._total, self._unit = desc, total, unit
        self.n = 0
        self._bar = self._teller = None
        self._done = threading.Event()
        if not enabled:
            return
        if sys.stderr.isatty():
            self._bar = tqdm(total=total, desc=desc, unit=unit or "it", unit_scale=True,
                             leave=False, file=sys.stderr,
                             bar_format=None if unit else "{desc}: {elapsed}")
            if unit is None:
                # Nothing updates the bar: keep its clock going.
                self._teller = threading.Thread(target=self._tick, daemon=True)
        else:
            self._teller = threading.Thread(target=self._tell, daemon=True)
        if self._teller is not None:
            self._teller.start()

    def _tick(self):
        while not self._done.wait(1.0):
            self._bar.refresh()

    def _tell(self):
        started = time.monotonic()
        while not self._done.wait(SLOW_SECONDS):
            after = _duration(time.monotonic() - started)
            if self._unit is None:
                note(f"{self._desc}: still running after {after}")
            else:
                of = f" of {self._total:,}" if self._total is not None else ""
                note(f"{self._desc}: {self.n:,}{of} {self._unit}s after {after}")

    def describe(self, desc):
        """Say ``desc`` for the step from now on (how many workers run it, say)."""
        if desc == self._desc:
            return
        self._desc = desc
        if self._bar is not None:
            self._bar.set_description_str(desc)

    def update(self, count=1):
        self.update_to(self.n + count)

    def update_to(self, count):
        self.n = count
        if self._bar is not None:
            self._bar.update(count - self._bar.n)

    def close(self):
        self._done.set()
        if self._teller is not None:
            self._teller.join()
            self._teller = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
