"""Each HMM part on its own, driven cycle by cycle, against a model written here."""

import random

import pytest
from hypothesis import given, settings, strategies as st

from hwgen.instrument.state_profiler import TABLE_LATENCY
from hwgen.instrument import (AccumulatorTable, ChangeRecorder, CycleCounter, EventCounter,
                              Histogram, LatencyHistogram, PeriodicSampler, StateProfiler,
                              StreamMonitor, TraceBuffer)
from hwgen.sim.stimulus import run_cycles

FAST = settings(max_examples=8, deadline=None)


class Count:
    """A saturating count: the reference for every counter."""

    def __init__(self, bits):
        self.max = (1 << bits) - 1
        self.value = 0
        self.overflow = False

    def add(self, amount):
        total = self.value + amount
        if total > self.max:
            self.value, self.overflow = self.max, True
        else:
            self.value = total

    def clear(self):
        self.value, self.overflow = 0, False

    @property
    def word(self):
        return self.value | (self.overflow << (self.max.bit_length()))


def flags(n, p, rng):
    return [int(rng.random() < p) for _ in range(n)]


@given(seed=st.integers(0, 2**32 - 1), bits=st.integers(2, 6))
@FAST
def test_cycle_counter_counts_enabled_cycles_and_saturates(seed, bits):
    rng = random.Random(seed)
    dut = CycleCounter(bits)
    enable, clear = flags(120, 0.8, rng), flags(120, 0.03, rng)
    out = run_cycles(dut, [[(dut.enable, e), (dut.clear, c)] for e, c in zip(enable, clear)],
                     [dut.value.as_value()])
    model = Count(bits)
    for cycle, (e, c) in enumerate(zip(enable, clear)):
        assert out[cycle][0] == model.word, f"cycle {cycle}"
        model.clear() if c else model.add(e)


@given(seed=st.integers(0, 2**32 - 1), sources=st.integers(1, 4))
@FAST
def test_event_counter_adds_every_source_that_fires(seed, sources):
    rng = random.Random(seed)
    dut = EventCounter(5, sources=sources)
    steps = [(rng.getrandbits(sources), int(rng.random() < 0.9), int(rng.random() < 0.02))
             for _ in range(100)]
    inputs = [[(dut.valid, v), (dut.enable, e), (dut.clear, c)] for v, e, c in steps]
    out = run_cycles(dut, inputs + [[(dut.enable, 0)]], [dut.value.count, dut.value.overflow])
    model = Count(5)
    for cycle, (valid, e, c) in enumerate(steps):
        assert out[cycle] == (model.value, model.overflow), f"cycle {cycle}"
        if c:
            model.clear()
        elif e:
            model.add(bin(valid).count("1"))
    assert out[-1] == (model.value, model.overflow)


@given(seed=st.integers(0, 2**32 - 1), bits=st.integers(3, 9))
@FAST
def test_event_counter_accumulates_valid_amounts_with_exact_overflow(seed, bits):
    rng = random.Random(seed)
    dut = EventCounter(bits, sources=2, amount_bits=4)
    steps = [([rng.randrange(16), rng.randrange(16)], rng.getrandbits(2)) for _ in range(80)]
    inputs = [[(dut.amount[0], a[0]), (dut.amount[1], a[1]), (dut.valid, v), (dut.enable, 1)]
              for a, v in steps]
    out = run_cycles(dut, inputs + [[(dut.enable, 0)]], [dut.value.count, dut.value.overflow])
    model = Count(bits)
    true_sum = 0
    for cycle, (amounts, valid) in enumerate(steps):
        assert out[cycle] == (model.value, model.overflow)
        added = sum(a for i, a in enumerate(amounts) if valid >> i & 1)
        model.add(added)
        true_sum += added
    assert out[-1] == (min(true_sum, (1 << bits) - 1), true_sum > (1 << bits) - 1)


