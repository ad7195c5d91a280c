"""What an HMM recorded over time, ready to export: rows of states, sampled counters, markers.

:meth:`Timeline.from_readout` turns the traces a host read from an HMM
(:class:`hwgen.sim.HMMReadout`, decoded with its :class:`hwgen.instrument.HMMLayout`) into

* **rows**, one per labelled field of a change trace (:class:`hwgen.instrument.probe.Changes`): a
  hardware thread of :class:`~hwgen.instrument.probe.ThreadStates`, or a state machine or stream of an
  attached ``timeline``; each row is a sequence of spans of constant state;
* **counters**, one per field of a sampler (:class:`hwgen.instrument.probe.Sampler`): the count of
  each period, from the running totals the sampler recorded; a counter named ``<figure>.<field>``
  belongs to the row of field ``<field>``, any other to the whole design;
* **markers**, one per record of a plain trace (:class:`hwgen.instrument.probe.Trace`), for example
  the start and end of a job.

Time is in clock cycles counted by the HMM from its start (reset or the last clear) to the
freeze the host read it under: cycle ``t`` of a row, a counter or a marker is the HMM timestamp
``t``. A sample at cycle ``t`` counts cycles ``previous sample .. t - 1``; the last period ends
where the timeline ends, with the totals read at the freeze.
"""

from dataclasses import dataclass

__all__ = ["Timeline", "Row", "Counter", "Marker"]


@dataclass(frozen=True)
class Row:
    """One row: spans ``(begin_cycle, end_cycle, state)`` (end exclusive, ``state`` an index in
    :attr:`Timeline.states`), in order, from its first record to the end of the timeline."""
    name: str
    spans: tuple

    def to_json(self):
        return {"name": self.name, "spans": [list(span) for span in self.spans]}


@dataclass(frozen=True)
class Counter:
    """A sampled figure: ``points`` ``(end_cycle, count)``, the count of the cycles from the
    previous point (or cycle 0) up to ``end_cycle`` (exclusive). ``row`` is the index of the row
    it belongs to, or ``None`` for the whole design."""
    name: str
    row: int | None
    points: tuple

    def to_json(self):
        return {"name": self.name, "row": self.row, "points": [list(p) for p in self.points]}


@dataclass(frozen=True)
class Marker:
    """A record of a plain trace: ``name`` is ``<trace> <event>``; ``values`` its payload."""
    cycle: int
    name: str
    values: tuple = ()

    def to_json(self):
        return {"cycle": self.cycle, "name": self.name, "values": dict(self.values)}


def _rows(records, fields, state_ids, end):
    """Spans of each field over ``records`` of one change trace."""
    spans = {field: [] for field, _ in fields}
    for index, record in enumerate(records):
        stop = records[index + 1]["timestamp"] if index + 1 < len(records) else end
        begin = record["timestamp"]
        if stop <= begin:
            continue
        for field, labels in fields:
            code = record[field]
            state = state_ids[labels[code] if code < len(labels) else str(code)]
            row = spans[field]
            if row and row[-1][2] == state and row[-1][1] == begin:
                row[-1] = (row[-1][0], stop, state)
            else:
                row.append((begin, stop, state))
    return [Row(field, tuple(spans[field])) for field, _ in fields]


@dataclass(frozen=True)
class Timeline:
    """Rows of states, counters and markers over ``end_cycle`` cycles (see the module).

    Attributes
    ----------
    name : str
        What was recorded (a design, a program).
    end_cycle : int
        Cycles the timeline covers, from 0.
    states : tuple of str
        State names; a span's state is an index in it.
    rows, counters, markers : tuple
    sample_period_cycles : int or None
        The samplers' period.
    dropped : tuple of (str, int)
        Records each trace had to drop (then rows miss changes and counters merge periods).
    saturated : tuple of str
        Counters whose running total saturated; their points stop there.
    """
    name: str
    end_cycle: int
    states: tuple
    rows: tuple
    counters: tuple
    markers: tuple
    sample_period_cycles: int | None
    dropped: tuple
    saturated: tuple

    @classmethod
    def from_readout(cls, name, readout, layout):
        """The timeline of an HMM's traces (``readout``, decoded with ``layout``)."""
        end = readout["cycles"]
        states, state_ids = [], {}

        def state_id(label):
            if label not in state_ids:
                state_ids[label] = len(states)
                states.append(label)
            return state_ids[label]

        rows, row_of = [], {}
        for trace in layout.traces:
            if not trace.labels:
                continue
            fields = list(trace.labels)
            for _, labels in fields:
                for label in labels:
                    state_id(label)
            records = readout.traces[trace.name]
            for record in records:       # codes without a label get their number as name
                for field, labels in fields:
                    if record[field] >= len(labels):
                        state_id(str(record[field]))
            for row in _rows(records, fields, state_ids, end):
                row_of[row.name] = len(rows)
                rows.append(row)

        counters, saturated, period = [], [], None
        for trace in layout.traces:
            if trace.kind != "sampler":
                continue
            period = trace.period
            records = readout.traces[trace.name]
            for field in trace.payload:
                figure, _, owner = field.name.rpartition(".")
                row = row_of.get(owner) if figure else None
                points, before, last = [], 0, 0
                totals = [(r["timestamp"], r[field.name], r.get(f"{field.name}.overflow"))
                          for r in records]
                totals.append((end, readout[field.name], readout.overflow.get(field.name)))
                for cycle, total, overflow in totals:
                    if overflow:
                        saturated.append(field.name)
                        break
                    if cycle > last:          # a sample at cycle 0 counts nothing
                        points.append((cycle, total - before))
                        before, last = total, cycle
                counters.append(Counter(figure if row is not None else field.name, row,
                                        tuple(points)))

        markers = []
        for trace in layout.traces:
            if trace.kind != "trace":
                continue
            for record in readout.traces[trace.name]:
                values = tuple((f.name, record[f.name]) for f in trace.payload)
                for event in record["events"]:
                    markers.append(Marker(record["timestamp"], f"{trace.name} {event}", values))
        markers.sort(key=lambda m: m.cycle)

        dropped = tuple((trace.name, readout[trace.dropped]) for trace in layout.traces)
        return cls(name, end, tuple(states), tuple(rows), tuple(counters), tuple(markers),
                   period, dropped, tuple(saturated))

    def to_json(self):
        return {
            "name": self.name,
            "end_cycle": self.end_cycle,
            "time_unit": "clock cycle",
            "states": list(self.states),
            "rows": [row.to_json() for row in self.rows],
            "counters": [counter.to_json() for counter in self.counters],
            "markers": [marker.to_json() for marker in self.markers],
            "sample_period_cycles": self.sample_period_cycles,
            "dropped": dict(self.dropped),
            "saturated": list(self.saturated),
        }
