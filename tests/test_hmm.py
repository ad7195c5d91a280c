"""An HMM on a small design, read through its port like a host, against an observer that samples
the design's signals in the testbench and a model of the port's documented timing."""

import json

import pytest
from amaranth.hdl import Elaboratable, Module, Mux, Signal
from amaranth.sim import Simulator

from hwgen.instrument import HMM, THREAD_STATES, HMMLayout, probe
from hwgen.instrument._amaranth import lhs_signals
from hwgen.sim import HMMError, HMMHost


class Stimulus(Elaboratable):
    """Pseudo-random activity: two events, a level, a 4-state machine that dwells, two threads."""

    def __init__(self):
        self.now = Signal(32)
        self.a = Signal()
        self.b = Signal()
        self.level = Signal(4)
        self.state = Signal(2)
        self.threads = Signal(4)

    def elaborate(self, platform):
        m = Module()
        lfsr = Signal(32, init=0xACE1)
        m.d.sync += [
            lfsr.eq(Mux(lfsr[0], (lfsr >> 1) ^ 0x80200003, lfsr >> 1)),
            self.now.eq(self.now + 1),
        ]
        m.d.comb += [
            self.a.eq(lfsr[0] | lfsr[1]),
            self.b.eq(lfsr[2] & lfsr[3]),
            self.level.eq(lfsr[4:8]),
        ]
        with m.If(lfsr[8:11] == 0):
            m.d.sync += self.state.eq(lfsr[11:13])
        with m.If(lfsr[13:17] == 0):
            m.d.sync += self.threads.eq(lfsr[17:21])
        return m


def toy_probes(s, *, trace_depth=8, trace_mode="stop"):
    return [
        probe.Count("a", s.a),
        probe.Count("a_b", s.a, s.b),
        probe.Accumulate("level_when_a", (s.level, s.a)),
        probe.Stream("s", s.a, s.b),
        probe.Stream("r", s.b, s.a),
        probe.Profile("p", s.state, ["S0", "S1", "S2", "S3"]),
        probe.Histogram("h", s.level, s.b, bins=4, bin_width=2),
        probe.Trace("t", {"b": s.b, "high": s.level > 12}, {"level": s.level},
                    depth=trace_depth, mode=trace_mode),
        probe.Sampler("samples", ["a", "cycles"], period=5, depth=4),
        probe.ThreadStates("threads", s.threads, threads=2, depth=4, mode="stop"),
        probe.Changes("changes", {"state": s.state, "high": s.level > 12},
                      labels={"state": ["S0", "S1", "S2", "S3"]}, depth=8, mode="wrap"),
    ]


def simulate(host_program, *, counter_bits=32, word_bits=32, snapshot="all", bank=True,
             probes=toy_probes, **probe_options):
    """Run the stimulus with an HMM of ``probes(stimulus, **probe_options)``;
    ``host_program(host, now)`` drives the port.

    Returns ``(samples, hmm)``: the observer's per-cycle samples, by cycle number, and the HMM.
    """
    stimulus = Stimulus()
    hmm = HMM(probes(stimulus, **probe_options), counter_bits=counter_bits,
              word_bits=word_bits, snapshot=snapshot, bank=bank)
    top = Module()
    top.submodules.stimulus = stimulus
    top.submodules.hmm = hmm
    sim = Simulator(top)
    sim.add_clock(1e-8)
    samples = {}

    async def observer(ctx):
        s = stimulus
        async for _, _, now, a, b, level, state, threads in ctx.tick().sample(
                s.now, s.a, s.b, s.level, s.state, s.threads):
            samples[now] = dict(a=a, b=b, level=level, state=state, threads=threads)

    async def host(ctx):
        await host_program(HMMHost(ctx, hmm.port, hmm.layout), lambda: ctx.get(stimulus.now),
                           ctx)

    sim.add_testbench(observer, background=True)
    sim.add_testbench(host)
    sim.run()
    return samples, hmm


