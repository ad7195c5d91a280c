# amaranth: UnusedElaboratable=no
"""Paraver and Perfetto traces, parsed by the strict readers of trace_readers.py, record for
record against what the HMM recorded (the readout's raw records and totals)."""

import json
import time

import numpy as np
import pytest

from hwgen.traces.paraver import paraver_files
from hwgen.traces.perfetto import perfetto_trace
from hwgen.traces.timeline import Timeline
from hwgen.instrument import THREAD_STATES
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import gemm
from hwgen.sim import MemoryModel, instrument_pe, instrument_pipeline, run_threads, run_window_filter
from trace_readers import FormatError, read_chrome, read_pcf, read_prv, read_row

CLOCK_MHZ = 250.0
THREADS = 3


@pytest.fixture(scope="module")
def pipeline_run():
    n = 16
    pe = Pipeline(gemm("naive", dim=4, threads=THREADS))
    storage = [(i * 3 + 2) % 89 for i in range(2 * n)] + [0] * n
    return run_threads(instrument_pipeline(pe, sample_period=16), storage,
                       params={"a_base": 0, "b_base": n, "c_base": 2 * n},
                       memory=MemoryModel(latency_cycles=2))


@pytest.fixture(scope="module")
def window_run():
    pe = WindowFilter("max", (3, 3), width=8, height=6, buffer="smart")
    design = instrument_pe(pe, timeline_depth=256)
    image = np.random.default_rng(1).integers(0, 256, (6, 8))
    run = run_window_filter(design, image, drain_interval_cycles=16,
                            memory=MemoryModel(latency_cycles=3, backpressure=0.3, seed=2))
    return run.figures.hmm, design.layout


def spans(records, field, end):
    """``(begin, end, code)`` of one field over change records, equal codes merged."""
    result = []
    for index, record in enumerate(records):
        stop = records[index + 1]["timestamp"] if index + 1 < len(records) else end
        if result and result[-1][2] == record[field]:
            result[-1][1] = stop
        else:
            result.append([record["timestamp"], stop, record[field]])
    return [tuple(span) for span in result]


def periods(readout, records, name):
    """``(begin, end, count)`` of every sample period of a sampled running total, the last one
    ending at the freeze with the final total."""
    totals = [(r["timestamp"], r[name]) for r in records] + [(readout["cycles"], readout[name])]
    result, begin, before = [], 0, 0
    for cycle, total in totals:
        if cycle > begin:
            result.append((begin, cycle, total - before))
            begin, before = cycle, total
    return result


def paraver(timeline):
    files = paraver_files(timeline, clock_mhz=CLOCK_MHZ)
    return read_prv(files[".prv"]), read_pcf(files[".pcf"]), read_row(files[".row"])


def paraver_readme(timeline):
    return paraver_files(timeline, stem="gemm-naive", clock_mhz=CLOCK_MHZ)[".readme.txt"]


def state_names(prv, pcf, thread):
    return [(begin, end, pcf.states[state])
            for _, _, _, t, begin, end, state in prv.states if t == thread]


def events_of(prv, thread, kind):
    return [(time, value) for _, _, _, t, time, pairs in prv.events if t == thread
            for k, value in pairs if k == kind]


def event_type(pcf, label):
    (kind,) = [k for k, (_, text, _) in pcf.event_types.items() if text.split(":")[0] == label]
    return kind


def test_paraver_trace_of_a_pipeline_holds_every_record_the_hmm_made(pipeline_run):
    run = pipeline_run
    readout, end = run.readout, run.readout["cycles"]
    timeline = Timeline.from_readout("gemm", readout, run.layout)
    prv, pcf, levels = paraver(timeline)

    assert prv.end_time == end and prv.time_unit == "ns"
    assert prv.applications == [[(THREADS + 1, 1)]]
    assert levels == {"THREAD": [f"thread{t}" for t in range(THREADS)] + ["gemm"]}
    assert pcf.options["UNITS"] == "NANOSEC"
    # What the formats have no field for is in the readme beside them.
    readme = paraver_readme(timeline)
    assert "one clock cycle" in readme and "read ns as cycles" in readme
    assert f"At {CLOCK_MHZ:g} MHz one cycle is {1000 / CLOCK_MHZ:g} ns." in readme
    assert "gemm-naive.prv" in readme and "dropped (missing from this trace): none" in readme
    # The hardware's codes are Paraver's state ids.
    assert {i: pcf.states[i] for i in range(4)} == dict(enumerate(THREAD_STATES))
    assert set(pcf.colors) == set(pcf.states)

    records = readout.traces["thread_states"]
    assert len(records) > 10 and run.state_records_dropped == 0
    for t in range(THREADS):
        expected = [(b, e, THREAD_STATES[code]) for b, e, code in spans(records, f"thread{t}", end)]
        assert state_names(prv, pcf, t + 1) == expected
    assert not state_names(prv, pcf, THREADS + 1)

    samples = readout.traces["samples"]
    stall = event_type(pcf, "stall_cycles")
    for t in range(THREADS):
        assert events_of(prv, t + 1, stall) == [
            (e, count) for _, e, count in periods(readout, samples, f"stall_cycles.thread{t}")]
    for name in ("ops", "bytes_read", "bytes_written"):
        assert events_of(prv, THREADS + 1, event_type(pcf, name)) == [
            (e, count) for _, e, count in periods(readout, samples, name)]
    job = event_type(pcf, "job")
    names = pcf.event_types[job][2]
    assert [(time, names[value]) for time, value in events_of(prv, THREADS + 1, job)] == [
        (r["timestamp"], r["events"][0]) for r in readout.traces["job"]]
    assert sorted(names.values()) == ["done", "start"]


