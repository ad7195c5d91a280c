"""The window filter's HMM: every value it reports against an observer that counts the same
events from the PE's signals, and the PE's behaviour with and without it."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from hwgen.kernels import WindowFilter
from hwgen.instrument import STREAM_CATEGORIES
from hwgen.sim import CycleData, MemoryModel, instrument_pe, run_window_filter

RANDOM_MEMORY = MemoryModel(latency_cycles=3, jitter_cycles=4, backpressure=0.25, seed=7)


def image(width, height, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (height, width))


def reference(img, pe):
    full = ndimage.grey_dilation(img, footprint=pe.mask, mode="nearest")
    n, m = pe.rows, pe.cols
    return full[n // 2:n // 2 + pe.out_height, m // 2:m // 2 + pe.out_width]


class Observer:
    """Samples the PE's ports, its state machine and its FIFO's write side in every cycle, and the
    HMM port to see when the host freezes it."""

    def __init__(self, inst):
        pe = inst.design
        view = inst.view
        fifo = next(s for s in view.streams if s.name == "out_fifo.w")
        self.pe = pe
        self.signals = {
            "busy": pe.ctrl.busy,
            "rd_valid": pe.rd_req.valid, "rd_ready": pe.rd_req.ready,
            "rd_mask": pe.rd_req.payload.mask,
            "rsp_valid": pe.rd_rsp.valid, "rsp_ready": pe.rd_rsp.ready,
            "wr_valid": pe.wr_req.valid, "wr_ready": pe.wr_req.ready,
            "wr_mask": pe.wr_req.payload.mask,
            "fifo_valid": fifo.valid, "fifo_ready": fifo.ready,
            "state": view.fsms[0].signal,
            "hmm_write": inst.hmm.write, "hmm_addr": inst.hmm.addr, "hmm_wdata": inst.hmm.wdata,
        }
        self.rows = []

    async def watch(self, ctx):
        names = list(self.signals)
        async for _, _, *values in ctx.tick().sample(*self.signals.values()):
            self.rows.append(dict(zip(names, values)))

    def counted(self):
        """The cycles the HMM counted: from reset up to the cycle the host wrote freeze."""
        for cycle, row in enumerate(self.rows):
            if row["hmm_write"] and row["hmm_addr"] == 0 and row["hmm_wdata"] & 4:
                return self.rows[:cycle + 1]
        raise AssertionError("the host never froze the HMM")

    def values(self):
        """Every value of the PE's HMM, as the observer counts them (before saturation)."""
        rows = self.counted()
        pe = self.pe
        lanes = lambda mask: bin(mask).count("1")   # noqa: E731
        rd = [r for r in rows if r["rd_valid"] and r["rd_ready"]]
        wr = [r for r in rows if r["wr_valid"] and r["wr_ready"]]
        values = {
            "cycles": len(rows),
            "busy_cycles": sum(r["busy"] for r in rows),
            "bytes_read": sum(lanes(r["rd_mask"]) for r in rd) * pe.rd_beat.element_bytes,
            "bytes_written": sum(lanes(r["wr_mask"]) for r in wr) * pe.wr_beat.element_bytes,
            "ops": sum(lanes(r["wr_mask"]) for r in wr) * (pe.active - 1),
        }
        for stream, prefix in (("rd_req", "rd"), ("rd_rsp", "rsp"), ("wr_req", "wr"),
                               ("out_fifo.w", "fifo")):
            v, r = f"{prefix}_valid", f"{prefix}_ready"
            values[f"stream.{stream}.transferring"] = sum(x[v] and x[r] for x in rows)
            values[f"stream.{stream}.blocking"] = sum(x[v] and not x[r] for x in rows)
            values[f"stream.{stream}.idle"] = sum(not x[v] for x in rows)
        for index, state in enumerate(["IDLE", "RUN", "DONE"]):
            values[f"fsm.ctrl.{state}"] = sum(r["state"] == index for r in rows)
        # Latencies of in-order reads, from the full run (requests before the freeze may be
        # answered after it: those are not counted).
        requested, latencies, wait = [], [], 0
        for cycle, r in enumerate(rows):
            response = r["rsp_valid"] and r["rsp_ready"]
            if requested and not response:
                wait += 1
            if response:
                latencies.append(cycle - requested.pop(0))
            if r["rd_valid"] and r["rd_ready"]:
                requested.append(cycle)
        values.update({
            "rd_latency.count": len(latencies), "rd_latency.sum": sum(latencies),
            "rd_latency.min": min(latencies), "rd_latency.max": max(latencies),
            "rd_latency.wait_cycles": wait, "rd_latency.untracked": 0,
        })
        for b in range(32):
            values[f"rd_latency.bins.{b}"] = latencies.count(b)
        values["rd_latency.bins.>=32"] = sum(latency >= 32 for latency in latencies)
        return values