class Timeline:
    """Which cycles an HMM counts, from the cycles commands were written in (the port's
    documented timing): a freeze in cycle c counts c; a run in c counts from c + 1; a clear in c
    counts nothing up to c + 2, and with tables nothing up to c + 3 and while they are swept
    after that."""

    def __init__(self, sweep_cycles):
        self.sweep_cycles = sweep_cycles
        self.events = []

    def command(self, cycle, *names):
        self.events.append((cycle, names))

    def counted(self, first, last):
        """Counted cycles in ``first .. last``, and the last clear before ``last``."""
        running, blocked_until, start = True, -1, 0
        cycles = []
        events = sorted(self.events)
        for t in range(0, last + 1):
            for cycle, names in events:
                if cycle == t - 1:
                    if "freeze" in names:
                        running = False
                    elif "run" in names:
                        running = True
                if cycle == t - 1 and "clear" in names:
                    # A sweep starts with the cycle after the clear takes effect (c + 3).
                    blocked_until = t + 1 + self.sweep_cycles + bool(self.sweep_cycles)
                    start = t + 1
            if running and t > blocked_until and t >= first:
                cycles.append(t)
        return [t for t in cycles if t >= start]


async def freeze_and_read(host, now):
    """Freeze with a snapshot, read everything; returns the freeze's cycle and the readout."""
    cycle = now()
    await host.command("freeze", "snapshot")
    return cycle, await host.read_all(freeze=False)


def saturate(value, bits):
    top = (1 << bits) - 1
    return min(value, top), value > top


