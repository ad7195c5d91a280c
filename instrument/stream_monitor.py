"""Stream monitors: how a valid/ready stream spends its cycles."""

from amaranth.hdl import Module, Mux
from amaranth.lib.wiring import In, Out

from .saturating import Counters, build_count, count_layout

__all__ = ["StreamMonitor", "STREAM_CATEGORIES", "stream_category"]

#: The categories a stream's cycle falls in, exactly one per cycle.
STREAM_CATEGORIES = ("transferring", "blocking", "idle")


def stream_category(valid, ready):
    """The category of a stream's cycle as a 2-bit code, the index in :data:`STREAM_CATEGORIES`."""
    return Mux(valid & ready, STREAM_CATEGORIES.index("transferring"),
               Mux(valid, STREAM_CATEGORIES.index("blocking"), STREAM_CATEGORIES.index("idle")))


class StreamMonitor(Counters):
    """Count the cycles a stream spends transferring, blocking and idle.

    A cycle is *transferring* when ``valid & ready``, *blocking* when ``valid & ~ready`` (the
    producer waits for the consumer) and *idle* when ``~valid``.

    A :class:`~hwgen.instrument.saturating.Counters` part (``bits`` wide, with its ``enable``
    and ``clear``) of three counts, one per category.

    Members
    -------
    valid, ready : In(1)
        The stream's handshake.
    transferring, blocking, idle : Out(count_layout(bits))
    """

    def __init__(self, bits=32):
        layout = count_layout(bits)
        super().__init__(bits, {
            "valid": In(1),
            "ready": In(1),
            **{category: Out(layout) for category in STREAM_CATEGORIES},
        })

    def elaborate(self, platform):
        m = Module()
        events = {"transferring": self.valid & self.ready, "blocking": self.valid & ~self.ready,
                  "idle": ~self.valid}
        for category in STREAM_CATEGORIES:
            build_count(m, getattr(self, category), events[category], clear=self.clear,
                        when=self.enable)
        return m
