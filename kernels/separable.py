"""Separable window reduction: reduce each window column, keep the results, reduce across columns.

A window reduction over the active entries of an N x M mask equals a reduction over the mask's
columns of a reduction over the active rows of each column. Columns with the same set of active
rows (a *column pattern*) share the column reduction, and each column reduction is kept in a
short history instead of the window's raw pixels, so every new column is reduced once and every
output takes ``A - 1`` operations across its ``A`` active columns. For a full 3x3 window that is
2 + 2 comparators per output instead of 8, and ``M - 1`` history registers instead of
``N x (M - 1)``.

The buffers feed this with *sequences* of columns: the line buffer has one sequence (the image
row) that grows by ``U`` columns a beat and ``U`` lanes that slide along it; the smart buffer has
``U`` sequences (one per output row of the strip) that grow by one column a beat, one lane each.
"""

from amaranth.hdl import Signal

from .reduction import reduce_tree, tree_depth

__all__ = ["ColumnPatterns", "delay", "separable_reduce"]


class ColumnPatterns:
    """The column structure of a structuring element.

    Parameters
    ----------
    mask : numpy.ndarray of bool, shape (N, M)
    """
    def __init__(self, mask):
        self.rows, self.cols = mask.shape
        self.patterns = []          # distinct tuples of active row indices
        self.column_pattern = []    # per column: index into patterns, or None
        for j in range(self.cols):
            rows = tuple(int(i) for i in mask[:, j].nonzero()[0])
            if not rows:
                self.column_pattern.append(None)
                continue
            if rows not in self.patterns:
                self.patterns.append(rows)
            self.column_pattern.append(self.patterns.index(rows))
        self.active_columns = [j for j, p in enumerate(self.column_pattern) if p is not None]
        # How many past columns of each pattern the window still needs.
        self.history = [self.cols - 1 - min(j for j in self.active_columns if self.column_pattern[j] == p)
                        for p in range(len(self.patterns))]

    @property
    def vertical_depth(self):
        return tree_depth(max(len(rows) for rows in self.patterns))

    @property
    def horizontal_depth(self):
        return tree_depth(len(self.active_columns))

    def vertical_ops(self):
        """Operations to reduce one new column for every pattern."""
        return sum(len(rows) - 1 for rows in self.patterns)

    def horizontal_ops(self):
        """Operations to combine the column results of one output."""
        return len(self.active_columns) - 1


def delay(m, signal, cycles, *, name):
    """``signal`` delayed by ``cycles`` registers."""
    for stage in range(cycles):
        delayed = Signal.like(signal, name=f"{name}_d{stage + 1}")
        m.d.sync += delayed.eq(signal)
        signal = delayed
    return signal


def separable_reduce(m, op, patterns, columns, lanes, valid, *, vertical_regs, horizontal_regs,
                     name):
    """Reduce windows built from column sequences.

    Parameters
    ----------
    m : Module
    op : Reduction
    patterns : ColumnPatterns
    columns : list (per sequence) of list (per new column this beat) of list of N pixel values
        The pixels of every new column, row 0 (top of the window) first.
    lanes : list of (sequence, position)
        An output lane's window starts ``position`` columns after the oldest column the window
        can see (that is, ``M - 1`` columns before the first new one).
    valid : Value
        A new beat of columns is present.
    vertical_regs, horizontal_regs : collection of int
        Register positions in the column trees and the cross-column trees (see
        :func:`~hwgen.kernels.reduction.reduce_tree`).
    name : str

    Returns
    -------
    (list of Value, int)
        One output per lane, and the number of cycles from ``columns`` to the outputs.
    """
    width = len(columns[0][0][0])
    new_count = len(columns[0])
    # Column reductions, one per (sequence, new column, pattern).
    reduced = [[[reduce_tree(m, op, [column[i] for i in rows], patterns.vertical_depth,
                             vertical_regs, name=f"{name}_v{s}_{c}_{p}")
                 for p, rows in enumerate(patterns.patterns)]
                for c, column in enumerate(sequence)]
               for s, sequence in enumerate(columns)]
    shift = delay(m, valid, len(vertical_regs), name=f"{name}_shift")

    # window[s][p][w]: the pattern-p reduction of window column w (w < M - 1: history).
    window = []
    for s in range(len(columns)):
        per_pattern = []
        for p in range(len(patterns.patterns)):
            keep = patterns.history[p]
            history = [Signal(width, name=f"{name}_h{s}_{p}_{k}") for k in range(keep)]
            entries = history + [reduced[s][c][p] for c in range(new_count)]
            if keep:
                with m.If(shift):
                    m.d.sync += [h.eq(v) for h, v in zip(history, entries[-keep:])]
            per_pattern.append([None] * (patterns.cols - 1 - keep) + entries)
        window.append(per_pattern)

    outputs = []
    for lane, (s, position) in enumerate(lanes):
        leaves = [window[s][patterns.column_pattern[j]][position + j] for j in patterns.active_columns]
        outputs.append(reduce_tree(m, op, leaves, patterns.horizontal_depth, horizontal_regs,
                                   name=f"{name}_x{lane}"))
    return outputs, len(vertical_regs) + len(horizontal_regs)
