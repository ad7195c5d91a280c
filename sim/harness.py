"""Run PEs against the memory model, in Amaranth's simulator or in the compiled engine.

:func:`run_pe` is the generic driver (load memory, pulse ``start``, serve the ports until
``done``, then read the HMM if the PE has one); :func:`run_window_filter` places an image, runs a
window filter and returns the output image with the run's figures. Each takes ``engine=``
(:mod:`hwgen.sim.engine`); both engines give the same results.

A PE is measured by an HMM unless told otherwise (:func:`instrument_pe`): the figures are read
through the HMM's port after the run, as a host would, and decoded with its layout manifest.
"""

from dataclasses import dataclass

import numpy as np

from ..instrument import (PROBE_PRESETS, Instrumented, attach, job_probe, ops_probe, pe_probes,
                          traffic_probes)

from ..model.window import predict_window
from ..kernels.pe import check_pe
from .compiled import stored_layout
from .cycle_data import CycleData
from .engine import choose_engine, pysim_only, resolve_engine
from .memory import MemoryModel
from .recipe import recipe_of, record_recipe

__all__ = ["PERun", "WindowRun", "check_image", "instrument_pe", "run_pe", "run_pes",
           "run_window_filter"]


@dataclass
class PERun:
    """What :func:`run_pe` returns: the busy cycles the testbench saw, the memory's view of the
    traffic, the HMM's readout (``None`` for a bare PE) and the engine that ran it (``{"name":
    "pysim"}``, or the compiled engine's build: whether it came from the cache, compile
    seconds)."""
    cycles: int
    storage: list
    traffic: object   # hwgen.sim.memory.PortTraffic
    readout: object = None   # hwgen.sim.readout.HMMReadout
    engine: dict = None


@dataclass
class WindowRun:
    """A window filter's output image (of the input image's dtype: uint8 in, uint8 out) and the
    run's figures (from its HMM if it has one)."""
    image: np.ndarray
    figures: CycleData
    traffic: object   # hwgen.sim.memory.PortTraffic
    memory: MemoryModel
    engine: dict = None


def instrument_pe(pe, *, timeline_depth=None, probes="default", **options):
    """``pe`` with the HMM every build gets: PE figures (:func:`hwgen.instrument.pe_probes`), a state
    profile per state machine and counters per stream. With ``probes="minimal"`` only
    ``busy_cycles``, ``bytes_read``, ``bytes_written`` and ``ops``, read once the HMM is frozen
    (no snapshot register: ``snapshot="traces"``; ``"full"`` is the default's).

    With ``timeline_depth``, also the ``timeline`` of every state machine's state and stream's
    category over time (see :func:`hwgen.instrument.attach`) and the ``job`` trace
    (:func:`hwgen.instrument.job_probe`) that places the job on its timestamps. ``options`` go to
    :func:`hwgen.instrument.attach`.
    """
    return _instrument(pe, timeline_depth, probes, options, from_cache=False)


def _instrument(pe, timeline_depth, probes, options, *, from_cache):
    """:func:`instrument_pe`; with ``from_cache``, made from the compiled engine's cache where
    it holds the design's RTLIL and HMM layout: the HMM is attached only if the design is
    elaborated after all (``attach``'s ``layout``)."""
    if probes not in PROBE_PRESETS:
        raise ValueError(f"probes must be one of {', '.join(PROBE_PRESETS)}, not {probes!r}")
    if probes == "minimal":
        options = {"fsms": False, "streams": False, "snapshot": "traces", **options}
        chosen = [*traffic_probes(pe), ops_probe(pe, pe.ops_per_element)]
    else:
        chosen = pe_probes(pe)
    if timeline_depth is not None:
        chosen.append(job_probe(pe))
    made_of = recipe_of(pe)
    recipe = (None if made_of is None
              else ["instrument_pe", made_of, probes, timeline_depth, options])
    layout = stored_layout(recipe) if from_cache and recipe is not None else None
    design = attach(pe, chosen, timeline_depth=timeline_depth, layout=layout, **options)
    if recipe is not None:
        record_recipe(design, recipe)
    return design


def run_pe(pe, storage, *, params, memory=MemoryModel(), vcd=None, max_cycles=None,
           record_addresses=False, monitors=(), progress=None, drain_interval_cycles=None,
           engine=None, on_simulator=None, expected_cycles=None):
    """Run one job on a PE.

    Parameters
    ----------
    pe : PE component or Instrumented PE
        An instrumented PE is frozen after ``done`` and read out through its HMM port.
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
    monitors : sequence of async functions
        Background testbenches (each takes the simulator context) that run alongside, from
        the first cycle: observers, for example.
    progress : callable or None
        Called with the cycles simulated so far, every few thousand cycles.
    drain_interval_cycles : int or None
        While the job runs, the host drains the HMM's ``stop``-mode traces through its port and
        then waits this many cycles, again and again (``None``: it reads them after the job).
    engine : str or None
        ``"auto"``, ``"pysim"``, ``"compiled"`` or ``None`` for the default
        (:mod:`hwgen.sim.engine`). ``monitors`` run in Amaranth's simulator only (``auto``
        chooses it for them).
    on_simulator : callable or None
        Called with Amaranth's ``Simulator`` before it runs, for example to attach a
        :class:`hwgen.sim.LineProfiler` (Amaranth's simulator only).
    expected_cycles : int or None
        The job's cycles as predicted (:mod:`hwgen.model`), for ``engine="auto"`` to choose by.
    """
    (run,) = run_pes([pe], storage, params=[params], memory=memory, vcd=vcd,
                     max_cycles=max_cycles, record_addresses=record_addresses,
                     monitors=monitors, progress=progress,
                     drain_interval_cycles=drain_interval_cycles, engine=engine,
                     on_simulator=on_simulator, expected_cycles=expected_cycles)
    return run