def check_every_value(readout, layout, expected):
    """Every value the HMM reported equals the observer's, saturated to its width (a field that
    scales a count saturates at that count's all ones, scaled)."""
    widths = {f.name: (f.bits, f.overflow, f.scale) for f in layout.fields}
    for table in layout.tables:
        widths.update({name: (table.bits, True, 1) for name in table.entry_names})
    assert set(readout.values) == set(expected)
    for name, true in expected.items():
        bits, counts, scale = widths[name]
        if counts:
            top = scale * ((1 << bits) - 1)
            assert (readout.values[name], readout.overflow[name]) == (min(true, top), true > top), \
                name
        else:
            assert readout.values[name] == true, name


CASES = [
    ("none", 1, 12, MemoryModel()),
    ("smart", 1, 12, MemoryModel()),
    ("line", 1, 12, MemoryModel()),
    ("none", 2, 12, RANDOM_MEMORY),
    ("smart", 2, 11, RANDOM_MEMORY),
    ("line", 2, 12, RANDOM_MEMORY),
]


@pytest.mark.parametrize("buffer, unroll, height, memory", CASES)
def test_every_hmm_value_matches_the_observer_and_the_pe_is_undisturbed(buffer, unroll, height,
                                                                       memory):
    pe = WindowFilter("max", (3, 3), width=16, height=height, unroll=unroll, buffer=buffer)
    img = image(16, height)
    bare = run_window_filter(pe, img, memory=memory, instrument=False)

    inst = instrument_pe(pe)
    observer = Observer(inst)
    run = run_window_filter(inst, img, memory=memory, monitors=[observer.watch])

    assert np.array_equal(run.image, bare.image)
    assert np.array_equal(run.image, reference(img, pe))
    assert run.figures.cycles == bare.figures.cycles
    assert run.figures.measured_by == "hmm"
    check_every_value(run.figures.hmm, inst.layout, observer.values())
    # The figures the window-filter issue defined keep their meaning.
    for key in ("outputs", "bytes_read", "bytes_written", "ops"):
        assert getattr(run.figures, key) == getattr(bare.figures, key), key


@given(buffer=st.sampled_from(["none", "smart", "line"]), rows=st.integers(1, 3),
       cols=st.integers(1, 4), mask=st.sampled_from(["rect", "cross"]), unroll=st.integers(1, 2),
       pipeline=st.booleans(), seed=st.integers(0, 1000))
@settings(max_examples=5, deadline=None)
def test_hmm_values_match_the_observer_across_window_shapes(buffer, rows, cols, mask, unroll,
                                                           pipeline, seed):
    pe = WindowFilter("min", (rows, cols), mask=mask, width=8, height=6, unroll=unroll,
                      buffer=buffer, pipeline=pipeline)
    inst = instrument_pe(pe)
    observer = Observer(inst)
    memory = MemoryModel(latency_cycles=2, jitter_cycles=2, backpressure=0.2, seed=seed)
    run = run_window_filter(inst, image(8, 6, seed), memory=memory, monitors=[observer.watch])
    check_every_value(run.figures.hmm, inst.layout, observer.values())


def test_narrow_counters_saturate_with_their_flags_against_the_observer():
    pe = WindowFilter("max", (3, 3), width=16, height=12, buffer="smart")
    inst = instrument_pe(pe, counter_bits=7)
    observer = Observer(inst)
    run = run_window_filter(inst, image(16, 12), memory=RANDOM_MEMORY, monitors=[observer.watch])
    expected = observer.values()
    check_every_value(run.figures.hmm, inst.layout, expected)
    assert {"cycles", "busy_cycles", "bytes_read", "fsm.ctrl.RUN"} <= set(run.figures.saturated)
    assert "fsm.ctrl.IDLE" not in run.figures.saturated


def throughput(pe, img, bandwidth):
    return run_window_filter(pe, img, memory=MemoryModel(bandwidth_bytes_per_cycle=bandwidth),
                             instrument=True).figures


