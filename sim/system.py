"""Systems of several window-filter PEs that share one memory (or one I/O link).

A system of P identical PEs processes P frames at once, one per PE, as a board full of PEs
processes a stream of frames. They share the memory model's bandwidth, so the system's ops per
cycle show whether it is compute-bound (P times one PE's) or I/O-bound (CI times the bandwidth),
which is the roofline's claim to check.
"""

from dataclasses import dataclass

import numpy as np

from ..instrument import Instrumented
from ..kernels import WindowFilter

from .cycle_data import CycleData, Rates
from .harness import check_image, instrument_pe, run_pes
from .memory import MemoryModel

__all__ = ["SystemRun", "frame_layout", "window_system", "run_window_system"]


def frame_layout(pe, count):
    """Element addresses of ``count`` frames of ``pe``: a list of (src_base, dst_base).

    Frame ``i`` puts its input image and then its output image after frame ``i - 1``'s.
    """
    return _layout(pe.width, pe.height, pe.out_width * pe.out_height, count)


def _layout(width, height, outputs, count):
    size = width * height + outputs
    return [(i * size, i * size + width * height) for i in range(count)]


def window_system(pes, *, width, height, op="max", size=(3, 3), **params):
    """``pes`` identical :class:`hwgen.kernels.WindowFilter` PEs, of a ``width`` x ``height`` image,
    with addresses wide enough for one frame each (see :func:`frame_layout`); ``params`` are the
    filter's other parameters."""
    if isinstance(pes, bool) or not isinstance(pes, int) or pes < 1:
        raise ValueError(f"pes must be a positive integer, not {pes!r}")
    rows, cols = size
    outputs = max(0, width - cols + 1) * max(0, height - rows + 1)
    end = _layout(width, height, outputs, pes)[-1][1] + outputs
    params.setdefault("addr_width", max(1, (end - 1).bit_length()))
    return [WindowFilter(op, size, width=width, height=height, **params) for _ in range(pes)]


@dataclass(frozen=True)
class SystemRun(Rates):
    """The output images of a system run, each PE's figures and the system's."""
    images: list
    per_pe: list          # CycleData of every PE
    cycles: int           # from start until the last PE is done
    memory: MemoryModel
    engine: dict = None   # the engine that ran it, see hwgen.sim.harness.PERun

    @property
    def ops(self):
        return sum(f.ops for f in self.per_pe)

    @property
    def bytes_read(self):
        return sum(f.bytes_read for f in self.per_pe)

    @property
    def bytes_written(self):
        return sum(f.bytes_written for f in self.per_pe)

    @property
    def saturated(self):
        """HMM values that saturated, as ``pe<i>.<name>``."""
        return tuple(f"pe{i}.{name}" for i, f in enumerate(self.per_pe) for name in f.saturated)

    def to_json(self):
        return {
            "pes": len(self.per_pe),
            "cycles": self.cycles,
            "ops": self.ops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ci": self.ci,
            "ops_per_cycle": self.ops_per_cycle,
            "bytes_per_cycle": self.bytes_per_cycle,
            "saturated": list(self.saturated),
            "memory": self.memory.to_json(),
            "per_pe": [f.to_json() for f in self.per_pe],
        }


def run_window_system(pes, images, *, memory=MemoryModel(), instrument=True, vcd=None,
                      progress=None, engine=None):
    """Run PE ``i`` on ``images[i]``, all at once, sharing ``memory``.

    Parameters
    ----------
    pes : list of WindowFilter (or Instrumented WindowFilter)
        Identical PEs, for example from :func:`window_system`.
    images : list of 2-D arrays
        One frame per PE.
    instrument : bool
        Attach the default HMM to bare PEs; figures then come from each PE's HMM.
    engine : str or None
        See :func:`hwgen.sim.harness.run_pe`.
    """
    if not pes:
        raise ValueError("a system needs at least one PE")
    if len(images) != len(pes):
        raise ValueError(f"give one image per PE: {len(pes)} PEs, {len(images)} images")
    designs = [instrument_pe(pe) if instrument and not isinstance(pe, Instrumented) else pe
               for pe in pes]
    bare = [d.design if isinstance(d, Instrumented) else d for d in designs]
    first = bare[0]
    if any(pe.parameters() != first.parameters() for pe in bare[1:]):
        raise ValueError("the PEs of a system must have the same parameters")
    layout = frame_layout(first, len(bare))
    end = layout[-1][1] + first.out_width * first.out_height
    if end > 1 << first.addr_width:
        raise ValueError(f"{len(bare)} frames need {end} element addresses; build the PEs with "
                         f"window_system() or addr_width >= {(end - 1).bit_length()}")
    storage = [0] * end
    for (src, _), image in zip(layout, images):
        frame = check_image(image, first)
        storage[src:src + frame.size] = frame.ravel().tolist()
    traffic = first.traffic()
    budget = memory.cycle_budget(len(bare) * (traffic.reads + traffic.writes),
                                 len(bare) * (traffic.bytes_read + traffic.bytes_written))
    runs = run_pes(designs, storage, params=[{"src_base": s, "dst_base": d} for s, d in layout],
                   memory=memory, vcd=vcd, max_cycles=budget, progress=progress, engine=engine)
    outputs, per_pe = [], []
    out_size = first.out_width * first.out_height
    for (_, dst), run in zip(layout, runs):
        outputs.append(np.array(storage[dst:dst + out_size], dtype=np.int64)
                       .reshape(first.out_height, first.out_width))
        t = run.traffic
        if run.readout is not None:
            per_pe.append(CycleData.from_readout(run.readout,
                                                 element_bytes=first.wr_beat.element_bytes))
        else:
            per_pe.append(CycleData(cycles=run.cycles, outputs=t.write_elements,
                                    bytes_read=t.bytes_read, bytes_written=t.bytes_written,
                                    ops=t.write_elements * first.ops_per_element))
    return SystemRun(images=outputs, per_pe=per_pe, cycles=max(r.cycles for r in runs),
                     memory=memory, engine=runs[0].engine)
