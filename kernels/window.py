"""Window filters (dilation = max, erosion = min) as processing elements.

Output pixel ``(y, x)`` is the reduction over ``img[y + i, x + j]`` for every active entry
``(i, j)`` of the structuring element: the valid region, ``(H - N + 1) x (W - M + 1)``.

One :class:`WindowFilter` has the PE ports of :mod:`hwgen.kernels.pe`, its own read and write address
generators, and one of three buffer strategies (:mod:`hwgen.kernels.window_buffer`) that decide
the off-chip fetch pattern and turn the fetched pixels into results: ``none``
(:mod:`hwgen.kernels.direct`), ``smart`` (:mod:`hwgen.kernels.smart_buffer`) and ``line``
(:mod:`hwgen.kernels.line_buffer`), each a component of its own.

Flow control is by credits: a step (the beats that make one output beat) is only fetched when
the output FIFO has room reserved for its result, so the datapath never stalls, responses are
always accepted, and a slow writer or a slow memory throttles the fetches instead. With
``pipeline=False`` a single credit exists: the next fetch waits for the current result to be
written, like an HLS loop without the pipeline pragma.
"""

from dataclasses import dataclass

import numpy as np

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned

from .block_fifo import BlockFIFO
from .direct import Unbuffered
from .fifo_flags import FlaggedFIFO
from .line_buffer import LineBuffer
from .mask import structuring_element
from .pe import ProcessingElement
from .reduction import reduction
from .separable import ColumnPatterns
from .smart_buffer import SmartBuffer
from .walk import AffineWalk
from .window_buffer import check_frame, positive_int

__all__ = ["BUFFERS", "TREE_POLICIES", "WindowFilter", "WindowTraffic", "default_credits", "dilation",
           "erosion", "has_lut_ram", "policy_tree_stages"]

#: The buffer strategies by name: :class:`~hwgen.kernels.window_buffer.WindowBuffer` components.
BUFFERS = {
    "none": Unbuffered,
    "smart": SmartBuffer,
    "line": LineBuffer,
}


@dataclass(frozen=True)
class WindowTraffic:
    """Closed-form off-chip traffic and work of one frame.

    Counts are pixels; bytes count ``ceil(pixel_bits / 8)`` per pixel.
    """
    outputs: int
    reads: int
    writes: int
    bytes_read: int
    bytes_written: int
    ops: int
    ops_per_output: int
    steps: int
    formula: str

    @property
    def ci(self):
        """Computational intensity: ops per byte moved (read + written)."""
        return self.ops / (self.bytes_read + self.bytes_written)

    def to_json(self):
        return {
            "formula": self.formula,
            "outputs": self.outputs,
            "reads": self.reads,
            "writes": self.writes,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops": self.ops,
            "ops_per_output": self.ops_per_output,
            "steps": self.steps,
            "ci_ops_per_byte": self.ci,
        }


_FORMULAS = {
    "none": "reads = K * outputs",
    "smart": "reads = sum over strips s of W * (N + u_s - 1), u_s = output rows of strip s",
    "line": "reads = H * W",
}


