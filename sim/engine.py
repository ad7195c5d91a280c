"""Which engine simulates: Amaranth's simulator (``pysim``) or the compiled engine
(``compiled``, :mod:`hwgen.sim.compiled`).

Every function that simulates takes ``engine=``: ``"pysim"``, ``"compiled"``, or ``None`` for the
default, which is ``$HWGEN_ENGINE`` when set, else ``compiled`` when a C++ compiler and CXXRTL's
headers are found, else ``pysim`` (with a one-line :class:`EngineNotice` warning).
"""

import os
import warnings

from .compiled import EngineUnavailable, check_available

__all__ = ["ENGINES", "EngineNotice", "EngineUnavailable", "resolve_engine"]

ENGINES = ("pysim", "compiled")


class EngineNotice(UserWarning):
    """The default engine fell back to Amaranth's simulator."""


def resolve_engine(engine=None):
    """The engine to use for ``engine`` (see the module documentation); raises
    :class:`EngineUnavailable` when ``compiled`` is asked for and cannot run."""
    if engine is None:
        engine = os.environ.get("HWGEN_ENGINE") or None
        if engine is None:
            try:
                check_available()
            except EngineUnavailable as error:
                warnings.warn(f"simulating with Amaranth's simulator: {error}", EngineNotice,
                              stacklevel=3)
                return "pysim"
            return "compiled"
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "compiled":
        check_available()
    return engine
