"""What a cycle model predicts for one job."""

from dataclasses import dataclass

__all__ = ["Prediction"]


def _ratio(num, den):
    return None if not den else num / den


@dataclass(frozen=True)
class Prediction:
    """Predicted figures of one job, as a simulation would measure them (:class:`CycleData`).

    Parameters
    ----------
    cycles : float
        Busy cycles; an expected value when the memory has jitter or backpressure.
    ideal_cycles : int
        Busy cycles of the same job with an ideal memory.
    ops, bytes_read, bytes_written : int
        Work and off-chip traffic of the job (exact).
    bound : str
        What limits the steady state: ``"issue"`` (one beat per cycle), ``"credits"`` (results
        in flight), ``"bandwidth"``, ``"step"`` (one step at a time, not pipelined) or, for
        programs, the name of the limiting part.
    spin_share : float or None
        Share of thread-cycles spent spinning on a lock (programs; ``None`` for a PE).
    exact : bool
        The memory has neither jitter nor backpressure, so ``cycles`` is not an expectation.
    """
    cycles: float
    ideal_cycles: int
    ops: int
    bytes_read: int
    bytes_written: int
    bound: str
    spin_share: float | None = None
    exact: bool = True

    @property
    def ops_per_cycle(self):
        return _ratio(self.ops, self.cycles)

    @property
    def bytes_per_cycle(self):
        return _ratio(self.bytes_read + self.bytes_written, self.cycles)

    @property
    def stall_share(self):
        """Share of the cycles lost to the memory: ``1 - ideal_cycles / cycles``."""
        return None if not self.cycles else max(0.0, 1 - self.ideal_cycles / self.cycles)

    def milliseconds(self, clock_mhz):
        """Time of the job at ``clock_mhz`` (``None`` without a clock)."""
        return None if not clock_mhz else self.cycles / (clock_mhz * 1e3)

    def to_json(self, clock_mhz=None):
        return {
            "cycles": self.cycles,
            "ideal_cycles": self.ideal_cycles,
            "exact": self.exact,
            "bound": self.bound,
            "ops": self.ops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops_per_cycle": self.ops_per_cycle,
            "bytes_per_cycle": self.bytes_per_cycle,
            "stall_share": self.stall_share,
            "spin_share": self.spin_share,
            "clock_mhz": clock_mhz,
            "milliseconds": self.milliseconds(clock_mhz),
        }
