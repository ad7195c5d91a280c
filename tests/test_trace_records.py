"""Trace records kept as columns (:class:`hwgen.sim.TraceRecords`) and what consumes them (the
thread-state timeline, the exported timeline), against record-by-record references."""

import json

import numpy as np
import pytest

from hwgen.instrument.layout import Field, TraceLayout
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import PiJob
from hwgen.sim import (STATE_NAMES, HMMReadout, StateTimeline, TraceRecords, instrument_pe,
                       instrument_pipeline)
from hwgen.traces.timeline import Counter, Row, Timeline

# A trace whose fields cross word boundaries, one of them wider than 64 bits.
WIDE = TraceLayout("wide", "trace", 0, 4, 8, "stop", 20, ("a", "b", "c"),
                   (Field("x", 23, 7), Field("big", 30, 70, overflow=True),
                    Field("y", 101, 33, overflow=True)), 0, "wide.written", "wide.dropped")


def _words(trace, word_bits, count, seed):
    rng = np.random.default_rng(seed)
    n = trace.entry_words(word_bits)
    words = rng.integers(0, 1 << 63, size=count * n, dtype=np.uint64) * np.uint64(2) + \
        rng.integers(0, 2, size=count * n, dtype=np.uint64)
    return words & np.uint64((1 << word_bits) - 1)


def _one_by_one(trace, words, word_bits):
    n = trace.entry_words(word_bits)
    words = [int(w) for w in words]
    return [trace.decode_record(words[i:i + n], word_bits) for i in range(0, len(words), n)]


@pytest.mark.parametrize("word_bits", [16, 32, 64])
def test_records_wider_than_a_word_decode_as_one_by_one(word_bits):
    words = _words(WIDE, word_bits, 50, word_bits)
    records = TraceRecords.decode(WIDE, words, word_bits)
    expected = _one_by_one(WIDE, words, word_bits)
    assert len(records) == 50 and list(records) == expected and records == expected
    assert records[7] == expected[7] and records[-1] == expected[-1]
    assert records.column("big").dtype == object and records.column("y").dtype == np.uint64
    assert records.column("x").dtype == np.uint8     # 7 bits: a byte a record
    assert records.column("big").tolist() == [r["big"] for r in expected]
    assert records.has_event("b").tolist() == ["b" in r["events"] for r in expected]
    assert any(r["big.overflow"] for r in expected) and any(r["big"] >> 64 for r in expected)


def test_records_slice_concatenate_and_survive_json():
    words = _words(WIDE, 32, 30, 5)
    records = TraceRecords.decode(WIDE, words, 32)
    expected = _one_by_one(WIDE, words, 32)
    n = WIDE.entry_words(32)
    parts = [TraceRecords.decode(WIDE, words[:10 * n], 32),
             TraceRecords.decode(WIDE, words[10 * n:10 * n], 32),
             TraceRecords.decode(WIDE, words[10 * n:], 32)]
    assert len(parts[1]) == 0 and parts[1] == []
    assert TraceRecords.concatenate(parts) == expected
    assert records[3:9] == expected[3:9]
    assert records != expected[:-1] and records != [*expected[:-1], {**expected[-1], "x": -1}]
    assert records.to_json() == expected
    # The same JSON, not only equal values: flags are booleans, not 0 and 1.
    assert json.dumps(records.to_json()) == json.dumps(expected)
    assert json.dumps(records[4]) == json.dumps(expected[4])
    again = TraceRecords.from_json(records.to_json())
    assert again == records and again.column("big").tolist() == records.column("big").tolist()


def _pipeline_layout(threads=3):
    return instrument_pipeline(Pipeline(PiJob(steps=10, threads=threads).program),
                               sample_period=8).layout


def _reference_changes(records, threads, first, cycles):
    """The thread-state timeline as the host built it record by record."""
    changes = []
    for record in records:
        cycle = max(0, record["timestamp"] - first)
        states = tuple(record[f"thread{t}"] for t in range(threads))
        if cycle >= cycles:
            break
        if changes and changes[-1][0] == cycle:
            changes.pop()
        changes.append((cycle, states))
    return tuple(changes)


def _state_records(trace, count, seed, *, spread=3):
    """Records of increasing timestamps, several in some cycles."""
    rng = np.random.default_rng(seed)
    stamps = np.cumsum(rng.integers(0, spread, count))
    words = TraceRecords.decode(trace, _words(trace, 64, count, seed), 64).to_json()
    for record, stamp in zip(words, stamps.tolist()):
        record["timestamp"] = stamp
    return words


