# amaranth: UnusedElaboratable=no
"""The bits benchmarks/probe_cost.py reports for each probe are the closed forms of its layout."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from probe_cost import GOALS, ROWS, Reference, attach, bits_of, goal_rows, main  # noqa: E402

W = 32          # the HMM's default counter_bits
COUNT = W + 1   # a count and its overflow flag
ENTRY = W + 2   # a count table's entry counting one at a time: the count, its overflow and
#                 all-ones flags

# (value bits, RAM bits) each row's probe adds, from the parts' documented layouts: a histogram
# of a v-bit value keeps count, a sum of W + v bits (each with its flag), min and max, and a
# table of bins + 1 entries; a trace keeps `written` (log2(depth) + 1 bits) and `dropped`, and
# depth records of a W-bit timestamp, one bit per trigger and the payload.
EXPECTED = {
    "event counter (`Count`, 1 event)": (COUNT, 0),
    "accumulator of a 16-bit value (`Accumulate`)": (COUNT, 0),
    # Sums in a table, read once frozen: no snapshot bits.
    "16 sums of a 16-bit value, one source at a time (`AccumulateExclusive`)": (0, 16 * COUNT),
    "stream: transferring, blocking, idle (`Stream`)": (3 * COUNT, 0),
    "state profile, 4 states (`Profile`)": (0, 4 * ENTRY),
    "state profile, 16 states (`Profile`)": (0, 16 * ENTRY),
    "histogram, 16 bins + overflow (`Histogram`)": (COUNT + W + 16 + 1 + 2 * 16, 17 * ENTRY),
    "histogram, 128 bins + overflow (`Histogram`)": (COUNT + W + 16 + 1 + 2 * 16, 129 * ENTRY),
    # A histogram of 16-bit latencies, wait cycles, untracked responses; 16 queued timestamps.
    "latency histogram, 16 outstanding, 32 bins (`Latency`)":
        (COUNT + W + 16 + 1 + 2 * 16 + 2 * COUNT, 33 * ENTRY + 16 * 16),
    "trace, depth 64, 32-bit payload (`Trace`)": (7 + COUNT, 64 * (W + 1 + 32)),
    "trace, depth 1024, 32-bit payload (`Trace`)": (11 + COUNT, 1024 * (W + 1 + 32)),
    # Records of four counts with their flags.
    "sampler of 4 counters, depth 256 (`Sampler`)": (9 + COUNT, 256 * (W + 1 + 4 * COUNT)),
    # Records of eight 2-bit states.
    "thread states, 8 threads, depth 256 (`ThreadStates`)": (9 + COUNT, 256 * (W + 1 + 16)),
}


def _bits(probes):
    design = Reference()
    return bits_of(attach(design, probes(design), fsms=False, streams=False))


def test_every_row_has_a_closed_form():
    assert [name for name, _, _ in ROWS] == list(EXPECTED)


@pytest.mark.parametrize("name, probes, baseline", ROWS, ids=[name for name, _, _ in ROWS])
def test_probe_bits_match_the_closed_form(name, probes, baseline):
    baseline = baseline or (lambda d: [])
    with_probe = _bits(lambda d: [*baseline(d), *probes(d)])
    without = _bits(baseline)
    assert tuple(a - b for a, b in zip(with_probe, without)) == EXPECTED[name]


def test_hmm_without_probes_keeps_the_cycle_count_alone():
    assert _bits(lambda d: []) == (COUNT, 0)


def test_goals_compare_each_measured_figure_with_its_limit(tmp_path):
    """A goal's row gives the change in percent of the bare figure and says whether it is within
    its limit; goals without their JSON files are shown as not measured, with the commands that
    measure them."""
    import json
    figures = {"lut": (1000, 1200), "ff": (500, 800), "fmax_mhz": (200.0, 195.0)}
    (tmp_path / "pe-u8-minimal.json").write_text(json.dumps({"figures": {
        name: {"bare": bare, "with_hmm": with_hmm} for name, (bare, with_hmm) in figures.items()}}))
    (tmp_path / "gemm-minimal-bare.json").write_text(json.dumps({"lut": 10_000, "ff": 20_000}))
    (tmp_path / "gemm-minimal.json").write_text(json.dumps({"lut": 10_300, "ff": 20_500}))
    rows, missing = goal_rows(tmp_path)
    by_key = {(r[0], r[1], r[2]): r for r in rows}
    lut = by_key["dilation line U8 PE", "minimal", "LUT"]
    assert lut[3:] == ["1,000", "1,200", "+20.0%", "<= +25%", "met"]          # 200 / 1000
    ff = by_key["dilation line U8 PE", "minimal", "FF"]
    assert ff[5:] == ["+60.0%", "<= +50%", "missed by 10.0 points"]
    fmax = by_key["dilation line U8 PE", "minimal", "Fmax (MHz)"]
    assert fmax[5:] == ["-2.5%", ">= -3%", "met"]
    gemm = by_key["GEMM vector, 8 threads, synth", "minimal", "LUT"]
    assert gemm[5:] == ["+3.0%", "<= +3.42%", "met"]
    assert by_key["dilation line U8 PE", "default", "LUT"][3:] == [
        "n/a", "n/a", "n/a", "<= +100%", "not measured"]
    assert len(rows) == sum(len(limits) for _, _, _, limits, _ in GOALS)
    assert any("--unroll 1" in command and "--probes default" in command for command in missing)
    assert not any("gemm" in command for command in missing)


def test_goals_need_a_directory(tmp_path, capsys):
    assert main(["--goals", str(tmp_path / "nowhere")]) == 2
    assert "--goals" in capsys.readouterr().err


def test_preset_table_gives_each_preset_beside_the_bare_pe(tmp_path):
    """Every preset's row gives its LUT, FF and median Fmax with the change from the bare PE,
    once per design the bare PE's own; a preset without its JSON file is n/a, with its command."""
    import json
    from probe_cost import preset_rows

    def run(lut, ff, seeds):
        return {"lut": lut, "ff": ff, "fmax_mhz": sorted(seeds)[1], "fmax_seeds_mhz": seeds}

    bare, hmm = run(1000, 400, [190.0, 180.0, 200.0]), run(1500, 500, [171.0, 180.0, 162.0])
    figures = {"lut": {"bare": 1000, "with_hmm": 1500}, "ff": {"bare": 400, "with_hmm": 500},
               "fmax_mhz": {"bare": 190.0, "with_hmm": 171.0}}
    (tmp_path / "pe-u8-default.json").write_text(json.dumps(
        {"bare": bare, "with_hmm": hmm, "figures": figures}))
    rows, missing = preset_rows(tmp_path)
    u8 = [r for r in rows if r[0] == "dilation line U8 PE"]
    assert [r[1] for r in u8] == ["none (bare)", "minimal", "default", "full"]
    assert u8[0][2:] == ["1,000", "400", "190.0 (seeds 190.0, 180.0, 200.0)"]
    assert u8[2][2:] == ["1,500 (+50.0%)", "500 (+25.0%)",
                         "171.0 (seeds 171.0, 180.0, 162.0), -10.0%"]
    assert u8[1][2:] == ["n/a", "n/a", "n/a"]
    assert [r[1:] for r in rows if r[0] == "dilation line U1 PE"] == [
        [preset, "n/a", "n/a", "n/a"] for preset in ("minimal", "default", "full")]
    assert len(missing) == 5 and all("--seeds 3" in command for command in missing)


def test_critical_paths_name_the_median_seeds_path_of_each_measured_preset(tmp_path):
    import json
    from probe_cost import critical_paths

    def run(path):
        return {"lut": 1, "ff": 1, "fmax_mhz": 100.0, "fmax_seeds_mhz": [100.0],
                "critical_path": [path, "net"] if path else None}

    (tmp_path / "pe-u1-default.json").write_text(json.dumps(
        {"bare": run("a.Q -> b.DI (5.00 ns, 2 nets)"), "with_hmm": run(None)}))
    (tmp_path / "pe-u1-minimal.json").write_text(json.dumps(
        {"bare": run("a.Q -> b.DI (5.00 ns, 2 nets)"),
         "with_hmm": run("c.Q -> d.CE (5.50 ns, 3 nets)")}))
    assert critical_paths(tmp_path) == [
        ("dilation line U1 PE", "none (bare)", "a.Q -> b.DI (5.00 ns, 2 nets)"),
        ("dilation line U1 PE", "minimal", "c.Q -> d.CE (5.50 ns, 3 nets)"),
        ("dilation line U1 PE", "default", "n/a")]
