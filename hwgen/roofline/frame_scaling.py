"""A full frame's figures from two short frames of the same width.

A window filter's work repeats in units of rows: a strip of ``U`` output rows with the smart
buffer, one output row with a line buffer or none. A frame of ``k`` whole units (plus the same
remainder rows as the full frame, which the smart buffer's last strip covers) takes
``cycles(k) = a + b * k`` busy cycles, and its bytes and ops are affine in ``k`` in the same way:
every unit after the first does the same fetches, the same steps and the same writes, and the
fill and drain at the ends are the same for every ``k``. Two simulations, at ``k = 1`` and
``k = 2``, therefore give every figure of the full frame exactly; the figures are integers and so
is the fit.

Fetch counts are closed-form (:meth:`hwgen.kernels.WindowFilter.traffic`), so the scaled bytes can be
checked against the model, and the scaled cycles against a full-frame simulation (the tests do
both).
"""

from dataclasses import dataclass

from ..sim.cycle_data import ratio

__all__ = ["SHORT_UNITS", "FrameFigures", "row_unit", "units_height", "short_heights",
           "scale_frames"]

#: Units of rows in the two short frames.
SHORT_UNITS = (1, 2)

_COUNTS = ("cycles", "outputs", "ops", "bytes_read", "bytes_written")


def row_unit(buffer, unroll):
    """Output rows of one repeating unit of work: ``unroll`` for the smart buffer, else 1."""
    return unroll if buffer == "smart" else 1


def units_height(rows, height, buffer, unroll, units):
    """Height of a frame of ``units`` whole units plus the full frame's remainder rows, or
    ``None`` when that is not shorter than the full frame of ``height`` rows."""
    unit = row_unit(buffer, unroll)
    whole, rest = divmod(height - rows + 1, unit)
    return rows - 1 + rest + units * unit if units < whole else None


def short_heights(rows, height, buffer, unroll):
    """Heights of the two short frames for a full frame of ``height`` rows, or ``None`` when the
    full frame is not taller than the second one (simulate it whole)."""
    heights = tuple(units_height(rows, height, buffer, unroll, k) for k in SHORT_UNITS)
    return None if None in heights else heights


@dataclass(frozen=True)
class FrameFigures:
    """One PE's figures over one frame, simulated whole or scaled from two short frames.

    Parameters
    ----------
    width, height : int
        The frame.
    cycles : int
        Busy cycles of the frame.
    outputs, ops, bytes_read, bytes_written : int
        Elements written, operations, bytes read and written over the frame.
    scaled : bool
        Whether the figures were scaled from the short frames rather than simulated whole.
    simulated_heights : tuple of int
        Heights of the frames simulated (the frame itself when not scaled).
    simulated_cycles : tuple of int
        Busy cycles each of those simulations took.
    saturated : tuple of str
        HMM values that saturated in those simulations, as ``<height> rows: <name>``: the
        figures that depend on them are lower bounds.
    """
    width: int
    height: int
    cycles: int
    outputs: int
    ops: int
    bytes_read: int
    bytes_written: int
    scaled: bool
    simulated_heights: tuple
    simulated_cycles: tuple
    saturated: tuple = ()

    @property
    def ci(self):
        """Computational intensity, ops per byte read or written (``None`` if none moved)."""
        return ratio(self.ops, self.bytes_read + self.bytes_written)

    @property
    def ops_per_cycle(self):
        """``None`` for a frame of no cycles."""
        return ratio(self.ops, self.cycles)

    def to_json(self):
        return {
            "width": self.width, "height": self.height, "cycles": self.cycles,
            "outputs": self.outputs, "ops": self.ops, "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written, "ci_ops_per_byte": self.ci,
            "ops_per_cycle": self.ops_per_cycle, "scaled": self.scaled,
            "simulated_heights": list(self.simulated_heights),
            "simulated_cycles": list(self.simulated_cycles),
            "saturated": list(self.saturated),
        }

    @classmethod
    def from_json(cls, data):
        return cls(**{name: data[name] for name in ("width", "height", "cycles", "outputs", "ops",
                                                    "bytes_read", "bytes_written", "scaled")},
            simulated_heights=tuple(data["simulated_heights"]),
            simulated_cycles=tuple(data["simulated_cycles"]), saturated=tuple(data["saturated"]))

    @classmethod
    def whole(cls, width, height, figures):
        """The figures of a simulation of the whole frame (a :class:`hwgen.sim.CycleData`)."""
        return cls(width=width, height=height, scaled=False, simulated_heights=(height,),
                   simulated_cycles=(figures.cycles,), saturated=_saturated(height, figures),
                   **{name: getattr(figures, name) for name in _COUNTS})


def _saturated(height, figures):
    return tuple(f"{height} rows: {name}" for name in figures.saturated)


def scale_frames(rows, width, height, buffer, unroll, short):
    """The full frame's :class:`FrameFigures` from the short frames' figures.

    ``short`` holds the :class:`hwgen.sim.CycleData` of the frames of :func:`short_heights`, in order.
    """
    heights = short_heights(rows, height, buffer, unroll)
    if heights is None or len(short) != len(heights):
        raise ValueError(f"give the figures of the short frames {heights}, not {len(short)}")
    units = (height - rows + 1) // row_unit(buffer, unroll)
    first, second = short
    # SHORT_UNITS are 1 and 2 units: the second frame's figures less the first's are one unit's.
    scaled = {name: getattr(first, name) + (getattr(second, name) - getattr(first, name))
              * (units - 1) for name in _COUNTS}
    return FrameFigures(width=width, height=height, scaled=True, simulated_heights=heights,
                        simulated_cycles=(first.cycles, second.cycles),
                        saturated=_saturated(heights[0], first) + _saturated(heights[1], second),
                        **scaled)
