"""Synthesis and simulation confirm the roofline: the system of SC PEs the model counts, built,
measured and run.

The model's SC is the most PEs whose system fits one device: SC PEs and their memory
interconnect (:class:`hwgen.kernels.PESystem`, its channels sized for the point's link share
at the point's clock), the interconnect estimated
(:func:`hwgen.roofline.model.system_scalability`). This synthesizes that system (with
nextpnr's Fmax where the family has place and route), sets what it uses against what the model
predicted (SC x one PE + the estimated interconnect), and simulates it against the link: what the
system **attains** is its simulated ops per cycle times its own clock (its Fmax; without place
and route, the roofline's clock, stated as an assumption), beside what the roofline says is
**attainable** at the roofline's clock.
"""

import warnings
from dataclasses import dataclass

import numpy as np
from amaranth.hdl import UnusedElaboratable

from ..catalog import design_name, resolve_board
from ..errors import HwgenError
from ..resources.synth import synthesize
from ..sim import MemoryModel, run_window_system
from .model import RESOURCES, bytes_per_cycle, system_overhead
from .sweep import system_height

__all__ = ["Confirmation", "confirm_point", "simulate_system"]


@dataclass(frozen=True)
class Confirmation:
    """A roofline point's system of SC PEs synthesized: predicted, synthesized and available
    resources (``{"lut", "ff", "bram", "dsp"}``), whether it fits one device and its Fmax."""
    label: str
    name: str
    board: str
    pes: int
    predicted: dict
    synthesized: dict
    available: dict
    fmax_mhz: float | None
    fmax_source: str
    attainable_gbops: float | None = None
    attainable_clock_mhz: float | None = None
    attained_gbops: float | None = None
    attained_clock_mhz: float | None = None
    attained_clock_source: str | None = None
    simulated: dict | None = None     # the system's simulation: ops per cycle, frames, memory

    @property
    def attained_error(self):
        """attained / attainable - 1 (``None`` when either is undefined)."""
        if not self.attainable_gbops or self.attained_gbops is None:
            return None
        return self.attained_gbops / self.attainable_gbops - 1

    @property
    def fits(self):
        return all(self.synthesized[r] <= self.available[r] for r in RESOURCES)

    @property
    def over(self):
        """Resources the system needs more of than the device has."""
        return [r for r in RESOURCES if self.synthesized[r] > self.available[r]]

    def error(self, resource):
        """(synthesized - predicted) / predicted, ``None`` when nothing was predicted."""
        predicted = self.predicted[resource]
        return (self.synthesized[resource] - predicted) / predicted if predicted else None

    def to_json(self):
        return {"label": self.label, "name": self.name, "board": self.board, "pes": self.pes,
                "predicted": self.predicted, "synthesized": self.synthesized,
                "available": self.available, "fits": self.fits, "over": self.over,
                "error": {r: self.error(r) for r in RESOURCES},
                "fmax_mhz": self.fmax_mhz, "fmax_source": self.fmax_source,
                "attainable": self.attainable_gbops,
                "attainable_clock_mhz": self.attainable_clock_mhz,
                "attained": self.attained_gbops, "attained_clock_mhz": self.attained_clock_mhz,
                "attained_clock_source": self.attained_clock_source,
                "attained_error": self.attained_error, "simulated": self.simulated}


def confirm_point(point, board, *, seeds=3, progress=False, engine=None, place=True):
    """Synthesize the bare system of ``point.sc_pes_per_device`` PEs of a
    :class:`hwgen.roofline.RooflinePoint` on ``board``, place and route it when it fits, the
    family can and ``place`` is true, and simulate it against the point's link at the
    system's clock (frames of :func:`hwgen.roofline.sweep.system_height` rows, one per PE;
    ``engine`` as for :func:`hwgen.sim.run_window_system`). Without place and route the clock
    is the roofline's, stated as an assumption."""
    board = resolve_board(board)
    design = point.measurement.point
    pes = point.sc_pes_per_device
    link = point.channel_link
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
        pe = design.build()
    overhead = system_overhead(lambda count: design.system(count, design.height, link),
                               pe, board)(pes)
    system = design.system(pes, design.height, link)
    name = design_name(design.kernel, system)
    fmax_source = "not measured: no place and route for this family here"
    if not place and board.toolchain.has_place_and_route:
        fmax_source = "not measured: place and route not asked for (the resources estimated)"
    try:
        result = synthesize(system, board, name=name, seeds=seeds, progress=progress,
                            fmax=place)
        if result.fmax_mhz is not None:
            fmax_source = f"nextpnr, median of {result.seeds} seed(s)"
    except HwgenError as error:
        if "does not fit" in str(error):
            fmax_source = "not measured: the system does not fit"
        elif "place and route" in str(error):
            fmax_source = f"not measured: nextpnr did not place and route it ({error})"
        else:
            raise
        result = synthesize(system, board, name=name, fmax=False, require_fit=False,
                            progress=progress)
    if result.fmax_mhz is not None:
        clock, clock_source = result.fmax_mhz, f"the system's Fmax ({fmax_source})"
    else:
        clock = point.clock_mhz
        clock_source = (f"assumed: the roofline's clock, {point.clock_source}; the system's "
                        f"Fmax was not measured ({fmax_source.removeprefix('not measured: ')})")
    simulated = simulate_system(design, pes, bytes_per_cycle(point.bandwidth_gbps, clock),
                                channels_link=link, engine=engine)
    resources = point.measurement.resources
    return Confirmation(
        label=point.label, name=name, board=board.name, pes=pes,
        predicted={r: pes * resources[r] + overhead[r] for r in RESOURCES},
        synthesized=result.resources(), available=board.resources.as_counts(),
        fmax_mhz=result.fmax_mhz, fmax_source=fmax_source,
        attainable_gbops=point.attainable_gbops, attainable_clock_mhz=point.clock_mhz,
        attained_gbops=simulated["ops_per_cycle"] * clock / 1000, attained_clock_mhz=clock,
        attained_clock_source=clock_source, simulated=simulated)


def simulate_system(design, pes, bandwidth_bytes_per_cycle, *, channels_link=None, engine=None):
    """Simulate ``pes`` PEs of the design point ``design`` (channels sized for
    ``channels_link`` bytes per cycle) against a memory of ``bandwidth_bytes_per_cycle``, each
    on a random frame (seed 0) of :func:`~hwgen.roofline.sweep.system_height` rows: its ops
    per cycle, frames and memory as plain data."""
    height = system_height(design)
    system = design.system(pes, height, channels_link)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (height, design.width)) for _ in range(pes)]
    memory = MemoryModel(bandwidth_bytes_per_cycle=bandwidth_bytes_per_cycle)
    run = run_window_system(system, images, memory=memory, instrument=False, engine=engine)
    return {"ops_per_cycle": run.ops_per_cycle, "cycles": run.cycles, "height": height,
            "width": design.width, "channels": system.interconnect.channels,
            "bandwidth_bytes_per_cycle": bandwidth_bytes_per_cycle, "engine": run.engine}
