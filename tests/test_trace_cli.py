# amaranth: UnusedElaboratable=no
"""``hwgen run`` and ``hwgen sim`` with ``--paraver`` and ``--perfetto``: the files parse with
the strict readers and agree with the figures the command reports; bad options fail in one line
before anything is written."""

import json

import pytest

from hwgen.cli.main import main
from hwgen.sim import STATE_NAMES
from trace_readers import read_chrome, read_pcf, read_prv, read_row


def test_run_traces_agree_with_the_reported_figures(tmp_path, capsys):
    folder, perfetto, report = tmp_path / "paraver", tmp_path / "gemm.json", tmp_path / "run.json"
    assert main(["run", "gemm", "--variant", "naive", "--threads", "3", "--dim", "4",
                 "--sample-period", "32", "--clock-mhz", "200", "--paraver", str(folder),
                 "--perfetto", str(perfetto), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    figures = json.loads(report.read_text())
    names = ["gemm-naive.pcf", "gemm-naive.prv", "gemm-naive.readme.txt", "gemm-naive.row"]
    assert sorted(p.name for p in folder.iterdir()) == names
    assert figures["trace_files"] == sorted([str(folder / n) for n in names] + [str(perfetto)])
    assert "wrote " + str(folder / "gemm-naive.prv") in out
    assert figures["state_records_dropped"] == figures["samples_dropped"] == 0

    prv = read_prv((folder / "gemm-naive.prv").read_text())
    pcf = read_pcf((folder / "gemm-naive.pcf").read_text())
    levels = read_row((folder / "gemm-naive.row").read_text())
    assert levels["THREAD"][:3] == ["thread0", "thread1", "thread2"]
    # The job's share of each state, from the state records inside the job's cycles.
    first, cycles = figures["job_start_cycle"], figures["cycles"]
    for t, thread in enumerate(figures["threads"]):
        inside = {name: 0 for name in STATE_NAMES}
        for _, _, _, row, begin, end, state in prv.states:
            if row == t + 1:
                inside[pcf.states[state]] += max(0, min(end, first + cycles) - max(begin, first))
        for name in STATE_NAMES:
            assert 100 * inside[name] / cycles == pytest.approx(thread[f"{name}_percent"]), name
    # The job markers bound the job.
    (job,) = [k for k, (_, label, _) in pcf.event_types.items() if label == "job"]
    marks = {pcf.event_types[job][2][v]: time for *_, time, pairs in prv.events
             for k, v in pairs if k == job}
    assert marks == {"start": first - 1, "done": first + cycles - 1}

    trace = read_chrome(perfetto.read_text())
    assert trace.other["clock_mhz"] == 200
    done = [ts for *_, name, ts, _ in trace.instants if name == "job done"]
    assert done == [pytest.approx((first + cycles - 1) / 200)]
    stall = sum(args["count"] for _, name, _, args in trace.counters
                if name == "thread1 stall_cycles")
    assert stall == figures["threads"][1]["stall_cycles"]


def test_run_reports_records_a_slow_host_dropped(tmp_path, capsys):
    report = tmp_path / "pi.json"
    # Written and flagged, and the command exits 3: the trace cannot be trusted as it stands.
    assert main(["run", "pi", "--steps", "16", "--threads", "4", "--trace-depth", "4",
                 "--drain-interval", "0", "--json", str(report)]) == 3
    figures = json.loads(report.read_text())
    assert figures["state_records"] == 4 and figures["state_records_dropped"] > 0
    assert figures["host"]["drain_interval_cycles"] is None
    captured = capsys.readouterr()
    assert "DROPPED by the HMM" in captured.out
    assert "hwgen: suspect measurement:" in captured.err and "dropped" in captured.err


def test_sim_traces_fsm_states_and_stream_categories(tmp_path, capsys):
    folder, perfetto, report = tmp_path / "pv", tmp_path / "dilation.json", tmp_path / "sim.json"
    assert main(["sim", "dilation", "--width", "8", "--height", "6", "--buffer", "line",
                 "--mem-latency", "3", "--paraver", str(folder), "--perfetto", str(perfetto),
                 "--json", str(report), "-q"]) == 0
    assert capsys.readouterr().out == ""
    figures = json.loads(report.read_text())
    assert figures["timeline"]["records_dropped"] == 0 and figures["timeline"]["records"] > 3
    stem = "dilation_3x3_rect_u1_line_p8_8x6"
    prv = read_prv((folder / f"{stem}.prv").read_text())
    pcf = read_pcf((folder / f"{stem}.pcf").read_text())
    levels = read_row((folder / f"{stem}.row").read_text())
    rows = levels["THREAD"]
    assert rows[0] == "fsm.ctrl" and {"stream.rd_req", "stream.wr_req"} <= set(rows)
    assert {"IDLE", "RUN", "DONE", "transferring", "blocking", "idle"} <= set(pcf.states.values())
    run_cycles = sum(end - begin for *_, row, begin, end, state in prv.states
                     if row == 1 and pcf.states[state] == "RUN")
    assert run_cycles == figures["hmm"]["fsms"]["fsm.ctrl"]["RUN"]
    trace = read_chrome(perfetto.read_text())
    assert set(trace.thread_names.values()) == set(rows[:-1])


def test_sim_without_trace_options_stays_as_it_was(tmp_path):
    report = tmp_path / "sim.json"
    assert main(["sim", "dilation", "--width", "8", "--height", "6", "--json", str(report),
                 "-q"]) == 0
    figures = json.loads(report.read_text())
    assert "timeline" not in figures
    assert "timeline" not in figures["hmm"]["traces"] and "job" not in figures["hmm"]["traces"]


@pytest.mark.parametrize("argv, message", [
    (["run", "pi", "--clock-mhz", "0"], "--clock-mhz must be a positive number"),
    (["run", "pi", "--trace-depth", "100"], "--trace-depth must be a power of two, not 100"),
    (["run", "pi", "--sample-period", "0"], "--sample-period must be a positive integer"),
    (["run", "pi", "--drain-interval", "-1"], "--drain-interval must be an integer >= 0"),
    (["run", "pi", "--perfetto", "{tmp}/file/x.json"], "--perfetto: "),
    (["run", "pi", "--perfetto", "{tmp}"], "is a folder, not a file"),
    (["run", "pi", "--paraver", "{tmp}/file"], "--paraver: "),
    (["run", "pi", "--paraver", "{tmp}/file/deeper"], "is not a folder, so"),
    (["sim", "dilation", "--paraver", "{tmp}/out", "--no-instrument"], "drop --no-instrument"),
    (["sim", "dilation", "--perfetto", "{tmp}/t.json", "--timeline-depth", "5"],
     "--timeline-depth must be a power of two, not 5"),
])
def test_bad_trace_options_fail_in_one_line_and_write_nothing(argv, message, tmp_path, capsys):
    (tmp_path / "file").write_text("not a folder\n")
    before = sorted(tmp_path.rglob("*"))
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert main([*argv, "--json", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: ") and message in err and err.count("\n") == 1
    assert sorted(tmp_path.rglob("*")) == before
