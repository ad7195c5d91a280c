"""Buffer strategies: the components between a window filter's read responses and its results.

A buffer strategy decides what a :class:`~hwgen.kernels.window.WindowFilter` fetches off chip
and builds the datapath that turns the fetched pixels into outputs. Each is a
:class:`WindowBuffer`:

* ``none``: :class:`~hwgen.kernels.direct.Unbuffered`, every output fetches its whole window;
* ``smart``: :class:`~hwgen.kernels.smart_buffer.SmartBuffer`, register reuse along strips;
* ``line``: :class:`~hwgen.kernels.line_buffer.LineBuffer`, rows kept in block RAM.

A buffer reduces each window while it forms it: the smart and line buffers keep the reductions
of window columns rather than raw pixels (:mod:`~hwgen.kernels.separable`), and the unbuffered
datapath folds every beat it receives into its accumulators. So what leaves a buffer is the
result of each of its ``U`` lanes, not a window of pixels.

Neither side of a buffer waits: the window filter reserves a place for every result before it
fetches the pixels (its credits), so ``pixels`` and ``results`` are streams that are always
ready. A *step* is the beats that make one beat of results; a step that completes no window
(the first ``M - 1`` columns of a row or strip) ends with ``skipped`` instead of ``results``.

Besides its ports a buffer describes the fetch pattern the window filter's address walks
follow: :attr:`~WindowBuffer.rd_beat`, :attr:`~WindowBuffer.wr_beat`, ``beats_per_step``,
``latency``, the closed-form ``reads``, ``steps`` and ``writing_steps`` of a frame, and, for the
walks, ``read_loops()``, ``write_loops()``, ``step_start(walk)``, ``read_mask(walk)`` and
``write_mask(walk)`` (expressions over a walk's ``first`` and ``last`` flags).
"""

import numpy as np
from amaranth.hdl import Cat
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .mask import structuring_element
from .pe import BeatFormat
from .reduction import reduction, register_positions
from .separable import ColumnPatterns, delay, separable_reduce

__all__ = ["WindowBuffer"]


def positive_int(name, value):
    """``value``, checked to be a positive integer named ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def check_frame(rows, cols, width, height, pixel_bits):
    """Check the frame a ``rows x cols`` window slides over: its size and its pixels' width."""
    positive_int("pixel_bits", pixel_bits)
    if pixel_bits > 16:
        raise ValueError(f"pixel_bits must be between 1 and 16, not {pixel_bits}")
    positive_int("width", width)
    positive_int("height", height)
    if rows > height or cols > width:
        raise ValueError(f"size {rows}x{cols} must fit in the image {height}x{width} "
                         f"(rows x cols)")


