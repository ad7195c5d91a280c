"""A system of identical PEs sharing one off-chip port: what a board full of PEs is.

:class:`PESystem` keeps the PE port contract of :mod:`hwgen.kernels.pe` itself, so the harness,
the memory model, the HMM probes and the build treat a system exactly as they treat one PE:

``ctrl``
    ``start``, ``busy``, ``done`` as for a PE; the PEs' run-time parameters, which PE ``i``
    receives plus ``i * frame_stride`` (each PE works on its own frame, ``frame_stride``
    elements after the previous PE's: window filters' parameters are all base addresses), and
    ``frame_stride``. ``start`` launches the PEs one per cycle, PE 0 first (one shared adder
    steps the parameters instead of one multiplier per PE); ``done`` pulses in the cycle the
    last PE finishes.
``rd_req``, ``wr_req``
    One beat per cycle at most, from the PE a round-robin arbiter grants (a grant holds while
    the memory is not ready, so the payload stays still).
``rd_rsp``
    Responses in request order; a queue of granted PE indices routes each response to the PE
    that asked for it.
"""

from amaranth.hdl import Array, Cat, Const, Module, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO

from .pe import pe_members
from .pipeline.arbiter import RoundRobin, select
from .window import WindowFilter

__all__ = ["PESystem", "frame_elements", "window_system", "window_system_of"]


class PESystem(wiring.Component):
    """``pes`` identical PEs behind one off-chip port (see the module).

    Parameters
    ----------
    pes : sequence of PE components
        At least one; every PE has the same signature and self-description.

    Members
    -------
    ctrl, rd_req, rd_rsp, wr_req
        The PE contract, with ``ctrl.frame_stride`` added.
    """

    def __init__(self, pes):
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
        super().__init__(pe_members(
            addr_width=first.addr_width, rd_beat=first.rd_beat, wr_beat=first.wr_beat,
            params={**params, "frame_stride": unsigned(first.addr_width)}))

    @property
    def pes(self):
        return self._pes

    @property
    def count(self):
        """PEs in the system."""
        return len(self._pes)

    addr_width = property(lambda self: self._pes[0].addr_width)
    rd_beat = property(lambda self: self._pes[0].rd_beat)
    wr_beat = property(lambda self: self._pes[0].wr_beat)
    ops_per_element = property(lambda self: self._pes[0].ops_per_element)

    @property
    def max_outstanding_reads(self):
        """Read beats in flight at most: every PE's, which is also the routing queue's depth."""
        return sum(pe.max_outstanding_reads for pe in self._pes)

    @property
    def launch_cycles(self):
        """Cycles from ``start`` until the last PE has been started."""
        return len(self._pes)

    def parameters(self):
        """Every parameter, as plain data (the PE's under ``pe``)."""
        first = self._pes[0]
        return {"pes": self.count,
                "pe": first.parameters() if hasattr(first, "parameters") else None,
                "response_queue_depth": self.max_outstanding_reads if self.count > 1 else 0}

    def elaborate(self, platform):
        m = Module()
        pes, n = self._pes, len(self._pes)
        for i, pe in enumerate(pes):
            m.submodules[f"pe{i}"] = pe
        self._launch(m)
        if n == 1:
            (pe,) = pes
            for name in ("rd_req", "wr_req"):
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(pe, name))
            wiring.connect(m, wiring.flipped(self.rd_rsp), pe.rd_rsp)
            return m
        self._reads(m)
        self._writes(m)
        return m

    def _launch(self, m):
        """Start PE i in the i-th cycle after ``start`` with the parameters stepped i times."""
        pes, n = self._pes, len(self._pes)
        names = [name for name in self.signature.members["ctrl"].signature.params
                 if name != "frame_stride"]
        values = {name: Signal.like(getattr(self.ctrl, name), name=f"launch_{name}")
                  for name in names}
        stride = Signal.like(self.ctrl.frame_stride, name="launch_stride")
        busy = Signal()
        launching = Signal()
        index = Signal(range(n))
        finished = Signal(n)
        dones = Cat(pe.ctrl.done for pe in pes)
        for i, pe in enumerate(pes):
            m.d.comb += pe.ctrl.start.eq(launching & (index == i))
            for name in names:
                m.d.comb += getattr(pe.ctrl, name).eq(values[name])
        m.d.comb += [
            self.ctrl.busy.eq(busy),
            self.ctrl.done.eq(busy & ~launching & (finished | dones).all()),
        ]
        with m.If(self.ctrl.start & ~busy):
            m.d.sync += [busy.eq(1), launching.eq(1), index.eq(0), finished.eq(0),
                         stride.eq(self.ctrl.frame_stride)]
            m.d.sync += [values[name].eq(getattr(self.ctrl, name)) for name in names]
        with m.Else():
            m.d.sync += finished.eq(finished | dones)
            with m.If(launching):
                m.d.sync += [values[name].eq(values[name] + stride) for name in names]
                m.d.sync += index.eq(index + 1)
                with m.If(index == n - 1):
                    m.d.sync += launching.eq(0)
            with m.If(self.ctrl.done):
                m.d.sync += busy.eq(0)

    def _reads(self, m):
        pes, n = self._pes, len(self._pes)
        m.submodules.rd_arbiter = arbiter = RoundRobin(n, hold=True)
        # Which PE each outstanding read belongs to, oldest first.
        m.submodules.rd_queue = queue = SyncFIFO(width=(n - 1).bit_length(),
                                                 depth=self.max_outstanding_reads)
        accept = Signal()
        m.d.comb += [
            arbiter.requests.eq(Cat(pe.rd_req.valid for pe in pes)),
            accept.eq(self.rd_req.ready & queue.w_rdy),
            arbiter.accept.eq(accept),
            # The queue only fills when a beat transfers, so a beat offered stays offered.
            self.rd_req.valid.eq(arbiter.valid & queue.w_rdy),
            self.rd_req.payload.eq(select(arbiter.grant, [pe.rd_req.payload for pe in pes])),
            queue.w_en.eq(arbiter.valid & accept),
            queue.w_data.eq(select(arbiter.grant, [Const(i, queue.width) for i in range(n)])),
        ]
        for i, pe in enumerate(pes):
            m.d.comb += pe.rd_req.ready.eq(arbiter.grant[i] & accept)
        head = queue.r_data
        for i, pe in enumerate(pes):
            m.d.comb += [
                pe.rd_rsp.valid.eq(self.rd_rsp.valid & queue.r_rdy & (head == i)),
                pe.rd_rsp.payload.eq(self.rd_rsp.payload),
            ]
        m.d.comb += [
            self.rd_rsp.ready.eq(queue.r_rdy & Array(pe.rd_rsp.ready for pe in pes)[head]),
            queue.r_en.eq(self.rd_rsp.valid & self.rd_rsp.ready),
        ]

    def _writes(self, m):
        pes, n = self._pes, len(self._pes)
        m.submodules.wr_arbiter = arbiter = RoundRobin(n, hold=True)
        m.d.comb += [
            arbiter.requests.eq(Cat(pe.wr_req.valid for pe in pes)),
            arbiter.accept.eq(self.wr_req.ready),
            self.wr_req.valid.eq(arbiter.valid),
            self.wr_req.payload.eq(select(arbiter.grant, [pe.wr_req.payload for pe in pes])),
        ]
        for i, pe in enumerate(pes):
            m.d.comb += pe.wr_req.ready.eq(arbiter.grant[i] & self.wr_req.ready)


