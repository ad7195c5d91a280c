"""A system of identical PEs behind a memory interconnect: what a board full of PEs is.

:class:`PESystem` has a PE's ``ctrl`` port and, instead of one memory port, ``channels`` memory
channels ``mem0``, ``mem1``, ... of the :class:`~hwgen.kernels.interconnect.Interconnect`, each
with exactly a PE's memory port (``rd_req``, ``rd_rsp``, ``wr_req``), so one memory model serves
a PE and a system's channels alike:

``ctrl``
    ``start``, ``busy``, ``done`` as for a PE; the PEs' run-time parameters, which PE ``i``
    receives plus ``i * frame_stride`` (each PE works on its own frame, ``frame_stride``
    elements after the previous PE's: window filters' parameters are all base addresses), and
    ``frame_stride``. ``start`` launches the PEs one per cycle, PE 0 first (one shared adder
    steps the parameters instead of one multiplier per PE); ``done`` pulses once the last PE
    has finished and the interconnect has handed every write to its channel (the memory has
    accepted them all).

    Nothing the control drives reaches more than :data:`FAN_OUT` PEs from one register, and
    nothing it gathers from the PEs passes more than :data:`FAN_OUT` bits per register, so
    the control's paths are no longer than a PE's at any P: every PE's ``start`` is a bit of
    a shift register, the parameters reach the PEs through a tree of registers
    (:attr:`PESystem.start_latency` cycles: 0 up to 8 PEs, 1 up to 64), and ``done`` is a
    registered tree of ANDs (:attr:`PESystem.done_latency` cycles after the last PE and the
    last write, ``ceil(log8(P + write buffers))``).
``mem<c>``
    Memory channel ``c``: the PEs the interconnect groups onto it share its beat per cycle each
    way; responses come back in the channel's request order.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .interconnect import (ChannelPort, Interconnect, channels_for, memory_port_signature,
                           tree_levels)
from .pe import ControlSignature
from .window import WindowFilter

__all__ = ["FAN_OUT", "PESystem", "beat_bytes", "frame_elements", "system_addr_width",
           "window_system", "window_system_of", "window_system_pe"]

#: PEs (or registers) one register of the system's control drives at most, and bits one
#: register of its ``done`` tree gathers at most: a few logic levels and short nets.
FAN_OUT = 8


class PESystem(wiring.Component):
    """``pes`` identical PEs behind ``channels`` memory channels (see the module).

    Parameters
    ----------
    pes : sequence of PE components
        At least one; every PE has the same signature and self-description.
    channels : int or None
        Memory channels, 1 to the PEs (``None``: one per PE, an unlimited link); see
        :func:`~hwgen.kernels.interconnect.channels_for` to size them from a link.

    Members
    -------
    ctrl
        The PE's, with ``frame_stride`` added.
    mem0, mem1, ...
        The memory channels.
    """

    def __init__(self, pes, *, channels=None):
        pes = tuple(pes)
        if not pes:
            raise ValueError("a system needs at least one PE")
        first = pes[0]
        for pe in pes[1:]:
            if pe.signature != first.signature or (pe.rd_beat, pe.wr_beat, pe.ops_per_element) \
                    != (first.rd_beat, first.wr_beat, first.ops_per_element):
                raise ValueError("the PEs of a system must have the same ports and beats")
        params = first.signature.members["ctrl"].signature.params
        if "frame_stride" in params:
            raise ValueError("a PE's run-time parameter may not be named 'frame_stride'")
        self._pes = pes
        self._interconnect = Interconnect(
            pes=len(pes), channels=len(pes) if channels is None else channels,
            addr_width=first.addr_width, rd_beat=first.rd_beat, wr_beat=first.wr_beat,
            reads_in_flight=first.max_outstanding_reads)
        port = memory_port_signature(first.addr_width, first.rd_beat, first.wr_beat)
        super().__init__({
            "ctrl": In(ControlSignature({**params, "frame_stride": unsigned(first.addr_width)})),
            **{f"mem{c}": Out(port) for c in range(self._interconnect.channels)}})

    @property
    def pes(self):
        return self._pes

    @property
    def count(self):
        """PEs in the system."""
        return len(self._pes)

    @property
    def interconnect(self):
        return self._interconnect

    @property
    def channels(self):
        """The memory channels as :class:`~hwgen.kernels.interconnect.ChannelPort`."""
        return [ChannelPort(getattr(self, f"mem{c}"), self.addr_width, self.rd_beat,
                            self.wr_beat, prefix=f"mem{c}__")
                for c in range(self._interconnect.channels)]

    addr_width = property(lambda self: self._pes[0].addr_width)
    rd_beat = property(lambda self: self._pes[0].rd_beat)
    wr_beat = property(lambda self: self._pes[0].wr_beat)
    ops_per_element = property(lambda self: self._pes[0].ops_per_element)

    @property
    def max_outstanding_reads(self):
        """Read beats in flight at most: every PE's."""
        return sum(pe.max_outstanding_reads for pe in self._pes)

    @property
    def start_latency(self):
        """Cycles the control's register tree adds before PE 0 starts (0 up to FAN_OUT PEs,
        1 up to FAN_OUT squared, ...)."""
        return _fan_out_levels(len(self._pes))

    @property
    def done_latency(self):
        """Cycles from the cycle the last PE is done and the last write has left the
        interconnect (what ``done`` waited for before it was registered) to ``done``."""
        return tree_levels(len(self._pes) + self._interconnect.write_buffers, FAN_OUT)

    @property
    def launch_cycles(self):
        """Cycles the control adds to one PE's run when every PE runs as it would alone:
        ``start_latency + P + done_latency`` (PE ``i`` starts ``start_latency + i + 1`` cycles
        after ``start``)."""
        return self.start_latency + len(self._pes) + self.done_latency

    def parameters(self):
        """Every parameter, as plain data (the PE's under ``pe``)."""
        first = self._pes[0]
        ic = self._interconnect
        return {"pes": self.count,
                "pe": first.parameters() if hasattr(first, "parameters") else None,
                "channels": ic.channels,
                "pes_per_channel": [len(group) for group in ic.groups],
                "route_depth": [ic.route_depth(g) if len(g) > 1 else 0 for g in ic.groups]}

    def elaborate(self, platform):
        m = Module()
        m.submodules.interconnect = ic = self._interconnect
        for i, pe in enumerate(self._pes):
            m.submodules[f"pe{i}"] = pe
            port = getattr(ic, f"pe{i}")
            for name in ("rd_req", "rd_rsp", "wr_req"):
                wiring.connect(m, getattr(pe, name), getattr(port, name))
        for c in range(ic.channels):
            wiring.connect(m, wiring.flipped(getattr(self, f"mem{c}")), getattr(ic, f"mem{c}"))
        self._launch(m)
        return m

    def _launch(self, m):
        """Start PE i ``start_latency + i`` cycles after ``start`` with the parameters stepped i
        times; pulse ``done`` ``done_latency`` cycles after the last PE and write are done."""
        pes, n = self._pes, len(self._pes)
        names = [name for name in self.signature.members["ctrl"].signature.params
                 if name != "frame_stride"]
        values = {name: Signal.like(getattr(self.ctrl, name), name=f"launch_{name}")
                  for name in names}
        stride = Signal.like(self.ctrl.frame_stride, name="launch_stride")
        busy = Signal()
        accept = Signal()
        m.d.comb += accept.eq(self.ctrl.start & ~busy)
        with m.If(accept):
            m.d.sync += [busy.eq(1), stride.eq(self.ctrl.frame_stride)]
            m.d.sync += [values[name].eq(getattr(self.ctrl, name)) for name in names]
        with m.Else():
            # One shared adder steps the parameters; each PE takes them as it starts.
            m.d.sync += [values[name].eq(values[name] + stride) for name in names]

        # The parameters reach the PEs through a tree of registers, ``start_latency`` deep, and
        # a token walks a shift register alongside, one bit per PE: every PE's ``start`` is a
        # register of its own, and no register drives more than FAN_OUT PEs.
        for name in names:
            for pe, value in zip(pes, _fan_out(m, f"launch_{name}", values[name], n)):
                m.d.comb += getattr(pe.ctrl, name).eq(value)
        token = Signal(self.launch_cycles, name="launch_token")
        m.d.sync += token.eq(Cat(accept, token[:-1]))
        for i, pe in enumerate(pes):
            m.d.comb += pe.ctrl.start.eq(token[self.start_latency + i])
        # Until the token has left, the last PE has not started or the done tree may still
        # hold the previous run's state (it is done_latency < launch_cycles deep).
        launching = Signal()
        with m.If(accept):
            m.d.sync += launching.eq(1)
        with m.Elif(token[-1]):
            m.d.sync += launching.eq(0)

        # Done once every PE is and its last writes have left the interconnect: a registered
        # tree of ANDs over every PE's finished flag and every write buffer's "empty".
        finished = Signal(n)
        dones = Cat(pe.ctrl.done for pe in pes)
        with m.If(accept):
            m.d.sync += finished.eq(0)
        with m.Else():
            m.d.sync += finished.eq(finished | dones)
        quiet = [*(finished | dones)]
        if self._interconnect.write_buffers:
            quiet += [*~self._interconnect.writes_pending]
        settled = _all_of(m, "done_tree", quiet)
        m.d.comb += [
            self.ctrl.busy.eq(busy),
            self.ctrl.done.eq(busy & ~launching & settled),
        ]
        with m.If(self.ctrl.done):
            m.d.sync += busy.eq(0)