def expected_values(samples, cycles, bits=32):
    """Every counter's (value, overflow) over ``cycles``, from the observer's samples."""
    picked = [samples[t] for t in cycles]
    raw = {
        "cycles": len(picked),
        "a": sum(s["a"] for s in picked),
        "a_b": sum(s["a"] + s["b"] for s in picked),
        "level_when_a": sum(s["level"] for s in picked if s["a"]),
        "s.transferring": sum(s["a"] and s["b"] for s in picked),
        "s.blocking": sum(s["a"] and not s["b"] for s in picked),
        "s.idle": sum(not s["a"] for s in picked),
        "r.transferring": sum(s["b"] and s["a"] for s in picked),
        "r.blocking": sum(s["b"] and not s["a"] for s in picked),
        "r.idle": sum(not s["b"] for s in picked),
        "h.count": sum(s["b"] for s in picked),
        "h.sum": sum(s["level"] for s in picked if s["b"]),
    }
    values = {name: saturate(value, bits + (4 if name == "h.sum" else 0))
              for name, value in raw.items()}
    levels = [s["level"] for s in picked if s["b"]]
    values["h.min"] = (min(levels) if levels else 15, None)
    values["h.max"] = (max(levels) if levels else 0, None)
    for i, name in enumerate(["S0", "S1", "S2", "S3"]):
        values[f"p.{name}"] = saturate(sum(s["state"] == i for s in picked), bits)
    for b, label in enumerate(["0-1", "2-3", "4-5", "6-7", ">=8"]):
        values[f"h.bins.{label}"] = saturate(
            sum(1 for level in levels if min(level // 2, 4) == b), bits)
    return values


def check(readout, expected):
    for name, (value, flag) in expected.items():
        assert readout.values[name] == value, name
        if flag is not None:
            assert readout.overflow[name] == flag, name


async def run_then_clear(host, now, ctx, timeline, readouts):
    """From a frozen HMM: run for 25 cycles, clear, and 35 cycles on freeze and read
    (``readouts["cleared"]``); each command noted on ``timeline``."""
    timeline.command(now(), "run")
    await host.command("run")
    await ctx.tick().repeat(25)
    timeline.command(now(), "clear")
    await host.command("clear")
    await ctx.tick().repeat(35)
    readouts["cleared"] = await freeze_and_read(host, now)


async def run_again_then_clear(host, now, ctx, timeline, readouts, cycles):
    """From a frozen HMM: run for ``cycles``, freeze and read (``readouts["again"]``), then
    :func:`run_then_clear`."""
    timeline.command(now(), "run")
    await host.command("run")
    await ctx.tick().repeat(cycles)
    readouts["again"] = await freeze_and_read(host, now)
    timeline.command(readouts["again"][0], "freeze")
    await run_then_clear(host, now, ctx, timeline, readouts)


def test_values_follow_freeze_run_snapshot_and_clear():
    timeline = Timeline(sweep_cycles=8)     # the counter bank's 8 counts take longest to sweep
    readouts = {}

    async def program(host, now, ctx):
        await host.check_layout()
        await ctx.tick().repeat(40)
        timeline.command(now(), "snapshot")
        await host.command("snapshot")                    # while running
        readouts["running"] = (timeline.events[-1][0], await host.read_snapshot())
        await ctx.tick().repeat(30)
        timeline.command(now(), "freeze", "snapshot")
        await host.command("freeze", "snapshot")
        assert await host.status() == {"running": False, "busy": False}
        readouts["frozen"] = (timeline.events[-1][0], await host.read_all(freeze=False))
        await ctx.tick().repeat(20)                      # frozen: nothing counts
        await run_then_clear(host, now, ctx, timeline, readouts)

    samples, hmm = simulate(program)
    cycle, (values, overflow) = readouts["running"]
    expected = expected_values(samples, timeline.counted(0, cycle))
    for name in ("cycles", "a", "a_b", "level_when_a", "s.transferring", "h.count", "h.sum"):
        assert values[name] == expected[name][0], name
    # One snapshot describes one set of cycles: the stream's categories add up to them.
    assert values["s.transferring"] + values["s.blocking"] + values["s.idle"] == values["cycles"]

    cycle, readout = readouts["frozen"]
    check(readout, expected_values(samples, timeline.counted(0, cycle)))
    cycle, readout = readouts["cleared"]
    counted = timeline.counted(0, cycle)
    cleared = timeline.events[-1][0]
    assert counted[0] == cleared + 4 + 8     # after the clear, its strobe and the 8-word sweep
    check(readout, expected_values(samples, counted))
    assert readout.fsms()["p"] == {s: readout.values[f"p.{s}"] for s in ["S0", "S1", "S2", "S3"]}
    assert readout.streams()["s"]["idle"] == readout.values["s.idle"]


BANKED = ("a_b", "level_when_a", "s.transferring", "s.blocking", "s.idle", "r.transferring",
          "r.blocking", "r.idle")


def assert_banked(hmm):
    """The toy probes' counts are in one bank, read as snapshot values after the registers';
    ``a``, which a sampler takes in the cycle, stays a register count."""
    assert hmm.parts["counts"].amount_bits == (2, 4, 1, 1, 1, 1, 1, 1)
    names = [f.name for f in hmm.layout.fields]
    assert names[-len(BANKED):] == list(BANKED) and "a" in names
    assert "counts" not in {t.name for t in hmm.layout.tables}


def test_counts_read_frozen_are_kept_in_one_bank_exact_through_freeze_run_and_clear():
    timeline = Timeline(sweep_cycles=8)     # the bank's 8 counts take longest to sweep
    readouts = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(40)
        timeline.command(now(), "freeze")
        await host.command("freeze")
        assert await host.status() == {"running": False, "busy": False}
        readouts["frozen"] = (timeline.events[-1][0], await host.read_all(freeze=False))
        await ctx.tick().repeat(20)                      # frozen: nothing counts
        await run_again_then_clear(host, now, ctx, timeline, readouts, 33)

    samples, hmm = simulate(program, snapshot="traces")
    assert_banked(hmm)
    for name in ("frozen", "again"):
        cycle, readout = readouts[name]
        check(readout, expected_values(samples, timeline.counted(0, cycle)))
    cycle, readout = readouts["cleared"]
    counted = timeline.counted(0, cycle)
    assert counted[0] == timeline.events[-1][0] + 4 + 8
    check(readout, expected_values(samples, counted))
    assert readout.streams()["s"]["idle"] == readout.values["s.idle"]


@pytest.mark.parametrize("snapshot", ["all", "traces"])
def test_banked_counts_saturate_and_raise_their_flags(snapshot):
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(150)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program, counter_bits=6, snapshot=snapshot)
    assert_banked(hmm)
    expected = expected_values(samples, Timeline(5).counted(0, result["cycle"]), bits=6)
    check(result["readout"], expected)
    saturated = {name for name, (_, flag) in expected.items() if flag}
    assert {"a_b", "level_when_a", "s.blocking"} <= saturated and "s.transferring" not in saturated
    assert saturated <= set(result["readout"].saturated)


def test_narrow_counters_saturate_and_raise_their_flags():
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(150)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program, counter_bits=6)
    expected = expected_values(samples, Timeline(5).counted(0, result["cycle"]), bits=6)
    check(result["readout"], expected)
    saturated = [name for name, (_, flag) in expected.items() if flag]
    assert "cycles" in saturated and "a" in saturated and "s.transferring" not in saturated
    assert set(saturated) <= set(result["readout"].saturated)


def test_sums_read_once_frozen_are_exact_without_a_snapshot():
    """With ``snapshot="traces"`` the sums in registers show their low parts as they add (no
    copy a cycle late): read once the HMM is frozen they are exact, a 10-bit sum of 4-bit
    values (an 8-bit low part) saturated with its flag set."""
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(300)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program, counter_bits=10, snapshot="traces", bank=False)
    assert not any(name.endswith("_low") for name in _register_names(hmm, "level_when_a"))
    expected = expected_values(samples, Timeline(5).counted(0, result["cycle"]), bits=10)
    check(result["readout"], expected)
    assert expected["level_when_a"][1] and not expected["a_b"][1]


