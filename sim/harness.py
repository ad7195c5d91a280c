"""Run PEs in Amaranth's simulator against the memory model.

:func:`run_pe` is the generic driver (load memory, pulse ``start``, serve the ports until
``done``); :func:`run_window_filter` places an image, runs a window filter and returns the output
image with the run's figures.
"""

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from amaranth.sim import Simulator

from .memory import MemoryModel, MemoryServer

__all__ = ["PERun", "RunFigures", "WindowRun", "run_pe", "run_window_filter", "check_image"]


@dataclass(frozen=True)
class RunFigures:
    """The figures of one run.

    ``cycles`` counts the cycles ``busy`` was high, from the cycle after ``start`` to the cycle
    ``done`` was high, both included.
    """
    cycles: int
    outputs: int
    bytes_read: int
    bytes_written: int
    ops: int

    @property
    def ci(self):
        """Computational intensity, ops per byte read or written."""
        moved = self.bytes_read + self.bytes_written
        return self.ops / moved if moved else 0.0

    @property
    def ops_per_cycle(self):
        return self.ops / self.cycles if self.cycles else 0.0

    @property
    def outputs_per_cycle(self):
        return self.outputs / self.cycles if self.cycles else 0.0

    def to_json(self):
        return {
            "cycles": self.cycles,
            "outputs": self.outputs,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops": self.ops,
            "ci": self.ci,
            "ops_per_cycle": self.ops_per_cycle,
            "outputs_per_cycle": self.outputs_per_cycle,
        }


@dataclass
class PERun:
    """What :func:`run_pe` returns: the busy cycles and the memory's view of the traffic."""
    cycles: int
    storage: list
    traffic: object   # sim.memory.PortTraffic


@dataclass
class WindowRun:
    """A window filter's output image and the run's figures."""
    image: np.ndarray
    figures: RunFigures
    traffic: object   # sim.memory.PortTraffic
    memory: MemoryModel


def run_pe(pe, storage, *, params, memory=MemoryModel(), vcd=None, max_cycles=None,
           record_addresses=False, progress=None):
    """Run one job on a PE.

    Parameters
    ----------
    pe : PE component
    storage : list of int
        Memory contents (modified in place by the PE's writes).
    params : dict of str to int
        Run-time parameters driven on ``ctrl`` (for example ``src_base``).
    memory : MemoryModel
    vcd : str or None
        Write a waveform here.
    max_cycles : int or None
        Give up (``RuntimeError``) when the PE is still busy after this many cycles.
    record_addresses : bool
        Keep every address the memory served.
    progress : callable or None
        Called with the cycles simulated so far, every few thousand cycles.
    """
    server = MemoryServer(memory, storage, [pe], record_addresses=record_addresses)
    sim = Simulator(pe)
    sim.add_clock(1e-8)
    sim.add_process(server.process())
    result = {}

    async def host(ctx):
        for name, value in params.items():
            ctx.set(getattr(pe.ctrl, name), value)
        ctx.set(pe.ctrl.start, 1)
        await ctx.tick()
        ctx.set(pe.ctrl.start, 0)
        cycles = 0
        async for _, _, busy, done in ctx.tick().sample(pe.ctrl.busy, pe.ctrl.done):
            cycles += busy
            if done:
                break
            if progress is not None and not cycles & 0xFFF:
                progress(cycles)
            if max_cycles is not None and cycles > max_cycles:
                raise RuntimeError(f"the PE was still busy after {max_cycles} cycles")
        result["cycles"] = cycles

    sim.add_testbench(host)
    with sim.write_vcd(vcd) if vcd else nullcontext():
        sim.run()
    return PERun(cycles=result["cycles"], storage=storage, traffic=server.traffic())


def check_image(image, pe):
    """Validate an input image for a window filter; returns it as a 2-D int64 array."""
    array = np.asarray(image)
    if array.ndim != 2:
        raise ValueError(f"image must be a 2-D array, not {array.ndim}-D")
    if array.shape != (pe.height, pe.width):
        raise ValueError(f"image shape {array.shape[0]}x{array.shape[1]} (rows x cols) must equal "
                         f"the filter's height x width {pe.height}x{pe.width}")
    if not np.issubdtype(array.dtype, np.integer) and not np.issubdtype(array.dtype, np.bool_):
        raise ValueError(f"image must hold integers, not {array.dtype}")
    array = array.astype(np.int64)
    limit = (1 << pe.pixel_bits) - 1
    if array.size and (array.min() < 0 or array.max() > limit):
        raise ValueError(f"image pixel values must be between 0 and {limit} for pixel_bits "
                         f"{pe.pixel_bits}, found {array.min()}..{array.max()}")
    return array


def run_window_filter(pe, image, *, memory=MemoryModel(), vcd=None, record_addresses=False,
                      progress=None):
    """Filter ``image`` with a :class:`kernels.WindowFilter` in simulation.

    The input frame is placed at element address 0 and the output frame right after it.

    Returns
    -------
    WindowRun
    """
    image = check_image(image, pe)
    h, w = image.shape
    out_h, out_w = pe.out_height, pe.out_width
    dst_base = h * w
    storage = image.ravel().tolist() + [0] * (out_h * out_w)
    traffic_model = pe.traffic()
    budget = 50 * (traffic_model.reads + traffic_model.writes) * (memory.latency_cycles + memory.jitter_cycles + 2)
    run = run_pe(pe, storage, params={"src_base": 0, "dst_base": dst_base}, memory=memory,
                 vcd=vcd, max_cycles=budget, record_addresses=record_addresses, progress=progress)
    out = np.array(storage[dst_base:], dtype=np.int64).reshape(out_h, out_w)
    t = run.traffic
    figures = RunFigures(
        cycles=run.cycles,
        outputs=t.write_elements,
        bytes_read=t.bytes_read,
        bytes_written=t.bytes_written,
        ops=t.write_elements * (pe.active - 1),
    )
    return WindowRun(image=out, figures=figures, traffic=t, memory=memory)
