"""Trace buffers: timestamped records of events, kept in block RAM for the host to read.

A record is written in every cycle in which ``enable`` is high and at least one trigger fires.
It holds the timestamp, one bit per trigger (which of them fired) and a payload. The buffer holds
``depth`` records and never loses one silently: ``dropped`` counts, exactly, every record that is
not in the buffer when the host looks.

``stop`` mode
    The buffer is a queue the host drains while the design runs: the host reads the records
    between its ``consumed`` index and ``written``, then advances ``consumed``. A record that
    finds the buffer full is dropped.
``wrap`` mode
    The buffer keeps the newest ``depth`` records (a flight recorder); each record written into a
    full buffer overwrites, and drops, the oldest. ``consumed`` is ignored.

Indices ``written`` and ``consumed`` count records modulo ``2 * depth``; record ``i`` lives in
slot ``i % depth``.
"""

from amaranth.hdl import Cat, Module, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import build_count, count_layout

__all__ = ["TraceBuffer", "TRACE_MODES"]

TRACE_MODES = ("stop", "wrap")


class TraceBuffer(wiring.Component):
    """Record timestamp, fired triggers and payload whenever a trigger fires.

    Parameters
    ----------
    depth : int
        Records the buffer holds, a power of two.
    timestamp_bits : int
        Width of the timestamp field.
    triggers : int
        Number of trigger bits, at least 1.
    payload_bits : int
        Width of the payload field (0 for none).
    mode : str
        ``"stop"`` or ``"wrap"``, see the module documentation.
    bits : int
        Width of the dropped-record count; it saturates and sets its overflow flag.

    Members
    -------
    enable, clear : In(1)
        Record in this cycle; forget every record (and the drop count) at the next edge.
    timestamp : In(timestamp_bits)
    trigger : In(triggers)
    payload : In(payload_bits)
        Only when ``payload_bits`` is not 0.
    raddr : In(range(depth))
        Slot the host reads.
    rdata : Out(record_layout)
        The record in slot ``raddr`` one cycle earlier.
    consumed : In(depth.bit_length())
        Records the host has read (``stop`` mode).
    written : Out(depth.bit_length())
        Records written.
    dropped : Out(count_layout(bits))
        Records lost.
    """

    def __init__(self, depth, *, timestamp_bits=32, triggers=1, payload_bits=0, mode="stop",
                 bits=32):
        for name, value, low in (("depth", depth, 1), ("timestamp_bits", timestamp_bits, 1),
                                 ("triggers", triggers, 1), ("payload_bits", payload_bits, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer of at least {low}, not {value!r}")
        if depth & (depth - 1):
            raise ValueError(f"depth must be a power of two, not {depth}")
        if mode not in TRACE_MODES:
            raise ValueError(f"mode must be one of {', '.join(TRACE_MODES)}, not {mode!r}")
        self._depth = depth
        self._timestamp_bits = timestamp_bits
        self._triggers = triggers
        self._payload_bits = payload_bits
        self._mode = mode
        self._bits = bits
        fields = {"timestamp": unsigned(timestamp_bits), "events": unsigned(triggers)}
        if payload_bits:
            fields["payload"] = unsigned(payload_bits)
        self._record_layout = data.StructLayout(fields)
        pointer = depth.bit_length()
        members = {
            "enable": In(1),
            "clear": In(1),
            "timestamp": In(timestamp_bits),
            "trigger": In(triggers),
            "raddr": In(range(depth)),
            "rdata": Out(self._record_layout),
            "consumed": In(pointer),
            "written": Out(pointer),
            "dropped": Out(count_layout(bits)),
        }
        if payload_bits:
            members["payload"] = In(payload_bits)
        super().__init__(members)

    depth = property(lambda self: self._depth)
    timestamp_bits = property(lambda self: self._timestamp_bits)
    triggers = property(lambda self: self._triggers)
    payload_bits = property(lambda self: self._payload_bits)
    mode = property(lambda self: self._mode)
    bits = property(lambda self: self._bits)
    record_layout = property(lambda self: self._record_layout)

    @property
    def table_bits(self):
        """Block-RAM bits of the records."""
        return self._depth * self._record_layout.size

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        slot_bits = depth.bit_length() - 1

        m.submodules.records = records = Memory(shape=self._record_layout, depth=depth, init=[])
        wr = records.write_port()
        # A host never reads the slot being written (it reads records already written, or a
        # frozen trace), so whether the port is transparent is for the cost alone: on ECP5 the
        # old record costs Yosys some 76 flip-flops of logic beside the DP16KD, on Xilinx
        # 7-series the new one about as many beside the RAMB18.
        transparent = (wr,) if getattr(platform, "family", None) == "ecp5" else ()
        rd = records.read_port(domain="sync", transparent_for=transparent)
        m.d.comb += [rd.addr.eq(self.raddr), self.rdata.eq(rd.data)]

        fire = self.enable & self.trigger.any()
        if self._mode == "stop":
            full = (self.written - self.consumed)[:len(self.written)] == depth
            store = fire & ~full
        else:
            dropping = (self.dropped.count != 0) | self.dropped.overflow
            full = (self.written == depth) | dropping
            store = fire
        record = [self.timestamp, self.trigger]
        if self._payload_bits:
            record.append(self.payload)
        m.d.comb += [
            wr.addr.eq(self.written[:slot_bits] if slot_bits else 0),
            wr.data.eq(Cat(*record)),
            wr.en.eq(store & ~self.clear),
        ]

        with m.If(self.clear):
            m.d.sync += self.written.eq(0)
        with m.Elif(store):
            m.d.sync += self.written.eq(self.written + 1)
        build_count(m, self.dropped, fire & full, clear=self.clear)
        return m