def few_counts(s):
    """Three counts and the cycles: too few for a counter bank."""
    return [probe.Count("a", s.a), probe.Count("a_b", s.a, s.b),
            probe.Accumulate("level_when_a", (s.level, s.a))]


def test_few_counts_read_frozen_share_a_carry_bank_exact_through_freeze_run_and_clear():
    """Four counts read once frozen (``snapshot="traces"``) keep their high parts in one carry
    bank: exact after a freeze, a run and a clear, and saturated with the flag set (9-bit counts,
    low parts of 5 and 7 bits)."""
    timeline = Timeline(sweep_cycles=7)     # 4 entries, and the sweep's last write three edges on
    readouts = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(60)
        readouts["frozen"] = await freeze_and_read(host, now)
        timeline.command(readouts["frozen"][0], "freeze")
        await ctx.tick().repeat(10)
        await run_again_then_clear(host, now, ctx, timeline, readouts, 250)

    samples, hmm = simulate(program, probes=few_counts, counter_bits=9, snapshot="traces")
    bank = hmm.parts["counts"]
    assert type(bank).__name__ == "CarryBank" and bank.amount_bits == (1, 1, 2, 4)
    # (3, 3, 5, 7) bits needed; the narrowest widened to 5 so the entries are 4 bits wide.
    assert bank.low_bits_for(bank.amount_bits) == (3, 3, 5, 7) and bank.low_bits == (5, 5, 5, 7)
    saturated = set()
    for name in ("frozen", "again", "cleared"):
        cycle, readout = readouts[name]
        counted = timeline.counted(0, cycle)
        expected = {k: v for k, v in expected_values(samples, counted, bits=9).items()
                    if k in ("cycles", "a", "a_b", "level_when_a")}
        check(readout, expected)
        saturated |= {k for k, (_, flag) in expected.items() if flag}
    assert counted[0] == timeline.events[-1][0] + 4 + 7
    assert "level_when_a" in saturated and "cycles" not in saturated


def scaled_counts(s):
    """:func:`few_counts` and multiples of two of them."""
    return [*few_counts(s), probe.Scaled("a_x3", "a", 3),
            probe.Scaled("level_when_a_x5", "level_when_a", 5)]


@pytest.mark.parametrize("snapshot", ["all", "traces"])
def test_a_scaled_count_reads_its_multiple_with_its_flag_and_takes_no_bits(snapshot):
    """A :class:`Scaled` value is ``factor`` times its count, exact, and saturated with it (its
    flag set) at ``factor`` times the count's all ones; the snapshot is the same without it."""
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(300)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program, probes=scaled_counts, counter_bits=9, snapshot=snapshot)
    expected = expected_values(samples, Timeline(5).counted(0, result["cycle"]), bits=9)
    readout = result["readout"]
    for name, factor, source in (("a_x3", 3, "a"), ("level_when_a_x5", 5, "level_when_a")):
        value, flag = expected[source]
        assert (readout.values[name], readout.overflow[name]) == (factor * value, flag), name
    # 300 cycles: about 225 of ``a`` fit in 9 bits, the sum of levels does not.
    assert not readout.overflow["a_x3"] and readout.overflow["level_when_a_x5"]
    assert readout.values["level_when_a_x5"] == 5 * 511
    without = HMM(few_counts(Stimulus()), counter_bits=9, snapshot=snapshot).layout
    assert (hmm.layout.snapshot_words, hmm.layout.snapshot_bits) == (without.snapshot_words,
                                                                     without.snapshot_bits)
    assert HMMLayout.from_json(hmm.layout.to_json()) == hmm.layout