def test_perfetto_trace_of_a_pipeline_holds_every_record_the_hmm_made(pipeline_run):
    run = pipeline_run
    readout, end = run.readout, run.readout["cycles"]
    timeline = Timeline.from_readout("gemm", readout, run.layout)
    trace = read_chrome(json.dumps(perfetto_trace(timeline, clock_mhz=CLOCK_MHZ)))

    assert trace.display_time_unit == "ns"
    assert trace.other["clock_mhz"] == CLOCK_MHZ and trace.other["end_cycle"] == end
    assert trace.process_names == {1: "gemm"}
    tids = {name: tid for (_, tid), name in trace.thread_names.items()}
    records = readout.traces["thread_states"]
    for t in range(THREADS):
        slices = [(name, ts, dur, args) for _, tid, name, ts, dur, args in trace.slices
                  if tid == tids[f"thread{t}"]]
        expected = spans(records, f"thread{t}", end)
        assert len(slices) == len(expected)
        for (name, ts, dur, args), (begin, stop, code) in zip(slices, expected):
            assert name == THREAD_STATES[code]
            assert ts == pytest.approx(begin / CLOCK_MHZ)
            assert dur == pytest.approx((stop - begin) / CLOCK_MHZ)
            assert args == {"begin_cycle": begin, "end_cycle": stop}

    samples = readout.traces["samples"]
    tracks = {(f"thread{t} stall_cycles", f"stall_cycles.thread{t}") for t in range(THREADS)}
    tracks |= {(name, name) for name in ("ops", "bytes_read", "bytes_written")}
    assert {name for _, name, _, _ in trace.counters} == {track for track, _ in tracks}
    for track, figure in tracks:
        points = [(ts, args) for _, name, ts, args in trace.counters if name == track]
        expected = periods(readout, samples, figure)
        assert len(points) == len(expected)
        for (ts, args), (begin, _, count) in zip(points, expected):
            assert ts == pytest.approx(begin / CLOCK_MHZ) and args == {"count": count}
    assert [(name, scope, ts) for _, _, scope, name, ts, _ in trace.instants] == [
        (f"job {r['events'][0]}", "g", pytest.approx(r["timestamp"] / CLOCK_MHZ))
        for r in readout.traces["job"]]


def test_window_filter_timeline_states_add_up_to_the_hmm_counters(window_run):
    """The FSM states and stream categories of the traces, over every cycle the HMM counted,
    equal what the HMM's own state profiler and stream counters counted."""
    readout, layout = window_run
    end = readout["cycles"]
    assert readout["timeline.dropped"] == 0
    timeline = Timeline.from_readout("dilation", readout, layout)
    prv, pcf, levels = paraver(timeline)
    fields = [field.name for field in layout.trace("timeline").payload]
    assert levels["THREAD"] == [*fields, "dilation"]
    chrome = read_chrome(json.dumps(perfetto_trace(timeline, clock_mhz=CLOCK_MHZ)))
    tids = {name: tid for (_, tid), name in chrome.thread_names.items()}
    expected_counts = {**readout.fsms(), **readout.streams()}
    for thread, field in enumerate(fields, 1):
        counted = {}
        for begin, stop, name in state_names(prv, pcf, thread):
            counted[name] = counted.get(name, 0) + stop - begin
        expected = {name: n for name, n in expected_counts[field].items() if n}
        assert counted == expected, field
        slices = {}
        for _, tid, name, ts, dur, _ in chrome.slices:
            if tid == tids[field]:
                slices[name] = slices.get(name, 0) + dur
        assert {name: round(us * CLOCK_MHZ) for name, us in slices.items()} == expected, field
        assert sum(counted.values()) == end
    assert {name for _, _, _, name, _, _ in chrome.instants} == {"job start", "job done"}


def test_the_readers_reject_what_the_formats_do_not_allow(pipeline_run):
    run = pipeline_run
    files = paraver_files(Timeline.from_readout("gemm", run.readout, run.layout),
                          created=time.localtime(0))
    prv = files[".prv"]
    header, *records = prv.splitlines()
    assert read_prv(prv).states
    for broken in (prv.replace("_ns:1(1)", "_ns:2(1)", 1),                 # node count
                   "\n".join([header, records[-1], *records[:-1]]) + "\n",  # unsorted
                   prv.replace(":1:1:1:", ":1:1:9:", 1),                    # no such thread
                   prv + "3:0:1:1:1:0:0:1:1:1:0:10:20:8\n"):                # not ours
        with pytest.raises(FormatError):
            read_prv(broken)
    with pytest.raises(FormatError):
        read_pcf("STATES\n0 idle\nSTATES_COLOR\n0 {1,2}\n")
    with pytest.raises(FormatError):
        read_pcf("# a comment older Paraver grammars reject\nSTATES\n0 idle\n")
    with pytest.raises(FormatError):
        read_row("# a comment\nLEVEL THREAD SIZE 1\na\n")
    with pytest.raises(FormatError):
        read_row("LEVEL THREAD SIZE 3\na\nb\n")
    with pytest.raises(FormatError):
        read_chrome('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0}]}')