def frame_elements(width, height, size=(3, 3)):
    """Elements one frame of a window filter takes in memory: its input image, then its output
    image (the valid region); a system's ``frame_stride`` for frames laid out side by side."""
    rows, cols = size
    return width * height + max(0, width - cols + 1) * max(0, height - rows + 1)


def window_system(pes, *, width, height, op="max", size=(3, 3), **params):
    """A :class:`PESystem` of ``pes`` identical :class:`WindowFilter` PEs of a ``width`` x
    ``height`` image, with addresses wide enough for ``pes`` frames side by side (see
    :func:`frame_elements`); ``params`` are the filter's other parameters."""
    if isinstance(pes, bool) or not isinstance(pes, int) or pes < 1:
        raise ValueError(f"pes must be a positive integer, not {pes!r}")
    end = pes * frame_elements(width, height, size)
    params.setdefault("addr_width", max(1, (end - 1).bit_length()))
    return PESystem(WindowFilter(op, size, width=width, height=height, **params)
                    for _ in range(pes))


def window_system_of(pe, pes):
    """A :func:`window_system` of ``pes`` PEs with the parameters of the window filter ``pe``
    (its tree policy kept; addresses widened for ``pes`` frames)."""
    p = pe.parameters()
    tree_stages = p["tree_policy"] if p["tree_policy"] is not None else p["tree_stages"]
    mask = p["mask"] if p["mask"] != "custom" else pe.mask
    return window_system(pes, width=p["width"], height=p["height"], op=p["op"],
                         size=(p["rows"], p["cols"]), mask=mask, pixel_bits=p["pixel_bits"],
                         unroll=p["unroll"], buffer=p["buffer"], pipeline=p["pipeline"],
                         tree_stages=tree_stages, credits=p["credits"])