def test_a_scaled_count_needs_a_count_before_it_and_a_positive_factor():
    s = Stimulus()
    with pytest.raises(ValueError, match="a_x3: no count named 'b' was added before it"):
        HMM([probe.Count("a", s.a), probe.Scaled("a_x3", "b", 3)])
    with pytest.raises(ValueError, match="a_x0: factor must be a positive integer, not 0"):
        probe.Scaled("a_x0", "a", 0)
    with pytest.raises(ValueError, match="'a_x3' is a multiple of the count 'a'"):
        HMM([probe.Count("a", s.a), probe.Scaled("a_x3", "a", 3),
             probe.Sampler("samples", ["a_x3"], period=5, depth=4)])


def _register_names(hmm, part):
    """The names of the signals a part of ``hmm`` drives."""
    from amaranth.hdl import Fragment
    fragment = Fragment.get(hmm.parts[part], None)
    return {signal.name for domain, statements in fragment.statements.items()
            for statement in statements for signal in lhs_signals(statement)}


def test_a_narrower_port_reads_the_same_values():
    readouts = []

    async def program(host, now, ctx):
        await ctx.tick().repeat(80)
        readouts.append(await freeze_and_read(host, now))

    simulate(program)
    samples, hmm = simulate(program, word_bits=16)
    assert hmm.layout.word_bits == 16 and hmm.layout.table("p").stride_words == 4
    (cycle32, wide), (cycle16, narrow) = readouts
    assert cycle32 == cycle16
    assert narrow.values == wide.values and narrow.overflow == wide.overflow
    assert narrow.traces == wide.traces


def observed_records(samples, counted, kind):
    """The records a trace should hold, from the observer: (timestamp, ...) per counted cycle."""
    records = []
    for timestamp, t in enumerate(counted):
        s = samples[t]
        if kind == "t":
            events = [name for name, fired in (("b", s["b"]), ("high", s["level"] > 12)) if fired]
            if events:
                records.append({"timestamp": timestamp, "events": events, "level": s["level"]})
    return records


def drained_correctly(drained, observed, dropped):
    """``drained`` is ``observed`` with exactly ``dropped`` records missing."""
    assert len(observed) - len(drained) == dropped
    it = iter(observed)
    assert all(any(record == candidate for candidate in it) for record in drained)


@pytest.mark.parametrize("drain_every", [3, 40])
def test_stop_trace_drained_while_running_loses_only_counted_drops(drain_every):
    drained, state = [], {}

    async def program(host, now, ctx):
        trace = host.layout.trace("t")
        for _ in range(12):
            await ctx.tick().repeat(drain_every)
            records, dropped = await host.drain(trace)
            drained.extend(records)
            state["dropped"] = dropped
        state["cycle"] = now()
        await host.command("freeze")
        records, state["dropped"] = await host.drain(trace)
        drained.extend(records)

    samples, hmm = simulate(program, trace_depth=128 if drain_every == 3 else 8)
    observed = observed_records(samples, Timeline(5).counted(0, state["cycle"]), "t")
    drained_correctly(drained, observed, state["dropped"])
    if drain_every == 40:
        assert state["dropped"] > 0        # an 8-deep buffer overflows between rare drains
    else:
        assert state["dropped"] == 0 and len(drained) > 50


def test_wrap_trace_keeps_the_newest_records_and_counts_the_rest():
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(100)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program, trace_mode="wrap")
    observed = observed_records(samples, Timeline(5).counted(0, result["cycle"]), "t")
    readout = result["readout"]
    assert readout.traces["t"] == observed[-8:]
    assert readout.values["t.dropped"] == len(observed) - 8


def test_sampler_records_chosen_counters_every_period():
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(60)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program)
    counted = Timeline(5).counted(0, result["cycle"])
    records = result["readout"].traces["samples"]
    periods = len(counted) // 5
    assert len(records) == 4 and result["readout"].values["samples.dropped"] == periods - 4
    for record in records:
        t = record["timestamp"]                       # counted cycles before this sample
        assert t % 5 == 4
        assert record["cycles"] == t and not record["cycles.overflow"]
        assert record["a"] == sum(samples[c]["a"] for c in counted[:t])


