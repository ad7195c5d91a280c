"""The memory interconnect of a system of PEs: P PE ports grouped onto C memory channels.

Every channel has exactly a PE's memory port (``rd_req``, ``rd_rsp``, ``wr_req`` of
:mod:`hwgen.kernels.pe`) and moves at most one read request beat, one read response beat and one
write beat per cycle; the C channels are independent, so the system moves up to C beats each way
per cycle. :func:`channels_for` sizes C from a link's bytes per cycle: as many beats as the link
carries per cycle, at most one per PE.

PE ``i`` is served by one channel (PEs ``c * P // C`` up to ``(c + 1) * P // C`` by channel
``c``). A channel of one PE is a wire. A channel of several PEs is pipelined so that no path in
it is longer than a PE's own, and every net between it and a PE, however long, runs from
flip-flops to flip-flops:

* every two-entry buffer is a :class:`~hwgen.kernels.skid_buffer.SkidBuffer`: its head's
  ``valid`` and payload and its "not full" are flip-flops, and no LUT-RAM read is in the
  payload's path;
* each PE's read and write requests enter a buffer at the PE (the PE's ``ready`` is its
  registered "not full") and from it a buffer at the tree;
* a tree of round-robin arbiters, :data:`FAN_IN` inputs each, every one writing into a
  buffer, brings the requests to the channel; read requests carry the index of their PE
  through it. An arbiter's grant is a register, decided a cycle ahead from what its
  children's flags will be exactly as a combinational round robin would decide it then: the
  multiplexer's select is a flip-flop, so a beat goes from a buffer's register through the
  multiplexer into the next buffer's. A child that is an arbiter tells its next flag by two
  flip-flops, its ``valid`` and whether it will hold a beat even if read now (a register
  computed a cycle ahead from :attr:`~hwgen.kernels.skid_buffer.SkidBuffer.w_rdy_next` and
  its own next write enable), so the net between two levels ends two LUTs before the grant;
* a registered slice (a buffer too) between each tree's root and the channel: the channel's
  ``valid`` and payload are registers and the root sees a registered ready, so the channel's
  handshake never reaches into the tree in the cycle it happens;
* the channel's read responses enter a buffer with the index of their PE, taken from a queue
  of the indices of the reads in flight (a :class:`~hwgen.kernels.fifo_flags.FlaggedFIFO`, in
  request order, as deep as the reads the group's PEs keep in flight together; an index enters
  it as its request enters the slice); from it a buffer per PE takes the PE's responses, and a
  buffer at the PE hands them over. A read request is only offered while that queue has room,
  and the channel's ``rd_rsp.ready`` is one flip-flop, the response buffer's "not full".

A request spends ``3 + ceil(log2 G)`` cycles in the interconnect and a response 3
(:meth:`Interconnect.latency`). Beats of one PE keep their order (every stage is first-in
first-out); beats of different PEs of one channel interleave, and channels are independent of
each other, so a PE's responses are in its own request order while the system's are not in any
global order.
"""

from dataclasses import dataclass

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .fifo_flags import FlaggedFIFO
from .pe import BeatFormat
from .pipeline.arbiter import select
from .skid_buffer import SkidBuffer

__all__ = ["FAN_IN", "ChannelPort", "Interconnect", "channel_groups", "channels_for",
           "memory_port_signature"]

#: Inputs of one arbiter of the request trees: a power of two (an index is then a field of bits
#: per level), and two, so that an arbiter's multiplexer is one LUT a bit (with four, the 8-PE
#: system's critical path ran from a buffer's flag through the grant and the 4-input
#: multiplexer into the next buffer, 7.77 ns over 7 nets).
FAN_IN = 2


def memory_port_signature(addr_width, rd_beat, wr_beat):
    """A PE's memory port, seen from the PE: ``rd_req`` and ``wr_req`` out, ``rd_rsp`` in."""
    return wiring.Signature({
        "rd_req": Out(stream.Signature(rd_beat.request_layout(addr_width))),
        "rd_rsp": In(stream.Signature(rd_beat.data_layout())),
        "wr_req": Out(stream.Signature(wr_beat.write_layout(addr_width))),
    })


