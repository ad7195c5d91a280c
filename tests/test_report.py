"""`hwgen report` and `--report`: the page shows what the JSON holds, n/a for what is undefined,
loads nothing, and its figures stay readable (distinct colours, names that do not overlap).
The pages are read back with an HTML parser (tests/report_pages.py); tests/test_report_browser.py
opens them in Chromium."""

import json
import math
import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from hwgen.cli.main import main
from hwgen.report.figures import state_colours, state_pie, thread_timeline, wrap_name
from hwgen.traces.paraver import STATE_COLORS

from report_pages import ReportPage

SIM = ["sim", "dilation", "--buffer", "line", "--unroll", "2", "--width", "32", "--height", "8",
       "--mem-bandwidth", "1.5", "--mem-latency", "2", "--mem-jitter", "3"]
RUN = ["run", "gemm", "--variant", "naive", "--threads", "3", "--dim", "4"]


def _command_files(tmp_path_factory, argv):
    """``(JSON, page)`` that the command ``argv`` wrote with ``--json`` and ``--report``."""
    folder = tmp_path_factory.mktemp(argv[0])
    json_path, page = folder / f"{argv[0]}.json", folder / f"{argv[0]}-option.html"
    assert main([*argv, "--json", str(json_path), "--report", str(page), "-q"]) == 0
    return json_path, page


@pytest.fixture(scope="module")
def sim_files(tmp_path_factory):
    return _command_files(tmp_path_factory, SIM)


@pytest.fixture(scope="module")
def run_files(tmp_path_factory):
    return _command_files(tmp_path_factory, RUN)


def _report(path, out):
    assert main(["report", str(path), "--out", str(out), "-q"]) == 0
    return ReportPage(out.read_text())


def test_report_of_the_json_is_the_page_of_the_report_option(sim_files, run_files, tmp_path):
    for json_path, page in (sim_files, run_files):
        assert main(["report", str(json_path), "--out", str(tmp_path / "page.html"), "-q"]) == 0
        assert (tmp_path / "page.html").read_text() == page.read_text()


def test_sim_page_shows_the_measured_figures(sim_files, tmp_path):
    json_path, _ = sim_files
    data = json.loads(json_path.read_text())
    page = _report(json_path, tmp_path / "sim.html")
    assert page.sections == [["sim", "sim: dilation 3x3 rect, buffer line, unroll 2, 32x8"]]
    cards = page.cards[0]
    assert cards["cycles"] == f"{data['cycles']:,} cycles"
    assert cards["CI"] == f"{data['ops'] / (data['bytes_read'] + data['bytes_written']):.3f} ops/byte"
    assert cards["bytes read"] == f"{data['bytes_read']:,} B"
    assert cards["fetch model"] == "matches" and cards["numpy model"] == "matches"
    # Every state's cycles and share of the FSM's cycles, as numpy computes them.
    for fsm, states in data["hmm"]["fsms"].items():
        counts = np.array(list(states.values()))
        rows = page.tables[fsm]
        assert rows[0] == ["state", "cycles", "share"]
        assert [r[0] for r in rows[1:]] == list(states)
        assert [int(r[1].replace(",", "")) for r in rows[1:]] == list(counts)
        assert [float(r[2]) for r in rows[1:]] == pytest.approx(
            np.round(100 * counts / counts.sum(), 1).tolist())
    streams = page.tables["Streams"]
    assert [r[0] for r in streams[1:]] == list(data["hmm"]["streams"])
    # The slow memory holds the read requests up: blocking cycles show, and match the JSON.
    blocking = {r[0]: int(r[2].replace(",", "")) for r in streams[1:]}
    assert blocking["stream.rd_req"] == data["hmm"]["streams"]["stream.rd_req"]["blocking"] > 0
    histogram = dict((r[0], r[1]) for r in page.tables["rd_latency"][1:])
    bins = data["hmm"]["histograms"]["rd_latency"]
    assert histogram["samples"] == f"{bins['count']:,}"
    assert histogram["mean"] == f"{bins['sum'] / bins['count']:.2f}"
    assert {name for _, name in page.figures} >= {"fsm-fsm.ctrl", "streams",
                                                  "histogram-rd_latency", "cycle-roofline"}
    versions = dict((r[0], r[1]) for r in page.tables["Tool versions"])
    assert versions["amaranth"] == data["tool_versions"]["amaranth"]


