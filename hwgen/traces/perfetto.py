"""Chrome / Perfetto JSON traces of a :class:`~hwgen.traces.timeline.Timeline` (the Trace Event
Format's JSON object form), for ui.perfetto.dev and chrome://tracing.

Mapping
-------
* One process (``pid`` 1) named after the timeline; each row (a hardware thread, a state
  machine, a stream) is a thread track (``tid`` = row index + 1, ``thread_name`` and
  ``thread_sort_index`` metadata events, ``ph`` ``M``).
* Each span of a row is a complete event (``ph`` ``X``) named after its state, with ``ts`` and
  ``dur``, and the cycles in ``args``.
* Each counter is a counter track (``ph`` ``C``, process-wide): ``<row> <counter>`` for a row's
  counter, ``<counter>`` for the whole design's; an event at the start of each sample period
  sets ``args.count`` to the count of that period, so the value holds over the cycles it counts.
* Each marker is a global instant event (``ph`` ``i``, ``s`` ``g``), its payload in ``args``.
* **Time.** ``ts`` and ``dur`` are microseconds, as the format requires: cycle / ``clock_mhz``.
  ``displayTimeUnit`` is ``ns``. ``otherData`` records the clock, the time unit, the sample
  period, dropped records and the versions of hwgen and its tools.
"""

from ..versions import tool_versions

__all__ = ["perfetto_trace"]

PID = 1


def perfetto_trace(timeline, *, clock_mhz):
    """The JSON object (a dict) of ``timeline``'s trace, times at ``clock_mhz``.

    Parameters
    ----------
    timeline : Timeline
    clock_mhz : float
        The design's clock: cycle ``c`` is at ``c / clock_mhz`` microseconds.
    """
    if isinstance(clock_mhz, bool) or not isinstance(clock_mhz, (int, float)) or clock_mhz <= 0:
        raise ValueError(f"clock_mhz must be a positive number, not {clock_mhz!r}")

    def us(cycle):
        return cycle / clock_mhz

    events = [{"ph": "M", "pid": PID, "name": "process_name", "args": {"name": timeline.name}}]
    for index, row in enumerate(timeline.rows):
        tid = index + 1
        events.append({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name",
                       "args": {"name": row.name}})
        events.append({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": index}})
        for begin, end, state in row.spans:
            events.append({"ph": "X", "pid": PID, "tid": tid, "cat": "state",
                           "name": timeline.states[state], "ts": us(begin),
                           "dur": us(end - begin),
                           "args": {"begin_cycle": begin, "end_cycle": end}})
    for counter in timeline.counters:
        name = (counter.name if counter.row is None
                else f"{timeline.rows[counter.row].name} {counter.name}")
        begin = 0
        for end, count in counter.points:
            events.append({"ph": "C", "pid": PID, "name": name, "ts": us(begin),
                           "args": {"count": count}})
            begin = end
    for marker in timeline.markers:
        events.append({"ph": "i", "pid": PID, "tid": 0, "s": "g", "name": marker.name,
                       "ts": us(marker.cycle),
                       "args": {"cycle": marker.cycle, **dict(marker.values)}})
    other = {
        "clock_mhz": clock_mhz,
        "time_unit": "ts and dur are microseconds: clock cycle / clock_mhz",
        "end_cycle": timeline.end_cycle,
        "sample_period_cycles": timeline.sample_period_cycles,
        **{f"dropped_records.{name}": count for name, count in timeline.dropped},
        **{f"version.{name}": version for name, version in tool_versions().items()},
    }
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}
