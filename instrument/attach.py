"""Attach an HMM to any Amaranth design, ours or a user's, without touching its source.

``attach(design, probes)`` elaborates the design once (``Fragment.get``), finds its state
machines and streams (:mod:`hwgen.instrument.discover`), and returns an :class:`Instrumented`
component: the very same ports as the design (its signature, and its port signals, with no logic
in between) plus an ``hmm`` member, the HMM's control and readout port. Inside it, the design's
fragment runs as it would alone, and an HMM watches its signals:

* a state profiler per state machine (``fsm.<path>``),
* transferring / blocking / idle counters per stream (``stream.<path>``),
* every probe given (:mod:`hwgen.instrument.probe`): custom events over the design's signals. A probe
  named like an automatic one (``stream.rd_req``) replaces it;
* on request, a ``timeline``: a record of every state machine's state and every stream's category
  (:data:`~hwgen.instrument.stream_monitor.STREAM_CATEGORIES`) whenever any of them changes
  (:class:`~hwgen.instrument.probe.Changes`; the fields are named like the profiles, ``fsm.<path>`` and
  ``stream.<path>``, and labelled with the state and category names), so a host can draw them
  over time.

The HMM only reads the design's signals, so the design's behaviour, outputs and cycle count are
unchanged.
"""

from amaranth.hdl import Module, Signal, Value, ValueCastable
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ._amaranth import elaborate
from .discover import DesignView
from .hmm import HMM
from .port import PortSignature
from .probe import Changes, Profile, Stream
from .stream_monitor import STREAM_CATEGORIES, stream_category

__all__ = ["Instrumented", "attach"]


def _port_signals(design):
    signature = getattr(design, "signature", None)
    if not isinstance(signature, wiring.Signature):
        return []
    signals = []
    for _, _, value in signature.flatten(design):
        value = value.as_value() if isinstance(value, ValueCastable) else Value.cast(value)
        if isinstance(value, Signal):
            signals.append(value)
    return signals