def test_undefined_figures_show_as_na_never_zero(sim_files, tmp_path):
    json_path, _ = sim_files
    data = json.loads(json_path.read_text())
    # Unstamped, the file is drawn as it stands (a stamped one is read through its record,
    # which derives CI and the FSM shares again from the counts).
    del data["schema"], data["schema_version"]
    data.update(ci=None, ops_per_cycle=None, fetch_model_matches=None,
                suspect=["HMM values saturated, their figures are lower bounds: ops"])
    data["hmm"]["fsms"]["fsm.ctrl"]["RUN"] = None
    data["hmm"]["histograms"]["rd_latency"].update(count=0, sum=0, min=None, max=None)
    (tmp_path / "undefined.json").write_text(json.dumps(data))
    page = _report(tmp_path / "undefined.json", tmp_path / "undefined.html")
    cards = page.cards[0]
    assert cards["CI"] == "n/a ops/byte" and cards["performance"] == "n/a ops/cycle"
    assert cards["fetch model"] == "n/a"
    run = [r for r in page.tables["fsm.ctrl"] if r[0] == "RUN"][0]
    assert run[1] == "n/a"
    histogram = dict((r[0], r[1]) for r in page.tables["rd_latency"][1:])
    assert histogram["mean"] == histogram["minimum"] == histogram["maximum"] == "n/a"
    # A point whose CI is undefined is not placed on the roofline.
    assert "cycle-roofline" not in {name for _, name in page.figures}
    text = (tmp_path / "undefined.html").read_text()
    assert ('<p class="note warning">Suspect measurement: HMM values saturated, their figures '
            'are lower bounds: ops.</p>') in text


def test_run_page_shows_every_thread(run_files, tmp_path):
    json_path, _ = run_files
    data = json.loads(json_path.read_text())
    page = _report(json_path, tmp_path / "run.html")
    assert page.sections[0][0] == "run"
    threads = page.tables["Threads"]
    assert threads[0] == ["thread", "launched", "stalled", "idle", "running", "critical",
                          "spinning"]
    for row, thread in zip(threads[1:], data["threads"]):
        assert row[1] == f"{thread['launch_cycle']:,}" and row[2] == f"{thread['stall_cycles']:,}"
        assert [float(v) for v in row[3:]] == pytest.approx(
            [round(thread[f"{s}_percent"], 1) for s in ("idle", "running", "critical",
                                                        "spinning")])
    assert {"thread-shares", "thread-timeline", "cycle-roofline"} <= {n for _, n in page.figures}
    assert page.cards[0]["numpy model"] == "matches"


def _state_cycles(timeline):
    """Per thread and state, the cycles of the timeline: one row per cycle, with numpy."""
    states = np.zeros((timeline["cycles"], timeline["threads"]), dtype=int)
    changes = timeline["changes"]
    for (cycle, values), end in zip(changes, [c for c, _ in changes[1:]] + [timeline["cycles"]]):
        states[cycle:end] = values
    return [[int((states[:, t] == s).sum()) for s in range(len(timeline["state_names"]))]
            for t in range(timeline["threads"])]


def test_the_timeline_figure_spans_each_state_for_its_cycles(run_files):
    data = json.loads(run_files[0].read_text())
    timeline = data["timeline"]
    figure = thread_timeline("states", timeline)
    ax = figure.axes[0]
    colour_state = {"#{:02x}{:02x}{:02x}".format(*STATE_COLORS[name]): code
                    for code, name in enumerate(timeline["state_names"])}
    drawn = [[0] * len(timeline["state_names"]) for _ in range(timeline["threads"])]
    for collection in ax.collections:
        state = colour_state["#" + "".join(f"{round(255 * c):02x}"
                                           for c in collection.get_facecolor()[0][:3])]
        for path in collection.get_paths():
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            drawn[round(ys.mean())][state] += round(xs.max() - xs.min())
    assert drawn == _state_cycles(timeline)
    # No record was dropped, so the timeline agrees with the HMM's state profiles.
    assert data["state_records_dropped"] == 0
    for counts, thread in zip(drawn, data["threads"]):
        assert [100 * c / timeline["cycles"] for c in counts] == pytest.approx(
            [thread[f"{s}_percent"] for s in timeline["state_names"]])


