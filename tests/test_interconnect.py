# amaranth: UnusedElaboratable=no
"""The memory interconnect never drops, duplicates or reorders a PE's beats, and serves each
PE's reads from its own channel in its own order, whatever the PEs and the memory do."""

import random

import pytest
from amaranth.hdl import Cat, ClockDomain, Const, Module
from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from hwgen.kernels import BeatFormat, Interconnect, channels_for, interconnect
from hwgen.kernels.interconnect import FAN_IN, channel_groups
from hwgen.kernels.pipeline.arbiter import RoundRobin, select

BEAT = BeatFormat(lanes=1, stride=1, element_bits=16)
ADDR_WIDTH = 16
#: Levels of a tree of 2-input arbiters over G PEs, ceil(log2 G), counted by hand.
TREE_LEVELS = {2: 1, 4: 2, 5: 3, 17: 5}


def _run(pes, channels, beats, seed, p_offer, p_ready):
    """PE ``i`` offers reads and writes of addresses ``i * 256 + k`` (k = 0, 1, ...) at random
    times; each channel accepts at random and answers a read, after a random delay, with its
    address as data. Returns what each channel saw, what each PE received, and per cycle
    every handshake that happened (which PE's or channel's stream, and its address)."""
    dut = Interconnect(pes=pes, channels=channels, addr_width=ADDR_WIDTH, rd_beat=BEAT,
                       wr_beat=BEAT, reads_in_flight=4)
    rng = random.Random(seed)
    seen = {"rd": [[] for _ in range(channels)], "wr": [[] for _ in range(channels)]}
    received = [[] for _ in range(pes)]
    trace = []

    async def bench(ctx):
        sent = {"rd": [0] * pes, "wr": [0] * pes}
        answers = [[] for _ in range(channels)]    # [due cycle, data] in request order
        cycle = 0
        while any(len(r) < beats for r in received) \
                or sum(map(len, seen["wr"])) < pes * beats:
            cycle += 1
            assert cycle < 200 * beats * pes, "the interconnect stopped moving beats"
            # Drive the PE side: a PE keeps a beat offered until it is taken.
            for i in range(pes):
                port = getattr(dut, f"pe{i}")
                for kind, stream in (("rd", port.rd_req), ("wr", port.wr_req)):
                    if not ctx.get(stream.valid) and sent[kind][i] < beats \
                            and rng.random() < p_offer:
                        ctx.set(stream.valid, 1)
                        ctx.set(stream.payload.addr, i * 256 + sent[kind][i])
                ctx.set(port.rd_rsp.ready, rng.random() < p_ready)
            # Drive the memory side.
            for c in range(channels):
                channel = getattr(dut, f"mem{c}")
                ctx.set(channel.rd_req.ready, rng.random() < p_ready)
                ctx.set(channel.wr_req.ready, rng.random() < p_ready)
                due = bool(answers[c]) and answers[c][0][0] <= cycle
                ctx.set(channel.rd_rsp.valid, due)
                if due:
                    ctx.set(channel.rd_rsp.payload.as_value(), answers[c][0][1])
            await ctx.delay(1e-9)
            marks = {kind: [len(x) for x in seen[kind]] for kind in ("rd", "wr")}
            marks["rsp"] = [len(x) for x in received]
            # Sample the handshakes of this cycle, then let the clock edge take them.
            taken = []
            for i in range(pes):
                port = getattr(dut, f"pe{i}")
                for kind, stream in (("rd", port.rd_req), ("wr", port.wr_req)):
                    if ctx.get(stream.valid) and ctx.get(stream.ready):
                        taken.append((kind, i, stream))
                if ctx.get(port.rd_rsp.valid) and ctx.get(port.rd_rsp.ready):
                    received[i].append(ctx.get(port.rd_rsp.payload.as_value()))
            trace.append([(kind, i, ctx.get(stream.payload.addr)) for kind, i, stream in taken])
            for c in range(channels):
                channel = getattr(dut, f"mem{c}")
                if ctx.get(channel.wr_req.valid) and ctx.get(channel.wr_req.ready):
                    seen["wr"][c].append(ctx.get(channel.wr_req.payload.addr))
                if ctx.get(channel.rd_req.valid) and ctx.get(channel.rd_req.ready):
                    addr = ctx.get(channel.rd_req.payload.addr)
                    seen["rd"][c].append(addr)
                    answers[c].append([cycle + rng.randrange(1, 4), addr])
                if ctx.get(channel.rd_rsp.valid) and ctx.get(channel.rd_rsp.ready):
                    answers[c].pop(0)
            trace[-1] += [(kind, c, seen[kind][c][-1]) for kind in ("rd", "wr")
                          for c in range(channels) if len(seen[kind][c]) > marks[kind][c]]
            trace[-1] += [("rsp", i, received[i][-1]) for i in range(pes)
                          if len(received[i]) > marks["rsp"][i]]
            await ctx.tick()
            for kind, i, stream in taken:
                sent[kind][i] += 1
                ctx.set(stream.valid, 0)

    top = Module()
    top.domains.sync = ClockDomain()    # a channel of one PE is wires: no clock of its own
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen, received, trace