@pytest.mark.parametrize("buffer", ["smart", "line"])
def test_bandwidth_below_demand_throttles_ops_per_cycle_to_ci_times_bandwidth(buffer):
    pe = WindowFilter("max", (3, 3), width=48, height=24, buffer=buffer)
    img = image(48, 24)
    own = throughput(pe, img, None)
    demand = (own.bytes_read + own.bytes_written) / own.cycles
    for fraction in (0.3, 0.6, 1.5):
        bandwidth = fraction * demand
        figures = throughput(pe, img, bandwidth)
        roof = min(own.ops_per_cycle, figures.ci * bandwidth)
        assert figures.ops_per_cycle == pytest.approx(roof, rel=0.02), fraction
        if fraction < 1:
            assert figures.ops_per_cycle < 0.7 * own.ops_per_cycle


def test_vcd_holds_the_hmm_signals_and_gtkwave_converts_it(tmp_path):
    if shutil.which("vcd2fst") is None:
        pytest.skip("GTKWave's vcd2fst is not installed")
    vcd = tmp_path / "run.vcd"
    pe = WindowFilter("max", (3, 3), width=8, height=6, buffer="line")
    run_window_filter(pe, image(8, 6), vcd=str(vcd))
    text = vcd.read_text()
    assert "$scope module hmm $end" in text
    for name in ("counts__low0", "rd_latency__latency", "fsm__ctrl__state", "port__rdata"):
        assert f" {name} $end" in text
    fst = tmp_path / "run.fst"
    done = subprocess.run(["vcd2fst", str(vcd), str(fst)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert fst.stat().st_size > 0


def test_cycle_data_round_trips_through_json():
    pe = WindowFilter("max", (3, 3), width=8, height=6, buffer="none")
    figures = run_window_filter(pe, image(8, 6), memory=RANDOM_MEMORY).figures
    again = CycleData.from_json(json.loads(json.dumps(figures.to_json())))
    assert again == figures
    bare = run_window_filter(pe, image(8, 6), instrument=False).figures
    assert CycleData.from_json(json.loads(json.dumps(bare.to_json()))) == bare
    assert "hmm" not in bare.to_json() and bare.hmm is None


def timeline_records(inst, rows):
    """The timeline records of ``rows`` (the observer's samples of every FSM state and stream
    handshake): a record in the first cycle and in every cycle where any of them changed."""
    fields = [f"fsm.{fsm.name}" for fsm in inst.view.fsms]
    fields += [f"stream.{s.name}" for s in inst.view.streams]
    records, last = [], None
    for cycle, row in enumerate(rows):
        values = [row[f"fsm.{fsm.name}"] for fsm in inst.view.fsms]
        for s in inst.view.streams:
            valid, ready = row[f"{s.name}.valid"], row[f"{s.name}.ready"]
            category = "transferring" if valid and ready else "blocking" if valid else "idle"
            values.append(STREAM_CATEGORIES.index(category))
        if values != last:
            records.append({"timestamp": cycle, "events": ["change"], **dict(zip(fields, values))})
            last = values
    return records


@pytest.mark.parametrize("depth, drain_interval", [(128, 4), (16, None), (16, 60)])
def test_timeline_records_every_state_and_stream_category_change(depth, drain_interval):
    pe = WindowFilter("max", (3, 3), width=8, height=6, buffer="line")
    inst = instrument_pe(pe, timeline_depth=depth)
    observer = Observer(inst)
    observer.signals.update({f"fsm.{fsm.name}": fsm.signal for fsm in inst.view.fsms})
    for s in inst.view.streams:
        observer.signals.update({f"{s.name}.valid": s.valid, f"{s.name}.ready": s.ready})
    run = run_window_filter(inst, image(8, 6), memory=RANDOM_MEMORY, monitors=[observer.watch],
                            drain_interval_cycles=drain_interval)
    readout = run.figures.hmm
    observed = timeline_records(inst, observer.counted())
    recorded, dropped = readout.traces["timeline"], readout["timeline.dropped"]
    assert len(observed) - len(recorded) == dropped
    if drain_interval is None:
        assert recorded == observed[:depth] and dropped > 0
    elif depth == 128:
        assert recorded == observed and dropped == 0
    else:
        assert dropped > 0
        remaining = iter(observed)
        assert all(any(record == candidate for candidate in remaining) for record in recorded)
    trace = inst.layout.trace("timeline")
    assert dict(trace.labels)["fsm.ctrl"] == ("IDLE", "RUN", "DONE")
    assert dict(trace.labels)["stream.rd_req"] == STREAM_CATEGORIES
    start = next(i for i, row in enumerate(observer.rows) if row["busy"]) - 1
    assert readout.traces["job"][0] == {"timestamp": start, "events": ["start"]}
    # Recording the timeline leaves the figures as they are.
    check_every_value(readout, inst.layout, {**observer.values(), **{
        name: readout.values[name] for name in readout.values
        if name.startswith(("timeline.", "job."))}})