def test_thread_states_drained_while_running_follow_every_change():
    drained, state = [], {}

    async def program(host, now, ctx):
        trace = host.layout.trace("threads")
        for _ in range(20):
            await ctx.tick().repeat(10)
            records, state["dropped"] = await host.drain(trace)
            drained.extend(records)
        state["cycle"] = now()
        await host.command("freeze")
        records, state["dropped"] = await host.drain(trace)
        drained.extend(records)

    samples, hmm = simulate(program)
    counted = Timeline(5).counted(0, state["cycle"])
    observed, last = [], None
    for timestamp, t in enumerate(counted):
        threads = samples[t]["threads"]
        if threads != last:
            observed.append({"timestamp": timestamp, "events": ["change"],
                             "thread0": threads & 3, "thread1": threads >> 2})
            last = threads
    assert len(observed) > 5
    drained_correctly(drained, observed, state["dropped"])


def test_changes_keep_the_newest_records_of_every_change_with_labelled_codes():
    result = {}

    async def program(host, now, ctx):
        await ctx.tick().repeat(120)
        result["cycle"], result["readout"] = await freeze_and_read(host, now)

    samples, hmm = simulate(program)
    observed, last = [], None
    for timestamp, t in enumerate(Timeline(5).counted(0, result["cycle"])):
        values = (samples[t]["state"], int(samples[t]["level"] > 12))
        if values != last:
            observed.append({"timestamp": timestamp, "events": ["change"],
                             "state": values[0], "high": values[1]})
            last = values
    readout = result["readout"]
    assert len(observed) > 8
    assert readout.traces["changes"] == observed[-8:]
    assert readout.values["changes.dropped"] == len(observed) - 8
    layout = hmm.layout
    assert layout.trace("changes").labels == (("state", ("S0", "S1", "S2", "S3")),)
    assert layout.trace("threads").labels == (("thread0", THREAD_STATES),
                                              ("thread1", THREAD_STATES))
    assert THREAD_STATES == ("idle", "running", "critical", "spinning")


def test_changes_check_their_labels():
    s = Stimulus()
    with pytest.raises(ValueError, match="labels name 'other'"):
        probe.Changes("c", {"state": s.state}, labels={"other": ["A"]}, depth=4)
    with pytest.raises(ValueError, match="a 2-bit value 'state' cannot take 5"):
        HMM([probe.Changes("c", {"state": s.state}, labels={"state": list("ABCDE")}, depth=4)])
    with pytest.raises(ValueError, match="sequence of names"):
        probe.Changes("c", {"state": s.state}, labels={"state": "ABCD"}, depth=4)
    with pytest.raises(ValueError, match="states must be 6 bits for 3 threads, not 4"):
        HMM([probe.ThreadStates("t", s.threads, threads=3, depth=4)])


def test_layout_round_trips_and_a_wrong_manifest_is_refused():
    stimulus = Stimulus()
    layout = HMM(toy_probes(stimulus)).layout
    again = HMMLayout.from_json(json.loads(json.dumps(layout.to_json())))
    assert again == layout and again.layout_id == layout.layout_id
    other = HMM([probe.Count("a", stimulus.a)]).layout
    assert other.layout_id != layout.layout_id
    tampered = layout.to_json()
    tampered["snapshot"]["fields"][0]["bits"] += 1
    with pytest.raises(ValueError, match="layout_id"):
        HMMLayout.from_json(tampered)

    async def program(host, now, ctx):
        await HMMHost(ctx, host.port, other).check_layout()

    with pytest.raises(HMMError, match="wrong manifest"):
        simulate(program)


def test_the_read_latency_follows_the_readout_blocks_and_every_host_reads_it():
    """The registers, the snapshot's words by 8, one block per table and trace: up to 4 blocks
    are read in 3 cycles, each level of 4 more in one cycle more; the port, the layout and its
    manifest say so (the host of every test here reads the toy HMM's 4-cycle port)."""
    from hwgen.instrument import PortSignature
    stimulus = Stimulus()
    small = HMM([probe.Count("a", stimulus.a)])
    toy = HMM(toy_probes(stimulus))         # registers, 2 snapshot blocks, 2 tables, 4 traces
    assert (small.layout.read_latency_cycles, toy.layout.read_latency_cycles) == (3, 4)
    assert toy.port.signature.read_latency == 4
    assert toy.layout.to_json()["read_latency_cycles"] == 4
    with pytest.raises(ValueError, match="read_latency must be an integer of at least 3"):
        PortSignature(4, 32, 2)


