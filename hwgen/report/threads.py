"""The section of ``hwgen run``'s JSON: a multithreaded-pipeline program, thread by thread."""

from .blocks import Column, Facts, Figure, Group, Headline, Note, Section, Table, facts_of
from .figures import thread_shares, thread_timeline, to_svg
from .performance import ci_of, memory_facts, provenance, roofline_block, suspect_notes
from .sections import register
from .values import Value, integer, number, percent, plain, verdict

__all__ = ["run_section"]


def _title(data):
    p = data["parameters"]
    size = f"DIM {p['dim']}" if "dim" in p else f"{p.get('steps')} steps"
    return f"{data['program']} {p.get('variant', '')}, {size}, {p.get('threads')} threads"


def _headline(data, ci):
    items = [("cycles", integer(data["cycles"], "cycles")),
             ("performance", number(data["ops_per_cycle"], "ops/cycle")),
             ("CI", number(ci, "ops/byte", note="ops / (bytes read + bytes written)")),
             ("traffic", number(data.get("bytes_per_cycle"), "B/cycle")),
             ("ops", integer(data["ops"], "ops")),
             ("bytes read", integer(data["bytes_read"], "B")),
             ("bytes written", integer(data["bytes_written"], "B")),
             ("numpy model", verdict(data.get("result_matches_numpy_model"), "matches",
                                     "DIFFERS", note="the program's result against a numpy "
                                                     "model"))]
    if "pi" in data:
        items.append(("pi", number(data["pi"], digits=6)))
    return Headline(items)


def _thread_blocks(data):
    timeline = data["timeline"]
    names = timeline["state_names"]
    shares = [{name: t.get(f"{name}_percent") for name in names} for t in data["threads"]]
    title = "Time per thread state"
    blocks = [Figure(title, to_svg(thread_shares(title, shares, names)),
                     "Each thread's share of the job's clock cycles in each state, from the "
                     "HMM's per-thread state profiles (exact, whatever the timeline dropped).",
                     name="thread-shares")]
    title = "Thread states over time"
    dropped = data.get("state_records_dropped")
    blocks.append(Figure(title, to_svg(thread_timeline(title, timeline)),
                         "Every thread's state over the job, from the HMM's record of every "
                         "change (time in clock cycles from the job's start)"
                         + (f"; {dropped} records were DROPPED, so changes are missing."
                            if dropped else "; no record was dropped."),
                         name="thread-timeline"))
    rows = [[Value(f"thread {t['thread']}"), integer(t.get("launch_cycle"), "cycle"),
             integer(t.get("stall_cycles"), "cycles")]
            + [percent(t.get(f"{name}_percent")) for name in names] for t in data["threads"]]
    blocks.append(Table("Threads", [Column("thread", numeric=False),
                                    Column("launched", "job cycle"),
                                    Column("stalled", "cycles")]
                        + [Column(name, "%") for name in names], rows,
                        "Launched: the job cycle the host started the thread in. Stalled: "
                        "the cycles the thread was parked with nothing happening to it, counted "
                        "by the HMM."))
    return blocks


def _stage(index, name):
    """``(number, name)`` of a stage named ``"3:load a"`` (or plainly)."""
    number, _, rest = name.partition(":")
    if rest and number.isdigit():
        return number, Value(rest)
    return str(index), Value(name)


def _profile_facts(data):
    return Facts("Profile", [
        ("job starts at HMM cycle", integer(data.get("job_start_cycle"))),
        ("sample period", integer(data.get("sample_period_cycles"), "cycles")),
        ("thread-state records", integer(data.get("state_records"))),
        ("thread-state records dropped", integer(data.get("state_records_dropped"))),
        ("samples", integer(data.get("samples"))),
        ("samples dropped", integer(data.get("samples_dropped"))),
        ("trace time unit", plain(data.get("trace_time_unit"))),
        ("engine", plain((data.get("engine") or {}).get("name"))),
        ("simulation time", number(data.get("simulation_seconds"), "s", digits=1))])


@register("run", lambda data: "program" in data and "threads" in data and "timeline" in data)
def run_section(data, source):
    ci = ci_of(data["ops"], data["bytes_read"], data["bytes_written"])
    blocks = [_headline(data, ci), *suspect_notes(data)]
    if data.get("result_matches_numpy_model") is False:
        blocks.append(Note("The program's result differs from the numpy model.", "warning"))
    if data.get("state_records_dropped") or data.get("samples_dropped"):
        blocks.append(Note(f"The host drained too slowly: the HMM dropped "
                           f"{data.get('state_records_dropped')} thread-state records and "
                           f"{data.get('samples_dropped')} samples; the timeline misses those "
                           f"changes (the state shares are exact).", "warning"))
    blocks.append(Group("Threads", _thread_blocks(data)))
    drawn = data.get("bytes_per_cycle")
    blocks.append(roofline_block([("this run", ci, data["ops_per_cycle"], drawn)],
                                 bandwidth=data["memory"].get("bandwidth_bytes_per_cycle"),
                                 peak=None, peak_note="the pipeline's peak is not measured, so "
                                                      "there is no compute roof"))
    stages = data.get("stages") or []
    blocks.append(Group("Run and memory", [
        _profile_facts(data), memory_facts(data["memory"]),
        facts_of("Host", data.get("host") or {}, unset="none: read at the end"),
        Facts("Stages", [tuple(_stage(i, name)) for i, name in enumerate(stages)])],
        side_by_side=True))
    blocks.append(provenance(data))
    return Section("run", f"run: {_title(data)}", "a multithreaded-pipeline program", source,
                   blocks)