@dataclass(frozen=True)
class ChannelPort:
    """One memory port of a design as a memory model serves it: the streams, their beat
    formats, and the prefix of its top-level port names (``"mem0__"``; ``""`` for a PE's)."""
    port: object
    addr_width: int
    rd_beat: BeatFormat
    wr_beat: BeatFormat
    prefix: str = ""

    rd_req = property(lambda self: self.port.rd_req)
    rd_rsp = property(lambda self: self.port.rd_rsp)
    wr_req = property(lambda self: self.port.wr_req)

    @classmethod
    def ports_of(cls, design):
        """The memory ports of a PE or of a system (its ``channels``)."""
        channels = getattr(design, "channels", None)
        if channels is not None:
            return list(channels)
        return [cls(design, design.addr_width, design.rd_beat, design.wr_beat)]


def channels_for(pes, beat_bytes, bytes_per_cycle=None):
    """Channels for ``pes`` PEs on a link of ``bytes_per_cycle`` (``None``: unlimited): the
    link's bytes per cycle in whole beats of ``beat_bytes``, at least 1 and at most ``pes``."""
    for name, value in (("pes", pes), ("beat_bytes", beat_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
    if bytes_per_cycle is None:
        return pes
    if not (isinstance(bytes_per_cycle, (int, float)) and bytes_per_cycle > 0):
        raise ValueError(f"bytes_per_cycle must be a positive number, not {bytes_per_cycle!r}")
    beats = -(-bytes_per_cycle // beat_bytes)
    return int(max(1, min(pes, beats)))


def channel_groups(pes, channels):
    """The PEs of each channel: contiguous runs whose lengths differ by one at most."""
    return [list(range(c * pes // channels, (c + 1) * pes // channels)) for c in range(channels)]


class Interconnect(wiring.Component):
    """``pes`` PE memory ports onto ``channels`` memory channels (see the module).

    Parameters
    ----------
    pes : int
        PE ports, at least 1.
    channels : int
        Memory channels, 1 to ``pes``.
    addr_width : int
    rd_beat, wr_beat : BeatFormat
        The PEs' (and the channels') beats.
    reads_in_flight : int
        Read beats one PE keeps in flight at most (its ``max_outstanding_reads``).

    Members
    -------
    pe<i> : In(memory_port_signature(...))
        The port PE ``i`` connects to.
    mem<c> : Out(memory_port_signature(...))
        Memory channel ``c``.
    writes_pending : Out(max(1, write_buffers))
        Bit ``k``: the ``k``-th buffer of the write trees and their slices holds a write a PE
        has handed over and that has not reached its channel yet (a system is not done before
        its writes are); one bit per buffer, so a system reduces them in a registered tree (a
        constant 0 where every channel is one PE's wires).
    """

    def __init__(self, *, pes, channels, addr_width, rd_beat, wr_beat, reads_in_flight):
        for name, value in (("pes", pes), ("reads_in_flight", reads_in_flight)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if isinstance(channels, bool) or not isinstance(channels, int) \
                or not 1 <= channels <= pes:
            raise ValueError(f"channels must be an integer from 1 to pes = {pes}, "
                             f"not {channels!r}")
        self._pes, self._channels = pes, channels
        self._addr_width, self._rd_beat, self._wr_beat = addr_width, rd_beat, wr_beat
        self._reads_in_flight = reads_in_flight
        port = memory_port_signature(addr_width, rd_beat, wr_beat)
        super().__init__({**{f"pe{i}": In(port) for i in range(pes)},
                          **{f"mem{c}": Out(port) for c in range(channels)},
                          "writes_pending": Out(max(1, self.write_buffers))})

    pes = property(lambda self: self._pes)
    channels = property(lambda self: self._channels)
    addr_width = property(lambda self: self._addr_width)
    rd_beat = property(lambda self: self._rd_beat)
    wr_beat = property(lambda self: self._wr_beat)
    reads_in_flight = property(lambda self: self._reads_in_flight)
    groups = property(lambda self: channel_groups(self._pes, self._channels))

    @property
    def write_buffers(self):
        """Buffers in the write trees of all channels and their slices: the bits of
        ``writes_pending``."""
        return sum(_tree_buffers(len(group)) + 1 for group in self.groups if len(group) > 1)

    def route_depth(self, group):
        """Entries of a channel's queue of reads in flight: every read its PEs keep in flight."""
        return len(group) * self._reads_in_flight

    def latency(self, group):
        """Cycles the interconnect adds to a read of a PE of ``group`` at least: its request's
        ``3 + ceil(log2 G)`` (the buffers at its PE and at the tree, the tree's levels, the slice)
        and its response's 3 (the channel's buffer, the PE's two; 0 for a channel of one PE)."""
        if len(group) == 1:
            return 0
        return 3 + tree_levels(len(group), FAN_IN) + 3

    def elaborate(self, platform):
        m = Module()
        pending = []
        for c, group in enumerate(self.groups):
            channel = getattr(self, f"mem{c}")
            ports = [getattr(self, f"pe{i}") for i in group]
            if len(group) == 1:
                (port,) = ports
                _forward(m, port.rd_req, channel.rd_req)
                _forward(m, channel.rd_rsp, port.rd_rsp)
                _forward(m, port.wr_req, channel.wr_req)
                continue
            self._reads(m, f"ch{c}", ports, channel, self.route_depth(group))
            pending += self._writes(m, f"ch{c}", ports, channel)
        m.d.comb += self.writes_pending.eq(Cat(pending))
        return m

    def _reads(self, m, name, ports, channel, depth):
        root = _tree(m, f"{name}_rd", [port.rd_req for port in ports])
        tag_bits = len(root.tag)
        m.submodules[f"{name}_route"] = route = FlaggedFIFO(width=max(1, tag_bits), depth=depth)
        # A request enters the slice only while the route has room, and its index enters the
        # route as it does: the slice keeps the order, and no response comes before its request
        # has left the slice.
        taken = _slice(m, f"{name}_rd_slice", root.valid & route.w_rdy, root.payload,
                       channel.rd_req)
        m.d.comb += [
            root.ready.eq(taken),
            route.w_en.eq(taken),
            route.w_data.eq(root.tag),
        ]
        # Responses with the index of their PE, in a buffer so the PEs see registered valids.
        # The channel's ``ready`` is that buffer's room, a flip-flop: a response only ever
        # follows its request, whose index is in the route by then.
        width = len(channel.rd_rsp.payload.as_value())
        m.submodules[f"{name}_rsp"] = rsp = SkidBuffer(width=width + max(1, tag_bits))
        response = channel.rd_rsp
        m.d.comb += [
            response.ready.eq(rsp.w_rdy),
            rsp.w_en.eq(response.valid),
            rsp.w_data.eq(Cat(response.payload, route.r_data)),
            route.r_en.eq(response.valid & rsp.w_rdy),
        ]
        # Two buffers per PE, so a PE sees flip-flops as it would a memory's port: the index's
        # decoding and the fan-out to the group's PEs end at the first, and the long net to
        # the PE runs from it to the second, at the PE.
        index = rsp.r_data[width:]
        room = []
        for i, port in enumerate(ports):
            m.submodules[f"{name}_rsp{i}"] = out = SkidBuffer(width=width)
            m.submodules[f"{name}_rsp{i}_pe"] = at_pe = SkidBuffer(width=width)
            m.d.comb += [
                out.w_en.eq(rsp.r_rdy & (index == i)),
                out.w_data.eq(rsp.r_data[:width]),
                at_pe.w_en.eq(out.r_rdy),
                at_pe.w_data.eq(out.r_data),
                out.r_en.eq(at_pe.w_rdy),
                port.rd_rsp.valid.eq(at_pe.r_rdy),
                port.rd_rsp.payload.eq(at_pe.r_data),
                at_pe.r_en.eq(port.rd_rsp.ready),
            ]
            room.append(out.w_rdy)
        m.d.comb += rsp.r_en.eq(Array(room)[index])

    def _writes(self, m, name, ports, channel):
        """Connect the write tree and its slice; returns the "holds a write" flags of its
        buffers and slice."""
        buffers = []
        root = _tree(m, f"{name}_wr", [port.wr_req for port in ports], tagged=False,
                     buffers=buffers)
        taken = _slice(m, f"{name}_wr_slice", root.valid, root.payload, channel.wr_req)
        m.d.comb += root.ready.eq(taken)
        # The slice's output valid is set whenever it holds a write (its second entry only
        # fills behind a first), so it is the slice's flag.
        return [head.valid for head in buffers] + [channel.wr_req.valid]


@dataclass(frozen=True)
class _Head:
    """The output of a buffer: ``valid`` (its registered "not empty"), ``sure`` (it will hold a
    beat in the next cycle whether or not it is read now: its skid register holds one, or one
    is written now), ``ready`` (its read enable), ``payload`` and ``tag`` (the index of the
    source below it). ``valid`` in the next cycle is ``sure | (valid & ~ready)``."""
    valid: object
    sure: object
    ready: object
    payload: object
    tag: object


def tree_levels(count, arity):
    """Levels of a tree of ``arity``-input nodes over ``count`` leaves."""
    levels = 0
    while count > 1:
        count = -(-count // arity)
        levels += 1
    return levels


def _tree_buffers(count):
    """Buffers of a tree over ``count`` inputs: two per input (at the PE and at the tree) and
    one per arbiter."""
    buffers = 2 * count
    while count > 1:
        count = -(-count // FAN_IN)
        buffers += count
    return buffers


def _slice(m, name, valid, payload, sink):
    """A registered slice (a :class:`~hwgen.kernels.skid_buffer.SkidBuffer`) from a source
    offering ``valid`` and ``payload`` to stream ``sink``: ``sink.valid`` and ``sink.payload``
    are registers and the source sees a registered ready, so no handshake of ``sink`` reaches
    the source in the same cycle; a beat crosses it in one cycle, one beat per cycle. Returns
    the source's transfer (``valid`` and the slice's ready)."""
    m.submodules[name] = buffer = SkidBuffer(width=len(payload))
    m.d.comb += [
        buffer.w_en.eq(valid),
        buffer.w_data.eq(payload),
        sink.valid.eq(buffer.r_rdy),
        sink.payload.eq(buffer.r_data),
        buffer.r_en.eq(sink.ready),
    ]
    return valid & buffer.w_rdy


def _forward(m, source, sink):
    """Connect stream ``source`` to stream ``sink`` by wires."""
    m.d.comb += [sink.valid.eq(source.valid), sink.payload.eq(source.payload),
                 source.ready.eq(sink.ready)]


def _buffer(m, name, width, tag_bits):
    """A two-entry first-in first-out buffer in flip-flops: full throughput, registered on both
    sides (its head's ``valid`` and payload flip-flops, so an arbiter's requests and
    multiplexer's inputs are). Its head's ``sure`` is a signal for its writer to drive."""
    m.submodules[name] = fifo = SkidBuffer(width=width + tag_bits)
    return fifo, _Head(fifo.r_rdy, Signal(name=f"{name}_sure"), fifo.r_en,
                       fifo.r_data[:width], fifo.r_data[width:])


def _tree(m, name, streams, tagged=True, buffers=None):
    """Buffer every stream, then arbitrate them in a tree of :data:`FAN_IN`-input round-robin
    arbiters with a buffer after each; the root's ``tag`` is the index of a beat's stream
    (``FAN_IN`` is a power of two, so each level adds its bits above the level below's).
    Every buffer's head is appended to ``buffers`` when given."""
    buffers = [] if buffers is None else buffers
    width = len(streams[0].payload.as_value())
    heads = []
    for i, s in enumerate(streams):
        # A buffer at the PE, then the input buffer at the tree: the long net between them
        # runs from flip-flops to flip-flops, and the PE's ready is a flip-flop, as a memory's
        # port may give it.
        at_pe, arriving = _buffer(m, f"{name}_pe{i}", width, 0)
        fifo, head = _buffer(m, f"{name}_in{i}", width, 0)
        m.d.comb += [
            at_pe.w_en.eq(s.valid), at_pe.w_data.eq(s.payload), s.ready.eq(at_pe.w_rdy),
            fifo.w_en.eq(arriving.valid), fifo.w_data.eq(arriving.payload),
            arriving.ready.eq(fifo.w_rdy),
            # From the buffer's flag and the one flip-flop at the PE that writes it.
            head.sure.eq(~fifo.w_rdy | arriving.valid),
        ]
        buffers.append(arriving)
        heads.append(head)
    buffers += heads
    level = 0
    while len(heads) > 1:
        heads = [_node(m, f"{name}_l{level}n{k}", heads[k:k + FAN_IN], width, tagged)
                 for k in range(0, len(heads), FAN_IN)]
        buffers += heads
        level += 1
    return heads[0]


def _node(m, name, children, width, tagged):
    """A round-robin arbiter of one or two ``children`` into a buffer, its choice a register.

    ``grant`` (one-hot) is the child whose beat the buffer takes in this cycle: decided in the
    cycle before from what the children's ``valid`` flags will be, the other child than the
    one served last preferred. It is exactly the grant of a combinational
    :class:`~hwgen.kernels.pipeline.arbiter.RoundRobin` of the children's ``valid`` flags in
    that cycle, so the node moves one beat per cycle while either child holds one, alternates
    while both do, and every cycle is as it was; but the multiplexer's select and the buffer's
    write enable are flip-flops. A child's next ``valid`` is its ``sure`` flag, or a beat it
    holds and does not give now; a node's own ``sure`` is a register, so a child that is a
    node hands its parent two flip-flops (``valid`` and ``sure``), not the three flags and
    enable its next ``valid`` is made of."""
    local = (FAN_IN - 1).bit_length() if tagged else 0
    tag_bits = len(children[0].tag) + local
    fifo, head = _buffer(m, name, width, tag_bits)
    beats = [Cat(child.payload, child.tag, Const(i, local)) for i, child in enumerate(children)]
    grant = Signal(len(children), name=f"{name}_grant")
    offer = Signal(name=f"{name}_offer")        # grant.any(), a flip-flop of its own
    taken = [grant[i] & fifo.w_rdy for i in range(len(children))]
    coming = [child.sure | (child.valid & ~taken[i]) for i, child in enumerate(children)]
    if len(children) == 1:
        m.d.sync += grant.eq(coming[0])
    else:
        # Whether child 1 goes first when both hold a beat: after child 0 is served, as the
        # round robin searches from just above the last one served (child 0 first at reset).
        second = Signal(name=f"{name}_second")
        second_next = Mux(offer & fifo.w_rdy, grant[0], second)
        m.d.sync += [
            second.eq(second_next),
            grant.eq(Cat(coming[0] & ~(coming[1] & second_next),
                         coming[1] & ~(coming[0] & ~second_next))),
        ]
    offer_next = Cat(coming).any()
    m.d.sync += [
        offer.eq(offer_next),
        # The buffer's skid will hold a beat, or the node will write one: as ``offer`` is
        # ``fifo.w_en``, this is ``~fifo.w_rdy | offer`` in every cycle.
        head.sure.eq(~fifo.w_rdy_next | offer_next),
    ]
    m.d.comb += [
        fifo.w_en.eq(offer),
        fifo.w_data.eq(select(grant, beats)),
    ]
    for i, child in enumerate(children):
        m.d.comb += child.ready.eq(taken[i])
    return head
