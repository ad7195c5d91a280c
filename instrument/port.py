"""The HMM's control and readout port, and its protocol.

One port per HMM, made of plain signals so it can leave the FPGA design as top-level ports
(``hmm__addr`` and so on in the Verilog) and be driven by a host bridge (JTAG, UART, PCIe BAR,
a soft CPU) or by a testbench:

=========  =========  =====================================================================
signal     direction  meaning
=========  =========  =====================================================================
addr       in         word address (``addr_bits`` wide)
read       in         read strobe: ``rdata`` answers ``read_latency`` cycles later
write      in         write strobe: ``wdata`` is written to ``addr`` at this edge
wdata      in         ``word_bits`` of data to write
rdata      out        the word read
rvalid     out        ``rdata`` holds the answer to the read of ``read_latency`` cycles earlier
=========  =========  =====================================================================

Reads may be issued back to back, one per cycle; answers come in order. Reads and writes may not
share a cycle. The read latency is a property of the port (``PortSignature.read_latency``, and
``read_latency_cycles`` in the layout): at least ``READ_LATENCY_CYCLES`` (3), one more for each
register stage the readout's multiplexer tree needs (an HMM with many blocks of words to choose
from). Hosts read it from there; a host that follows ``rvalid`` needs nothing else.

**Registers.** Address 0 is the control register: writing it executes the commands whose bits are
set (:data:`~hwgen.instrument.layout.COMMANDS`), reading it returns the status
(:data:`~hwgen.instrument.layout.STATUS_BITS`). Address 1 reads the layout id, a CRC-32 of the layout
manifest, so a host can check it decodes with the right manifest. Each trace has a ``consumed``
register (read/write) and every other region is read-only.

**Commands.** ``run`` and ``freeze`` start and stop counting (freeze wins if both are set); the
HMM runs from reset. ``snapshot`` copies every scalar value at once into the snapshot region while
counting goes on. ``clear`` zeroes every value; the RAM tables are then swept one word per
cycle and counting resumes when the sweep ends. ``freeze | snapshot`` in one write stops counting
and captures the final values; ``clear | snapshot`` captures the values, then zeroes them.

**Timing.** The HMM samples the design's signals at every clock edge and counts each sample two
cycles later (a latency histogram's figures a cycle later still). For a command written in cycle ``c``: a ``freeze`` counts cycle ``c`` and stops; a
``run`` counts from cycle ``c + 1``; a ``snapshot`` holds every value up to and including cycle
``c``; a ``clear`` zeroes every value and counting restarts with cycle ``c + 3``, or, when the HMM
has tables, once the sweep that follows ends (it starts in cycle ``c + 4`` and takes one cycle per
entry of the largest table). Values are copied and cleared at the edge that ends cycle ``c + 3``
(a sum wider than its low part an edge later). After any command,
read the status until ``busy`` is 0 (the command has fully taken effect, no sweep is running and
the last sample has been counted, in the tables and a counter bank too, and a counter bank's
snapshot copied) before reading values.

**Consistency.** The snapshot region always holds the last snapshot, whose fields all describe
the same cycles. Tables share their RAM's read port with the counting logic: read them while
frozen and not busy (then every table and the snapshot taken with the freeze describe the same
cycles). Trace records can be read at any time: in ``stop`` mode a host drains a trace while the
design runs by taking a snapshot, reading the records from its ``consumed`` index up to the
snapshot's ``written`` index, and writing ``written`` to ``consumed`` (indices count modulo
``2 * depth``).
"""

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .layout import READ_LATENCY_CYCLES

__all__ = ["PortSignature", "PROTOCOL"]

#: The protocol in a paragraph, for manifests (the module documentation has it all).
PROTOCOL = (
    "Word-addressed register port. Read: drive addr and pulse read; rdata holds the word "
    "read_latency_cycles (the layout's) cycles later, with rvalid. Write: drive addr and wdata "
    "and pulse write. Address 0 written: commands, bit 0 clear, bit 1 run, bit 2 freeze, bit 3 snapshot; read: status, bit 0 running, "
    "bit 1 busy. Address 1: layout id (CRC-32 of the layout). After a command, read the status "
    "until busy is 0. Scalar values are read from the snapshot region (taken by the snapshot "
    "command), tables while frozen, trace records at any time; a stop-mode trace is drained by "
    "writing the snapshot's written index to its consumed register. The layout gives every "
    "address and field."
)


class PortSignature(wiring.Signature):
    """The host's side of an HMM port (see the module documentation for the protocol).

    Parameters
    ----------
    addr_bits : int
        Width of word addresses.
    word_bits : int
        Width of a word, at least 8.
    read_latency : int
        Cycles from a read strobe to its word on ``rdata`` (with ``rvalid``), at least
        ``READ_LATENCY_CYCLES``.
    """

    def __init__(self, addr_bits, word_bits=32, read_latency=READ_LATENCY_CYCLES):
        if isinstance(addr_bits, bool) or not isinstance(addr_bits, int) or addr_bits < 1:
            raise ValueError(f"addr_bits must be a positive integer, not {addr_bits!r}")
        if isinstance(word_bits, bool) or not isinstance(word_bits, int) or word_bits < 8:
            raise ValueError(f"word_bits must be an integer of at least 8, not {word_bits!r}")
        if (isinstance(read_latency, bool) or not isinstance(read_latency, int)
                or read_latency < READ_LATENCY_CYCLES):
            raise ValueError(f"read_latency must be an integer of at least {READ_LATENCY_CYCLES}, "
                             f"not {read_latency!r}")
        self._addr_bits = addr_bits
        self._word_bits = word_bits
        self._read_latency = read_latency
        super().__init__({
            "addr": Out(addr_bits),
            "read": Out(1),
            "write": Out(1),
            "wdata": Out(word_bits),
            "rdata": In(word_bits),
            "rvalid": In(1),
        })

    addr_bits = property(lambda self: self._addr_bits)
    word_bits = property(lambda self: self._word_bits)
    read_latency = property(lambda self: self._read_latency)

    def __eq__(self, other):
        return (type(other) is type(self) and other._addr_bits == self._addr_bits
                and other._word_bits == self._word_bits
                and other._read_latency == self._read_latency)

    def __repr__(self):
        return f"PortSignature({self._addr_bits}, {self._word_bits}, {self._read_latency})"