def _fan_out_levels(count):
    """Register levels between a value and ``count`` consumers, FAN_OUT per register."""
    levels = 0
    while FAN_OUT ** (levels + 1) < count:
        levels += 1
    return levels


def _fan_out(m, name, value, count):
    """``count`` copies of ``value``, each :func:`_fan_out_levels` registers behind it, a
    register every FAN_OUT consumers (the value itself drives up to FAN_OUT)."""
    levels = _fan_out_levels(count)
    sources = [value]
    for level in range(levels):
        width = -(-count // FAN_OUT ** (levels - level))
        registers = [Signal.like(value, name=f"{name}_l{level}_{k}") for k in range(width)]
        m.d.sync += [r.eq(sources[k // FAN_OUT]) for k, r in enumerate(registers)]
        sources = registers
    return [sources[i // FAN_OUT] if levels else value for i in range(count)]


def _all_of(m, name, bits):
    """The AND of ``bits``, ``tree_levels(len(bits), FAN_OUT)`` registers late: FAN_OUT bits
    per register."""
    bits = list(bits)
    level = 0
    while len(bits) > 1:
        bits = [_register(m, f"{name}_l{level}_{k // FAN_OUT}", Cat(bits[k:k + FAN_OUT]).all())
                for k in range(0, len(bits), FAN_OUT)]
        level += 1
    return bits[0]


def _register(m, name, value):
    register = Signal(name=name)
    m.d.sync += register.eq(value)
    return register


def frame_elements(width, height, size=(3, 3)):
    """Elements one frame of a window filter takes in memory: its input image, then its output
    image (the valid region); a system's ``frame_stride`` for frames laid out side by side."""
    rows, cols = size
    return width * height + max(0, width - cols + 1) * max(0, height - rows + 1)


def beat_bytes(pe):
    """Bytes of a PE's widest beat, read or write: what one channel moves per cycle each way."""
    return max(beat.lanes * beat.element_bytes for beat in (pe.rd_beat, pe.wr_beat))


def window_system(pes, *, width, height, op="max", size=(3, 3), bytes_per_cycle=None, **params):
    """A :class:`PESystem` of ``pes`` identical :class:`WindowFilter` PEs of a ``width`` x
    ``height`` image, with addresses wide enough for ``pes`` frames side by side (see
    :func:`frame_elements`) and as many memory channels as a link of ``bytes_per_cycle``
    carries beats per cycle (``None``: unlimited, a channel per PE; see
    :func:`~hwgen.kernels.interconnect.channels_for`); ``params`` are the filter's other
    parameters."""
    if isinstance(pes, bool) or not isinstance(pes, int) or pes < 1:
        raise ValueError(f"pes must be a positive integer, not {pes!r}")
    params.setdefault("addr_width", system_addr_width(pes, width, height, size))
    filters = [WindowFilter(op, size, width=width, height=height, **params) for _ in range(pes)]
    return PESystem(filters, channels=channels_for(pes, beat_bytes(filters[0]), bytes_per_cycle))


def system_addr_width(pes, width, height, size=(3, 3)):
    """Address bits of a system of ``pes`` window filters: ``pes`` frames side by side."""
    return max(1, (pes * frame_elements(width, height, size) - 1).bit_length())


def window_system_of(pe, pes, bytes_per_cycle=None):
    """A :func:`window_system` of ``pes`` PEs with the parameters of the window filter ``pe``
    (its tree policy kept; addresses widened for ``pes`` frames) for a link of
    ``bytes_per_cycle``."""
    return window_system(pes, bytes_per_cycle=bytes_per_cycle, **_filter_parameters(pe))


def window_system_pe(pe, pes):
    """One PE of :func:`window_system_of` ``(pe, pes)``: the window filter ``pe`` with addresses
    wide enough for ``pes`` frames."""
    params = _filter_parameters(pe)
    op, size = params.pop("op"), params.pop("size")
    return WindowFilter(op, size, addr_width=system_addr_width(
        pes, params["width"], params["height"], size), **params)


def _filter_parameters(pe):
    """The parameters of the window filter ``pe`` as :func:`window_system` takes them."""
    p = pe.parameters()
    tree_stages = p["tree_policy"] if p["tree_policy"] is not None else p["tree_stages"]
    mask = p["mask"] if p["mask"] != "custom" else pe.mask
    return {"width": p["width"], "height": p["height"], "op": p["op"],
            "size": (p["rows"], p["cols"]), "mask": mask, "pixel_bits": p["pixel_bits"],
            "unroll": p["unroll"], "buffer": p["buffer"], "pipeline": p["pipeline"],
            "tree_stages": tree_stages, "credits": p["credits"]}
