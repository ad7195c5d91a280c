"""Off-chip memory (and I/O link) model that serves the PE ports in Amaranth's simulator.

One :class:`MemoryServer` serves the ``rd_req``/``rd_rsp``/``wr_req`` ports of one or more PEs
from a flat array of elements. Its timing follows :class:`MemoryModel`:

* **Bandwidth** is one budget in bytes per cycle shared by reads and writes of every port it
  serves (a token bucket: the budget accrues every cycle up to one cycle's worth plus one beat;
  a port is ready while the bucket is positive, and every accepted beat takes its bytes out).
  Fractional budgets are fine: 16.8 bytes/cycle is PCIe x8 at 4.2 GB/s and 250 MHz.
* **Latency**: a read accepted at clock edge ``t`` is answered by a response beat that is valid
  from edge ``t + latency - 1`` on, so it transfers at edge ``t + latency`` at the earliest.
  ``latency=1`` is an ideal memory: the response follows in the next cycle. Responses keep
  request order; ``jitter`` adds a seeded random 0..jitter cycles to each one.
* **Backpressure** (for tests): with the given probability per cycle and port, ``rd_req`` or
  ``wr_req`` is not ready, and a due response is held back.

Writes accepted at an edge are applied before reads accepted at the same edge, so a read always
sees every write accepted no later than itself.

Jitter and backpressure are drawn from :class:`~hwgen.sim.random_stream.RandomStream`, whose
draws the compiled engine reproduces exactly: both engines give the same cycles for a seed.
"""

import math
from dataclasses import dataclass, field

from .random_stream import RandomStream

__all__ = ["MemoryModel", "MemoryServer", "PortTraffic"]


@dataclass(frozen=True)
class MemoryModel:
    """Timing of the memory that serves a PE.

    Parameters
    ----------
    bandwidth_bytes_per_cycle : float or None
        Shared read + write budget; ``None`` for unlimited.
    latency_cycles : int
        Cycles from an accepted request to its response, at least 1.
    jitter_cycles : int
        Extra random latency, uniformly 0..jitter per response.
    backpressure : float
        Probability in [0, 1) that a port stalls in a given cycle.
    seed : int
        Seed of the random jitter and backpressure.
    """
    bandwidth_bytes_per_cycle: float | None = None
    latency_cycles: int = 1
    jitter_cycles: int = 0
    backpressure: float = 0.0
    seed: int = 0

    def __post_init__(self):
        bw = self.bandwidth_bytes_per_cycle
        if bw is not None and not (isinstance(bw, (int, float)) and bw > 0):
            raise ValueError(f"bandwidth_bytes_per_cycle must be a positive number or None, not {bw!r}")
        if not isinstance(self.latency_cycles, int) or self.latency_cycles < 1:
            raise ValueError(f"latency_cycles must be an integer >= 1, not {self.latency_cycles!r}")
        if not isinstance(self.jitter_cycles, int) or self.jitter_cycles < 0:
            raise ValueError(f"jitter_cycles must be an integer >= 0, not {self.jitter_cycles!r}")
        if not (isinstance(self.backpressure, (int, float)) and 0 <= self.backpressure < 1):
            raise ValueError(f"backpressure must be a probability in [0, 1), not {self.backpressure!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, not {self.seed!r}")

    def cycle_budget(self, accesses, bytes_moved):
        """Cycles that a job making ``accesses`` accesses of ``bytes_moved`` bytes to this memory
        takes at most, with a wide margin (50 times each access's latency, slowed by backpressure on
        its request and its response, plus twice the time the bandwidth needs for the bytes): a
        job still running after them is stuck."""
        per_access = (self.latency_cycles + self.jitter_cycles + 2) / (1 - self.backpressure) ** 2
        budget = 50 * accesses * per_access
        if self.bandwidth_bytes_per_cycle is not None:
            budget += 2 * bytes_moved / self.bandwidth_bytes_per_cycle
        return math.ceil(budget)

    @property
    def ideal(self):
        return (self.bandwidth_bytes_per_cycle is None and self.latency_cycles == 1
                and self.jitter_cycles == 0 and self.backpressure == 0)

    def to_json(self):
        return {
            "bandwidth_bytes_per_cycle": self.bandwidth_bytes_per_cycle,
            "latency_cycles": self.latency_cycles,
            "jitter_cycles": self.jitter_cycles,
            "backpressure": self.backpressure,
            "seed": self.seed,
        }

    @classmethod
    def from_json(cls, obj):
        return cls(**obj)


