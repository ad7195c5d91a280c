"""Flatten a program's stages and control flow into a graph of stages joined by guarded edges.

Every node is one stage of the datapath. An edge carries a thread from its source (a node, or the
thread launcher) to a node when its conditions hold on the context the source puts out; the
edges out of a node have exclusive conditions, so a thread takes exactly one. Edges to
:attr:`Schedule.exits` end the thread.

Two rules keep static stages from ever stalling: a static stage has exactly one incoming edge
(where paths merge in front of one, a :class:`~hwgen.kernels.pipeline.stage.Join` is inserted), and
every parking stage accepts whatever arrives. A loop whose body starts with a parking stage loops
back to that stage; otherwise a Join heads the loop. The program's first stage is always a Join
that launched threads enter.
"""

from dataclasses import dataclass

from .control import If, Loop
from .stage import Join, Stage

__all__ = ["Edge", "Node", "Schedule"]


@dataclass(frozen=True)
class Edge:
    """A path into a node: from ``source`` (None: the thread launcher) when every
    ``(condition, polarity)`` of ``conds`` holds on the source's output context."""
    source: "Node | None"
    conds: tuple = ()

    def guarded(self, cond, polarity):
        return Edge(self.source, self.conds + ((cond, polarity),))


class Node:
    """One stage of the flattened program and its incoming edges."""

    def __init__(self, index, stage, sources):
        self.index = index
        self.stage = stage
        self.sources = list(sources)

    @property
    def name(self):
        return f"{self.index}:{self.stage.name}"

    def __repr__(self):
        return f"Node({self.name!r})"


class Schedule:
    """The stage graph of a program body.

    Parameters
    ----------
    body : tuple
        Stages and control-flow items (already validated).

    Attributes
    ----------
    nodes : list of Node
        In program order; ``nodes[0]`` is the entry Join.
    exits : list of Edge
        Edges out of the program.
    """

    def __init__(self, body):
        self.nodes = []
        entry = self._node(Join("entry"), [Edge(None)])
        self.exits = self._sequence(body, [Edge(entry)])

    def _node(self, stage, sources):
        node = Node(len(self.nodes), stage, sources)
        self.nodes.append(node)
        return node

    def _sequence(self, items, pending):
        for item in items:
            if isinstance(item, Stage):
                pending = [Edge(self._stage(item, pending))]
            elif isinstance(item, Loop):
                pending = self._loop(item, pending)
            else:
                pending = self._branch(item, pending)
        return pending

    def _stage(self, stage, pending):
        if not stage.parking and len(pending) > 1:
            pending = [Edge(self._node(Join("merge"), pending))]
        return self._node(stage, pending)

    def _loop(self, loop, pending):
        first = loop.body[0]
        if isinstance(first, Stage) and first.parking:
            head, rest = self._node(first, pending), loop.body[1:]
        else:
            head, rest = self._node(Join("loop"), pending), loop.body
        ends = self._sequence(rest, [Edge(head)])
        head.sources.extend(edge.guarded(loop.repeat, True) for edge in ends)
        return [edge.guarded(loop.repeat, False) for edge in ends]

    def _branch(self, branch: If, pending):
        taken = self._sequence(branch.then, [edge.guarded(branch.cond, True) for edge in pending])
        skipped = [edge.guarded(branch.cond, False) for edge in pending]
        if branch.orelse:
            skipped = self._sequence(branch.orelse, skipped)
        return taken + skipped
