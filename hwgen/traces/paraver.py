"""Paraver traces of a :class:`~hwgen.traces.timeline.Timeline`: the ``.prv`` trace, the ``.pcf``
configuration and the ``.row`` names, in the formats Paraver reads (BSC's paraver-kernel), and a
``.readme.txt`` beside them for people.

The ``.pcf`` and ``.row`` hold nothing but their grammar's sections (older Paraver versions reject
a ``#`` line in them); what a reader needs besides (the time unit, the clock, the tools that wrote
the trace, records the HMM dropped, counters that saturated) is in the ``.readme.txt``.

Mapping
-------
* One application with one task; each row of the timeline (a hardware thread, a state machine,
  a stream) is one Paraver thread, in row order. When the timeline has counters or markers of the
  whole design, one more thread, named after the timeline, carries them.
* Each span of a row is a state record ``1:0:1:1:<thread>:<begin>:<end>:<state>``; the state ids
  are the indices of :attr:`Timeline.states`, named and coloured in the ``.pcf``. CPU 0: a
  hardware thread runs on no CPU.
* Each point of a counter is an event record ``2:0:1:1:<thread>:<time>:<type>:<value>`` at the
  end of its period, with the count of the period (cycles since the previous event of that type
  on that thread, as Extrae writes hardware counters); events of one thread and time share a
  line. Counter types are numbered from :data:`COUNTER_TYPE_BASE` + 1 in order of appearance;
  each marker trace (``job``) is one type from :data:`MARKER_TYPE_BASE` + 1 whose values name
  its events (``start`` 1, ``done`` 2, ...).
* **Time unit.** Paraver knows ns and us, not cycles: every time is a clock cycle of the design,
  written where Paraver expects ns (``<end>_ns`` in the header, ``UNITS NANOSEC``), and the
  ``.readme.txt`` says so. Read "ns" as "cycles".
"""

import time

from ..versions import tool_versions

__all__ = ["paraver_files", "COUNTER_TYPE_BASE", "MARKER_TYPE_BASE", "STATE_COLORS"]

COUNTER_TYPE_BASE = 81000
MARKER_TYPE_BASE = 82000

#: RGB of the states every trace and report names alike: thread states and stream categories.
STATE_COLORS = {
    "idle": (190, 190, 190), "running": (0, 102, 204), "critical": (255, 140, 0),
    "spinning": (204, 0, 0), "transferring": (0, 153, 51), "blocking": (204, 0, 0),
}
_PALETTE = [(117, 195, 255), (0, 0, 255), (255, 255, 0), (179, 0, 0), (0, 162, 0),
            (255, 0, 174), (115, 61, 0), (172, 174, 41), (255, 144, 26), (2, 255, 177)]


def _color(index, name):
    return STATE_COLORS.get(name, _PALETTE[index % len(_PALETTE)])


def _event_types(timeline):
    """``({counter name: type}, {marker trace: (type, {event: value})})``."""
    counters, markers = {}, {}
    for counter in timeline.counters:
        counters.setdefault(counter.name, COUNTER_TYPE_BASE + len(counters) + 1)
    for marker in timeline.markers:
        trace, _, event = marker.name.partition(" ")
        _, values = markers.setdefault(trace, (MARKER_TYPE_BASE + len(markers) + 1, {}))
        values.setdefault(event, len(values) + 1)
    return counters, markers


def _threads(timeline):
    """Paraver thread names: the rows, then the whole design's thread if anything needs it."""
    names = [row.name for row in timeline.rows]
    if timeline.markers or any(counter.row is None for counter in timeline.counters):
        names.append(timeline.name)
    return names


def _readme(timeline, stem, clock_mhz):
    versions = ", ".join(f"{name} {v}" for name, v in tool_versions().items() if v)
    lines = [f"Paraver trace of {timeline.name}: {stem}.prv (records), {stem}.pcf (state and "
             f"event names), {stem}.row (thread names).",
             f"Written by {versions}.",
             "",
             "Time unit: one clock cycle of the design, counted from the HMM's start. Paraver has "
             "no cycles and shows them as ns: read ns as cycles."]
    if clock_mhz is not None:
        lines.append(f"At {clock_mhz:g} MHz one cycle is {1000 / clock_mhz:g} ns.")
    dropped = [f"{name} {count}" for name, count in timeline.dropped if count]
    lines.append("Records the HMM dropped (missing from this trace): "
                 + (", ".join(dropped) if dropped else "none"))
    lines.append("Saturated counters (their events stop there): "
                 + (", ".join(timeline.saturated) if timeline.saturated else "none"))
    return "\n".join(lines) + "\n"


