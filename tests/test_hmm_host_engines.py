"""The HMM host of the compiled engine, which runs in C++, against the Python host in Amaranth's
simulator: the same bus cycles, so the same records, drops and values, and the same errors."""

import numpy as np
import pytest

from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import PiJob
from hwgen.sim import (HMMError, HostModel, MemoryModel, instrument_pe, instrument_pipeline,
                       run_pe, run_threads, run_window_filter)
from hwgen.sim.hmm_host import decode_records



def _pi_run(engine):
    job = PiJob(steps=120, threads=4)
    storage, params = job.memory()
    # Shallow buffers drained every 64 cycles: records are taken while the job runs and some
    # are dropped.
    design = instrument_pipeline(Pipeline(job.program), sample_period=8, state_depth=16,
                                 sample_depth=8)
    run = run_threads(design, storage, params=params, engine=engine,
                      host=HostModel(launch_delay_cycles=3, drain_interval_cycles=64),
                      memory=MemoryModel(latency_cycles=4, jitter_cycles=3, seed=2))
    assert job.matches(storage)
    return design, run


def test_a_pipeline_drained_every_64_cycles_reads_the_same_records_in_both_engines():
    design, a = _pi_run("pysim")
    _, b = _pi_run("compiled")
    drained = [design.layout.trace(name) for name in ("thread_states", "samples")]
    assert all(trace.mode == "stop" for trace in drained)
    assert (a.engine["name"], b.engine["name"]) == ("pysim", "compiled")
    # Values, tables, and every record drained or read at the end, in order.
    assert a.readout == b.readout
    assert a.to_json() == b.to_json()
    # The drains took more records off each buffer than it holds: they ran while the job did.
    for trace in drained:
        assert len(b.readout.traces[trace.name]) > trace.depth
    assert (b.samples_dropped, b.state_records_dropped) == (a.samples_dropped,
                                                            a.state_records_dropped)


def _window_pe():
    return WindowFilter("max", (3, 3), width=12, height=7, unroll=2, buffer="line")


def test_a_window_filter_with_the_default_hmm_reads_the_same_in_both_engines():
    image = np.random.default_rng(3).integers(0, 256, (7, 12))
    memory = MemoryModel(bandwidth_bytes_per_cycle=2.0, latency_cycles=3, backpressure=0.1,
                         seed=4)
    a, b = (run_window_filter(_window_pe(), image, memory=memory, engine=engine)
            for engine in ("pysim", "compiled"))
    assert (a.image == b.image).all()
    assert a.figures.hmm == b.figures.hmm and a.figures == b.figures
    assert a.figures.hmm.tables and a.figures.hmm.values


# Amaranth's simulator leaves the other testbench suspended when one raises, and says so.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("max_cycles, drain_interval", [(0, None), (40, None), (40, 9)])
def test_a_host_that_gives_up_says_the_same_in_both_engines(max_cycles, drain_interval):
    image = np.random.default_rng(3).integers(0, 256, (7, 12))
    raised = {}
    for engine in ("pysim", "compiled"):
        storage = np.zeros(12 * 7 + 10 * 5, dtype=np.uint64)
        storage[:84] = image.ravel()
        with pytest.raises((HMMError, RuntimeError)) as caught:
            run_pe(instrument_pe(_window_pe()), storage, params={"src_base": 0, "dst_base": 84},
                   max_cycles=max_cycles, drain_interval_cycles=drain_interval, engine=engine)
        raised[engine] = (type(caught.value), str(caught.value))
    assert raised["pysim"] == raised["compiled"]


@pytest.mark.parametrize("word_bits", [32, 64])
def test_records_decoded_in_bulk_equal_those_decoded_one_by_one(word_bits):
    job = PiJob(steps=10, threads=3)
    pipeline = instrument_pipeline(Pipeline(job.program), word_bits=word_bits).layout
    window = instrument_pe(_window_pe(), timeline_depth=16, word_bits=word_bits).layout
    rng = np.random.default_rng(word_bits)
    traces = [*pipeline.traces, *window.traces]
    assert any(t.payload for t in traces) and any(t.entry_words(word_bits) > 1 for t in traces)
    for trace in traces:
        n = trace.entry_words(word_bits)
        words = rng.integers(0, 1 << word_bits, size=20 * n, dtype=np.uint64)
        words &= np.uint64((1 << word_bits) - 1)
        expected = [trace.decode_record([int(w) for w in words[i:i + n]], word_bits)
                    for i in range(0, len(words), n)]
        assert decode_records(trace, words, word_bits) == expected
        assert decode_records(trace, words.tolist(), word_bits) == expected


def test_draining_reads_the_hmm_without_a_second_evaluation_per_cycle(monkeypatch):
    # The model's HMM port answers from registers, so the C++ host takes each word right after
    # the edge without evaluating the design again; a waveform samples after every edge.
    from hwgen.sim import compiled

    counts, run = [], compiled._run

    def counted(sim, *args, **kwargs):
        readout = run(sim, *args, **kwargs)
        counts.append((sim.lib.hw_edge_evaluations(sim.handle), sim.lib.hw_cycle(sim.handle)))
        return readout

    monkeypatch.setattr(compiled, "_run", counted)
    _, drained = _pi_run("compiled")
    assert len(drained.readout.traces["samples"]) > 8     # words were read while it ran
    assert counts[-1][0] == 0 and counts[-1][1] > 0