class WindowFilter(ProcessingElement):
    """A window-filter processing element.

    Parameters
    ----------
    op : str or Reduction
        ``"max"`` / ``"dilation"`` or ``"min"`` / ``"erosion"``.
    size : (int, int)
        Window rows N and columns M, each at least 1.
    mask : str or array-like
        Structuring element: ``"rect"``, ``"cross"``, ``"ellipse"`` or an N x M array of 0/1.
    pixel_bits : int
        Pixel width, 1 to 16.
    width, height : int
        Image size W x H; the window must fit.
    unroll : int
        Outputs per cycle U. The line buffer needs U to divide W; the smart buffer needs
        U <= H - N + 1; without a buffer U <= W - M + 1.
    buffer : str
        ``"none"``, ``"smart"`` or ``"line"``.
    pipeline : bool
        Overlap steps (one step per cycle at best). ``False`` runs one step at a time.
    tree_stages : int, str or None
        Registers in the reduction (column trees then cross-column trees), 0 to
        :attr:`tree_levels`, splitting it evenly; the output FIFO registers the result. Or a
        policy: ``"lean"``, at most two comparator levels between registers, or ``"fast"``,
        one. Default: ``"lean"`` when pipelined, 0 otherwise.
    credits : int or None
        Steps in flight at most (the output FIFO depth). Default: enough for the datapath
        latency plus 8 cycles of memory latency when pipelined, 1 otherwise.
    addr_width : int or None
        Width of element addresses. Default: enough for an input and an output frame.

    Members
    -------
    ctrl : In(ControlSignature({"src_base": addr, "dst_base": addr}))
    rd_req, rd_rsp, wr_req : streams, see :mod:`hwgen.kernels.pe`
    """

    def __init__(self, op="max", size=(3, 3), *, mask="rect", pixel_bits=8, width=512, height=512,
                 unroll=1, buffer="smart", pipeline=True, tree_stages=None, credits=None,
                 addr_width=None):
        self._op = reduction(op)
        try:
            rows, cols = size
        except (TypeError, ValueError):
            raise ValueError(f"size must be a pair (rows, cols), not {size!r}") from None
        self._rows = positive_int("rows", rows)
        self._cols = positive_int("cols", cols)
        self._mask = structuring_element(mask, self._rows, self._cols)
        self._mask.setflags(write=False)
        self._mask_name = mask if isinstance(mask, str) else "custom"
        check_frame(rows, cols, width, height, pixel_bits)
        self._pixel_bits, self._width, self._height = pixel_bits, width, height
        self._unroll = positive_int("unroll", unroll)
        if buffer not in BUFFERS:
            raise ValueError(f"buffer must be one of {', '.join(BUFFERS)}, not {buffer!r}")
        self._buffer = buffer
        if not isinstance(pipeline, bool):
            raise TypeError(f"pipeline must be a bool, not {pipeline!r}")
        self._pipeline = pipeline
        self._patterns = ColumnPatterns(self._mask)

        levels = BUFFERS[buffer].tree_levels_of(self._mask)
        if tree_stages is None:
            tree_stages = "lean" if pipeline else 0
        if tree_stages in TREE_POLICIES:
            self._tree_policy = tree_stages
            tree_stages = policy_tree_stages(tree_stages, levels)
        else:
            self._tree_policy = None
        if isinstance(tree_stages, bool) or not isinstance(tree_stages, int):
            raise TypeError(f"tree_stages must be an integer or one of "
                            f"{', '.join(TREE_POLICIES)}, not {tree_stages!r}")
        if not 0 <= tree_stages <= levels:
            raise ValueError(f"tree_stages must be between 0 and {levels} for this window and "
                             f"buffer, or one of {', '.join(TREE_POLICIES)}, not {tree_stages}")
        self._tree_stages = tree_stages

        self._strategy = BUFFERS[buffer](self._op, self._mask, width=width, height=height,
                                         unroll=unroll, pixel_bits=pixel_bits,
                                         tree_stages=tree_stages)

        if credits is None:
            credits = default_credits(self._strategy.latency, pipeline)
        self._credits = positive_int("credits", credits)

        frame = 2 * width * height
        needed = max(1, (frame - 1).bit_length())
        if addr_width is None:
            addr_width = needed
        self._addr_width = positive_int("addr_width", addr_width)
        if self._addr_width > 64:
            raise ValueError(f"addr_width must be at most 64, not {addr_width}")

        super().__init__(
            addr_width=self._addr_width,
            rd_beat=self._strategy.rd_beat,
            wr_beat=self._strategy.wr_beat,
            params={"src_base": unsigned(self._addr_width), "dst_base": unsigned(self._addr_width)},
            ops_per_element=int(self._mask.sum()) - 1,
            max_outstanding_reads=self._credits * self._strategy.beats_per_step)

    # -- parameters ------------------------------------------------------------------------------

    op = property(lambda self: self._op)
    rows = property(lambda self: self._rows)
    cols = property(lambda self: self._cols)
    mask = property(lambda self: self._mask)
    mask_name = property(lambda self: self._mask_name)
    pixel_bits = property(lambda self: self._pixel_bits)
    width = property(lambda self: self._width)
    height = property(lambda self: self._height)
    unroll = property(lambda self: self._unroll)
    buffer = property(lambda self: self._buffer)
    pipeline = property(lambda self: self._pipeline)
    tree_stages = property(lambda self: self._tree_stages)
    tree_policy = property(lambda self: self._tree_policy, doc="The policy that chose tree_stages, if any.")
    credits = property(lambda self: self._credits)
    addr_width = property(lambda self: self._addr_width)
    column_patterns = property(lambda self: self._patterns)

    @property
    def out_width(self):
        return self._width - self._cols + 1

    @property
    def out_height(self):
        return self._height - self._rows + 1

    @property
    def active(self):
        """Active mask entries K."""
        return int(self._mask.sum())

    @property
    def tree_levels(self):
        """Levels of the reduction tree (column then cross-column); 0 without a buffer."""
        return self._strategy.tree_levels

    @property
    def tree_registers(self):
        """Register positions in the reduction: ``p`` is in front of level ``p``."""
        return self._strategy.tree_registers

    # ops_per_element: comparisons per output pixel, active mask entries K minus 1;
    # max_outstanding_reads: every credit's step may have all its beats out.

    def reference(self, image):
        """The numpy model: at every pixel of the valid region, the maximum (dilation) or
        minimum (erosion) of the pixels under the mask's active entries."""
        image = np.asarray(image)
        out_h, out_w = self.out_height, self.out_width
        views = [image[i:i + out_h, j:j + out_w] for i, j in zip(*np.nonzero(self._mask))]
        return self._op.reference(np.stack(views), axis=0)

    @property
    def beats_per_step(self):
        """Read beats of one step (the beats that make one output beat)."""
        return self._strategy.beats_per_step

    @property
    def writing_steps(self):
        """Steps of a frame that write a result (the others complete no window)."""
        return self._strategy.writing_steps

    @property
    def datapath_latency(self):
        """Cycles from an accepted read response to the step's result."""
        return self._strategy.latency

    def traffic(self):
        """The closed-form fetch model of one frame."""
        outputs = self.out_width * self.out_height
        reads = self._strategy.reads
        pixel_bytes = self.rd_beat.element_bytes
        return WindowTraffic(
            outputs=outputs, reads=reads, writes=outputs,
            bytes_read=reads * pixel_bytes, bytes_written=outputs * pixel_bytes,
            ops=(self.active - 1) * outputs, ops_per_output=self.active - 1,
            steps=self._strategy.steps, formula=_FORMULAS[self._buffer])

    def ideal_cycles(self):
        """Busy cycles of one frame with an ideal memory (the figure a simulation measures).

        Pipelined, beats issue back to back: every beat plus the datapath latency and three cycles
        of fill, write and done. Not pipelined, a step that writes a result takes
        ``beats + 3 + latency`` cycles and a step that writes nothing ``beats + 2 + latency``.
        """
        s = self._strategy
        beats = s.beats_per_step
        latency = self.datapath_latency
        if self._pipeline:
            return s.steps * beats + latency + 3
        writing = s.writing_steps
        return writing * (beats + 3 + latency) + (s.steps - writing) * (beats + 2 + latency)

    def hardware_ops(self):
        """Comparators the datapath instantiates (fewer than the algorithmic ops thanks to reuse)."""
        p = self._patterns
        if self._buffer == "none":
            return self._unroll
        columns = self._unroll
        return columns * p.vertical_ops() + self._unroll * p.horizontal_ops()

    def parameters(self):
        """Every parameter, as plain data."""
        return {
            "op": self._op.name,
            "rows": self._rows,
            "cols": self._cols,
            "mask": self._mask_name,
            "mask_array": self._mask.astype(int).tolist(),
            "active": self.active,
            "pixel_bits": self._pixel_bits,
            "width": self._width,
            "height": self._height,
            "out_width": self.out_width,
            "out_height": self.out_height,
            "unroll": self._unroll,
            "buffer": self._buffer,
            "pipeline": self._pipeline,
            "tree_levels": self.tree_levels,
            "tree_stages": self._tree_stages,
            "tree_policy": self._tree_policy,
            "credits": self._credits,
            "addr_width": self._addr_width,
            "datapath_latency": self.datapath_latency,
            "rd_beat": self.rd_beat.to_json(),
            "wr_beat": self.wr_beat.to_json(),
        }

    # -- hardware --------------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        s = self._strategy

        rd_loops, rd_offset = s.read_loops()
        wr_loops, wr_offset = s.write_loops()
        m.submodules.rd_walk = rd_walk = AffineWalk(rd_loops, addr_width=self._addr_width,
                                                    offset=rd_offset)
        m.submodules.wr_walk = wr_walk = AffineWalk(wr_loops, addr_width=self._addr_width,
                                                    offset=wr_offset)
        # One result per credit, its flags flip-flops. Depth 1 would give zero-width pointers.
        # A credit reserves a result's entry, so a write never waits for room: the write enable
        # (it reaches every entry of a beat-wide RAM) is the datapath's register alone.
        # A result enters with its write address, mask and "last beat" flag: the write walk
        # steps as results arrive (the datapath's register), not on the port's handshake.
        # The entries are distributed RAM where the family has it (its write is the datapath's
        # last register); the iCE40 has none, and flip-flops with a multiplexer per bit would
        # nearly double a small PE: there they are block RAM, read a cycle ahead (BlockFIFO),
        # with the same timing.
        data_bits = self._unroll * self._pixel_bits
        mask_bits = len(self.wr_req.payload.mask)
        fifo = FlaggedFIFO if has_lut_ram(platform) else BlockFIFO
        m.submodules.out_fifo = out_fifo = fifo(
            width=data_bits + self._addr_width + mask_bits + 1, depth=max(2, self._credits),
            credited=True)

        # The walks and the credits are loaded in every idle cycle, the last of which is the
        # one of ``start``: ``start`` (in a system, a register far from the PE) then drives only
        # the control's state and the buffer's ``restart``, not every address bit's enable.
        idle = Signal()
        restart = Signal()
        running = Signal()
        m.d.comb += [
            rd_walk.base.eq(self.ctrl.src_base),
            wr_walk.base.eq(self.ctrl.dst_base),
            rd_walk.load.eq(idle),
            wr_walk.load.eq(idle),
            restart.eq(idle & self.ctrl.start),
        ]

        # Datapath: every response is accepted; credits guarantee room for its result.
        m.submodules.buffer = s
        m.d.comb += [
            self.rd_rsp.ready.eq(1),
            s.restart.eq(restart),
            s.pixels.valid.eq(self.rd_rsp.valid),
            s.pixels.payload.eq(self.rd_rsp.payload),
            out_fifo.w_en.eq(s.results.valid),
            out_fifo.w_data.eq(Cat(s.results.payload, wr_walk.addr, s.write_mask(wr_walk),
                                   wr_walk.last.all())),
            wr_walk.next.eq(s.results.valid),
        ]

        # Fetch: a new step needs a free credit; the beats of a started step follow freely.
        # Whether the PE is fetching (running, its read walk not done) and whether a credit is
        # free are flip-flops set a cycle ahead, so ``rd_req.valid`` starts at registers.
        fetching = Signal()
        credit = Signal(init=1)
        step_start = s.step_start(rd_walk)
        m.d.comb += [
            self.rd_req.valid.eq(fetching & (~step_start | credit)),
            self.rd_req.payload.addr.eq(rd_walk.addr),
            self.rd_req.payload.mask.eq(s.read_mask(rd_walk)),
            rd_walk.next.eq(self.rd_req.valid & self.rd_req.ready),
        ]

        # Write: results leave the FIFO in order with their addresses. ``valid`` is the FIFO's
        # "not empty", a flip-flop, so the write handshake starts at registers on both sides of
        # the port and ends at the FIFO's pointer and flags.
        wr_done = self.wr_req.valid & self.wr_req.ready
        head = out_fifo.r_data
        addr_at, mask_at = data_bits, data_bits + self._addr_width
        wr_last = head[-1]
        # ``r_en`` is a plain copy of ``ready``, so the FIFO's read side and the port are one
        # stream to the HMM.
        written = Signal()
        m.d.comb += [
            self.wr_req.valid.eq(out_fifo.r_rdy),
            self.wr_req.payload.data.eq(head[:data_bits]),
            self.wr_req.payload.addr.eq(head[addr_at:mask_at]),
            self.wr_req.payload.mask.eq(head[mask_at:mask_at + mask_bits]),
            out_fifo.r_en.eq(self.wr_req.ready),
        ]
        with m.If(wr_done):
            m.d.comb += written.eq(1)           # a result beat is written

        # A credit returns when its result is written, or dropped for producing no output; the
        # returns count a cycle later, which keeps the write handshake off the fetch decision.
        issued = rd_walk.next & step_start
        returned = Signal(range(3))
        outstanding = Signal(range(self._credits + 1))
        outstanding_next = Signal.like(outstanding)
        m.d.comb += outstanding_next.eq(Mux(idle, 0, outstanding + issued - returned))
        m.d.sync += [
            returned.eq(Mux(idle, 0, s.skipped + written)),
            outstanding.eq(outstanding_next),
            credit.eq(outstanding_next < self._credits),
        ]
        with m.If(restart):
            m.d.sync += fetching.eq(1)
        with m.Elif(rd_walk.next & rd_walk.last.all()):
            m.d.sync += fetching.eq(0)      # the read walk's last iteration

        with m.FSM(name="ctrl"):
            with m.State("IDLE"):
                m.d.comb += idle.eq(1)
                with m.If(self.ctrl.start):
                    m.next = "RUN"
            with m.State("RUN"):
                m.d.comb += running.eq(1)
                with m.If(wr_done & wr_last):
                    m.next = "DONE"
            with m.State("DONE"):
                m.d.comb += self.ctrl.done.eq(1)
                m.next = "IDLE"
        m.d.comb += self.ctrl.busy.eq(running | self.ctrl.done)
        return m


