"""Find the state machines, streams and signals of an elaborated design.

:class:`DesignView` looks at the fragment tree that ``Fragment.get(design, platform)`` returns —
the very signals the design will be built from, so logic attached to them observes the real
design (elaborating a design again creates new signals).

State machines are found two ways: ``m.FSM()`` leaves its FSMs, with their state encodings, in
``fragment.generated``; transformers such as ``DomainRenamer`` drop that, but the state signal
(``<name>_state``) keeps the decoder that ``m.FSM()`` gives it (state ``n`` decodes to
``"<state name>/<n>"``), so a signal driven in a clocked domain with such a decoder is one too.

Streams are pairs of 1-bit signals referenced by the same fragment and named like the members of
an ``amaranth.lib.stream`` interface (``<prefix>valid`` and ``<prefix>ready``, the prefix empty or
ending in ``_``), or like the write and read sides of an ``amaranth.lib.fifo`` queue (``w_en`` /
``w_rdy`` and ``r_rdy`` / ``r_en``). A stream that ``connect()`` (or any plain ``a.eq(b)``) copies
from one interface to another is found once: named after the design's port if it is one, else
after the deepest fragment that has it.
"""

import re
from dataclasses import dataclass

from amaranth.hdl import Fragment, Signal

from ._amaranth import (SignalDict, SignalSet, assignment, fsm_state_names, generated_fsms,
                        lhs_signals, rhs_signals, statements, subfragments)

__all__ = ["DesignView", "FSMInfo", "StreamInfo"]

# (valid name, ready name, stream name) of the FIFO interfaces in amaranth.lib.fifo.
_FIFO_STREAMS = (("w_en", "w_rdy", "w"), ("r_rdy", "r_en", "r"))


@dataclass(frozen=True, eq=False)
class FSMInfo:
    """A state machine: hierarchical ``name``, its state ``signal``, state names by encoding."""
    name: str
    signal: Signal
    states: tuple
    domain: str


@dataclass(frozen=True, eq=False)
class StreamInfo:
    """A valid/ready pair with its hierarchical name."""
    name: str
    valid: Signal
    ready: Signal


class _Scope:
    """What one fragment references and drives."""

    def __init__(self, path, fragment):
        self.path = path
        self.fragment = fragment
        self.referenced = SignalSet()
        self.driven = SignalDict()  # signal -> domain
        self.aliases = []         # (lhs, rhs) of unconditional comb `signal.eq(signal)`
        for domain, domain_statements in statements(fragment).items():
            for statement in domain_statements:
                lhs = lhs_signals(statement)
                self.referenced |= lhs
                self.referenced |= rhs_signals(statement)
                for signal in lhs:
                    self.driven.setdefault(signal, domain)
                pair = assignment(statement) if domain == "comb" else None
                if (pair is not None and all(isinstance(side, Signal) for side in pair)
                        and len(pair[0]) == len(pair[1])):
                    self.aliases.append(pair)

    def name(self, leaf):
        return ".".join([*self.path, leaf] if leaf else self.path)


class DesignView:
    """The state machines, streams and named signals of an elaborated design.

    Parameters
    ----------
    fragment : Fragment
        What ``Fragment.get(design, platform)`` returned.
    ports : iterable of Signal
        The design's port signals; streams made of them are named after them.

    Attributes
    ----------
    fsms : tuple of FSMInfo
    streams : tuple of StreamInfo
    """

    def __init__(self, fragment, ports=()):
        if not isinstance(fragment, Fragment):
            raise TypeError(f"fragment must be a Fragment (from Fragment.get), not {fragment!r}")
        self._fragment = fragment
        self._ports = SignalSet(ports)
        self._scopes = []
        self._collect(fragment, ())
        self.fsms = self._find_fsms()
        self.streams = self._find_streams()

    @property
    def fragment(self):
        return self._fragment

    def _collect(self, fragment, path):
        self._scopes.append(_Scope(path, fragment))
        for index, (sub, name) in enumerate(subfragments(fragment)):
            self._collect(sub, (*path, name if name is not None else f"U${index}"))

    def _find_fsms(self):
        found = SignalDict()
        for scope in self._scopes:
            clocked = SignalDict((s, d) for s, d in scope.driven.items() if d != "comb")
            for fsm_name, encoding in generated_fsms(scope.fragment).items():
                signal = next((s for s in clocked if s.name == f"{fsm_name}_state"), None)
                if signal is None:
                    continue
                states = tuple(sorted(encoding, key=encoding.get))
                found[signal] = FSMInfo(scope.name(fsm_name), signal, states, clocked[signal])
            for signal, domain in clocked.items():
                if signal not in found:
                    states = fsm_state_names(signal)
                    if states is not None:
                        found[signal] = FSMInfo(scope.name(signal.name[:-len("_state")]), signal,
                                                states, domain)
        return tuple(found.values())

    def _find_streams(self):
        root = SignalDict()
        for scope in self._scopes:
            for lhs, rhs in scope.aliases:
                root[lhs] = rhs

        def resolve(signal):
            seen = SignalSet()
            while signal in root and signal not in seen:
                seen.add(signal)
                signal = root[signal]
            return signal

        candidates = []
        for order, scope in enumerate(self._scopes):
            by_name = {}
            for signal in scope.referenced:
                if len(signal) == 1:
                    by_name.setdefault(signal.name, []).append(signal)
            pairs = [(name, name[:-len("valid")] + "ready", name[:-len("valid")].rstrip("_"))
                     for name in by_name
                     if re.fullmatch(r"(.*_)?valid", name)]
            pairs += [pair for pair in _FIFO_STREAMS if pair[0] in by_name]
            for valid_name, ready_name, leaf in pairs:
                valids, readies = by_name.get(valid_name, []), by_name.get(ready_name, [])
                if len(valids) == 1 and len(readies) == 1:
                    valid, ready = valids[0], readies[0]
                    ported = valid in self._ports and ready in self._ports
                    candidates.append((not ported, -len(scope.path), order, scope.name(leaf),
                                       valid, ready))
        streams = {}
        for *_, name, valid, ready in sorted(candidates, key=lambda c: c[:4]):
            key = (id(resolve(valid)), id(resolve(ready)))
            streams.setdefault(key, StreamInfo(name, valid, ready))
        return tuple(sorted(streams.values(), key=lambda s: s.name))

    def signal(self, path):
        """The signal ``path`` names: ``"sub.sub.name"``, a signal referenced in that fragment."""
        *parts, leaf = path.split(".")
        scope = next((s for s in self._scopes if list(s.path) == parts), None)
        if scope is None:
            known = ", ".join(".".join(s.path) for s in self._scopes if s.path)
            raise KeyError(f"no submodule {'.'.join(parts)!r} in the design (it has: {known})")
        matches = [s for s in scope.referenced if s.name == leaf]
        if len(matches) != 1:
            names = sorted({s.name for s in scope.referenced if s.name})
            problem = "no signal" if not matches else f"{len(matches)} signals"
            raise KeyError(f"{problem} named {leaf!r} in {'.'.join(parts) or 'the top'} "
                           f"(signals there: {', '.join(names)})")
        return matches[0]

    __getitem__ = signal
