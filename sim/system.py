"""Run a system of window-filter PEs (:class:`hwgen.kernels.PESystem`) on one frame per PE.

The system simulated here is the very hardware ``hwgen build --pes`` writes: P PEs behind the
memory interconnect and its channels, measured by one HMM (:func:`instrument_system`). The
memory model serves every channel from one bandwidth budget (the link), so the PEs share it,
and the system's ops per cycle show whether it is compute-bound or I/O-bound, which is the
roofline's claim to check.
"""

from dataclasses import dataclass

import numpy as np

from ..instrument import Instrumented, attach, preset_attach_options, system_probes
from ..kernels import PESystem, window_system

from ..model.window import predict_window
from .cycle_data import CycleData, Rates
from .engine import resolve_engine
from .harness import check_image, run_pe
from .memory import MemoryModel

__all__ = ["SystemRun", "frame_layout", "instrument_system", "run_window_system",
           "window_system"]


def frame_layout(pe, count):
    """Element addresses of ``count`` frames of the image PE ``pe``: a list of
    ``(src_base, dst_base)``; frame ``i`` puts its input image and then its output image after
    frame ``i - 1``'s (``frame_stride`` elements apart)."""
    stride = pe.width * pe.height + pe.out_width * pe.out_height
    return [(i * stride, i * stride + pe.width * pe.height) for i in range(count)]


def instrument_system(system, *, probes="default", **options):
    """``system`` with one HMM for all its PEs, of a probe preset (see
    :mod:`hwgen.instrument.system_probes`); ``options`` go to :func:`hwgen.instrument.attach`."""
    return attach(system, system_probes(system, probes),
                  **{**preset_attach_options(probes), **options})


def _pe_figures(readout, prefix, element_bytes):
    names = [f"{prefix}{name}" for name in ("busy_cycles", "bytes_read", "bytes_written", "ops")]
    cycles, read, written, ops = (readout[name] for name in names)
    # A PE's figures name its values as a lone PE's HMM would.
    saturated = tuple(name.removeprefix(prefix) for name in readout.saturated if name in names)
    return CycleData(cycles=cycles, outputs=written // element_bytes, bytes_read=read,
                     bytes_written=written, ops=ops, measured_by="hmm", saturated=saturated)


@dataclass(frozen=True)
class SystemRun(Rates):
    """The output images of a system run, the system's figures and each PE's.

    ``per_pe`` is ``None`` when the run did not measure every PE (a bare system, or the
    ``minimal`` probes); ``readout`` is the system HMM's (``None`` for a bare system).
    """
    images: list
    figures: CycleData     # the system's, at its memory channels
    per_pe: list | None    # CycleData of every PE
    memory: MemoryModel
    readout: object = None
    engine: dict = None    # the engine that ran it, see hwgen.sim.harness.PERun
    channels: int = 1      # memory channels of the system

    cycles = property(lambda self: self.figures.cycles)
    ops = property(lambda self: self.figures.ops)
    bytes_read = property(lambda self: self.figures.bytes_read)
    bytes_written = property(lambda self: self.figures.bytes_written)

    @property
    def saturated(self):
        """HMM values that saturated."""
        return () if self.readout is None else tuple(self.readout.saturated)

    def to_json(self):
        return {
            "pes": len(self.images),
            "channels": self.channels,
            "cycles": self.cycles,
            "ops": self.ops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ci": self.ci,
            "ops_per_cycle": self.ops_per_cycle,
            "bytes_per_cycle": self.bytes_per_cycle,
            "saturated": list(self.saturated),
            "memory": self.memory.to_json(),
            "per_pe": None if self.per_pe is None else [f.to_json() for f in self.per_pe],
        }


def run_window_system(system, images, *, memory=MemoryModel(), instrument=True,
                      probes="default", vcd=None, progress=None, engine=None):
    """Run PE ``i`` of ``system`` on ``images[i]``, all at once, through the system's channels.

    Parameters
    ----------
    system : PESystem of WindowFilter PEs, or it instrumented
        For example from :func:`hwgen.kernels.window_system`.
    images : list of 2-D arrays
        One frame per PE.
    instrument : bool
        Attach one HMM (:func:`instrument_system` with ``probes``) to a bare system; figures
        then come from it. Without, the testbench counts the cycles and the memory model the
        traffic.
    engine : str or None
        See :func:`hwgen.sim.harness.run_pe`.
    """
    resolve_engine(engine)
    design = system
    if isinstance(design, Instrumented):
        system = design.design
    if not isinstance(system, PESystem):
        raise TypeError(f"system must be a PESystem, not {type(system).__name__}")
    if instrument and design is system:
        design = instrument_system(system, probes=probes)
    first = system.pes[0]
    if len(images) != system.count:
        raise ValueError(f"give one image per PE: {system.count} PEs, {len(images)} images")
    layout = frame_layout(first, system.count)
    out_size = first.out_width * first.out_height
    end = layout[-1][1] + out_size
    if end > 1 << system.addr_width:
        raise ValueError(f"{system.count} frames need {end} element addresses; build the system "
                         f"with window_system() or addr_width >= {(end - 1).bit_length()}")
    storage = [0] * end
    for (src, _), image in zip(layout, images):
        frame = check_image(image, first)
        storage[src:src + frame.size] = frame.ravel().tolist()
    traffic = first.traffic()
    count = system.count
    budget = system.launch_cycles + memory.cycle_budget(
        count * (traffic.reads + traffic.writes),
        count * (traffic.bytes_read + traffic.bytes_written))
    params = {"src_base": layout[0][0], "dst_base": layout[0][1],
              "frame_stride": layout[1][0] if count > 1 else 0}
    run = run_pe(design, storage, params=params, memory=memory, vcd=vcd, max_cycles=budget,
                 progress=progress, engine=engine,
                 expected_cycles=system.launch_cycles + predict_window(first, memory).cycles)
    outputs = [np.array(storage[dst:dst + out_size], dtype=np.int64)
               .reshape(first.out_height, first.out_width).astype(np.asarray(image).dtype)
               for (_, dst), image in zip(layout, images)]
    element_bytes = first.wr_beat.element_bytes
    per_pe = None
    if run.readout is not None:
        figures = _pe_figures(run.readout, "", element_bytes)
        if "pe0.busy_cycles" in run.readout.values:
            per_pe = [_pe_figures(run.readout, f"pe{i}.", element_bytes) for i in range(count)]
    else:
        t = run.traffic
        figures = CycleData(cycles=run.cycles, outputs=t.write_elements,
                            bytes_read=t.bytes_read, bytes_written=t.bytes_written,
                            ops=t.write_elements * first.ops_per_element)
    return SystemRun(images=outputs, figures=figures, per_pe=per_pe, memory=memory,
                     readout=run.readout, engine=run.engine,
                     channels=system.interconnect.channels)