@dataclass
class PortTraffic:
    """What the memory saw on one PE's ports (the model's own bookkeeping)."""
    read_beats: int = 0
    read_elements: int = 0
    bytes_read: int = 0
    write_beats: int = 0
    write_elements: int = 0
    bytes_written: int = 0
    read_addresses: list = field(default_factory=list, repr=False)
    write_addresses: list = field(default_factory=list, repr=False)

    @classmethod
    def total(cls, traffics):
        """The traffic of several ports (a system's channels) together."""
        traffics = list(traffics)
        if len(traffics) == 1:
            return traffics[0]
        return cls(*(sum(getattr(t, name) for t in traffics) for name in (
            "read_beats", "read_elements", "bytes_read", "write_beats", "write_elements",
            "bytes_written")),
            read_addresses=[a for t in traffics for a in t.read_addresses],
            write_addresses=[a for t in traffics for a in t.write_addresses])


class _Port:
    """Decoding constants and run-time state for one PE's ports."""

    def __init__(self, pe, record_addresses):
        self.pe = pe
        aw = pe.addr_width
        rd, wr = pe.rd_beat, pe.wr_beat
        if rd.element_bits != wr.element_bits:
            raise ValueError("read and write elements of a PE must have the same width")
        self.aw_mask = (1 << aw) - 1
        self.aw = aw
        self.rd_lanes, self.rd_stride = rd.lanes, rd.stride
        self.wr_lanes, self.wr_stride = wr.lanes, wr.stride
        self.bits = rd.element_bits
        self.elem_mask = (1 << rd.element_bits) - 1
        self.elem_bytes = rd.element_bytes
        self.rd_mask_mask = (1 << rd.lanes) - 1
        self.wr_mask_mask = (1 << wr.lanes) - 1
        self.record = record_addresses
        self.traffic = PortTraffic()
        self.pending = []          # [ready_at, data] in request order
        self.head = 0
        self.last_ready_at = 0
        # Values last driven, to skip redundant sets.
        self.out_rd_ready = None
        self.out_wr_ready = None
        self.out_rsp_valid = None
        self.out_rsp_data = None

    def signals(self):
        pe = self.pe
        return (pe.rd_req.valid, pe.rd_req.ready, pe.rd_req.payload.as_value(),
                pe.rd_rsp.valid, pe.rd_rsp.ready,
                pe.wr_req.valid, pe.wr_req.ready, pe.wr_req.payload.as_value())


