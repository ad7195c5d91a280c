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

import numpy as np

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


def _spans(stamps, states, end):
    """Spans ``(begin, end, state)`` of one field whose state is ``states[i]`` from cycle
    ``stamps[i]`` on: a record lasts until the next (the last until ``end``), records that last
    no cycle are skipped, and adjacent spans of one state merge."""
    stops = np.append(stamps[1:], np.int64(end))
    lasting = stops > stamps
    begins, stops, states = stamps[lasting], stops[lasting], states[lasting]
    new = np.ones(len(begins), dtype=bool)
    new[1:] = (states[1:] != states[:-1]) | (stops[:-1] != begins[1:])
    firsts = np.flatnonzero(new)
    lasts = np.append(firsts[1:], len(begins)) - 1
    return tuple(zip(begins[firsts].tolist(), stops[lasts].tolist(), states[firsts].tolist()))


def _rows(records, fields, state_id, end):
    """The rows of the fields of one change trace (``records``, a
    :class:`~hwgen.sim.trace_records.TraceRecords`); ``state_id(label)`` numbers the states,
    those of codes without a label (named by their number) in the order the records show them."""
    codes = {field: records.column(field) for field, _ in fields}
    unlabelled = []          # (first record, field's place, code)
    for place, (field, labels) in enumerate(fields):
        values, firsts = np.unique(codes[field], return_index=True)
        unlabelled += [(int(first), place, int(code)) for code, first in zip(values, firsts)
                       if code >= len(labels)]
    for _, _, code in sorted(unlabelled):
        state_id(str(code))
    stamps = records.column("timestamp").astype(np.int64)
    rows = []
    for field, labels in fields:
        values, which = np.unique(codes[field], return_inverse=True)
        ids = np.array([state_id(labels[code] if code < len(labels) else str(code))
                        for code in values.tolist()], dtype=np.int64)
        rows.append(Row(field, _spans(stamps, ids[which.reshape(-1)], end)))
    return rows


def _counter_points(stamps, totals, overflow):
    """``(end_cycle, count)`` of each period from a sampler's running ``totals`` at cycles
    ``stamps``, up to the first total whose ``overflow`` flag is set; a sample no later than one
    before counts nothing. Returns ``(points, saturated)``."""
    flagged = np.flatnonzero(overflow)
    cut = flagged[0] if len(flagged) else len(stamps)
    stamps, totals = stamps[:cut], totals[:cut]
    before = np.maximum.accumulate(np.concatenate(([0], stamps)))[:-1]
    taken = np.flatnonzero(stamps > before)
    counts = np.diff(totals[taken], prepend=totals.dtype.type(0))
    return tuple(zip(stamps[taken].tolist(), counts.tolist())), bool(len(flagged))


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
            for row in _rows(readout.traces[trace.name], fields, state_id, end):
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
                stamps = np.append(records.column("timestamp").astype(np.int64), np.int64(end))
                wide = field.bits >= 64      # totals of up to 63 bits fit an int64
                totals = np.append(records.column(field.name).astype(object if wide else np.int64),
                                   readout[field.name])
                flags = (records.column(f"{field.name}.overflow") if field.overflow
                         else np.zeros(len(records), dtype=bool))
                overflow = np.append(flags, bool(readout.overflow.get(field.name)))
                points, flagged = _counter_points(stamps, totals, overflow)
                if flagged:
                    saturated.append(field.name)
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
