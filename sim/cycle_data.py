"""The figures of one PE run: what the roofline and the reports are made of."""

from dataclasses import dataclass

from .readout import HMMReadout

__all__ = ["CycleData", "Rates", "ratio"]

# Figures a PE's HMM measures (see hwgen.instrument.pe_probes), by CycleData field.
_HMM_FIELDS = {
    "cycles": "busy_cycles",
    "bytes_read": "bytes_read",
    "bytes_written": "bytes_written",
    "ops": "ops",
    "total_cycles": "cycles",
    "rd_req_wait_cycles": "stream.rd_req.blocking",
    "rd_data_wait_cycles": "rd_latency.wait_cycles",
    "wr_req_wait_cycles": "stream.wr_req.blocking",
}


def ratio(numerator, denominator):
    """``numerator / denominator``, or ``None`` when the denominator is 0: the figure is undefined
    (a run that moved no byte has no computational intensity), which is not the same as 0; and
    ``None`` when either was not measured (``None``)."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def _total(*values):
    """The sum of ``values``, or ``None`` when one was not measured."""
    return None if None in values else sum(values)


class Rates:
    """Figures derived from ``ops``, ``bytes_read``, ``bytes_written`` and ``cycles``; each is
    ``None`` when its denominator is 0 or what it is derived from was not measured."""

    @property
    def ci(self):
        """Computational intensity, ops per byte read or written."""
        return ratio(self.ops, _total(self.bytes_read, self.bytes_written))

    @property
    def ops_per_cycle(self):
        return ratio(self.ops, self.cycles)

    @property
    def bytes_per_cycle(self):
        return ratio(_total(self.bytes_read, self.bytes_written), self.cycles)


@dataclass(frozen=True)
class CycleData(Rates):
    """The figures of one run of a PE.

    ``cycles`` counts the cycles ``busy`` was high, from the cycle after ``start`` to the cycle
    ``done`` was high, both included. ``outputs`` counts elements written.

    With an HMM (``measured_by == "hmm"``) every figure was read through the HMM's port and the
    wait figures and ``hmm`` (every value by name) are there; without one the testbench
    observed ``cycles`` and the memory model counted the traffic, and those are ``None``.
    ``total_cycles`` counts every cycle the HMM observed (from reset to the readout).
    ``saturated`` names the HMM values that saturated (their figures are lower bounds); it is
    kept when the readout is dropped (``replace(figures, hmm=None)``) so a cached figure still
    says it.
    """
    cycles: int
    outputs: int
    bytes_read: int
    bytes_written: int
    ops: int
    measured_by: str = "testbench"
    total_cycles: int | None = None
    rd_req_wait_cycles: int | None = None
    rd_data_wait_cycles: int | None = None
    wr_req_wait_cycles: int | None = None
    hmm: HMMReadout | None = None
    saturated: tuple = ()

    @classmethod
    def from_readout(cls, readout, *, element_bytes):
        """The figures of a PE's HMM readout (``element_bytes``: bytes per written element)."""
        figures = {name: readout[value] for name, value in _HMM_FIELDS.items()}
        return cls(outputs=figures["bytes_written"] // element_bytes, measured_by="hmm",
                   hmm=readout, saturated=tuple(readout.saturated), **figures)

    @property
    def outputs_per_cycle(self):
        return ratio(self.outputs, self.cycles)

    def traffic_matches(self, bytes_read, bytes_written):
        """Whether this run read and wrote exactly these bytes (a fetch model's).

        ``None`` when a saturated count leaves it open: its figure is a lower bound, which
        contradicts the model only where it is already above it.
        """
        known = True
        for field, expected in (("bytes_read", bytes_read), ("bytes_written", bytes_written)):
            measured = getattr(self, field)
            if _HMM_FIELDS[field] in self.saturated:
                if measured > expected:
                    return False
                known = False
            elif measured != expected:
                return False
        return True if known else None

    def to_json(self):
        obj = {
            "cycles": self.cycles,
            "outputs": self.outputs,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops": self.ops,
            "ci": self.ci,
            "ops_per_cycle": self.ops_per_cycle,
            "outputs_per_cycle": self.outputs_per_cycle,
            "measured_by": self.measured_by,
            "saturated": list(self.saturated),
        }
        if self.hmm is not None:
            obj.update({name: getattr(self, name) for name in _HMM_FIELDS if name not in obj})
            obj["hmm"] = self.hmm.to_json()
        return obj

    @classmethod
    def from_json(cls, obj):
        fields = {name: obj[name] for name in ("cycles", "outputs", "bytes_read", "bytes_written",
                                               "ops", "measured_by")}
        fields.update({name: obj.get(name) for name in _HMM_FIELDS if name not in fields})
        hmm = HMMReadout.from_json(obj["hmm"]) if "hmm" in obj else None
        return cls(**fields, hmm=hmm, saturated=tuple(obj["saturated"]))