#: Register placements by name: at most two comparator levels between registers (``lean``, for
#: 6-input-LUT fabrics), or one (``fast``, what 4-input-LUT fabrics need for the same clock).
TREE_POLICIES = {"lean": 2, "fast": 1}


def policy_tree_stages(policy, levels):
    """Registers a named policy puts into a reduction of ``levels`` comparator levels."""
    per_stage = TREE_POLICIES[policy]
    return max(0, -(-levels // per_stage) - 1)


def has_lut_ram(platform):
    """Whether the family ``platform`` builds for has LUT RAM (distributed RAM). The iCE40 has
    none: hwgen's boards name its family ``"ice40"``, Amaranth's SiliconBlue platforms
    ``"iCE40"`` (or ``"iCE5"``). Without a platform, as the families that have it."""
    family = getattr(platform, "family", None)
    return not (isinstance(family, str) and family.lower() in ("ice40", "ice5"))


def default_credits(latency, pipeline):
    """Credits that keep a pipelined PE busy with up to 8 cycles of memory latency."""
    if not pipeline:
        return 1
    return 1 << (latency + 8 - 1).bit_length()


def dilation(**kwargs):
    """A max window filter (grey-scale dilation); see :class:`WindowFilter`."""
    return WindowFilter("max", **kwargs)


def erosion(**kwargs):
    """A min window filter (grey-scale erosion); see :class:`WindowFilter`."""
    return WindowFilter("min", **kwargs)