class MemoryServer:
    """Serve the memory ports of one or more PEs in a simulation.

    Parameters
    ----------
    model : MemoryModel
        Timing of the memory.
    storage : list of int
        The memory's contents, one element per address; updated in place by writes.
    pes : list of PE components
        Each has ``addr_width``, ``rd_beat``, ``wr_beat`` and the PE ports.
    record_addresses : bool
        Keep every element address read and written (for tests that check fetch patterns).
    """

    def __init__(self, model, storage, pes, *, record_addresses=False):
        self.model = model
        self.storage = storage
        self.ports = [_Port(pe, record_addresses) for pe in pes]
        self.cycle = 0
        self._rng = RandomStream(model.seed)
        bw = model.bandwidth_bytes_per_cycle
        if bw is not None:
            biggest = max(max(p.rd_lanes, p.wr_lanes) * p.elem_bytes for p in self.ports)
            self._credit_cap = bw + biggest
        self._credit = 0.0

    def traffic(self, index=0):
        return self.ports[index].traffic

    def _transfer_write(self, port, payload):
        addr = payload & port.aw_mask
        mask = (payload >> port.aw) & port.wr_mask_mask
        data = payload >> (port.aw + port.wr_lanes)
        storage = self.storage
        size = len(storage)
        n = 0
        for lane in range(port.wr_lanes):
            if mask >> lane & 1:
                a = (addr + lane * port.wr_stride) & port.aw_mask
                if a >= size:
                    raise IndexError(f"write to element address {a} outside the memory of {size} elements")
                storage[a] = (data >> (lane * port.bits)) & port.elem_mask
                if port.record:
                    port.traffic.write_addresses.append(a)
                n += 1
        t = port.traffic
        t.write_beats += 1
        t.write_elements += n
        t.bytes_written += n * port.elem_bytes
        return n * port.elem_bytes

    def _transfer_read(self, port, payload):
        addr = payload & port.aw_mask
        mask = (payload >> port.aw) & port.rd_mask_mask
        storage = self.storage
        size = len(storage)
        word = 0
        n = 0
        for lane in range(port.rd_lanes):
            if mask >> lane & 1:
                a = (addr + lane * port.rd_stride) & port.aw_mask
                if a >= size:
                    raise IndexError(f"read of element address {a} outside the memory of {size} elements")
                word |= storage[a] << (lane * port.bits)
                if port.record:
                    port.traffic.read_addresses.append(a)
                n += 1
        model = self.model
        ready_at = self.cycle + model.latency_cycles - 1   # self.cycle is this edge's number
        if model.jitter_cycles:
            ready_at += self._rng.below(model.jitter_cycles + 1)
        ready_at = max(ready_at, port.last_ready_at)
        port.last_ready_at = ready_at
        port.pending.append((ready_at, word))
        t = port.traffic
        t.read_beats += 1
        t.read_elements += n
        t.bytes_read += n * port.elem_bytes
        return n * port.elem_bytes

    def process(self):
        """The simulator process (pass to ``Simulator.add_process``)."""
        ports = self.ports
        model = self.model
        bw = model.bandwidth_bytes_per_cycle
        p_stall = model.backpressure
        rng = self._rng
        sampled = [s for port in ports for s in port.signals()]

        async def serve(ctx):
            for port in ports:
                ctx.set(port.pe.rd_req.ready, 0)
                ctx.set(port.pe.wr_req.ready, 0)
                ctx.set(port.pe.rd_rsp.valid, 0)
            async for _, rst, *values in ctx.tick().sample(*sampled):
                if rst:
                    continue
                self.cycle += 1
                # 1. Transfers that happened at this edge: writes first, then reads.
                spent = 0
                for i, port in enumerate(ports):
                    v = values[8 * i: 8 * i + 8]
                    if v[5] and v[6]:
                        spent += self._transfer_write(port, v[7])
                for i, port in enumerate(ports):
                    v = values[8 * i: 8 * i + 8]
                    if v[0] and v[1]:
                        spent += self._transfer_read(port, v[2])
                    if v[3] and v[4]:
                        port.head += 1
                        if port.head > 1024:
                            del port.pending[:port.head]
                            port.head = 0
                # 2. Bandwidth budget for the next cycle.
                if bw is not None:
                    self._credit = min(self._credit_cap, self._credit - spent + bw)
                    budget_ok = self._credit > 0
                else:
                    budget_ok = True
                # 3. Drive the ports for the next cycle.
                now = self.cycle
                for port in ports:
                    pe = port.pe
                    if p_stall:
                        rd_ready = budget_ok and rng.uniform() >= p_stall
                        wr_ready = budget_ok and rng.uniform() >= p_stall
                        hold = rng.uniform() < p_stall
                    else:
                        rd_ready = wr_ready = budget_ok
                        hold = False
                    if rd_ready != port.out_rd_ready:
                        ctx.set(pe.rd_req.ready, rd_ready)
                        port.out_rd_ready = rd_ready
                    if wr_ready != port.out_wr_ready:
                        ctx.set(pe.wr_req.ready, wr_ready)
                        port.out_wr_ready = wr_ready
                    pending = port.pending
                    rsp_valid = (not hold and port.head < len(pending)
                                 and pending[port.head][0] <= now)
                    if rsp_valid != port.out_rsp_valid:
                        ctx.set(pe.rd_rsp.valid, rsp_valid)
                        port.out_rsp_valid = rsp_valid
                    if rsp_valid:
                        word = pending[port.head][1]
                        if word != port.out_rsp_data:
                            ctx.set(pe.rd_rsp.payload.as_value(), word)
                            port.out_rsp_data = word

        return serve