def test_the_thread_state_timeline_equals_the_one_built_record_by_record():
    trace = _pipeline_layout().trace("thread_states")
    records = _state_records(trace, 400, 1)
    columns = TraceRecords.from_json(records)
    for first, cycles in ((5, 300), (0, 10_000), (50, 51), (1000, 5)):
        timeline = StateTimeline.from_records(columns, 3, first, cycles)
        expected = _reference_changes(records, 3, first, cycles)
        assert timeline.changes == expected
        ends = [c for c, _ in expected[1:]] + [cycles]
        spans = [(b, e, s) for (b, s), e in zip(expected, ends)]
        assert timeline.spans() == spans
        counts = [[sum(e - b for b, e, s in spans if s[t] == code)
                   for code in range(len(STATE_NAMES))] for t in range(3)]
        assert timeline.state_cycles() == counts
        assert timeline.cycles_where(lambda s: s[0] == s[1]) == sum(
            e - b for b, e, s in spans if s[0] == s[1])
        assert [timeline.first_cycle_not_idle(t) for t in range(3)] == [
            next((b for b, _, s in spans if s[t] != 0), None) for t in range(3)]
        assert StateTimeline.from_json(timeline.to_json()) == timeline


def _reference_rows(records, fields, end):
    spans = {field: [] for field, _ in fields}
    for index, record in enumerate(records):
        stop = records[index + 1]["timestamp"] if index + 1 < len(records) else end
        begin = record["timestamp"]
        if stop <= begin:
            continue
        for field, labels in fields:
            code = record[field]
            state = labels[code] if code < len(labels) else str(code)
            row = spans[field]
            if row and row[-1][2] == state and row[-1][1] == begin:
                row[-1] = (row[-1][0], stop, state)
            else:
                row.append((begin, stop, state))
    return spans


def _reference_points(records, name, end, total, total_overflow):
    points, before, last = [], 0, 0
    for cycle, value, overflow in [*((r["timestamp"], r[name], r.get(f"{name}.overflow"))
                                     for r in records), (end, total, total_overflow)]:
        if overflow:
            return points, True
        if cycle > last:
            points.append((cycle, value - before))
            before, last = value, cycle
    return points, False


@pytest.mark.parametrize("seed, monotonic", [(1, True), (2, False)])
def test_the_exported_timeline_equals_the_one_built_record_by_record(seed, monotonic):
    layout = _pipeline_layout()
    rng = np.random.default_rng(seed)
    traces, values, overflow = {}, {}, {}
    end = 5000
    for trace in layout.traces:
        words = _words(trace, layout.word_bits, 300, seed + len(traces))
        records = TraceRecords.decode(trace, words, layout.word_bits).to_json()
        if monotonic:
            stamps = np.cumsum(rng.integers(0, 25, len(records))).tolist()
            for record, stamp in zip(records, stamps):
                record["timestamp"] = stamp
            if trace.kind == "sampler":
                for f in trace.payload:      # running totals, the last few saturated
                    totals = np.cumsum(rng.integers(0, 9, len(records))).tolist()
                    for i, (record, total) in enumerate(zip(records, totals)):
                        record[f.name] = total
                        record[f"{f.name}.overflow"] = f.name == "ops" and i > 250
                    values[f.name] = totals[-1] + 3
                    overflow[f.name] = f.name == "ops"
        for record in records:              # codes without a label
            for field, labels in trace.labels:
                if rng.random() < 0.2:
                    record[field] = len(labels) + int(rng.integers(0, 3))
        traces[trace.name] = TraceRecords.from_json(records)
        values[trace.dropped] = 0
        for f in trace.payload:
            values.setdefault(f.name, int(rng.integers(0, 1 << 20)))
            overflow.setdefault(f.name, False)
    values["cycles"] = end
    readout = HMMReadout(layout.layout_id, values, overflow, {}, traces, layout.groups)
    timeline = Timeline.from_readout("x", readout, layout)

    fields = list(layout.trace("thread_states").labels)
    spans = _reference_rows(list(traces["thread_states"]), fields, end)
    names = [row.name for row in timeline.rows]
    assert names == [field for field, _ in fields]
    assert [[(b, e, timeline.states[s]) for b, e, s in row.spans] for row in timeline.rows] \
        == [spans[name] for name in names]
    assert any(len(row.spans) > 10 for row in timeline.rows)
    assert {s for row in spans.values() for *_, s in row} <= set(timeline.states)
    samples = list(traces["samples"])
    saturated = []
    for counter, f in zip(timeline.counters, layout.trace("samples").payload):
        points, flagged = _reference_points(samples, f.name, end, values[f.name],
                                            overflow[f.name])
        assert list(counter.points) == points
        saturated += [f.name] if flagged else []
    assert list(timeline.saturated) == saturated
    assert saturated == (["ops"] if monotonic else saturated) and timeline.counters
    assert all(isinstance(c, Counter) for c in timeline.counters)
    assert all(isinstance(r, Row) for r in timeline.rows)


def test_a_window_filter_readout_round_trips_json_with_its_records():
    layout = instrument_pe(WindowFilter("max", (3, 3), width=12, height=7, unroll=2,
                                        buffer="line"), timeline_depth=16).layout
    traces = {trace.name: TraceRecords.decode(trace, _words(trace, layout.word_bits, 12, 9),
                                              layout.word_bits)
              for trace in layout.traces}
    readout = HMMReadout(layout.layout_id, {"cycles": 7}, {}, {}, traces, ())
    obj = readout.to_json()
    assert all(isinstance(records, list) for records in obj["traces"].values())
    assert HMMReadout.from_json(obj) == readout
