"""The section of ``hwgen sim``'s JSON: a window filter's run against the memory model."""

from .blocks import Column, Facts, Group, Headline, Note, Section, Table
from .hmm import hmm_blocks
from .performance import memory_facts, provenance, roofline_block, suspect_notes
from .sections import register
from .values import Value, integer, number, plain, verdict

__all__ = ["sim_section"]


def _title(data):
    if "title" in data:      # sim says its design in one line (a PE of the user's has no window)
        return data["title"]
    p = data["parameters"]
    return (f"{data['kernel']} {p['rows']}x{p['cols']} {p['mask']}, buffer {p['buffer']}, unroll "
            f"{p['unroll']}, {p['width']}x{p['height']}")


def _figures_headline(f, data):
    """The headline of one PE's figures (``f``) or of a system's."""
    model = data["fetch_model"] or {}   # None: the PE states no closed-form traffic
    system = "system" in data
    fetch_note = (f"model ({model['formula']}): {model['bytes_read']:,} B read, "
                  f"{model['bytes_written']:,} B written per frame" if "formula" in model else "")
    items = [("cycles", integer(f["cycles"], "cycles")),
             ("performance", number(f["ops_per_cycle"], "ops/cycle")),
             ("output rate", number(f.get("outputs_per_cycle"), "outputs/cycle")),
             ("CI", number(f["ci"], "ops/byte")),
             ("bytes read", integer(f["bytes_read"], "B")),
             ("bytes written", integer(f["bytes_written"], "B")),
             ("ops", integer(f["ops"], "ops")),
             ("fetch model", verdict(data.get("fetch_model_matches"),
                                     "matches" + (" for every PE" if system else ""),
                                     "DOES NOT MATCH", note=fetch_note)),
             ("numpy model", verdict(data.get("result_matches_numpy_model"),
                                     "matches", "DIFFERS",
                                     note="every output image against a numpy model of the "
                                          "filter"))]
    if system:
        del items[2]
    return Headline(items)


def _run_facts(data):
    items = [("input image", plain(data.get("input"))),
             ("measured by", plain(data.get("measured_by"))),
             ("engine", plain((data.get("engine") or {}).get("name"))),
             ("simulation time", number(data.get("simulation_seconds"), "s", digits=1))]
    if data.get("total_cycles") is not None:
        items += [("cycles the HMM observed", integer(data["total_cycles"], "cycles")),
                  ("of them around the job", integer(data.get("cycles_outside_job"), "cycles",
                                                     note="before start and until the host read "
                                                          "the HMM out"))]
    for name, what in (("rd_req_wait_cycles", "waiting for a read request"),
                       ("rd_data_wait_cycles", "waiting for read data"),
                       ("wr_req_wait_cycles", "waiting for a write")):
        if name in data:
            items.append((f"cycles {what}", integer(data[name], "cycles")))
    return Facts("Run", items)


def _fetch_facts(data):
    model = data["fetch_model"] or {}   # None: the PE states no closed-form traffic
    return Facts("Fetch model (closed form, one frame)", [
        ("formula", plain(model.get("formula"))),
        ("pixel reads", integer(model.get("reads"))), ("pixel writes", integer(model.get("writes"))),
        ("bytes read", integer(model.get("bytes_read"), "B")),
        ("bytes written", integer(model.get("bytes_written"), "B")),
        ("ops per output", integer(model.get("ops_per_output"), "ops")),
        ("CI", number(model.get("ci_ops_per_byte"), "ops/byte"))])


def _peak(data, pes):
    p, model = data["parameters"], data["fetch_model"] or {}
    per_output = model.get("ops_per_output")
    if per_output is None or "unroll" not in p:
        # A PE of the user's says no outputs per cycle: its peak is its own.
        return None, "the datapath's peak is not in the JSON"
    peak = pes * p["unroll"] * per_output
    note = (f"the datapath's peak, {pes} PE{'s' if pes > 1 else ''} x {p['unroll']} outputs "
            f"x {per_output} ops per cycle, is the compute roof")
    if not p.get("pipeline", True):
        note += " (a pipelined PE's: this one runs one step at a time)"
    return peak, note


def _roofline(data, figures, system):
    points = []
    if system:
        points.append((f"{system['pes']} PEs", system["ci"], system["ops_per_cycle"],
                       system["bytes_per_cycle"]))
    else:
        f = figures[0]
        traffic = (f["bytes_read"] + f["bytes_written"]) / f["cycles"] if f["cycles"] else None
        points.append(("this run", f["ci"], f["ops_per_cycle"], traffic))
    peak, note = _peak(data, system["pes"] if system else 1)
    return roofline_block(points, bandwidth=data["memory"].get("bandwidth_bytes_per_cycle"), peak=peak,
                          peak_note=note)


def _per_pe_table(figures):
    rows = [[Value(f"PE {i}"), integer(f["cycles"], "cycles"), number(f["ops_per_cycle"]),
             number(f["ci"]), integer(f["bytes_read"]), integer(f["bytes_written"]),
             integer(f.get("total_cycles"))] for i, f in enumerate(figures)]
    return Table("Every PE", [Column("PE", numeric=False), Column("cycles", "cycles"),
                              Column("ops/cycle", "ops/cycle"), Column("CI", "ops/byte"),
                              Column("read", "B"), Column("written", "B"),
                              Column("HMM observed", "cycles")], rows)


def _timeline_note(timeline):
    dropped = timeline.get("records_dropped")
    text = (f"The HMM also recorded a timeline of every FSM state and stream category "
            f"({timeline.get('records')} records"
            + (f", {dropped} DROPPED" if dropped else ", none dropped") + "), written as "
            + ", ".join(timeline.get("files", [])) + ": open it in Paraver or Perfetto.")
    return Note(text, "warning" if dropped else "info")


@register("sim", lambda data: "kernel" in data and "fetch_model" in data)
def sim_section(data, source):
    system = data.get("system")
    figures = system["per_pe"] if system else [data]
    blocks = [_figures_headline(system or data, data), *suspect_notes(data)]
    if data.get("result_matches_numpy_model") is False:
        blocks.append(Note("The output image differs from the numpy model of the filter.",
                           "warning"))
    if data.get("fetch_model_matches") is False:
        blocks.append(Note("The bytes read or written differ from the fetch model's.",
                           "warning"))
    blocks.append(Group("Run and memory", [_run_facts(data), memory_facts(data["memory"],
                                                                          data.get("link")),
                                           _fetch_facts(data)], side_by_side=True))
    if system:
        blocks.append(_per_pe_table(figures))
    for index, f in enumerate(figures):
        if f.get("hmm") is None:
            continue
        observed = ("cycles the HMM observed (the job's and the few around it)"
                    if f.get("total_cycles") is not None else "cycles the HMM observed")
        measured = hmm_blocks(f["hmm"], observed=observed)
        if system:
            blocks.append(Group(f"PE {index}: what its HMM measured", measured,
                                collapsed=index > 0))
        else:
            blocks.append(Group("What the HMM measured", measured))
    if all(f.get("hmm") is None for f in figures):
        blocks.append(Note("Built without its HMM (--no-instrument): no state, stream or "
                           "latency figures."))
    if "timeline" in data:
        blocks.append(_timeline_note(data["timeline"]))
    blocks.append(_roofline(data, figures, system))
    blocks.append(provenance(data))
    return Section("sim", f"sim: {_title(data)}",
                   f"{system['pes']} PEs sharing one memory" if system else "one PE", source,
                   blocks)
