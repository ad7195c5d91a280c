"""The hardware side of the board protocol (:mod:`hwgen.board.protocol`).

:class:`Bridge` takes the bytes a UART receives, carries out the commands on the job's memory,
the PE's control signals and the HMM's port, and queues the replies for the UART's transmitter.
"""

from amaranth.hdl import Array, Const, Module, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from ..instrument import PortSignature

from .protocol import (ACK, COMMANDS, NAK, STATUS_BUSY, STATUS_DONE, VERSION, Identity)

__all__ = ["Bridge"]


class Bridge(wiring.Component):
    """Carry out the host's commands (see :mod:`hwgen.board.protocol`).

    Parameters
    ----------
    memory_elements : int
        Elements of the job's memory.
    element_bits : int
        Bits of one element.
    mem_addr_bits : int
        Width of the memory's element addresses.
    hmm : PortSignature
        The HMM's port (its host side).
    params : int
        Run-time parameters of the PE (32-bit registers, in the order of its ``ctrl``).
    layout_id : int
        The HMM's layout id, for the identity.
    idle_cycles : int
        A command left unfinished for this many cycles without a byte is dropped, so a host
        that gave up mid-command finds the bridge waiting for a new one.

    Members
    -------
    rx : In(stream.Signature(8))
        Bytes from the host.
    tx : Out(stream.Signature(8))
        Bytes to the host.
    host_addr, host_read, host_write, host_wdata : Out, host_rdata : In
        The memory's host port (:class:`~hwgen.board.memory.BoardMemory`).
    hmm : Out(PortSignature)
    start : Out(1)
        The PE's start strobe; ``busy`` and ``done`` come back from it.
    params : Out(ArrayLayout(32, params))
    """

    def __init__(self, *, memory_elements, element_bits, mem_addr_bits, hmm, params, layout_id,
                 idle_cycles):
        if not isinstance(hmm, PortSignature):
            raise TypeError(f"hmm must be a PortSignature, not {hmm!r}")
        for name, value in (("memory_elements", memory_elements),
                            ("element_bits", element_bits), ("mem_addr_bits", mem_addr_bits),
                            ("idle_cycles", idle_cycles)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if isinstance(params, bool) or not isinstance(params, int) or not 0 <= params < 256:
            raise ValueError(f"params must be an integer in 0..255, not {params!r}")
        self._identity = Identity(VERSION, (element_bits + 7) // 8, (hmm.word_bits + 7) // 8,
                                  params, memory_elements, layout_id)
        self._element_bits = element_bits
        self._params = params
        self._idle_cycles = idle_cycles
        super().__init__({
            "rx": In(stream.Signature(8)),
            "tx": Out(stream.Signature(8)),
            "host_addr": Out(mem_addr_bits),
            "host_read": Out(1),
            "host_write": Out(1),
            "host_wdata": Out(element_bits),
            "host_rdata": In(element_bits),
            "hmm": Out(hmm),
            "start": Out(1),
            "busy": In(1),
            "done": In(1),
            "params": Out(data.ArrayLayout(32, max(params, 1))),
        })

    identity = property(lambda self: self._identity)

    def elaborate(self, platform):
        m = Module()
        identity = self._identity
        elem_bytes, word_bytes = identity.element_bytes, identity.word_bytes
        data_bits = 8 * max(elem_bytes, word_bytes)

        replies = m.submodules.replies = fifo.SyncFIFO(width=8, depth=16)
        m.d.comb += [self.tx.valid.eq(replies.r_rdy), self.tx.payload.eq(replies.r_data),
                     replies.r_en.eq(self.tx.ready)]

        frame = Signal(72)          # command byte, a, b: bytes shifted in from the top
        cmd = frame[:8]
        a, b = Signal(32), Signal(32)
        received = Signal(range(10))
        word = Signal(data_bits)    # an element or word on its way in or out
        word_left = Signal(range(max(elem_bytes, word_bytes) + 1))
        reply = Signal(8)
        idle = Signal(range(self._idle_cycles + 1))
        done_seen = Signal()
        id_bytes = Array(Const(byte, 8) for byte in identity.encode())
        id_index = Signal(range(len(id_bytes) + 1))
        is_memory = (cmd == COMMANDS["write_memory"]) | (cmd == COMMANDS["read_memory"])

        with m.If(self.done):
            m.d.sync += done_seen.eq(1)
        byte_in = self.rx.valid & self.rx.ready
        with m.If(byte_in | (idle == self._idle_cycles)):
            m.d.sync += idle.eq(0)
        with m.Else():
            m.d.sync += idle.eq(idle + 1)

        def push(value):
            m.d.comb += [replies.w_data.eq(value), replies.w_en.eq(1)]

        def next_item(last, more):
            """One element or word of ``b`` done: on to state ``more`` for the next one, or to
            ``last`` after the last one."""
            m.d.sync += [a.eq(a + 1), b.eq(b - 1)]
            with m.If(b == 1):
                m.next = last
            with m.Else():
                m.next = more

        with m.FSM():
            with m.State("COMMAND"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(byte_in):
                    m.d.sync += [frame.eq((frame >> 8) | (self.rx.payload << 64)),
                                 received.eq(received + 1)]
                    with m.If(received == 8):
                        m.d.sync += received.eq(0)
                        m.next = "DISPATCH"
                with m.Elif(idle == self._idle_cycles):
                    m.d.sync += received.eq(0)

            with m.State("DISPATCH"):
                m.d.sync += [a.eq(frame[8:40]), b.eq(frame[40:72]), reply.eq(ACK),
                             id_index.eq(0)]
                m.next = "REPLY"
                with m.If(is_memory & self.busy):
                    m.d.sync += reply.eq(NAK)
                with m.Elif((cmd == COMMANDS["write_memory"]) | (cmd == COMMANDS["write_hmm"])):
                    with m.If(frame[40:72] != 0):
                        m.d.sync += word_left.eq(0)
                        m.next = "RECEIVE"
                with m.Elif(cmd == COMMANDS["set_parameter"]):
                    with m.If(frame[8:40] < self._params):
                        m.d.sync += self.params[frame[8:16]].eq(frame[40:72])
                    with m.Else():
                        m.d.sync += reply.eq(NAK)
                with m.Elif(cmd == COMMANDS["start"]):
                    m.d.comb += self.start.eq(1)
                    m.d.sync += done_seen.eq(0)
                with m.Elif(~((cmd == COMMANDS["identify"]) | (cmd == COMMANDS["status"])
                              | (cmd == COMMANDS["read_memory"])
                              | (cmd == COMMANDS["read_hmm"]))):
                    m.d.sync += reply.eq(NAK)

            with m.State("REPLY"):
                with m.If(replies.w_rdy):
                    push(reply)
                    m.next = "COMMAND"
                    with m.If(reply == ACK):
                        with m.Switch(cmd):
                            with m.Case(COMMANDS["identify"]):
                                m.next = "IDENTITY"
                            with m.Case(COMMANDS["status"]):
                                m.next = "STATUS"
                            with m.Case(COMMANDS["read_memory"], COMMANDS["read_hmm"]):
                                with m.If(b != 0):
                                    m.next = "FETCH"

            with m.State("IDENTITY"):
                with m.If(replies.w_rdy):
                    push(id_bytes[id_index])
                    m.d.sync += id_index.eq(id_index + 1)
                    with m.If(id_index == len(id_bytes) - 1):
                        m.next = "COMMAND"

            with m.State("STATUS"):
                with m.If(replies.w_rdy):
                    push(self.busy * STATUS_BUSY | done_seen * STATUS_DONE)
                    m.next = "COMMAND"

            with m.State("RECEIVE"):
                m.d.comb += self.rx.ready.eq(1)
                size = Signal.like(word_left)
                m.d.comb += size.eq(elem_bytes)
                with m.If(cmd == COMMANDS["write_hmm"]):
                    m.d.comb += size.eq(word_bytes)
                with m.If(byte_in):
                    m.d.sync += [word.eq((word >> 8) | (self.rx.payload << (data_bits - 8))),
                                 word_left.eq(word_left + 1)]
                    with m.If(word_left + 1 == size):
                        m.next = "STORE"
                with m.Elif(idle == self._idle_cycles):
                    m.next = "COMMAND"

            with m.State("STORE"):
                # The bytes came in from the top of ``word``: align them to its bottom.
                m.d.sync += word_left.eq(0)
                with m.If(cmd == COMMANDS["write_memory"]):
                    m.d.comb += [self.host_addr.eq(a), self.host_write.eq(1),
                                 self.host_wdata.eq(word >> (data_bits - 8 * elem_bytes))]
                with m.Else():
                    m.d.comb += [self.hmm.addr.eq(a), self.hmm.write.eq(1),
                                 self.hmm.wdata.eq(word >> (data_bits - 8 * word_bytes))]
                next_item("REPLY", "RECEIVE")

            with m.State("FETCH"):
                with m.If(cmd == COMMANDS["read_memory"]):
                    m.d.comb += [self.host_addr.eq(a), self.host_read.eq(1)]
                    m.next = "MEMORY_DATA"
                with m.Else():
                    m.d.comb += [self.hmm.addr.eq(a), self.hmm.read.eq(1)]
                    m.next = "HMM_DATA"

            with m.State("MEMORY_DATA"):
                m.d.sync += [word.eq(self.host_rdata), word_left.eq(elem_bytes)]
                m.next = "SEND"

            with m.State("HMM_DATA"):
                # The word comes with rvalid, after the port's read latency, whatever it is.
                with m.If(self.hmm.rvalid):
                    m.d.sync += [word.eq(self.hmm.rdata), word_left.eq(word_bytes)]
                    m.next = "SEND"

            with m.State("SEND"):
                with m.If(replies.w_rdy):
                    push(word[:8])
                    m.d.sync += [word.eq(word >> 8), word_left.eq(word_left - 1)]
                    with m.If(word_left == 1):
                        next_item("COMMAND", "FETCH")
        return m