def _lab(hex_colour):
    """CIE L*a*b* (D65) of an sRGB colour."""
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    matrix = [(0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505)]
    x, y, z = (sum(m * c for m, c in zip(row, linear)) for row in matrix)
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
         for t in (x / 0.95047, y / 1.0, z / 1.08883)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_sixteen_states_get_sixteen_distinct_colours():
    colours = state_colours(16)
    assert len(set(colours)) == 16
    closest = min(math.dist(_lab(a), _lab(b)) for a, b in combinations(colours, 2))
    assert closest > 10   # CIE76 distance: well apart on a screen


def test_long_state_names_do_not_overlap():
    names = [f"WAIT_FOR_READ_RESPONSE_FROM_MEMORY_BANK_{i}" for i in range(16)]
    figure = state_pie("fsm.controller_with_a_long_name: cycles per state",
                       {name: 10 * (i + 1) for i, name in enumerate(names)})
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    legend = figure.legends[0]
    boxes = [text.get_window_extent(renderer) for text in legend.get_texts()]
    whole = figure.bbox
    for a, b in combinations(boxes, 2):
        assert not a.overlaps(b)
    for box in boxes:
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 <= whole.y1
    ring = figure.axes[0].get_window_extent(renderer)
    assert not ring.overlaps(legend.get_window_extent(renderer))
    assert all("\n" in text.get_text() for text in legend.get_texts())


def test_wrap_name_breaks_only_where_a_name_can_break():
    assert wrap_name("WAIT_FOR_READ_RESPONSE_FROM_MEMORY", 12) == \
        "WAIT_FOR_\nREAD_\nRESPONSE_\nFROM_MEMORY"
    assert wrap_name("IDLE") == "IDLE"


def test_the_page_loads_nothing(sim_files):
    text = sim_files[1].read_text()
    page = ReportPage(text)
    assert not page.tags & {"script", "link", "img", "iframe", "object", "embed", "base"}
    for tag, name, value in page.attributes:
        if name in ("src", "href", "xlink:href", "action", "srcset"):
            assert value.startswith(("#", "data:image/png;base64,")), (tag, name, value)
    # Outside the SVG namespace declarations, no address at all.
    assert not re.search(r"(https?:)?//(?!www\.w3\.org/)", re.sub(r'xmlns(:\w+)?="[^"]*"', "",
                                                                 text))
    assert "url(" not in re.sub(r"url\(#", "", text)
    # Every id is unique though several SVG figures share the page.
    ids = [value for _, name, value in page.attributes if name == "id"]
    assert len(ids) == len(set(ids))


def test_a_profile_json_shows_its_source_lines(tmp_path):
    lines = [{"file": "kernels/window.py", "line": 12, "code": "m.d.sync += acc.eq(x)",
              "active_cycles": 300, "percent": 75.0},
             {"file": "kernels/window.py", "line": 10, "code": "with m.If(valid):",
              "active_cycles": 120, "percent": 30.0},
             {"file": "kernels/walk.py", "line": 4, "code": "pass", "active_cycles": 0,
              "percent": 0.0}]
    profile = {"cycles": 400, "lines": lines, "steps": [{"step": 0, "cycles": 10}]}
    (tmp_path / "profile.json").write_text(json.dumps(profile))
    page = _report(tmp_path / "profile.json", tmp_path / "profile.html")
    assert page.sections[0][0] == "profile"
    shown = page.source_lines
    # In file and line order (walk.py first), each shaded by its share of the busiest line's.
    assert [line["cells"][0] for line in shown] == ["4", "10", "12"]
    assert [line["share"] for line in shown] == pytest.approx([0.0, 30 / 75, 1.0])
    assert shown[1]["title"] == "kernels/window.py:10: active in 120 of 400 cycles (30.0%)"
    assert shown[2]["cells"][1:] == ["300", "75.0", "m.d.sync += acc.eq(x)"]
    assert page.cards[0]["busiest line"] == "kernels/window.py:12"
    assert page.tables["Steps"][1] == ["0", "10"]