def run_pes(pes, storage, *, params, memory=MemoryModel(), vcd=None, max_cycles=None,
            record_addresses=False, monitors=(), progress=None, drain_interval_cycles=None,
            engine=None, on_simulator=None, expected_cycles=None):
    """Run one job on each of several PEs at once; they share one memory and its bandwidth.

    Every PE is started in the same cycle; the simulation ends when all are done (and their
    HMMs, if they have one, are read). Arguments are those of :func:`run_pe`, with ``pes`` and
    ``params`` lists of the same length.

    Returns
    -------
    list of PERun
        One per PE, in order.
    """
    if len(pes) != len(params):
        raise ValueError(f"give one params dict per PE: {len(pes)} PEs, {len(params)} dicts")
    engine = pysim_only(engine, monitors or on_simulator is not None,
                        "monitors and on_simulator")
    engine = choose_engine(engine, pes, cycles=expected_cycles, waveforms=vcd is not None)
    results, info = engine.run_pes(
        pes, storage, params=params, memory=memory, vcd=vcd, max_cycles=max_cycles,
        record_addresses=record_addresses, progress=progress,
        drain_interval_cycles=drain_interval_cycles, monitors=monitors,
        on_simulator=on_simulator)
    return [PERun(r.cycles, storage, r.traffic, r.readout, info) for r in results]


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
                      instrument=True, monitors=(), progress=None, drain_interval_cycles=None,
                      engine=None, on_simulator=None):
    """Filter ``image`` with an image PE (a :class:`hwgen.kernels.WindowFilter` or any PE of
    the image-PE protocol, :mod:`hwgen.kernels.pe`) in simulation.

    The input frame is placed at element address 0 and the output frame right after it.

    Parameters
    ----------
    pe : image PE or Instrumented image PE
    instrument : bool
        Attach the default HMM (:func:`instrument_pe`) to a bare ``pe``; with ``False`` a bare
        ``pe`` runs alone and the figures come from the testbench and the memory model.
    monitors : sequence of async functions
        See :func:`run_pe`.
    drain_interval_cycles, engine, on_simulator
        See :func:`run_pe`.

    Returns
    -------
    WindowRun
    """
    may_compile = resolve_engine(engine) != "pysim"
    design = pe
    if isinstance(pe, Instrumented):
        pe = design.design
    check_pe(pe, image=True)
    dtype = np.asarray(image).dtype
    image = check_image(image, pe)
    if design is pe and instrument:
        # Where the compiled engine may run it, its cache may hold all it needs of the design.
        design = _instrument(pe, None, "default", {}, from_cache=may_compile)
    h, w = image.shape
    out_h, out_w = pe.out_height, pe.out_width
    dst_base = h * w
    storage = np.zeros(h * w + out_h * out_w, dtype=np.uint64)
    storage[:h * w] = image.ravel()
    traffic_model = pe.traffic()
    if traffic_model is None:
        # No closed form: allow every output pixel a whole 8x8 window of reads.
        reads, writes = 64 * out_h * out_w, out_h * out_w
        element_bytes = pe.rd_beat.element_bytes
        budget = memory.cycle_budget(reads + writes, (reads + writes) * element_bytes)
    else:
        budget = memory.cycle_budget(traffic_model.reads + traffic_model.writes,
                                     traffic_model.bytes_read + traffic_model.bytes_written)
    run = run_pe(design, storage, params={"src_base": 0, "dst_base": dst_base}, memory=memory,
                 vcd=vcd, max_cycles=budget, record_addresses=record_addresses,
                 monitors=monitors, progress=progress, drain_interval_cycles=drain_interval_cycles,
                 engine=engine, on_simulator=on_simulator,
                 expected_cycles=(None if traffic_model is None
                                  else predict_window(pe, memory).cycles))
    out = np.array(storage[dst_base:], dtype=np.int64).reshape(out_h, out_w).astype(dtype)
    t = run.traffic
    if run.readout is not None:
        figures = CycleData.from_readout(run.readout, element_bytes=pe.wr_beat.element_bytes)
    else:
        figures = CycleData(cycles=run.cycles, outputs=t.write_elements, bytes_read=t.bytes_read,
                            bytes_written=t.bytes_written,
                            ops=t.write_elements * pe.ops_per_element)
    return WindowRun(image=out, figures=figures, traffic=t, memory=memory, engine=run.engine)
