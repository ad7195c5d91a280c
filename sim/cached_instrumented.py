# amaranth: UnusedElaboratable=no
"""An instrumented PE whose HMM's layout comes from the compiled engine's recipe cache.

A warm compiled run of a PE that hwgen instruments itself needs, of the instrumented design, its
ports (the PE's and the HMM port's), its HMM's layout (to drive the port and decode what it
reads), its RTLIL and its model; the PE's own members give the memory's sizes. When the RTLIL
and the layout are cached under the design's recipe (:mod:`hwgen.sim.recipe`, whose key changes
with any edit of hwgen's code), :func:`cached_attach` makes the design from them: the PE is
elaborated (its own checks run, as attaching the HMM would run them), the HMM is neither made
nor elaborated, and the compiled engine takes the model from the cache. Elaborated after all
(Amaranth's simulator, a build), the design is attached then, and must give the cached layout.

The first line of this module turns off Amaranth's warning that an elaboratable made here was
never elaborated: a design made here and run compiled from the cache was used, though never
elaborated.
"""

from types import SimpleNamespace

from ..instrument import Instrumented
from ..instrument._amaranth import elaborate

__all__ = ["CachedInstrumented", "cached_attach"]


class CachedInstrumented(Instrumented):
    """:class:`hwgen.instrument.Instrumented` with its HMM's layout given, attached only when it
    is elaborated (or its :attr:`view` is asked for).

    Parameters
    ----------
    design, probes, options
        As :class:`hwgen.instrument.Instrumented`'s.
    layout : HMMLayout
        The layout the HMM attached with these arguments has (from the cache).
    """

    def __init__(self, design, probes, layout, **options):
        self._cached_layout = layout
        super().__init__(design, probes, **options)

    def _assemble(self, platform):
        layout, self._cached_layout = self._cached_layout, None
        if layout is None:
            return super()._assemble(platform)
        elaborate(self._design, platform)
        return None, SimpleNamespace(layout=layout), None

    @property
    def from_cache(self):
        """Whether the HMM is not attached yet: the layout is still the cached one alone."""
        return self._elaborated is not None and self._elaborated[0] is None

    def _attach_now(self):
        fragment, hmm, view = super()._assemble(self._platform)
        if hmm.layout != self._layout:
            raise RuntimeError("the HMM attached to this design has another layout than the "
                               "one cached under its recipe")
        self._elaborated, self._view = (fragment, hmm, view), view

    @property
    def view(self):
        if self.from_cache:
            self._attach_now()
        return super().view

    def elaborate(self, platform):
        if self.from_cache and platform == self._platform:
            self._attach_now()
        elif self.from_cache:
            self._elaborated = None     # attached for that platform by Instrumented
        return super().elaborate(platform)


def cached_attach(design, probes, layout, **options):
    """:func:`hwgen.instrument.attach` with the HMM's ``layout`` known: a
    :class:`CachedInstrumented`."""
    return CachedInstrumented(design, probes, layout, **options)
