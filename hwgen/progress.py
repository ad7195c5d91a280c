"""Progress of long work, on stderr: a bar on a terminal; in a log file or a pipe, where a bar's
frames would pile up, a line whenever a step has gone :data:`SLOW_SECONDS` without one.

A step can pass through a :func:`stage` that counts nothing (compiling a simulation model before
simulating): it is shown with its own clock, apart from the step's count and rate."""

import sys
import threading
import time

from .sim.stage import listeners, stage

__all__ = ["Progress", "note", "stage", "SLOW_SECONDS"]

#: How long a step runs before a log (stderr not a terminal) hears about it, and then how often.
SLOW_SECONDS = 60.0

# The Progress objects shown now, innermost last: what a simulation's stage speaks through.
_shown = listeners


def _duration(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def note(text):
    """A line on stderr that does not tear a progress bar."""
    from tqdm import tqdm   # with the bars (most runs, quiet or logged, show none)

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
        The count at the end, when known (a count that passes it raises it).
    unit : str or None
        What is counted ("cycle", "task"); ``None``: nothing is.
    enabled : bool
        ``False`` shows nothing (quiet mode).
    """

    def __init__(self, desc, *, total=None, unit=None, enabled=True):
        self._desc, self._total, self._unit = desc, total, unit
        self.n = 0
        self._bar = self._teller = None
        self._stage = None
        self._enabled = enabled
        self._terminal = sys.stderr.isatty()
        self._done = threading.Event()
        self._started = time.monotonic()
        if not enabled:
            return
        _shown.append(self)
        if self._terminal:
            self._open_bar(desc, unit)
        else:
            self._teller = threading.Thread(target=self._tell, daemon=True)
            self._teller.start()

    def _open_bar(self, desc, unit):
        from tqdm import tqdm

        if unit is None:
            self._bar = tqdm(desc=desc, leave=False, file=sys.stderr,
                             bar_format="{desc}: {elapsed}")
            # Nothing updates the bar: keep its clock going.
            self._teller = threading.Thread(target=self._tick, args=(self._bar,), daemon=True)
            self._teller.start()
        else:
            self._bar = tqdm(total=self._total, initial=self.n, desc=desc, unit=f" {unit}s",
                             unit_scale=True, leave=False, file=sys.stderr)

    def _close_bar(self):
        if self._bar is not None:
            bar, self._bar = self._bar, None
            if self._unit is None or self._stage is not None:
                self._done.set()
                if self._teller is not None:
                    self._teller.join()
                    self._teller = None
                self._done.clear()
            bar.close()

    def _tick(self, bar):
        while not self._done.wait(1.0):
            bar.refresh()

    def _tell(self):
        while not self._done.wait(SLOW_SECONDS):
            after = _duration(time.monotonic() - self._started)
            if self._stage is not None:
                note(f"{self._stage}: still running after {after}")
            elif self._unit is None:
                note(f"{self._desc}: still running after {after}")
            else:
                of = f" of {self._total:,}" if self._total is not None else ""
                note(f"{self._desc}: {self.n:,}{of} {self._unit}s after {after}")

    def _enter_stage(self, desc):
        self._stage = desc
        self._started = time.monotonic()
        if self._terminal:
            self._close_bar()
            self._open_bar(desc, None)

    def _leave_stage(self):
        if self._terminal:
            self._close_bar()
        self._stage = None
        self._started = time.monotonic()
        if self._terminal:
            self._open_bar(self._desc, self._unit)

    def describe(self, desc):
        """Say ``desc`` for the step from now on (how many workers run it, say)."""
        if desc == self._desc:
            return
        self._desc = desc
        if self._bar is not None and self._stage is None:
            self._bar.set_description_str(desc)

    def update(self, count=1):
        self.update_to(self.n + count)

    def update_to(self, count):
        self.n = count
        if self._total is not None and count > self._total:
            self._total = count
            if self._bar is not None and self._stage is None:
                self._bar.total = count
        if self._bar is not None and self._stage is None:
            self._bar.update(count - self._bar.n)

    def close(self):
        if not self._enabled:
            return
        self._enabled = False
        _shown.remove(self)
        self._stage = None
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
