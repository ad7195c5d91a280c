"""The section of ``explore.json``, which ``hwgen explore --fast`` writes: the design points
predicted, their Pareto front of performance against LUTs, the best point per area budget and
the front re-measured by simulation and synthesis."""

from ..records import ExploreResult
from .blocks import Column, Figure, Headline, Note, Section, Table, facts_of
from .figures import pareto_front, to_svg
from .performance import memory_facts, provenance
from .sections import register
from .values import NA, Value, integer, number, percent, plain

__all__ = ["explore_section"]

_RESOURCES = ("lut", "ff", "bram", "dsp")


def _mean_max(values):
    values = [abs(v) for v in values if v is not None]
    return (None, None) if not values else (sum(values) / len(values), max(values))


def _headline(record):
    front = record.front
    best = max(front, key=lambda p: p["gops"])
    items = [("design points", integer(len(record.points))),
             ("Pareto front", integer(len(front), "points")),
             ("fastest", number(best["gops"], "Gops/s", note=best["label"])),
             ("its LUTs", integer(best["lut"])),
             ("predicted in", number(record.predict_seconds, "s", digits=1))]
    if record.remeasured:
        mean, worst = _mean_max([100 * r.cycle_error for r in record.remeasured])
        items += [("model cycle error", percent(mean, digits=2, note="mean of its size over "
                                                "the front points re-measured")),
                  ("its largest", percent(worst, digits=2))]
        mean, worst = _mean_max([None if r.lut_error is None else 100 * r.lut_error
                                 for r in record.remeasured])
        if mean is not None:
            items.append(("estimate LUT error", percent(mean, note=f"mean of its size; the "
                                                               f"largest {worst:.1f}%")))
    return Headline(items)


def _front_table(record):
    program = record.what == "program"
    columns = [Column("design point", numeric=False)]
    columns += [Column(name.upper()) for name in _RESOURCES]
    columns += [Column("cycles", "per job" if program else "per frame"),
                Column("perf", "ops/cycle"), Column("traffic", "B/cycle"),
                Column("performance", "Gops/s"), Column("bound by", numeric=False)]
    rows = [[Value(p["label"]), *[integer(p[name]) for name in _RESOURCES],
             number(p["cycles"], digits=1), number(p["ops_per_cycle"]),
             number(p["bytes_per_cycle"]), number(p["gops"]), plain(p["bound"])]
            for p in record.front]
    clock = record.points[0]["clock_mhz"]
    return Table("Pareto front, by LUTs", columns, rows,
                 f"Predicted by the cycle model and the estimate at {clock:g} MHz; no other point "
                 f"is both faster and smaller.")


def _budget_table(record):
    rows = [[percent(b["share_percent"], digits=0), integer(round(b["lut"])),
             Value(b["label"]) if b["label"] is not None
             else NA(note="no design point fits this budget"), number(b["gops"])]
            for b in record.budgets]
    return Table("Best point per area budget", [
        Column("budget", "% of the device's LUTs"), Column("LUT"),
        Column("design point", numeric=False), Column("performance", "Gops/s")], rows,
        f"The fastest point within each share of one device's {record.device_lut:,} LUTs.")


def _remeasured_table(record):
    rows = [[Value(r.label), number(r.predicted_cycles, digits=1), integer(r.simulated_cycles),
             percent(100 * r.cycle_error, digits=2), integer(r.estimated_lut),
             integer(r.synthesized_lut), percent(None if r.lut_error is None
                                                 else 100 * r.lut_error)]
            for r in record.remeasured]
    return Table("The front re-measured", [
        Column("design point", numeric=False), Column("model", "cycles"),
        Column("simulated", "cycles"), Column("error", "%"), Column("estimate", "LUT"),
        Column("Yosys", "LUT"), Column("error", "%")], rows,
        "Front points spread along it, simulated (and synthesized by Yosys, n/a when not); "
        "error = (prediction - measurement) / measurement.")


@register("explore", lambda data: data.get("schema") == ExploreResult.SCHEMA)
def explore_section(data, source):
    record = ExploreResult.from_json(data)
    blocks = [_headline(record)]
    title = "Performance against area"
    blocks.append(Figure(title, to_svg(pareto_front(
        title, [(p["lut"], p["gops"]) for p in record.points],
        [(p["lut"], p["gops"]) for p in record.front])),
        "Predicted performance (Gops/s, 10^9 operations per second at the board's clock) "
        "against LUTs, log-log: every design point, and the Pareto front joined.",
        name="pareto"))
    blocks += [_front_table(record), _budget_table(record)]
    blocks.append(_remeasured_table(record) if record.remeasured else
                  Note("The front was not re-measured (--verify 0)."))
    blocks.append(provenance(data, title="Memory model and tool versions",
                             settings=[memory_facts(data["memory"]),
                                       facts_of("Board", {"name": record.board,
                                                          "LUTs per device": record.device_lut})]))
    return Section("explore", f"explore --fast: {record.title}",
                   f"{len(record.points)} design points predicted, {len(record.front)} on the "
                   f"Pareto front", source, blocks)