class WindowBuffer(wiring.Component):
    """A buffer strategy of a window filter (see the module): what every strategy shares.

    Parameters
    ----------
    op : str or Reduction
        ``"max"`` / ``"dilation"`` or ``"min"`` / ``"erosion"``.
    mask : array-like of 0/1, shape (N, M)
        The structuring element; at least one entry set.
    width, height : int
        Image size W x H; the window must fit.
    unroll : int
        Outputs per step U; each strategy bounds it.
    pixel_bits : int
        Pixel width, 1 to 16.
    tree_stages : int
        Registers in the reduction, 0 to :attr:`tree_levels`, splitting it evenly
        (:func:`~hwgen.kernels.reduction.register_positions`).

    Members
    -------
    restart : In(1)
        A frame starts: the buffer's position returns to the frame's first step. Its first beat
        may arrive two cycles later at the earliest.
    pixels : In(stream.Signature(rd_beat.data_layout(), always_ready=True))
        Read responses, one beat per transfer, in the order of :meth:`read_loops`.
    results : Out(stream.Signature(wr_beat.data_layout(), always_ready=True))
        The ``U`` outputs of a step that completes windows, :attr:`latency` cycles after its last
        beat, in the order of :meth:`write_loops`.
    skipped : Out(1)
        A step that completes no window ended, when its results would have left.
    """

    #: The strategy's name (a key of ``hwgen.kernels.window.BUFFERS``).
    name = None

    def __init__(self, op, mask, *, width, height, unroll=1, pixel_bits=8, tree_stages=0):
        self._op = reduction(op)
        array = np.asarray(mask)
        if array.ndim != 2:
            raise ValueError(f"mask must be a 2-D array of 0/1, not a {array.ndim}-D array")
        self._mask = structuring_element(array, *array.shape)
        self._mask.setflags(write=False)
        self._patterns = ColumnPatterns(self._mask)
        check_frame(*self._mask.shape, width, height, pixel_bits)
        self._width, self._height, self._pixel_bits = width, height, pixel_bits
        self._unroll = positive_int("unroll", unroll)
        self._check_unroll()
        if isinstance(tree_stages, bool) or not isinstance(tree_stages, int):
            raise TypeError(f"tree_stages must be an integer, not {tree_stages!r}")
        if not 0 <= tree_stages <= self.tree_levels:
            raise ValueError(f"tree_stages must be between 0 and {self.tree_levels}, not "
                             f"{tree_stages}")
        self._tree_stages = tree_stages
        super().__init__({
            "restart": In(1),
            "pixels": In(stream.Signature(self.rd_beat.data_layout(), always_ready=True)),
            "results": Out(stream.Signature(self.wr_beat.data_layout(), always_ready=True)),
            "skipped": Out(1),
        })

    def _check_unroll(self):
        """Raise ValueError if the strategy cannot work with :attr:`unroll`."""
        raise NotImplementedError

    # -- parameters ------------------------------------------------------------------------------

    op = property(lambda self: self._op)
    mask = property(lambda self: self._mask)
    rows = property(lambda self: self._mask.shape[0])
    cols = property(lambda self: self._mask.shape[1])
    width = property(lambda self: self._width)
    height = property(lambda self: self._height)
    unroll = property(lambda self: self._unroll)
    pixel_bits = property(lambda self: self._pixel_bits)
    tree_stages = property(lambda self: self._tree_stages)
    column_patterns = property(lambda self: self._patterns)

    @property
    def out_width(self):
        return self._width - self.cols + 1

    @property
    def out_height(self):
        return self._height - self.rows + 1

    @classmethod
    def tree_levels_of(cls, mask):
        """Comparator levels of the reduction this strategy builds for a structuring element:
        the column trees, then the cross-column trees."""
        patterns = ColumnPatterns(np.asarray(mask, dtype=bool))
        return patterns.vertical_depth + patterns.horizontal_depth

    @property
    def tree_levels(self):
        return self.tree_levels_of(self._mask)

    @property
    def tree_registers(self):
        """Register positions in the reduction: ``p`` is in front of level ``p``."""
        return register_positions(self.tree_levels, self._tree_stages)

    @property
    def rd_beat(self):
        """The layout of a read beat; here ``U`` pixels along a row."""
        return BeatFormat(self._unroll, 1, self._pixel_bits)

    @property
    def wr_beat(self):
        """The layout of a write beat; here ``U`` outputs along a row."""
        return BeatFormat(self._unroll, 1, self._pixel_bits)

    @property
    def latency(self):
        """Cycles from a step's last beat to its results (or ``skipped``)."""
        return len(self.tree_registers)

    # -- hardware --------------------------------------------------------------------------------

    def _reduce(self, m, columns, lanes, complete):
        """Reduce the windows that the columns of this beat bring in, and drive the outputs.

        ``columns`` and ``lanes`` are as :func:`~hwgen.kernels.separable.separable_reduce` takes
        them; ``complete`` says whether the beat's step completes windows.
        """
        depth = self._patterns.vertical_depth
        positions = self.tree_registers
        outputs, latency = separable_reduce(
            m, self._op, self._patterns, columns, lanes, self.pixels.valid,
            vertical_regs={p for p in positions if p <= depth},
            horizontal_regs={p - depth for p in positions if p > depth}, name="win")
        # Results and skips are told apart as the step enters the tree, so ``results.valid``
        # (the result FIFO's write and the write walk's step) is a flip-flop of its own.
        valid = self.pixels.valid
        m.d.comb += [
            self.results.valid.eq(delay(m, valid & complete, latency, name="out_emit")),
            self.results.payload.eq(Cat(outputs)),
            self.skipped.eq(delay(m, valid & ~complete, latency, name="out_skip")),
        ]
