"""The job's memory on the board: on-chip block RAM serving a PE's ports as the memory model does.

:class:`BoardMemory` holds ``size`` elements in ``banks`` block RAMs, element ``a`` in bank
``a % banks`` at row ``a // banks``, so a beat of up to ``banks`` contiguous elements reads (or
writes) every bank once, whatever its alignment. It serves the PE like the ideal
:class:`~hwgen.sim.MemoryModel` (``latency_cycles=1``, no bandwidth limit) that ``sim`` and
``run`` use by default: requests are always accepted, a read's response is valid from the
cycle after its request on, responses wait in order (in a queue as deep as the PE's
``max_outstanding_reads``) until the PE takes them, and a write is visible to a read of the same
edge. So the PE runs the same cycles on the board as in those simulations.

A host port reads and writes single elements while the PE is idle (the bridge's memory
commands).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BoardMemory", "bank_count"]


def bank_count(rd_beat, wr_beat):
    """Banks a memory needs to serve beats of these formats in one cycle (a power of two);
    raises ``ValueError`` for beats of elements that are not contiguous."""
    for name, beat in (("read", rd_beat), ("write", wr_beat)):
        if beat.lanes > 1 and beat.stride != 1:
            raise ValueError(f"the board memory serves beats of contiguous elements; this PE's "
                             f"{name} beats take {beat.lanes} elements {beat.stride} apart")
    if rd_beat.element_bits != wr_beat.element_bits:
        raise ValueError("read and write elements of a PE must have the same width")
    lanes = max(rd_beat.lanes, wr_beat.lanes)
    return 1 << (lanes - 1).bit_length()


class BoardMemory(wiring.Component):
    """Banked block RAM that serves one PE's memory ports (see the module documentation).

    Parameters
    ----------
    size : int
        Elements held.
    addr_width : int
        Width of the PE's element addresses.
    rd_beat, wr_beat : hwgen.kernels.pe.BeatFormat
        The PE's beat formats (lanes of contiguous elements).
    max_outstanding_reads : int
        Read beats the PE can have in flight at most: the depth of the response queue.

    Members
    -------
    rd_req, rd_rsp, wr_req : the PE's memory ports, flipped
    host_addr, host_read, host_write, host_wdata : In
        One element at ``host_addr``: ``host_read`` asks for it (``host_rdata`` holds it in the
        next cycle), ``host_write`` writes ``host_wdata``. Only while the PE does not access the
        memory.
    host_rdata : Out
    """

    def __init__(self, size, *, addr_width, rd_beat, wr_beat, max_outstanding_reads):
        if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= 1 << addr_width:
            raise ValueError(f"size must be a number of elements in 1..{1 << addr_width}, "
                             f"not {size!r}")
        if not isinstance(max_outstanding_reads, int) or max_outstanding_reads < 1:
            raise ValueError(f"max_outstanding_reads must be a positive integer, not "
                             f"{max_outstanding_reads!r}")
        self._banks = bank_count(rd_beat, wr_beat)
        self._size = size
        self._rd_beat, self._wr_beat = rd_beat, wr_beat
        self._outstanding = max_outstanding_reads
        bits = rd_beat.element_bits
        super().__init__({
            "rd_req": In(stream.Signature(rd_beat.request_layout(addr_width))),
            "rd_rsp": Out(stream.Signature(rd_beat.data_layout())),
            "wr_req": In(stream.Signature(wr_beat.write_layout(addr_width))),
            "host_addr": In(addr_width),
            "host_read": In(1),
            "host_write": In(1),
            "host_wdata": In(bits),
            "host_rdata": Out(bits),
        })

    size = property(lambda self: self._size)
    banks = property(lambda self: self._banks)

    @property
    def rows(self):
        """Elements per bank."""
        return -(-self._size // self._banks)

    def elaborate(self, platform):
        m = Module()
        banks, bits = self._banks, self._rd_beat.element_bits
        shift = banks.bit_length() - 1

        def low(addr):
            return addr[:shift] if shift else Const(0, 1)

        def lane_of(bank, addr):
            """The lane of a beat at ``addr`` that falls in ``bank``."""
            return (bank - low(addr))[:shift] if shift else Const(0, 1)

        def row_of(bank, addr):
            return (addr >> shift) + (bank < low(addr))

        write_ports, read_ports = [], []
        for bank in range(banks):
            mem = m.submodules[f"bank{bank}"] = memory.Memory(shape=unsigned(bits),
                                                              depth=self.rows, init=[])
            write_ports.append(mem.write_port())
            read_ports.append(mem.read_port(transparent_for=(write_ports[-1],)))
        read_data = Array(port.data for port in read_ports)

        # Reads: every request is accepted; its lanes come out of the banks one cycle later.
        rd_addr = self.rd_req.payload.addr
        fresh = Signal()            # a read's data is on the banks' outputs
        fresh_low = Signal(max(shift, 1))
        host_low = Signal(max(shift, 1))
        m.d.comb += self.rd_req.ready.eq(1)
        m.d.sync += [fresh.eq(self.rd_req.valid), fresh_low.eq(low(rd_addr)),
                     host_low.eq(low(self.host_addr))]
        for bank, port in enumerate(read_ports):
            m.d.comb += port.addr.eq(Mux(self.host_read, self.host_addr >> shift,
                                         row_of(bank, rd_addr)))
        lanes = self._rd_beat.lanes
        fresh_data = Cat(read_data[(fresh_low + lane)[:shift] if shift else 0]
                         for lane in range(lanes))
        m.d.comb += self.host_rdata.eq(read_data[host_low if shift else 0])

        # Responses the PE does not take at once wait in order behind the queue's head.
        queue = m.submodules.responses = fifo.SyncFIFO(width=lanes * bits, depth=self._outstanding)
        m.d.comb += [
            self.rd_rsp.valid.eq(queue.r_rdy | fresh),
            self.rd_rsp.payload.eq(Mux(queue.r_rdy, queue.r_data, fresh_data)),
            queue.r_en.eq(self.rd_rsp.ready),
            queue.w_en.eq(fresh & (queue.r_rdy | ~self.rd_rsp.ready)),
            queue.w_data.eq(fresh_data),
        ]

        # Writes: every request is accepted, each lane goes to its bank in this cycle.
        wr = self.wr_req.payload
        wr_lanes = self._wr_beat.lanes
        wr_data = Array(wr.data[lane] for lane in range(wr_lanes))
        m.d.comb += self.wr_req.ready.eq(1)
        for bank, port in enumerate(write_ports):
            lane = lane_of(bank, wr.addr)
            pe_write = self.wr_req.valid & (lane < wr_lanes) & wr.mask.bit_select(lane, 1)
            host_write = self.host_write & (low(self.host_addr) == bank)
            m.d.comb += [
                port.en.eq(pe_write | host_write),
                port.addr.eq(Mux(self.host_write, self.host_addr >> shift,
                                 row_of(bank, wr.addr))),
                port.data.eq(Mux(self.host_write, self.host_wdata,
                                 wr_data[lane] if wr_lanes > 1 else wr.data[0])),
            ]
        return m
