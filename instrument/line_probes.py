"""Line-activity counters: the cycles each source line of a design is active in, counted by an
HMM in hardware, as "Performance Analysis Framework for High-Level Language Applications in
Reconfigurable Computing" maps its counters onto source lines.

The conditions are those of a simulation profile (:mod:`hwgen.instrument.line_conditions`), built
as logic over the very signals the HMM is attached to, so a board gives the same counts as the
non-intrusive profile of a simulation. Each line costs one event counter of the HMM's
``counter_bits``.
"""

from dataclasses import dataclass

from ._amaranth import elaborate
from .line_conditions import LineConditions
from .probe import Count

__all__ = ["LineProbes", "line_probes"]


@dataclass(frozen=True)
class LineProbes:
    """What :func:`line_probes` returns.

    Attributes
    ----------
    probes : list of Probe
        One ``Count`` per line, named ``line.l<index>``; give them to :func:`attach`.
    lines : tuple of (str, int)
        ``(file, line)`` of probe ``line.l<index>``, by index.
    """
    probes: list
    lines: tuple

    def counts(self, readout):
        """``{(file, line): active cycles}`` of an HMM readout."""
        return {key: readout[f"line.l{index}"] for index, key in enumerate(self.lines)}


def line_probes(design, *, enable=None, platform=None):
    """Probes that count, per source line of ``design``, the cycles it is active in.

    Parameters
    ----------
    design : Elaboratable
        The design the HMM is attached to.
    enable : Value, dict or None
        As for ``hwgen.sim.LineProfiler``: a 1-bit port signal of ``design`` (such as
        ``ctrl.busy``) restricts every line, ``{part: value}`` the lines of a part.
    platform : object
        Passed to the design's ``elaborate`` to list its lines.

    Returns
    -------
    LineProbes
    """
    enables = {} if enable is None or isinstance(enable, dict) else {design: enable}
    if isinstance(enable, dict):
        enables.update(enable)
    # The lines are the same in every elaboration; their logic is built on the one attached to.
    lines = tuple(sorted(LineConditions(elaborate(design, platform), design, enables).lines))
    built = {}

    def activity(view, key):
        if id(view) not in built:
            built[id(view)] = (view, LineConditions(view.fragment, design, enables).expressions())
        return built[id(view)][1][key]

    probes = [Count(f"line.l{index}", lambda view, key=key: activity(view, key))
              for index, key in enumerate(lines)]
    return LineProbes(probes, lines)
