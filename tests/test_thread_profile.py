# amaranth: UnusedElaboratable=no
"""The hardware profile of a pipeline (hwgen.instrument.pipeline_probes, drained through the HMM port
by the host model) against an observer that samples the pipeline's probe points and memory ports
in the testbench every cycle: every state record, every sample and every total must be what the
observer saw, and records the host could not drain in time must be counted exactly."""

import pytest

from hwgen.instrument import THREAD_STATES, attach
from hwgen.kernels.pipeline import Pipeline, ThreadState
from hwgen.kernels.programs import gemm, pi_series, pi_step
from hwgen.sim import HostModel, MemoryModel, instrument_pipeline, run_threads


class Observer:
    """Per cycle from reset: thread states, stalls, ops, bytes moved, busy/start/done."""

    def __init__(self, pe):
        self.pe = pe
        self.cycles = []

    async def monitor(self, ctx):
        pe = self.pe
        rd, wr = pe.rd_req, pe.wr_req
        element_bytes = pe.rd_beat.element_bytes
        async for _, _, states, stall, ops, busy, start, done, rv, rr, rm, wv, wr_, wm in \
                ctx.tick().sample(pe.thread_state.as_value(), pe.stall, pe.ops_performed,
                                  pe.ctrl.busy, pe.ctrl.start, pe.ctrl.done, rd.valid, rd.ready,
                                  rd.payload.mask, wr.valid, wr.ready, wr.payload.mask):
            self.cycles.append({
                "states": tuple(states >> (2 * t) & 3 for t in range(pe.threads)),
                "stall": [stall >> t & 1 for t in range(pe.threads)],
                "ops": ops, "busy": busy, "start": start, "done": done,
                "bytes_read": bin(rm).count("1") * element_bytes if rv and rr else 0,
                "bytes_written": bin(wm).count("1") * element_bytes if wv and wr_ else 0,
            })

    def totals(self, end):
        """Running totals of cycles ``0 .. end - 1``, named as the HMM names them."""
        seen = self.cycles[:end]
        totals = {f"stall_cycles.thread{t}": sum(c["stall"][t] for c in seen)
                  for t in range(self.pe.threads)}
        for name in ("ops", "bytes_read", "bytes_written"):
            totals[name] = sum(c[name] for c in seen)
        totals["busy_cycles"] = sum(c["busy"] for c in seen)
        return totals

    def state_records(self, end):
        records, last = [], None
        for cycle, c in enumerate(self.cycles[:end]):
            if c["states"] != last:
                records.append({"timestamp": cycle, "events": ["change"],
                                **{f"thread{t}": s for t, s in enumerate(c["states"])}})
                last = c["states"]
        return records

    def samples(self, end, period):
        """A sample in every cycle ``period - 1``, ``2 * period - 1``, ... before ``end``, holding
        the totals of the cycles before it."""
        records = []
        for cycle in range(period - 1, end, period):
            totals = self.totals(cycle)
            del totals["busy_cycles"]
            record = {"timestamp": cycle, "events": ["sample"]}
            for name, value in totals.items():
                record[name] = value
                record[f"{name}.overflow"] = False
            records.append(record)
        return records


def gemm_job(variant, dim=4, threads=4):
    n = dim * dim
    storage = [(i * 5 + 1) % 97 for i in range(2 * n)] + [0] * n
    return (Pipeline(gemm(variant, dim=dim, threads=threads, lanes=2)), storage,
            {"a_base": 0, "b_base": n, "c_base": 2 * n})


def profile(pe, storage, params, *, host=HostModel(), memory=MemoryModel(latency_cycles=3),
            **options):
    observer = Observer(pe)
    run = run_threads(instrument_pipeline(pe, **options), storage, params=params, host=host,
                      memory=memory, monitors=[observer.monitor])
    return run, observer


def subsequence_with_exact_drops(recorded, observed, dropped):
    """``recorded`` is ``observed`` with exactly ``dropped`` records missing, order kept."""
    assert len(observed) - len(recorded) == dropped
    remaining = iter(observed)
    assert all(any(record == candidate for candidate in remaining) for record in recorded)


@pytest.mark.parametrize("variant", ["naive", "vector"])
def test_every_state_change_and_sample_is_what_the_observer_saw(variant):
    pe, storage, params = gemm_job(variant)
    run, observer = profile(pe, storage, params, sample_period=16)
    readout = run.readout
    end = readout["cycles"]                      # cycles the HMM counted, up to the freeze
    assert readout.traces["thread_states"] == observer.state_records(end)
    assert len(readout.traces["thread_states"]) > 2 * pe.threads
    assert readout.traces["samples"] == observer.samples(end, 16)
    assert run.state_records_dropped == run.samples_dropped == 0
    totals = observer.totals(end)
    for name, value in totals.items():
        assert readout[name] == value, name
    start = next(i for i, c in enumerate(observer.cycles) if c["start"])
    done = next(i for i, c in enumerate(observer.cycles) if c["done"])
    assert readout.traces["job"] == [{"timestamp": start, "events": ["start"]},
                                     {"timestamp": done, "events": ["done"]}]

    # The job's view: cycle 0 is the first busy cycle.
    busy = [c for c in observer.cycles if c["busy"]]
    assert run.job_start_cycle == start + 1 and run.cycles == len(busy) == done - start
    expected = [[sum(c["states"][t] == s for c in busy) for s in range(4)]
                for t in range(pe.threads)]
    assert [list(counts) for counts in run.timeline.state_cycles()] == expected
    assert [list(counts) for counts in run.state_cycles] == expected     # the state profiles
    assert run.stall_cycles == tuple(sum(c["stall"][t] for c in busy) for t in range(pe.threads))
    assert (run.ops, run.bytes_read, run.bytes_written) == (
        sum(c["ops"] for c in busy), sum(c["bytes_read"] for c in busy),
        sum(c["bytes_written"] for c in busy))


