"""When each source line of an elaborated Amaranth design is active: its statements' conditions.

A source line that builds statements (assignments, ``m.next``) is *active* in a cycle when the
conditions on the path to one of its statements hold: each enclosing ``If``/``Elif``/``Else`` arm
and ``Switch`` case is the one its switch takes (the first whose patterns match, so untaken
branches are purged), and an FSM's state is a ``Switch`` on its state signal. The lines of a part
of the design can be restricted to the cycles in which an enable signal holds.

:class:`LineConditions` reads the statement tree once and keeps it as data: condition *nodes*
(node 0 always holds; each case of a switch is a node under the node the switch sits in) and, per
line, the nodes of its statements. A simulation profile evaluates them from sampled signals
(``hwgen.sim.LineProfiler``); :meth:`LineConditions.expressions` turns them into hardware, for
line-activity counters in an HMM (:func:`hwgen.instrument.line_probes`).

``m.next = ...`` loses its line in Amaranth; the design is elaborated a second time with those
statements keeping their caller's line, and both statement trees are walked side by side (their
shapes are equal). Statements located in Amaranth's own files are not lines of the design.
"""

import warnings

from amaranth.hdl import Const, Value

from ._amaranth import (elaborate_with_next_lines, fragment_origins, is_amaranth_source,
                        statements, subfragments, switch_cases)

__all__ = ["LineConditions", "find_fragment"]


class _ShapeMismatch(Exception):
    """The second elaboration's statement tree differs from the first."""


def find_fragment(fragment, design):
    """The fragment under ``fragment`` (itself included) that ``design`` elaborated to; None when
    there is none."""
    if design in fragment_origins(fragment):
        return fragment
    for sub, _name in subfragments(fragment):
        found = find_fragment(sub, design)
        if found is not None:
            return found
    return None


class LineConditions:
    """The conditions of every source line of ``design`` in an elaborated ``fragment``.

    Parameters
    ----------
    fragment : Fragment
        An elaboration that holds ``design`` (a simulator's, or the one an HMM is attached to).
    design : Elaboratable
        Whose lines: the design the fragment came from, or any elaboratable inside it.
    enables : dict
        ``{elaboratable: value}``: the lines of that part (and of its own parts) are active only
        when the 1-bit ``value`` holds.

    Attributes
    ----------
    parents : list
        Per node, its parent node (None for node 0).
    switches : list of (int, Value, list, int)
        ``(parent node, test, patterns per case, first case's node)``, parents first, only those
        that control a line; patterns are strings of ``0``/``1``/``-`` or None (the default).
    lines : dict
        ``{(file, line): set of nodes}``.

    Raises
    ------
    ValueError
        ``design`` or an ``enables`` key is not part of ``fragment``.
    """

    def __init__(self, fragment, design, enables=None):
        enables = dict(enables or {})
        found = find_fragment(fragment, design)
        if found is None:
            raise ValueError(f"design must be part of the elaborated design, not {design!r}")
        try:
            located = elaborate_with_next_lines(fragment, found)
            if located is None:
                raise _ShapeMismatch
            self._build(found, located, enables)
        except _ShapeMismatch:
            warnings.warn("the design elaborates differently each time: its m.next lines are not "
                          "profiled", stacklevel=2)
            self._build(found, None, enables)
        missing = [key for key in enables if key not in self._enabled]
        if missing:
            raise ValueError(f"enable must name parts of the design, not {missing[0]!r}")

    def expressions(self):
        """``{(file, line): 1-bit Value}``: each line's activity as logic over the design's
        signals, for counters in hardware."""
        holds = [Const(1)] + [None] * (len(self.parents) - 1)
        for parent, test, patterns, first in self.switches:
            taken = Const(0)
            for node, case in enumerate(patterns, first):
                hit = Const(1) if case is None else test.matches(*case) if case else Const(0)
                holds[node] = holds[parent] & hit & ~taken
                taken = taken | hit
        active = {}
        for key, nodes in sorted(self.lines.items()):
            value = Const(0)
            for node in sorted(nodes):
                value = value | holds[node]
            active[key] = value
        return active

    def _build(self, fragment, located, enables):
        self.parents = [None]
        self.switches = []
        self.lines = {}
        self._enabled = set()
        self._enables = enables
        self._walk_fragment(fragment, located, 0)
        needed = set()
        for nodes in self.lines.values():
            for node in nodes:
                while node is not None and node not in needed:
                    needed.add(node)
                    node = self.parents[node]
        self.switches = [switch for switch in self.switches
                         if any(node in needed
                                for node in range(switch[3], switch[3] + len(switch[2])))]

    def _new_switch(self, parent, test, patterns):
        first = len(self.parents)
        self.parents += [parent] * len(patterns)
        self.switches.append((parent, test, list(patterns), first))
        return range(first, first + len(patterns))

    def _walk_fragment(self, fragment, located, node):
        for origin in fragment_origins(fragment):
            if origin in self._enables and origin not in self._enabled:
                self._enabled.add(origin)
                node, = self._new_switch(node, Value.cast(self._enables[origin]).bool(), [("1",)])
        twins = statements(located) if located is not None else {}
        if located is not None and list(twins) != list(statements(fragment)):
            raise _ShapeMismatch
        for domain, stmts in statements(fragment).items():
            self._walk(list(stmts), None if located is None else list(twins[domain]), node)
        subs = subfragments(fragment)
        located_subs = subfragments(located) if located is not None else [(None, None)] * len(subs)
        if len(located_subs) != len(subs):
            raise _ShapeMismatch
        for (sub, _name), (located_sub, _) in zip(subs, located_subs):
            self._walk_fragment(sub, located_sub, node)

    def _walk(self, stmts, twins, node):
        if twins is None:
            twins = stmts
        elif len(twins) != len(stmts):
            raise _ShapeMismatch
        for stmt, twin in zip(stmts, twins):
            switch, twin_switch = switch_cases(stmt), switch_cases(twin)
            if (switch is None) != (twin_switch is None):
                raise _ShapeMismatch
            if switch is None:
                file, line = twin.src_loc[:2]
                if not is_amaranth_source(file):
                    self.lines.setdefault((file, line), set()).add(node)
                continue
            test, cases = switch
            if len(twin_switch[1]) != len(cases):
                raise _ShapeMismatch
            nodes = self._new_switch(node, test, [patterns for patterns, _, _ in cases])
            for child, (_, body, _), (_, twin_body, _) in zip(nodes, cases, twin_switch[1]):
                self._walk(body, twin_body, child)