@settings(max_examples=8, deadline=None)
@given(pes=st.integers(1, 7), channel_fraction=st.floats(0, 1), beats=st.integers(1, 4),
       seed=st.integers(0, 2**16), p_offer=st.sampled_from([0.3, 1.0]),
       p_ready=st.sampled_from([0.4, 1.0]))
def test_the_interconnect_never_drops_duplicates_or_reorders_a_pes_beats(
        pes, channel_fraction, beats, seed, p_offer, p_ready):
    channels = 1 + int(channel_fraction * (pes - 1))
    seen, received, _ = _run(pes, channels, beats, seed, p_offer, p_ready)
    for c, group in enumerate(channel_groups(pes, channels)):
        for kind in ("rd", "wr"):
            # Exactly the channel's PEs' beats, each PE's in its own order.
            addresses = seen[kind][c]
            assert sorted(a // 256 for a in addresses) == sorted(group * beats)
            for i in group:
                assert [a % 256 for a in addresses if a // 256 == i] == list(range(beats))
    for i in range(pes):
        assert received[i] == [i * 256 + k for k in range(beats)]


def _combinational_node(m, name, children, width, tagged):
    """The reference: a node whose grant is :class:`RoundRobin`'s, combinational from the
    children's ``valid`` flags in the cycle it is taken."""
    local = (FAN_IN - 1).bit_length() if tagged else 0
    m.submodules[f"{name}_arbiter"] = arbiter = RoundRobin(len(children))
    fifo, head = interconnect._buffer(m, name, width, len(children[0].tag) + local)
    beats = [Cat(child.payload, child.tag, Const(i, local)) for i, child in enumerate(children)]
    m.d.comb += [
        arbiter.requests.eq(Cat(child.valid for child in children)),
        arbiter.accept.eq(fifo.w_rdy),
        fifo.w_en.eq(arbiter.valid),
        fifo.w_data.eq(select(arbiter.grant, beats)),
    ]
    for i, child in enumerate(children):
        m.d.comb += child.ready.eq(arbiter.grant[i] & fifo.w_rdy)
    return head


@pytest.mark.parametrize("pes,channels,seed,p_offer,p_ready",
                         [(2, 1, 3, 1.0, 1.0), (5, 1, 4, 0.3, 0.4), (7, 2, 5, 1.0, 0.4),
                          (3, 1, 6, 0.6, 0.7)])
def test_the_registered_grant_is_the_combinational_round_robins(
        monkeypatch, pes, channels, seed, p_offer, p_ready):
    """Every handshake of every PE and channel happens in the same cycle, with the same beat,
    as with arbiters that choose by :class:`RoundRobin` in the cycle they are taken: deciding
    the grant a cycle ahead changes no cycle, no order and no throughput."""
    _, _, registered = _run(pes, channels, 6, seed, p_offer, p_ready)
    monkeypatch.setattr(interconnect, "_node", _combinational_node)
    _, _, combinational = _run(pes, channels, 6, seed, p_offer, p_ready)
    assert sum(map(len, registered)) >= 4 * pes * 6
    assert registered == combinational


def test_channels_carry_the_link_in_whole_beats_and_at_most_one_per_pe():
    assert channels_for(26, 8, 0.5) == 1
    assert channels_for(26, 8, 8) == 1
    assert channels_for(26, 8, 8.01) == 2
    assert channels_for(26, 8, 64) == 8
    assert channels_for(4, 8, 64) == 4
    assert channels_for(4, 8) == 4
    with pytest.raises(ValueError, match="bytes_per_cycle must be a positive number"):
        channels_for(4, 8, 0)


def test_channel_groups_are_contiguous_and_balanced():
    assert channel_groups(7, 3) == [[0, 1], [2, 3], [4, 5, 6]]
    for pes in range(1, 30):
        for channels in range(1, pes + 1):
            groups = channel_groups(pes, channels)
            assert [i for g in groups for i in g] == list(range(pes))
            assert max(map(len, groups)) - min(map(len, groups)) <= 1


@pytest.mark.parametrize("pes,channels", [(4, 5), (0, 1), (3, 0)])
def test_the_interconnect_refuses_bad_sizes(pes, channels):
    with pytest.raises(ValueError, match="must be"):
        Interconnect(pes=pes, channels=channels, addr_width=8, rd_beat=BEAT, wr_beat=BEAT,
                     reads_in_flight=2)


def _trace(pes, cycles, ready):
    """Every PE of one channel offers writes all the time from cycle 0 on and the channel is
    ready in the cycles ``ready(cycle)`` says; returns per cycle the PE handshakes and the
    channel's ``(valid, ready)``."""
    dut = Interconnect(pes=pes, channels=1, addr_width=ADDR_WIDTH, rd_beat=BEAT, wr_beat=BEAT,
                       reads_in_flight=4)
    records = []

    async def bench(ctx):
        for i in range(pes):
            ctx.set(getattr(dut, f"pe{i}").wr_req.valid, 1)
        for cycle in range(cycles):
            ctx.set(dut.mem0.wr_req.ready, ready(cycle))
            await ctx.delay(1e-9)
            taken = [ctx.get(getattr(dut, f"pe{i}").wr_req.ready) for i in range(pes)]
            records.append((taken, ctx.get(dut.mem0.wr_req.valid), ready(cycle)))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return records


@pytest.mark.parametrize("pes", [2, 4, 5, 17])
def test_a_write_reaches_the_channel_after_its_buffers_the_tree_and_the_slice(pes):
    """The first write PE 0 hands over is on the channel 3 + ceil(log2 G) cycles later: the
    buffers at the PE and at the tree, one buffer per level of the tree, the registered slice."""
    records = _trace(pes, 12, lambda cycle: 1)
    first = next(c for c, (taken, _, _) in enumerate(records) if taken[0])
    on_channel = next(c for c, (_, valid, _) in enumerate(records) if valid)
    assert on_channel - first == 3 + TREE_LEVELS[pes]


@pytest.mark.parametrize("delay", [1, 3])
@pytest.mark.parametrize("pes", [1, 2, 4, 5, 17])
def test_a_read_takes_the_interconnects_latency_on_top_of_the_memorys(pes, delay):
    """The last PE's one read comes back ``delay`` cycles (the memory's, from accepting the
    request to offering the response) plus 3 + ceil(log2 G) + 3 after the PE handed it over
    (0 for a channel of one PE, which is wires): what ``Interconnect.latency`` says."""
    dut = Interconnect(pes=pes, channels=1, addr_width=ADDR_WIDTH, rd_beat=BEAT, wr_beat=BEAT,
                       reads_in_flight=4)
    expected = 0 if pes == 1 else 3 + TREE_LEVELS[pes] + 3
    assert dut.latency(list(range(pes))) == expected
    port = getattr(dut, f"pe{pes - 1}")
    events = {}

    async def bench(ctx):
        ctx.set(port.rd_req.valid, 1)
        ctx.set(port.rd_req.payload.addr, 77)
        ctx.set(port.rd_rsp.ready, 1)
        ctx.set(dut.mem0.rd_req.ready, 1)
        for cycle in range(40):
            ctx.set(dut.mem0.rd_rsp.valid, events.get("accepted", -99) + delay == cycle)
            ctx.set(dut.mem0.rd_rsp.payload.as_value(), 77)
            await ctx.delay(1e-9)
            if ctx.get(port.rd_req.valid) and ctx.get(port.rd_req.ready):
                events["handed"] = cycle
            if ctx.get(dut.mem0.rd_req.valid):
                events["accepted"] = cycle
            if ctx.get(port.rd_rsp.valid):
                assert ctx.get(port.rd_rsp.payload.as_value()) == 77
                events.setdefault("received", cycle)
            await ctx.tick()
            if "handed" in events:
                ctx.set(port.rd_req.valid, 0)

    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert events["received"] - events["handed"] == expected + delay


@pytest.mark.parametrize("pattern", ["always", "every other", "random"])
def test_the_channel_moves_a_beat_in_every_cycle_it_is_ready(pattern):
    """With writes queued behind it, the slice offers a beat in every cycle: the channel's
    ready, however it toggles, never meets an empty slot, and every PE is served."""
    rng = random.Random(7)
    readies = [1 if pattern == "always" else cycle % 2 if pattern == "every other"
               else int(rng.random() < 0.6) for cycle in range(200)]
    records = _trace(5, 200, lambda cycle: readies[cycle])
    warm = 3 + TREE_LEVELS[5]
    assert all(valid for _, valid, _ in records[warm:])
    moved = sum(valid and ready for _, valid, ready in records)
    handed = sum(sum(taken) for taken, _, _ in records)
    # Every beat a PE handed over is on the channel or in one of the write tree's buffers.
    assert 0 <= handed - moved <= Interconnect(
        pes=5, channels=1, addr_width=ADDR_WIDTH, rd_beat=BEAT, wr_beat=BEAT,
        reads_in_flight=4).write_buffers * 2
    assert all(any(taken[i] for taken, _, _ in records[-40:]) for i in range(5))
