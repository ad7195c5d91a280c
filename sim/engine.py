"""Which engine simulates: Amaranth's simulator (``pysim``), the compiled engine (``compiled``,
:mod:`hwgen.sim.compiled`), or the faster of the two for the job (``auto``).

Every function that simulates takes ``engine=``: ``"auto"``, ``"pysim"``, ``"compiled"``, or
``None`` for the default, which is ``$HWGEN_ENGINE`` when set, else ``auto``.

``auto`` runs a job on the compiled engine when its model is in the cache (loading it takes
milliseconds) or when compiling it now costs less than Amaranth's simulator would take for the
job's predicted cycles; otherwise, and wherever the compiled engine cannot run here (no C++
compiler: then with a one-line :class:`EngineNotice` warning), on Amaranth's simulator. A job of
at most :data:`SHORT_CYCLES` cycles runs on Amaranth's simulator unless its model is built and
found without converting the design (its RTLIL cached under its recipe,
:mod:`hwgen.sim.recipe`): loading that model costs less than Amaranth's simulator takes to start.

:func:`choose_engine` returns the engine object that runs the job, of the protocol in
:mod:`hwgen.sim.protocol`.
"""

import os
import warnings

from . import compiled
from .compiled import CompiledEngine, EngineUnavailable, check_available
from .protocol import Engine
from .pysim_engine import PysimEngine

__all__ = ["ENGINES", "SHORT_CYCLES", "Engine", "EngineNotice", "EngineUnavailable",
           "resolve_engine", "choose_engine", "engine_named", "pysim_only", "pysim_seconds"]

ENGINES = ("auto", "pysim", "compiled")

#: Jobs this short run on Amaranth's simulator under ``auto`` (about a second there for the
#: largest designs hwgen builds; the compiled engine's fixed cost, converting the design to
#: RTLIL for its cache key, is half of that) unless their model is found without converting.
SHORT_CYCLES = 4096

# Amaranth's simulator's cost per cell of the design's RTLIL per cycle, measured on this
# project's window filters and pipelines (5,600 cycles/s for 654 cells), rounded down.
_PYSIM_CELL_CYCLES_PER_SECOND = 3.0e6


class EngineNotice(UserWarning):
    """``auto`` or the default fell back to Amaranth's simulator: the compiled engine cannot run."""


def resolve_engine(engine=None, *, name="engine"):
    """``engine`` checked: ``"auto"``, ``"pysim"`` or ``"compiled"`` (``None``: ``$HWGEN_ENGINE``,
    else ``"auto"``).

    Raises ``ValueError`` naming ``name`` (or ``HWGEN_ENGINE``) for anything else, and
    :class:`EngineUnavailable` when ``compiled`` is asked for and cannot run. ``auto`` where the
    compiled engine cannot run is ``pysim``, with an :class:`EngineNotice` warning.
    """
    if engine is None:
        engine = os.environ.get("HWGEN_ENGINE") or None
        if engine is not None:
            name = "HWGEN_ENGINE"
        else:
            engine = "auto"
    if engine not in ENGINES:
        raise ValueError(f"{name} must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "compiled":
        try:
            check_available()
        except EngineUnavailable as error:
            raise EngineUnavailable(f"{name}=compiled: {error}") from None
    elif engine == "auto":
        try:
            check_available()
        except EngineUnavailable as error:
            warnings.warn(f"simulating with Amaranth's simulator: {error}", EngineNotice,
                          stacklevel=3)
            return "pysim"
    return engine


def pysim_only(engine, needed, what):
    """``engine`` for a job that needs Amaranth's simulator when ``needed`` (for ``what``, such
    as monitors): ``"pysim"`` for ``auto``, a ``ValueError`` naming ``what`` for ``compiled``;
    ``engine`` checked (:func:`resolve_engine`) otherwise."""
    engine = resolve_engine(engine)
    if not needed:
        return engine
    if engine == "compiled":
        raise ValueError(f"{what} need Amaranth's simulator: run them with engine='pysim' or "
                         f"'auto'")
    return "pysim"


def pysim_seconds(cycles, cells):
    """Seconds Amaranth's simulator takes for ``cycles`` cycles of a design of ``cells`` RTLIL
    cells, estimated."""
    return cycles * max(cells, 1) / _PYSIM_CELL_CYCLES_PER_SECOND


def engine_named(engine, *, name="engine"):
    """The engine object of a named engine, ``"pysim"`` or ``"compiled"`` (checked as
    :func:`resolve_engine` does; ``"auto"`` is chosen per job, by :func:`choose_engine`)."""
    engine = resolve_engine(engine, name=name)
    if engine == "auto":
        raise ValueError("engine 'auto' is chosen per job: use choose_engine()")
    return PysimEngine() if engine == "pysim" else CompiledEngine()


def choose_engine(engine, designs, *, cycles, waveforms=False):
    """The engine that runs one job on ``designs`` (side by side) for about ``cycles`` cycles
    (``None``: unknown): ``engine`` itself unless it is ``"auto"``.

    Returns
    -------
    Engine
        A :class:`~hwgen.sim.pysim_engine.PysimEngine` or a
        :class:`~hwgen.sim.compiled.CompiledEngine`; the latter holds the compiled engine's
        source of ``designs`` when it was made to decide (it is the costly part of a warm run).
    """
    engine = resolve_engine(engine)
    if engine == "pysim":
        return PysimEngine()
    if engine == "compiled":
        return CompiledEngine(cycles=cycles)
    top = compiled.top_of(list(designs))
    if cycles is not None and cycles <= SHORT_CYCLES:
        source = compiled.Source.if_built(top, waveforms=waveforms, cycles=cycles)
        return PysimEngine() if source is None else CompiledEngine(source, cycles=cycles)
    source = compiled.Source(top, waveforms=waveforms, cycles=cycles)
    if (source.cached or cycles is None
            or source.compile_estimate() < pysim_seconds(cycles, source.cells)):
        return CompiledEngine(source, cycles=cycles)
    return PysimEngine()
