"""Cycle-to-source profiles of any Amaranth design, taken in the user's own simulation.

A source line that builds statements (assignments, ``m.next``) is *active* in a cycle when the
conditions that control one of its statements hold in that cycle, before the clock edge that
ends it: the arms of its enclosing ``If``/``Elif``/``Else`` and ``Switch`` cases, each with its
priority (the first arm that matches is taken, so untaken branches are purged), and the current
state of the ``m.FSM()`` it sits in (an FSM is a ``Switch`` on its state signal). These are the
associative rules of "HLS_Profiler: Non-Intrusive Profiling tool for HLS based Applications"
mapped to Amaranth; as HLS purges the lines of a function that is not running, the lines of a
submodule can be restricted to the cycles in which an enable signal holds.

Nothing is added to the design: the profiler adds one process to the user's ``Simulator`` that
samples, at each clock edge, the signals read by the tests of the switches that control profiled
lines; afterwards numpy computes those tests (:mod:`hwgen.sim.value_columns`) and every line's
condition for all cycles at once.

The conditions come from :class:`hwgen.instrument.line_conditions.LineConditions`, which also
locates ``m.next`` lines (Amaranth drops them) and leaves out statements located in Amaranth's own
files; an HMM can count the same conditions in hardware (:func:`hwgen.instrument.line_probes`).
"""

import linecache
import os
from dataclasses import dataclass, replace

import numpy as np
from amaranth.hdl import Value

from ..instrument._amaranth import SignalDict, clock_domains, simulated_fragment
from ..instrument.line_conditions import LineConditions, find_fragment
from .value_columns import INT64_BITS, Unsupported, evaluate, matches, signals_of, wide

__all__ = ["LineActivity", "LineProfile", "LineProfiler", "check_domain"]


def check_domain(fragment, domain):
    """Raise ValueError unless ``domain`` is a clock domain of the simulated ``fragment``: a
    profile counts that domain's clock edges."""
    found = clock_domains(fragment)
    if domain not in found:
        has = (f"its domains are {', '.join(map(repr, found))}" if found else
               "it has none (it is combinational: there are no clock edges to count)")
        raise ValueError(f"domain must be a clock domain of the simulated design, not "
                         f"{domain!r}: {has}")


@dataclass(frozen=True)
class LineActivity:
    """One source line's share of a run.

    Attributes
    ----------
    file : str
        The source file (absolute, as Python knows it).
    line : int
    code : str
        The line's text, stripped.
    active_cycles : int
        Cycles in which the line was active.
    percent : float or None
        ``active_cycles`` as a percentage of the run's cycles; None for a run of no cycles.
    """
    file: str
    line: int
    code: str
    active_cycles: int
    percent: float | None

    def to_json(self, root=None):
        return {"file": _relative(self.file, root), "line": self.line, "code": self.code,
                "active_cycles": self.active_cycles, "percent": self.percent}


@dataclass(frozen=True)
class LineProfile:
    """What :meth:`LineProfiler.profile` returns.

    Attributes
    ----------
    cycles : int
        Clock cycles profiled: every cycle sampled, or those in which the design-wide enable
        held.
    lines : tuple of LineActivity
        Every profiled line, most active first (ties by file and line).
    window : tuple of (int, tuple of (str, int)) or None
        For each cycle of the window asked for (numbered from the first cycle sampled), the
        ``(file, line)`` of the lines active in it.
    """
    cycles: int
    lines: tuple
    window: tuple | None = None

    @classmethod
    def from_counts(cls, counts, cycles):
        """The profile of ``{(file, line): active cycles}`` over ``cycles`` cycles, as line
        counters in hardware (:func:`hwgen.instrument.line_probes`) give it."""
        lines = [LineActivity(file, line, linecache.getline(file, line).strip(), count,
                              100.0 * count / cycles if cycles else None)
                 for (file, line), count in counts.items()]
        lines.sort(key=lambda entry: (-entry.active_cycles, entry.file, entry.line))
        return cls(cycles, tuple(lines))

    def to_json(self, root=None):
        """The profile as JSON data; files relative to ``root`` when they lie under it."""
        data = {"cycles": self.cycles, "lines": [line.to_json(root) for line in self.lines]}
        if self.window is not None:
            data["window"] = [{"cycle": cycle,
                               "lines": [{"file": _relative(file, root), "line": line}
                                         for file, line in active]}
                              for cycle, active in self.window]
        return data


def _relative(path, root):
    if root is None:
        return path
    relative = os.path.relpath(path, root)
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


