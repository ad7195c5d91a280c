"""Histograms of sampled values: bins in a RAM table, plus count, sum, minimum and maximum.

:func:`build_histogram` builds one into any module: the bins are a count table
(:func:`~hwgen.instrument.state_profiler.build_count_table`) whose entry is the sample's bin.
"""

import operator

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .saturating import build_count, count_layout
from .state_profiler import build_count_table, count_table_bits

__all__ = ["Histogram", "beyond_bins", "build_histogram", "check_histogram",
           "histogram_labels", "histogram_members"]


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def check_histogram(bins, bin_width):
    """Validate histogram parameters."""
    _positive_int("bins", bins)
    _positive_int("bin_width", bin_width)
    if bin_width & (bin_width - 1):
        raise ValueError(f"bin_width must be a power of two, not {bin_width}")


def histogram_labels(bins, bin_width):
    """A name per bin: its value range, then ``>=N`` for the overflow bin."""
    w = bin_width
    names = [str(i) if w == 1 else f"{i * w}-{(i + 1) * w - 1}" for i in range(bins)]
    return names + [f">={bins * w}"]


def beyond_bins(value, bins, bin_width):
    """Whether ``value`` falls in the overflow bin."""
    high = value[bin_width.bit_length() - 1:]
    # With a power of two of bins a sample is in range when its bits above the bin number's are
    # zero: a reduction, where Yosys builds a comparison as a carry chain.
    return high[bins.bit_length() - 1:].any() if bins & (bins - 1) == 0 else high >= bins


def build_histogram(m, h, *, value, sample, bins, bin_width, beyond=None, count=True):
    """Histogram logic driving the members of ``h`` (``clear``, ``raddr``, ``rdata``, ``busy``,
    ``count``, ``sum``, ``min``, ``max``, as :class:`Histogram` has them).

    Parameters
    ----------
    m : Module
    h : object with the members above
    value : Value
        The sample.
    sample : Value
        ``value`` is a sample to count in this cycle.
    bins, bin_width : int
    beyond : Value or None
        ``beyond_bins(value, bins, bin_width)``, when the caller has it in a register (computed
        a cycle ahead, so the reduction of the sample's high bits does not sit in front of the
        table's address).
    count : bool
        Count the samples in ``h.count``; without, ``h`` has no ``count`` (its owner counts
        them elsewhere).
    """
    high = value[bin_width.bit_length() - 1:]
    if beyond is None:
        beyond = beyond_bins(value, bins, bin_width)
    build_count_table(m, index=Mux(beyond, bins, high), count=sample, clear=h.clear,
                      raddr=h.raddr, rdata=h.rdata, busy=h.busy, depth=bins + 1,
                      bits=len(h.rdata.count))
    if count:
        build_count(m, h.count, sample, clear=h.clear)
    now, _ = build_count(m, h.sum, value, clear=h.clear, when=sample)
    m.d.comb += h.sum_now.eq(now)
    # The minimum and maximum compare a registered copy of the sample, a cycle later, and take
    # it a cycle after that: whether the sample improves on an extreme is a register, so the
    # comparison does not drive the extreme's enable. A sample is compared with the extreme's
    # register, and, when the sample before it is still pending, also with that one: whether
    # it improves on its predecessor is decided a cycle ahead, from registers, so one
    # comparison and one gate lie between two registers.
    compared, comparing = Signal.like(value, name="compared"), Signal(name="comparing")
    pending = Signal.like(value, name="pending")
    m.d.sync += [compared.eq(value), comparing.eq(sample & ~h.clear), pending.eq(compared)]
    for extreme, improves, kind in ((h.min, operator.lt, "min"), (h.max, operator.gt, "max")):
        take = Signal(name=f"take_{kind}")
        beats_pending = Signal(name=f"beats_pending_{kind}")
        m.d.sync += beats_pending.eq(improves(value, compared))
        with m.If(h.clear):
            m.d.sync += [extreme.eq(extreme.init), take.eq(0)]
        with m.Else():
            # A pending sample improves on the register, so beating it beats the register too.
            m.d.sync += take.eq(comparing & (~take | beats_pending) & improves(compared, extreme))
            with m.If(take):
                m.d.sync += extreme.eq(pending)


def histogram_members(value_bits, bins, bits, *, count=True):
    """The signature members a histogram's host and summary need (``sum_now``: the sum without
    the lag of ``sum``, see :func:`~hwgen.instrument.saturating.build_count`); ``count``: with
    the count of samples."""
    return {
        "clear": In(1),
        "busy": Out(1),
        "raddr": In(range(bins + 1)),
        "rdata": Out(count_layout(bits)),
        **({"count": Out(count_layout(bits))} if count else {}),
        "sum": Out(count_layout(bits + value_bits)),
        "sum_now": Out(count_layout(bits + value_bits)),
        "min": Out(value_bits, init=(1 << value_bits) - 1),
        "max": Out(value_bits),
    }


class Histogram(wiring.Component):
    """Count samples per bin, with a summary of every sample.

    Bin ``i`` holds the samples ``i * bin_width <= value < (i + 1) * bin_width``; the overflow
    bin (index ``bins``) holds every larger sample.

    Parameters
    ----------
    value_bits : int
        Width of a sample.
    bins : int
        Bins below the overflow bin, at least 1.
    bin_width : int
        Values per bin, a power of two.
    bits : int
        Width of the bin counts and the sample count; the sum is ``bits + value_bits`` wide.
        Every count saturates and sets its overflow flag.

    Members
    -------
    value : In(value_bits)
    valid : In(1)
        ``value`` is a sample.
    enable : In(1)
        Take the sample of this cycle. While low, the bins' read port serves ``raddr``.
    clear : In(1)
        Zero everything; the bins are swept while ``busy`` is high (keep ``enable`` low).
    busy : Out(1)
    raddr : In(range(bins + 1))
        The bin the host reads.
    rdata : Out(count_layout(bits))
        Its count, one cycle later.
    count : Out(count_layout(bits))
        Samples taken.
    sum : Out(count_layout(bits + value_bits))
        Sum of the samples, a cycle after ``count`` when it lags
        (:func:`~hwgen.instrument.saturating.count_lag`).
    sum_now : Out(count_layout(bits + value_bits))
        The sum in step with ``count``.
    min, max : Out(value_bits)
        Smallest and largest sample (all ones and zero before the first), a cycle after
        ``count``.
    """

    def __init__(self, value_bits, *, bins, bin_width=1, bits=32):
        self._value_bits = _positive_int("value_bits", value_bits)
        check_histogram(bins, bin_width)
        self._bins = bins
        self._bin_width = bin_width
        self._bits = bits
        super().__init__({
            "value": In(value_bits),
            "valid": In(1),
            "enable": In(1),
            **histogram_members(value_bits, bins, bits),
        })

    value_bits = property(lambda self: self._value_bits)
    bins = property(lambda self: self._bins)
    bin_width = property(lambda self: self._bin_width)
    bits = property(lambda self: self._bits)

    @property
    def table_bits(self):
        """Block-RAM bits of the bins."""
        return count_table_bits(self._bins + 1, self._bits)

    def labels(self):
        return histogram_labels(self._bins, self._bin_width)

    def elaborate(self, platform):
        m = Module()
        build_histogram(m, self, value=self.value, sample=self.enable & self.valid,
                        bins=self._bins, bin_width=self._bin_width)
        return m