def test_tables_cannot_be_read_while_running():
    async def program(host, now, ctx):
        await host.read_table(host.layout.table("p"))

    with pytest.raises(HMMError, match="frozen"):
        simulate(program)


def test_probe_names_must_be_unique_and_well_formed():
    s = Stimulus()
    with pytest.raises(ValueError, match="named 'a'"):
        HMM([probe.Count("a", s.a), probe.Count("a", s.b)])
    with pytest.raises(ValueError, match="dotted words"):
        probe.Count("a b", s.a)
    with pytest.raises(ValueError, match="1-bit condition"):
        HMM([probe.Count("x", s.level)])
    with pytest.raises(ValueError, match="design view"):
        HMM([probe.Count("x", "sub.sig")])


def test_a_bank_keeps_at_most_its_maximum_and_a_clear_with_a_snapshot_ends_in_time():
    """Ten streams (30 counts) and the cycles: the cycles and the first seven streams' 21 counts
    in the bank (an eighth stream would pass its 24), the last three's in registers; a ``clear |
    snapshot`` (the copy, then the sweep) ends within the cycles a host waits for a command, the
    snapshot holds the counts of before the clear and a readout after it the counts since."""
    from hwgen.instrument.hmm import BANK_MAX_COUNTS

    stimulus = Stimulus()
    pairs = [(stimulus.a, stimulus.b), (stimulus.b, stimulus.a), (stimulus.a, ~stimulus.b),
             (stimulus.level[0], stimulus.level[1]), (stimulus.level[1], stimulus.level[2])]
    streams = [probe.Stream(f"s{k}", *pairs[k % len(pairs)]) for k in range(10)]
    hmm = HMM(streams)
    banked = len(hmm.parts["counts"].amount_bits)
    assert BANK_MAX_COUNTS == 24 and banked == 22 and "cycles" not in hmm.parts
    registered = {f.name for f in hmm.layout.fields if f.offset < 24 * 32}
    assert {"s7.idle", "s9.transferring"} <= registered
    assert "s0.idle" not in registered and "cycles" not in registered
    top = Module()
    top.submodules.stimulus = stimulus
    top.submodules.hmm = hmm
    sim = Simulator(top)
    sim.add_clock(1e-8)
    samples, result = {}, {}

    async def observer(ctx):
        s = stimulus
        async for _, _, now, a, b, level in ctx.tick().sample(s.now, s.a, s.b, s.level):
            samples[now] = dict(a=a, b=b, l0=level & 1, l1=level >> 1 & 1, l2=level >> 2 & 1)

    async def host_program(ctx):
        host = HMMHost(ctx, hmm.port, hmm.layout)
        await ctx.tick().repeat(50)
        result["cleared"] = ctx.get(stimulus.now)
        await host.command("clear", "snapshot")         # raises if still busy past its limit
        result["before"] = await host.read_snapshot()
        await ctx.tick().repeat(40)
        result["frozen"] = ctx.get(stimulus.now)
        await host.command("freeze", "snapshot")
        result["after"] = await host.read_snapshot()

    sim.add_testbench(observer, background=True)
    sim.add_testbench(host_program)
    sim.run()

    def value(s, name):
        return 1 - s[name[1:]] if name.startswith("~") else s[name]

    def expected(cycles):
        signals = [("a", "b"), ("b", "a"), ("a", "~b"), ("l0", "l1"), ("l1", "l2")]
        counts = {}
        for k in range(10):
            valid, ready = signals[k % len(signals)]
            picked = [samples[t] for t in cycles]
            counts[f"s{k}.transferring"] = sum(value(s, valid) & value(s, ready) for s in picked)
            counts[f"s{k}.blocking"] = sum(value(s, valid) & (1 - value(s, ready)) for s in picked)
            counts[f"s{k}.idle"] = sum(1 - value(s, valid) for s in picked)
        return counts

    before = range(result["cleared"] + 1)
    values, overflow = result["before"]
    assert {k: values[k] for k in expected(before)} == expected(before)
    # After the clear, counting restarts once the copy and the sweep are done: the cycle
    # counter says when; every count holds the cycles from then to the freeze.
    values, overflow = result["after"]
    first = result["frozen"] + 1 - values["cycles"]
    assert first > result["cleared"] + 4 + banked
    after = range(first, result["frozen"] + 1)
    assert {k: values[k] for k in expected(after)} == expected(after)