def test_an_undrained_small_buffer_keeps_the_first_records_and_counts_the_rest():
    pe = Pipeline(pi_series(threads=3))
    run, observer = profile(pe, [0], {"steps": 12, "step": pi_step(12), "result": 0},
                            host=HostModel(launch_delay_cycles=7, drain_interval_cycles=None),
                            sample_period=8, state_depth=8, sample_depth=4)
    end = run.readout["cycles"]
    states, samples = observer.state_records(end), observer.samples(end, 8)
    assert run.readout.traces["thread_states"] == states[:8]
    assert run.state_records_dropped == len(states) - 8 > 0
    assert run.readout.traces["samples"] == samples[:4]
    assert run.samples_dropped == len(samples) - 4 > 0
    # The totals and the state profiles do not depend on the traces.
    assert run.readout["ops"] == observer.totals(end)["ops"]
    busy = [c for c in observer.cycles if c["busy"]]
    assert [list(counts) for counts in run.state_cycles] == [
        [sum(c["states"][t] == s for c in busy) for s in range(4)] for t in range(3)]


def test_slow_draining_loses_only_counted_records():
    pe, storage, params = gemm_job("naive", threads=3)
    run, observer = profile(pe, storage, params,
                            host=HostModel(drain_interval_cycles=150), state_depth=16)
    end = run.readout["cycles"]
    assert run.state_records_dropped > 0
    subsequence_with_exact_drops(run.readout.traces["thread_states"],
                                 observer.state_records(end), run.state_records_dropped)
    assert run.samples_dropped == 0
    assert run.readout.traces["samples"] == observer.samples(end, 64)


@pytest.mark.parametrize("variant", ["naive", "vector"])
def test_the_minimal_preset_measures_what_the_observer_saw_with_less_hardware(variant):
    pe, storage, params = gemm_job(variant)
    run, observer = profile(pe, storage, params, probes="minimal")
    readout = run.readout
    end = readout["cycles"]
    assert readout.traces["thread_states"] == observer.state_records(end)
    assert set(readout.traces) == {"job", "thread_states"} and not readout.tables
    busy = [c for c in observer.cycles if c["busy"]]
    # Without a busy-cycle counter the job's cycles come from its start and end records.
    assert run.cycles == len(busy) > 0
    # Without state profiles, the cycles per state come from the drained records.
    assert [list(counts) for counts in run.state_cycles] == [
        [sum(c["states"][t] == s for c in busy) for s in range(4)] for t in range(pe.threads)]
    # Not measured is not zero.
    assert (run.ops, run.bytes_read, run.bytes_written, run.ops_per_cycle, run.ci) == (None,) * 5
    assert run.stall_cycles == (None,) * pe.threads
    assert run.sample_period_cycles is None and run.samples_dropped is None
    figures = run.to_json()
    assert figures["threads"][0]["stall_cycles"] is None and figures["ops_per_cycle"] is None


def test_the_minimal_preset_has_no_state_cycles_once_a_record_is_dropped():
    pe, storage, params = gemm_job("naive", threads=3)
    run, observer = profile(pe, storage, params, probes="minimal",
                            host=HostModel(drain_interval_cycles=150), state_depth=16)
    assert run.state_records_dropped > 0
    subsequence_with_exact_drops(run.readout.traces["thread_states"],
                                 observer.state_records(run.readout["cycles"]),
                                 run.state_records_dropped)
    assert run.state_cycles == (None,) * 3
    assert all(value is None for value in run.state_percent()[0].values())


def test_the_presets_grow_and_minimal_snapshots_only_the_traces_counts():
    pe, _, _ = gemm_job("naive")
    layouts = {p: instrument_pipeline(pe, probes=p).layout for p in ("minimal", "default")}
    names = {p: {f.name for f in layout.fields} for p, layout in layouts.items()}
    assert names["minimal"] < names["default"]
    assert layouts["minimal"].details["snapshot"] == "traces"
    assert layouts["default"].details["snapshot"] == "all"
    with pytest.raises(ValueError, match="probes must be one of minimal, default, full"):
        instrument_pipeline(pe, probes="tiny")


def test_run_threads_needs_the_pipeline_profile():
    pe, storage, params = gemm_job("naive")
    with pytest.raises(ValueError, match="pipeline_probes"):
        run_threads(attach(pe), storage, params=params)


def test_the_recorder_names_the_pipeline_s_state_codes():
    assert {state.value: state.name.lower() for state in ThreadState} == dict(
        enumerate(THREAD_STATES))