class LineProfiler:
    """Profile the source lines of ``design`` in ``simulator``, cycle by cycle.

    Create it after the ``Simulator`` and before ``simulator.run()``; it adds one process to the
    simulation and changes nothing in the design: to find the lines of ``m.next`` it elaborates
    the design a second time, and puts back every attribute that rebinds (a ``self.count``
    set in ``elaborate()`` stays the simulated signal). A design wrapped by ``DomainRenamer``,
    ``EnableInserter`` or ``ResetInserter`` is profiled through its wrappers.

    Parameters
    ----------
    simulator : amaranth.sim.Simulator
        The user's simulator, with their own testbench.
    design : Elaboratable
        What to profile: the simulator's top-level design or any elaboratable inside it.
    enable : Value, dict or None
        Restrict lines to the cycles in which a signal of the design holds: a value restricts
        every line of ``design``, and the profile to those cycles (its ``cycles`` and
        percentages count them alone: the profile of a job, with ``ctrl.busy``);
        ``{elaboratable: value}`` restricts the lines of that submodule (and of its own
        submodules), as a PE's lines to the cycles it is ``busy``.
    domain : str
        The clock domain whose edges delimit cycles.

    Raises
    ------
    ValueError
        ``design`` (or an ``enable`` key) is not part of what ``simulator`` simulates, or
        ``domain`` is not one of its clock domains.
    """

    def __init__(self, simulator, design, *, enable=None, domain="sync"):
        enables = {} if enable is None or isinstance(enable, dict) else {design: enable}
        if isinstance(enable, dict):
            enables.update(enable)
        self._domain = domain
        fragment = simulated_fragment(simulator)
        check_domain(fragment, domain)
        if find_fragment(fragment, design) is None:
            raise ValueError(f"design must be part of the simulated design, not {design!r}")
        self._conditions = LineConditions(fragment, design, enables)
        # Sample the signals the tests read, and compute the tests with numpy afterwards; a test
        # this cannot compute (it reads a memory, say) is sampled itself.
        self._sampled = []                       # signals, and tests sampled whole
        self._columns = SignalDict()             # signal -> its index in _sampled
        self._computed = [self._sample(test) for _, test, _, _ in self._conditions.switches]
        gate = None if enable is None or isinstance(enable, dict) else Value.cast(enable).bool()
        self._gate = None if gate is None else (gate, self._sample(gate))
        self._samples = []
        self._activity = None
        simulator.add_process(self._sampler())

    def _sample(self, value):
        """Have ``value`` sampled: True when computed from its signals, else its index."""
        try:
            signals = signals_of(value)
        except Unsupported:
            self._sampled.append(value)
            return len(self._sampled) - 1
        for signal in signals:
            if signal not in self._columns:
                self._columns[signal] = len(self._sampled)
                self._sampled.append(signal)
        return True

    # -- the simulation ----------------------------------------------------------------------

    def _sampler(self):
        values, samples, domain = list(self._sampled), self._samples, self._domain

        async def sample_lines(ctx):
            async for _clk, _rst, *row in ctx.tick(domain).sample(*values):
                samples.append(row)
        return sample_lines

    # -- the profile -------------------------------------------------------------------------

    @property
    def cycles(self):
        """Cycles sampled so far (all of them, whatever the enable)."""
        return len(self._samples)

    def activity(self):
        """``{(file, line): numpy bool array}``: each line's activity in every cycle sampled."""
        return self._evaluated()[0]

    def _evaluated(self):
        """``(activity, cycles profiled)``, computed once per number of cycles sampled."""
        cycles = self.cycles
        if self._activity is not None and self._activity[0] == cycles:
            return self._activity[1:]
        sampled = [np.array([row[index] for row in self._samples],
                            dtype=np.int64 if len(value) <= INT64_BITS else object)
                   for index, value in enumerate(self._sampled)]
        columns = SignalDict((signal, sampled[index]) for signal, index in self._columns.items())

        def column(value, computed):
            if computed is True:
                return evaluate(value, columns, cycles, object if wide(value) else np.int64)
            return sampled[computed]

        conditions = self._conditions
        holds = [np.ones(cycles, dtype=bool)] + [None] * (len(conditions.parents) - 1)
        for (parent, test, patterns, first), computed in zip(conditions.switches, self._computed):
            value = column(test, computed)
            taken = np.zeros(cycles, dtype=bool)
            for node, case in enumerate(patterns, first):
                hit = matches(value, case, cycles)
                holds[node] = holds[parent] & hit & ~taken
                taken |= hit
        activity = {}
        for key, nodes in conditions.lines.items():
            active = np.zeros(cycles, dtype=bool)
            for node in nodes:
                active |= holds[node]
            activity[key] = active
        profiled = cycles if self._gate is None else int(np.count_nonzero(column(*self._gate)))
        self._activity = (cycles, activity, profiled)
        return activity, profiled

    def profile(self, *, cycles=None):
        """The profile of the cycles sampled so far.

        Parameters
        ----------
        cycles : (int, int) or None
            A window ``(first, stop)`` of cycles (``stop`` excluded) whose active lines to list,
            cycle by cycle.

        Returns
        -------
        LineProfile
        """
        if cycles is not None:
            first, stop = cycles
            if not (isinstance(first, int) and isinstance(stop, int) and 0 <= first < stop):
                raise ValueError(f"cycles must be a window (first, stop) with 0 <= first < stop, "
                                 f"not {cycles!r}")
        activity, profiled = self._evaluated()
        profile = LineProfile.from_counts(
            {key: int(np.count_nonzero(active)) for key, active in activity.items()}, profiled)
        if cycles is None:
            return profile
        ordered = sorted(activity)
        window = tuple((cycle, tuple(key for key in ordered if activity[key][cycle]))
                       for cycle in range(first, min(stop, self.cycles)))
        return replace(profile, window=window)