@pytest.mark.parametrize("sources,amount_bits", [(1, None), (3, None), (2, 6)])
def test_counts_wider_than_their_low_part_are_exact_through_clears_and_saturation(
        sources, amount_bits):
    """10-bit counts, wider than the 8-bit low part that counts while the high part takes its
    carry a cycle later: the value equals the model in every cycle (``lag`` cycles later, one
    for sums; ``now`` at once), through a clear, until it saturates with its flag set."""
    rng = random.Random(sources)
    dut = EventCounter(10, sources=sources, amount_bits=amount_bits)
    now = dut.now.as_value()
    assert dut.lag == (sources > 1)
    cycles = 1800 if sources == 1 else 700
    steps = [(sum(int(rng.random() < 0.9) << i for i in range(sources)),
              [rng.randrange(64) for _ in range(sources)],
              int(rng.random() < 0.95), int(cycle == cycles // 5)) for cycle in range(cycles)]
    inputs = [[(dut.valid, v), (dut.enable, e), (dut.clear, c),
               *((dut.amount[i], a[i]) for i in range(sources) if amount_bits)]
              for v, a, e, c in steps]
    out = run_cycles(dut, inputs, [dut.value.as_value(), now])
    model, words = Count(10), []
    for valid, amounts, e, c in steps:
        words.append(model.word)
        if c:
            model.clear()
        elif e:
            model.add(sum(amounts[i] if amount_bits else 1
                          for i in range(sources) if valid >> i & 1))
    assert model.overflow                       # the bound was reached
    for cycle, (value, value_now) in enumerate(out):
        assert value == (words[cycle - dut.lag] if cycle >= dut.lag else 0), f"cycle {cycle}"
        assert value_now == words[cycle], f"cycle {cycle}"


def test_stream_monitor_puts_each_cycle_in_one_category():
    rng = random.Random(1)
    dut = StreamMonitor(6)
    steps = [(rng.getrandbits(1), rng.getrandbits(1), int(rng.random() < 0.9)) for _ in range(150)]
    inputs = [[(dut.valid, v), (dut.ready, r), (dut.enable, e)] for v, r, e in steps]
    out = run_cycles(dut, inputs + [[(dut.enable, 0)]],
                     [dut.transferring.as_value(), dut.blocking.as_value(), dut.idle.as_value()])
    counts = {"transferring": Count(6), "blocking": Count(6), "idle": Count(6)}
    for valid, ready, enable in steps:
        if enable:
            counts["idle" if not valid else "transferring" if ready else "blocking"].add(1)
    assert out[-1] == tuple(c.word for c in counts.values())
    assert counts["transferring"].overflow or counts["idle"].overflow   # 6 bits: some saturate


# A count table holds a sample's count TABLE_LATENCY cycles after the sample.
TABLE_SETTLE = TABLE_LATENCY


def read_table(dut, depth):
    """Inputs that read every entry of a table through raddr (one per cycle) once the last
    counts have landed: the table's words are ``out[len(inputs) + TABLE_SETTLE + 1:]``."""
    return ([[(dut.enable, 0)]] * TABLE_SETTLE + [[(dut.raddr, i)] for i in range(depth)]
            + [[]])


@given(seed=st.integers(0, 2**32 - 1), bits=st.integers(3, 8))
@FAST
def test_state_profiler_counts_cycles_per_state_through_runs_and_switches(seed, bits):
    rng = random.Random(seed)
    states = ["A", "B", "C", "D", "E"]
    dut = StateProfiler(states, bits)
    steps = []
    while len(steps) < 160:
        # Runs of one state (the read-modify-write must forward) and single-cycle visits.
        steps += [(rng.randrange(5), int(rng.random() < 0.85))] * rng.choice([1, 1, 2, 7])
    inputs = [[(dut.state, s), (dut.enable, e)] for s, e in steps]
    out = run_cycles(dut, inputs + read_table(dut, 5), [dut.rdata.as_value()])
    model = [Count(bits) for _ in states]
    for state, enable in steps:
        if enable:
            model[state].add(1)
    read = [word for (word,) in out[len(steps) + TABLE_SETTLE + 1:]]
    assert read == [c.word for c in model]


def test_state_profiler_clear_sweeps_the_table_and_counting_restarts():
    dut = StateProfiler(["A", "B", "C"], 8)
    inputs = ([[(dut.state, 1), (dut.enable, 1)]] * 5 + [[(dut.enable, 0), (dut.clear, 1)]] +
              [[(dut.clear, 0)]] * 4 + [[(dut.state, 2), (dut.enable, 1)]] * 3)
    out = run_cycles(dut, inputs + read_table(dut, 3), [dut.rdata.as_value(), dut.busy])
    busy = [b for _, b in out[6:10]]
    assert busy == [1, 1, 1, 0]
    assert [w for w, _ in out[len(inputs) + TABLE_SETTLE + 1:]] == [0, 0, 3]


def accumulate(dut, steps):
    """Inputs of an accumulator table for ``steps`` of ``(source or None, amounts, enable)``:
    every source offers an amount in every cycle, only ``source``'s is valid."""
    return [[(dut.valid, 0 if source is None else 1 << source), (dut.enable, enable),
             *((dut.amount[i], a) for i, a in enumerate(amounts))]
            for source, amounts, enable in steps]


@given(seed=st.integers(0, 2**32 - 1), bits=st.integers(4, 9))
@FAST
def test_accumulator_table_adds_each_valid_amount_to_its_source_entry(seed, bits):
    rng = random.Random(seed)
    dut = AccumulatorTable(4, amount_bits=4, bits=bits)
    steps = []
    while len(steps) < 160:
        # Runs of one source (each update forwarded to the next, 1 to 3 cycles behind), visits
        # that come back after one or two other sources, and idle cycles.
        source = rng.choice([None, 0, 1, 2, 3, 3])
        for _ in range(rng.choice([1, 1, 2, 3, 7])):
            steps.append((source, [rng.randrange(16) for _ in range(4)],
                          int(rng.random() < 0.9)))
    out = run_cycles(dut, accumulate(dut, steps) + read_table(dut, 4), [dut.rdata.as_value()])
    model = [Count(bits) for _ in range(4)]
    for source, amounts, enable in steps:
        if source is not None and enable:
            model[source].add(amounts[source])
    assert [word for (word,) in out[len(steps) + TABLE_SETTLE + 1:]] == [c.word for c in model]


def test_accumulator_table_saturates_an_entry_and_keeps_the_others_exact():
    dut = AccumulatorTable(4, amount_bits=4, bits=4)
    # Back to back: entry 0 reaches its maximum 15 exactly, then passes it; entry 1 reaches 15
    # and adds 0; each update lands while the same entry's previous ones are in flight.
    sequence = [(0, 9), (0, 6), (1, 15), (0, 1), (1, 0), (2, 3), (0, 2)]
    steps = [(source, [amount if i == source else 15 for i in range(4)], 1)
             for source, amount in sequence]
    out = run_cycles(dut, accumulate(dut, steps) + read_table(dut, 4), [dut.rdata.as_value()])
    overflow = 1 << 4
    assert [word for (word,) in out[len(steps) + TABLE_SETTLE + 1:]] == \
        [15 | overflow, 15, 3, 0]


@given(seed=st.integers(0, 2**32 - 1))
@FAST
def test_histogram_bins_samples_with_overflow_bin_and_summary(seed):
    rng = random.Random(seed)
    dut = Histogram(6, bins=5, bin_width=4, bits=4)
    steps = [(rng.randrange(64) if rng.random() < 0.5 else rng.randrange(8),
              int(rng.random() < 0.7)) for _ in range(120)]
    inputs = [[(dut.value, v), (dut.valid, ok), (dut.enable, 1)] for v, ok in steps]
    out = run_cycles(dut, inputs + read_table(dut, 6),
                     [dut.rdata.as_value(), dut.count.as_value(), dut.sum.as_value(), dut.min,
                      dut.max])
    samples = [v for v, ok in steps if ok]
    bins = [Count(4) for _ in range(6)]
    for v in samples:
        bins[min(v // 4, 5)].add(1)
    count, total = Count(4), Count(10)
    for v in samples:
        count.add(1)
        total.add(v)
    assert [row[0] for row in out[len(inputs) + TABLE_SETTLE + 1:]] == [b.word for b in bins]
    assert out[-1][1:] == (count.word, total.word, min(samples), max(samples))
    assert dut.labels() == ["0-3", "4-7", "8-11", "12-15", "16-19", ">=20"]


class TraceModel:
    """Records kept and dropped by a trace buffer, record by record."""

    def __init__(self, depth, mode):
        self.depth, self.mode = depth, mode
        self.records, self.written, self.consumed, self.dropped = {}, 0, 0, Count(4)

    def step(self, cycle, mask, payload, consume):
        if consume is not None:
            self.consumed = consume
        if mask:
            held = (self.written - self.consumed if self.mode == "stop"
                    else min(self.written, self.depth))
            if held == self.depth:
                self.dropped.add(1)
            if self.mode == "wrap" or held < self.depth:
                self.records[self.written] = (cycle, mask, payload)
                self.written += 1


@pytest.mark.parametrize("mode", ["stop", "wrap"])
@given(seed=st.integers(0, 2**32 - 1))
@FAST
def test_trace_buffer_keeps_records_and_counts_every_drop(mode, seed):
    rng = random.Random(seed)
    depth = 4
    dut = TraceBuffer(depth, timestamp_bits=8, triggers=2, payload_bits=5, mode=mode, bits=4)
    model = TraceModel(depth, mode)
    inputs = []
    for cycle in range(90):
        mask = rng.getrandbits(2) if rng.random() < 0.5 else 0
        payload = rng.randrange(32)
        # Now and then the host consumes everything written so far.
        consume = model.written if mode == "stop" and rng.random() < 0.1 else None
        model.step(cycle, mask, payload, consume)
        values = [(dut.timestamp, cycle), (dut.trigger, mask), (dut.payload, payload),
                  (dut.enable, 1)]
        if consume is not None:
            values.append((dut.consumed, consume % (2 * depth)))
        inputs.append(values)
    reads = [[(dut.enable, 0), (dut.raddr, slot)] for slot in range(depth)] + [[]]
    out = run_cycles(dut, inputs + reads,
                     [dut.rdata.as_value(), dut.written, dut.dropped.as_value()])
    _, written, dropped = out[len(inputs)]
    assert written == model.written % (2 * depth)
    assert dropped == model.dropped.word
    assert model.dropped.value > 0
    slots = [row[0] for row in out[len(inputs) + 1:]]
    for index in range(max(0, model.written - depth), model.written):
        timestamp, mask, payload = model.records[index]
        assert slots[index % depth] == timestamp | mask << 8 | payload << 10


@given(seed=st.integers(0, 2**32 - 1), period=st.integers(1, 5))
@FAST
def test_periodic_sampler_pulses_every_period_enabled_cycles(seed, period):
    rng = random.Random(seed)
    dut = PeriodicSampler(period)
    enable = flags(60, 0.7, rng)
    out = run_cycles(dut, [[(dut.enable, e)] for e in enable], [dut.sample])
    counted = 0
    for cycle, e in enumerate(enable):
        counted += e
        assert out[cycle][0] == int(e and counted % period == 0), f"cycle {cycle}"


def test_change_recorder_asks_for_a_record_on_every_change():
    rng = random.Random(3)
    dut = ChangeRecorder(6)
    states, state = [], 0
    for _ in range(80):
        if rng.random() < 0.3:
            state ^= 1 << (2 * rng.randrange(3) + rng.randrange(2))
        states.append(state)
    enable = [int(rng.random() < 0.9) for _ in states]
    out = run_cycles(dut, [[(dut.value, s), (dut.enable, e)] for s, e in zip(states, enable)],
                     [dut.record])
    last = None
    for cycle, (s, e) in enumerate(zip(states, enable)):
        expected = e and s != last
        assert out[cycle][0] == int(expected), f"cycle {cycle}"
        if expected:
            last = s


def latency_model(steps, capacity):
    """Latencies, wait cycles and untracked responses of an in-order channel whose meter tracks
    at most ``capacity`` outstanding requests, the newest going untracked first."""
    queue, skipped, latencies, wait, untracked = [], 0, [], 0, 0
    for cycle, (request, response) in enumerate(steps):
        if (queue or skipped) and not response:
            wait += 1
        track = request and not skipped and len(queue) < capacity
        if response:
            if queue:
                latencies.append(cycle - queue.pop(0))
            elif skipped:
                skipped -= 1
                untracked += 1
        if request:
            if track:
                queue.append(cycle)
            else:
                skipped += 1
    return latencies, wait, untracked


def check_latency_histogram(depth, steps):
    """Runs a latency histogram of 8 bins over the (request, response) pairs of ``steps`` and
    checks its bins, sum, extremes and events against :func:`latency_model`; returns the count of
    untracked responses."""
    dut = LatencyHistogram(depth, bins=8, bin_width=2, latency_bits=8, bits=8)
    inputs = [[(dut.request, q), (dut.response, r), (dut.enable, 1)] for q, r in steps]
    reads = ([[(dut.enable, 0), (dut.request, 0), (dut.response, 0)]] * TABLE_SETTLE
             + [[(dut.raddr, b)] for b in range(9)])
    out = run_cycles(dut, inputs + reads + [[]],
                     [dut.rdata.as_value(), dut.measured, dut.sum.as_value(), dut.min,
                      dut.max, dut.waiting, dut.missed])
    latencies, wait, untracked = latency_model(steps, dut.depth)
    bins = [Count(8) for _ in range(9)]
    for latency in latencies:
        bins[min(latency // 2, 8)].add(1)
    assert [row[0] for row in out[len(inputs) + TABLE_SETTLE + 1:]] == [b.word for b in bins]
    end = out[-1]
    # The counts are the HMM's, of the part's events (one each per cycle at most).
    assert sum(row[1] for row in out) == len(latencies)
    assert end[2] == sum(latencies)
    assert (end[3], end[4]) == (min(latencies), max(latencies))
    assert sum(row[5] for row in out) == wait
    assert sum(row[6] for row in out) == untracked
    return untracked


# Depths of distributed RAM (up to 64) and of block RAM.
@pytest.mark.parametrize("depth", [2, 64, 128])
@given(seed=st.integers(0, 2**32 - 1))
@FAST
def test_latency_histogram_measures_each_response_exactly(depth, seed):
    rng = random.Random(seed)
    # A channel with random issue and random per-request latency, answered in order.
    steps, due, busy_until = [], [], 0
    for cycle in range(150):
        request = int(rng.random() < 0.4)
        response = int(bool(due) and due[0] <= cycle)
        if response:
            due.pop(0)
        if request:
            ready = max(cycle + 1 + rng.randrange(12), busy_until)
            busy_until = ready + 1
            due.append(ready)
        steps.append((request, response))
    untracked = check_latency_histogram(depth, steps)
    if depth >= 64:
        assert untracked == 0


@pytest.mark.parametrize("seed", range(6))
def test_latency_histogram_counts_many_untracked_requests(seed):
    """One request tracked and about 4 to 14 outstanding: the untracked count crosses 7 and 8
    in both directions, in runs of requests alone and of responses alone, so that a count's
    moves meet at the crossing (a mistake there loses track of which responses are measured)."""
    rng = random.Random(seed)
    # Runs of one to four cycles of requests alone, of responses alone, of both or of neither,
    # requests more likely with few outstanding.
    steps, outstanding = [(1, 0)] * 9, 9
    while len(steps) < 400:
        kind = rng.choice([(1, 0), (1, 0), (0, 1), (0, 1), (1, 1), (0, 0)])
        if outstanding < 6 and kind == (0, 1) or outstanding > 10 and kind == (1, 0):
            kind = kind[::-1]
        for _ in range(rng.randint(1, 4)):
            if kind[1] and not outstanding:
                break
            outstanding += kind[0] - kind[1]
            steps.append(kind)
    steps += [(0, 1)] * outstanding
    assert check_latency_histogram(1, steps) > 100


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_select_picks_the_indexed_value(count):
    """A tree of multiplexers picks ``values[index]`` for every index in range."""
    from amaranth.hdl import Const, Signal
    from amaranth.sim import Simulator

    values = [Const(random.Random(count * 31 + k).randrange(1 << 10), 10) for k in range(count)]
    index = Signal(range(count + 1))
    picked = Signal(10)
    sim = Simulator(_select_module(picked, values, index))
    seen = []

    async def bench(ctx):
        for k in range(count):
            ctx.set(index, k)
            seen.append(ctx.get(picked))

    sim.add_testbench(bench)
    sim.run()
    assert seen == [v.value for v in values]


def _select_module(picked, values, index):
    from amaranth.hdl import Module
    from hwgen.instrument.select import select
    m = Module()
    m.d.comb += picked.eq(select(values, index))
    return m
