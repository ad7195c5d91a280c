"""What a hardware measurement module recorded, as blocks: a ring per FSM (cycles per state),
a bar per stream (transferring / blocking / idle) and every histogram, each beside its table.

It reads the ``hmm`` object of a command's JSON (:meth:`hwgen.sim.HMMReadout.to_json`).
"""

from .blocks import Column, Figure, Group, Note, Table
from ..instrument import STREAM_CATEGORIES
from .figures import histogram_bars, state_pie, stream_bars, to_svg
from .values import NA, Value, integer, number, share

__all__ = ["hmm_blocks"]


def _bin_width(labels):
    """Cycles per bin from the labels ``0, 1, ...`` or ``0-3, 4-7, ...``."""
    first = labels[0]
    if "-" in first:
        low, high = first.split("-")
        return int(high) - int(low) + 1
    return 1


def _fsm_blocks(hmm, observed):
    saturated = set(hmm["saturated"])
    blocks = []
    for fsm, states in hmm["fsms"].items():
        total = sum(v or 0 for v in states.values())
        figure = Figure(f"{fsm}: cycles per state", to_svg(state_pie(f"{fsm}: cycles per state",
                                                                     states)),
                        f"Clock cycles the state machine {fsm} spent in each state, of the "
                        f"{observed}.", name=f"fsm-{fsm}")
        rows = [[Value(state), integer(cycles, saturated=f"{fsm}.{state}" in saturated),
                 share(cycles, total)] for state, cycles in states.items()]
        table = Table(f"{fsm}", [Column("state", numeric=False), Column("cycles", "cycles"),
                                 Column("share", "%")], rows)
        blocks.append(Group(f"State machine {fsm}", [figure, table], side_by_side=True))
    return blocks


def _stream_blocks(hmm, observed):
    streams = hmm["streams"]
    if not streams:
        return []
    saturated = set(hmm["saturated"])
    figure = Figure("Streams: cycles by category",
                    to_svg(stream_bars("Streams: cycles by category", streams,
                                       observed=observed)),
                    f"Each stream's clock cycles: transferring (valid and ready), blocking (valid, "
                    f"not ready: the receiver holds the sender up) and idle (not valid), as a "
                    f"share of the {observed}.", name="streams")
    rows = []
    for stream, counts in streams.items():
        total = sum(v or 0 for v in counts.values())
        rows.append([Value(stream)]
                    + [integer(counts.get(c), saturated=f"{stream}.{c}" in saturated)
                       for c in STREAM_CATEGORIES]
                    + [share(counts.get("transferring"), total)])
    table = Table("Streams", [Column("stream", numeric=False)]
                  + [Column(c, "cycles") for c in STREAM_CATEGORIES]
                  + [Column("busy", "% transferring")], rows)
    return [Group("Streams", [figure, table])]


def _histogram_blocks(hmm):
    latency = {g["roles"]["histogram"]: g["roles"] for g in hmm["groups"]
               if g["kind"] == "latency"}
    blocks = []
    for name, histogram in hmm["histograms"].items():
        labels = list(histogram["bins"])
        width = _bin_width(labels)
        unit = "cycles" if name in latency else "value"
        what = (f"{name}: clock cycles from a read request to its response" if name in latency
                else f"{name}: recorded values")
        figure = Figure(f"{name} histogram",
                        to_svg(histogram_bars(f"{name} histogram", histogram["bins"],
                                              xlabel=f"{name} ({unit}, bins of {width})")),
                        f"Samples per bin of {what}; the hatched bar is the overflow bin "
                        f"({labels[-1]}).", name=f"histogram-{name}")
        count, total = histogram.get("count"), histogram.get("sum")
        mean = total / count if count and total is not None else None
        facts = [("samples", integer(count)), ("minimum", integer(histogram.get("min"), unit)),
                 ("mean", number(mean, unit, digits=2) if mean is not None
                  else NA(unit, "undefined: no samples")),
                 ("maximum", integer(histogram.get("max"), unit)),
                 ("in the overflow bin", integer(histogram["bins"][labels[-1]]))]
        if count == 0:
            facts[1] = ("minimum", NA(unit, "undefined: no samples"))
            facts[3] = ("maximum", NA(unit, "undefined: no samples"))
        if name in latency:
            roles = latency[name]
            facts += [("cycles waiting for read data", integer(hmm["values"].get(
                          roles.get("wait_cycles")), "cycles")),
                      ("responses not timed (tracker full)", integer(hmm["values"].get(
                          roles.get("untracked"))))]
        table = Table(f"{name}", [Column("figure", numeric=False), Column("value")],
                      [[Value(label), value] for label, value in facts])
        blocks.append(Group(f"Histogram {name}", [figure, table], side_by_side=True))
    return blocks


def hmm_blocks(hmm, *, observed):
    """Blocks of an HMM readout; ``observed`` names the cycles its counters cover."""
    blocks = []
    if hmm["saturated"]:
        blocks.append(Note("Saturated counters (their values are lower bounds, shown with "
                           "\u2265): " + ", ".join(hmm["saturated"]), "warning"))
    return (blocks + _fsm_blocks(hmm, observed) + _stream_blocks(hmm, observed)
            + _histogram_blocks(hmm))