def _prv(timeline, created):
    threads = _threads(timeline)
    design_thread = len(threads)
    counter_types, marker_types = _event_types(timeline)
    records = []               # (time, record kind, thread, text)
    for thread, row in enumerate(timeline.rows, 1):
        for begin, end, state in row.spans:
            records.append((begin, 1, thread, f"1:0:1:1:{thread}:{begin}:{end}:{state}"))
    events = {}                # (time, thread) -> [(type, value)]
    for counter in timeline.counters:
        thread = design_thread if counter.row is None else counter.row + 1
        for cycle, count in counter.points:
            events.setdefault((cycle, thread), []).append((counter_types[counter.name], count))
    for marker in timeline.markers:
        trace, _, event = marker.name.partition(" ")
        kind, values = marker_types[trace]
        events.setdefault((marker.cycle, design_thread), []).append((kind, values[event]))
    for (cycle, thread), pairs in events.items():
        fields = ":".join(f"{kind}:{value}" for kind, value in pairs)
        records.append((cycle, 2, thread, f"2:0:1:1:{thread}:{cycle}:{fields}"))
    records.sort(key=lambda r: r[:3])
    header = (f"#Paraver ({time.strftime('%d/%m/%y at %H:%M', created)}):"
              f"{timeline.end_cycle}_ns:1(1):1:1({len(threads)}:1)")
    return "\n".join([header, *(text for *_, text in records)]) + "\n"


def _pcf(timeline):
    counter_types, marker_types = _event_types(timeline)
    lines = ["DEFAULT_OPTIONS", "",
             f"{'LEVEL':<20}THREAD", f"{'UNITS':<20}NANOSEC", f"{'LOOK_BACK':<20}100",
             f"{'SPEED':<20}1", f"{'FLAG_ICONS':<20}ENABLED",
             f"{'NUM_OF_STATE_COLORS':<20}{len(timeline.states)}", f"{'YMAX_SCALE':<20}37",
             "", "", "DEFAULT_SEMANTIC", "", f"{'THREAD_FUNC':<20}State As Is", "", "",
             "STATES"]
    lines += [f"{index:<5}{name}" for index, name in enumerate(timeline.states)]
    lines += ["", "", "STATES_COLOR"]
    lines += ["{:<5}{{{},{},{}}}".format(index, *_color(index, name))
              for index, name in enumerate(timeline.states)]
    every = (f", sampled every {timeline.sample_period_cycles} cycles"
             if timeline.sample_period_cycles else "")
    for name, kind in counter_types.items():
        lines += ["", "", "EVENT_TYPE",
                  f"0    {kind}    {name}: count since the thread's previous {name} event{every}"]
    for trace, (kind, values) in marker_types.items():
        lines += ["", "", "EVENT_TYPE", f"0    {kind}    {trace}", "VALUES"]
        lines += [f"{value:<5}{event}" for event, value in values.items()]
    return "\n".join(lines) + "\n"


def _row(timeline):
    threads = _threads(timeline)
    return "\n".join([f"LEVEL THREAD SIZE {len(threads)}", *threads]) + "\n"


def paraver_files(timeline, *, stem="trace", clock_mhz=None, created=None):
    """The text of the ``.prv``, ``.pcf``, ``.row`` and ``.readme.txt`` files of ``timeline``.

    Parameters
    ----------
    timeline : Timeline
    stem : str
        The files' name without suffix, which the readme names.
    clock_mhz : float or None
        The design's clock, mentioned in the readme (times stay in cycles).
    created : time.struct_time or None
        The date in the header; default now.

    Returns
    -------
    dict of str to str
        ``{".prv": text, ".pcf": text, ".row": text, ".readme.txt": text}``.
    """
    created = time.localtime() if created is None else created
    return {".prv": _prv(timeline, created), ".pcf": _pcf(timeline), ".row": _row(timeline),
            ".readme.txt": _readme(timeline, stem, clock_mhz)}