class Instrumented(wiring.Component):
    """A design with an HMM attached.

    Parameters
    ----------
    design : Elaboratable
        Usually a ``wiring.Component``, whose signature the instrumented design keeps.
    probes : sequence of Probe
        Measurements besides the automatic ones.
    platform : object
        Passed to the design's ``elaborate``.
    fsms, streams : bool
        Profile every state machine; count every stream's categories.
    timeline_depth : int or None
        Records of the ``timeline`` trace (a power of two, ``stop`` mode: the host drains it while
        the design runs); ``None`` for no timeline.
    counter_bits, word_bits, snapshot
        See :class:`~hwgen.instrument.hmm.HMM`.
    bank : bool or None
        See :class:`~hwgen.instrument.hmm.HMM`. ``None`` (the default) banks the counts unless
        ``platform`` is an iCE40's, which has no distributed RAM: there a bank's table would be
        flip-flops and multiplexers, dearer than the counts' own registers.
    layout : HMMLayout or None
        The layout the HMM attached with these arguments has, when it is known already (a cache
        of compiled models keeps it beside the design's model). The design is then elaborated (its
        own checks run) but the HMM is attached only when needed: when this component is
        elaborated or its :attr:`view` is asked for. It must have this layout, else
        ``RuntimeError``.

    Members
    -------
    <the design's members>
        The design's own interface objects.
    hmm : In(PortSignature(layout.addr_bits, word_bits, layout.read_latency_cycles))
        The HMM's control and readout port.
    """

    def __init__(self, design, probes=(), *, platform=None, fsms=True, streams=True,
                 timeline_depth=None, counter_bits=32, word_bits=32, snapshot="all", bank=None,
                 layout=None):
        if bank is None:
            # The iCE40 has no LUT RAM: hwgen's boards name its family "ice40", Amaranth's
            # SiliconBlue platforms "iCE40" (or "iCE5").
            family = getattr(platform, "family", None)
            bank = not (isinstance(family, str) and family.lower() in ("ice40", "ice5"))
        signature = getattr(design, "signature", None)
        members = dict(signature.members) if isinstance(signature, wiring.Signature) else {}
        if "hmm" in members:
            raise ValueError("the design already has a member named 'hmm'")
        self._design = design
        self._probes = tuple(probes)
        self._options = dict(fsms=fsms, streams=streams, timeline_depth=timeline_depth,
                             counter_bits=counter_bits, word_bits=word_bits,
                             snapshot=snapshot, bank=bank)
        self._platform = platform
        self._given_layout = layout is not None
        if layout is None:
            self._elaborated = self._assemble(platform)
            self._layout = self._elaborated[1].layout
            self._view = self._elaborated[2]
        else:
            elaborate(design, platform)
            self._elaborated, self._layout, self._view = None, layout, None
        super().__init__({**members, "hmm": In(PortSignature(
            self._layout.addr_bits, word_bits, self._layout.read_latency_cycles))})
        # The design's ports are this component's ports: nothing sits between them.
        for name in members:
            setattr(self, name, getattr(design, name))

    @property
    def design(self):
        return self._design

    @property
    def layout(self):
        """The HMM's :class:`~hwgen.instrument.layout.HMMLayout`."""
        return self._layout

    @property
    def attached(self):
        """Whether the HMM is attached: ``False`` only while the ``layout`` given stands for it."""
        return self._view is not None

    @property
    def view(self):
        """The :class:`~hwgen.instrument.discover.DesignView` of the elaborated design the first
        elaboration of this component embeds (the one a simulator runs)."""
        if self._view is None:
            self._elaborated = self._attach(self._platform)
            self._view = self._elaborated[2]
        return self._view

    def _attach(self, platform):
        """The design elaborated again for ``platform`` and a new HMM attached to its signals,
        which must have this component's layout."""
        fragment, hmm, view = self._assemble(platform)
        if hmm.layout != self._layout:
            if self._given_layout:
                raise RuntimeError("the HMM attached to this design has another layout than the "
                                   "one given")
            raise RuntimeError("the design elaborated differently this time, so its HMM "
                               "layout changed; attach() to it once per elaboration")
        return fragment, hmm, view

    def _assemble(self, platform):
        options = self._options
        fragment = elaborate(self._design, platform)
        view = DesignView(fragment, _port_signals(self._design))
        given = {probe.name for probe in self._probes}
        probes, skipped = [], []
        if options["fsms"]:
            for fsm in view.fsms:
                if fsm.domain != "sync":
                    skipped.append(f"fsm.{fsm.name} (domain {fsm.domain})")
                elif f"fsm.{fsm.name}" not in given:
                    probes.append(Profile(f"fsm.{fsm.name}", fsm.signal, fsm.states))
        if options["streams"]:
            probes += [Stream(f"stream.{s.name}", s.valid, s.ready) for s in view.streams
                       if f"stream.{s.name}" not in given]
        probes += self._probes
        if options["timeline_depth"] is not None:
            probes.append(self._timeline(view, options["timeline_depth"]))
        details = {
            "fsms": {fsm.name: list(fsm.states) for fsm in view.fsms},
            "streams": {s.name: {"valid": s.valid.name, "ready": s.ready.name}
                        for s in view.streams},
            "skipped": skipped,
        }
        hmm = HMM(probes, view=view, counter_bits=options["counter_bits"],
                  word_bits=options["word_bits"], snapshot=options["snapshot"],
                  bank=options["bank"], details=details)
        return fragment, hmm, view

    @staticmethod
    def _timeline(view, depth):
        values, labels = {}, {}
        for fsm in view.fsms:
            if fsm.domain == "sync":
                values[f"fsm.{fsm.name}"] = fsm.signal
                labels[f"fsm.{fsm.name}"] = fsm.states
        for s in view.streams:
            values[f"stream.{s.name}"] = stream_category(s.valid, s.ready)
            labels[f"stream.{s.name}"] = STREAM_CATEGORIES
        if not values:
            raise ValueError("timeline_depth: the design has no state machine and no stream to "
                             "record")
        return Changes("timeline", values, labels=labels, depth=depth)

    def elaborate(self, platform):
        if self._elaborated is not None and platform == self._platform:
            fragment, hmm, _ = self._elaborated
        else:
            # Elaborating again creates new signals: attach a new HMM to them.
            fragment, hmm, view = self._attach(platform)
            if self._view is None and platform == self._platform:
                self._view = view
        self._elaborated = None
        m = Module()
        m.submodules.design = fragment
        m.submodules.hmm = hmm
        wiring.connect(m, wiring.flipped(self.hmm), hmm.port)
        return m


def attach(design, probes=(), **options):
    """Attach an HMM to ``design``; see :class:`Instrumented` for the options."""
    return Instrumented(design, probes, **options)