def test_a_folder_gives_a_section_per_json_it_knows(sim_files, run_files, tmp_path, capsys):
    for path, _ in (sim_files, run_files):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "other.json").write_text('{"traceEvents": []}')
    assert main(["report", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert f"skipped {tmp_path / 'other.json'}" in captured.err
    page = ReportPage((tmp_path / "report.html").read_text())
    assert [kind for kind, _ in page.sections] == ["run", "sim"]


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.json", "does not exist"),
    (lambda d: (d / "a.json").write_text("not json") and d / "a.json", "is not JSON"),
    (lambda d: (d / "b.json").write_text('{"x": 1}') and d / "b.json",
     "is not the JSON of a command hwgen reports"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "holds no JSON of a command"),
])
def test_bad_input_is_one_line_and_writes_nothing(make, message, tmp_path, capsys):
    path = make(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    assert main(["report", str(path), "--out", str(tmp_path / "out" / "page.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: DIR_OR_JSON: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before


def test_report_option_refuses_a_folder_before_simulating(tmp_path, capsys):
    (tmp_path / "page.html").mkdir()
    assert main([*SIM, "--report", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert err == f"hwgen: error: --report: {str(tmp_path / 'page.html')!r} is a folder, not a file; end it in / to write a file into it\n"


@pytest.mark.slow
def test_overhead_page_shows_the_comparison_and_na_for_fmax(tmp_path):
    """On a Xilinx part there is no open place and route: Fmax is undefined, shown n/a."""
    page_path = tmp_path / "overhead.html"
    assert main(["overhead", "dilation", "--buffer", "none", "--width", "16", "--height", "8",
                 "--board", "arty-a7-100t", "--json", str(tmp_path / "o.json"),
                 "--report", str(page_path), "-q"]) == 0
    data = json.loads((tmp_path / "o.json").read_text())
    page = ReportPage(page_path.read_text())
    rows = {r[0]: r for r in page.tables["Bare and with the HMM"][1:]}
    lut = data["figures"]["lut"]
    assert rows["LUT"][2:5] == [f"{lut['bare']:,}", f"{lut['with_hmm']:,}",
                                f"+{lut['with_hmm'] - lut['bare']:,}"]
    assert data["figures"]["fmax_mhz"]["bare"] is None
    assert rows["Fmax"][2:] == ["n/a", "n/a", "n/a", "n/a"]
    assert {"overhead"} <= {name for _, name in page.figures}


def test_the_guide_s_renderer_adds_a_section(tmp_path):
    """docs/report.md's example registers one more renderer; a JSON it knows gets its section."""
    guide = Path(__file__).resolve().parent.parent / "docs" / "report.md"
    (block,) = re.findall(r"```python\n(.*?)```", guide.read_text(), re.DOTALL)
    exec(compile(block, str(guide), "exec"), {})
    (tmp_path / "power.json").write_text('{"power_mw": 1234}')
    page = _report(tmp_path / "power.json", tmp_path / "power.html")
    assert page.sections == [["power", "power estimate"]]
    assert page.cards[0] == {"power": "1,234 mW"}


def test_explore_writes_the_page_of_its_roofline_json(tmp_path):
    out = tmp_path / "sweep"
    assert main(["explore", "dilation", "--board", "ex500", "--buffer", "smart", "--unroll", "1,2",
                 "--image", "16x8", "-j", "1", "--out", str(out), "--report",
                 str(tmp_path / "explore.html"), "-q"]) == 0
    data = json.loads((out / "roofline.json").read_text())
    page = ReportPage((tmp_path / "explore.html").read_text())
    assert page.sections == [["roofline", "roofline: dilation on ex500"]]
    rows = page.tables["Design points, best first"]
    assert len(rows) - 1 == len(data["points"]) == 4     # 2 design points on 1 and 2 FPGAs
    attained = [float(r[rows[0].index("attains")].replace(",", "")) for r in rows[1:]]
    assert attained == sorted(attained, reverse=True)
    assert attained[0] == pytest.approx(data["best"]["attainable_gbops"], abs=0.005)
    assert page.figures == [(0, "roofline")]
    # The folder gives the same page.
    assert main(["report", str(out), "-q"]) == 0
    assert ReportPage((out / "report.html").read_text()).tables == page.tables
