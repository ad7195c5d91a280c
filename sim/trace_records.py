"""The records of an HMM trace, as columns.

A long job's traces hold millions of records (GEMM 512 on 8 threads: 6.3 million thread-state
records and 4.2 million samples); a Python dict per record would take gigabytes. A
:class:`TraceRecords` keeps one numpy array per field, decoded from the words a host read in a
few vectorised operations, and is still a sequence of records: ``records[i]`` is the dict
:meth:`hwgen.instrument.layout.TraceLayout.decode_record` gives, and ``records == [dict, ...]``
compares record by record.
"""

from collections.abc import Sequence

import numpy as np

__all__ = ["TraceRecords"]

_WORD = 64     # bits of a numpy column; wider fields are object arrays of Python ints


def _narrow(values, width):
    """``values`` (``uint64``, of ``width`` bits) in the narrowest unsigned type that holds them:
    a state code takes a byte a record, not eight."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if width <= np.iinfo(dtype).bits:
            return values.astype(dtype)
    return values


class TraceRecords(Sequence):
    """Records of one trace, oldest first, one numpy array per field.

    Parameters
    ----------
    events : tuple of str
        The trace's event names: bit ``i`` of a record's event mask is ``events[i]``.
    masks : array-like of unsigned int
        Each record's event mask.
    columns : dict of str to numpy array
        ``"timestamp"`` and every payload field (of the narrowest unsigned type that holds the
        field, ``object`` when it is wider than 64 bits), and ``"<field>.overflow"`` (``bool``)
        for a counter field, in record order.
    """

    __hash__ = None

    def __init__(self, events, masks, columns):
        self.events = tuple(events)
        self.masks = np.asarray(masks)
        if self.masks.dtype.kind != "u":
            self.masks = self.masks.astype(np.uint64)
        self.columns = dict(columns)
        if "timestamp" not in self.columns:
            raise ValueError("the columns of trace records must hold 'timestamp'")
        for name, column in self.columns.items():
            if len(column) != len(self.masks):
                raise ValueError(f"column {name!r} has {len(column)} records, the event masks "
                                 f"{len(self.masks)}")

    @classmethod
    def decode(cls, trace, words, word_bits):
        """The records of ``trace`` (a :class:`~hwgen.instrument.layout.TraceLayout`) in
        ``words``, the words of consecutive records (a list or a numpy array)."""
        n = trace.entry_words(word_bits)
        rows = np.asarray(words, dtype=np.uint64).reshape(-1, n)

        def field(offset, width):
            """Bits ``offset .. offset + width`` of every record, from the words holding them."""
            first, last = offset // word_bits, (offset + width - 1) // word_bits
            if width > _WORD:        # Python ints, word by word
                value = rows[:, first].astype(object) >> (offset - first * word_bits)
                for w in range(first + 1, last + 1):
                    value = value | rows[:, w].astype(object) << (w * word_bits - offset)
                return value & ((1 << width) - 1)
            value = rows[:, first] >> np.uint64(offset - first * word_bits)
            for w in range(first + 1, last + 1):    # shifts of less than 64 bits
                value = value | rows[:, w] << np.uint64(w * word_bits - offset)
            return _narrow(value & np.uint64((1 << width) - 1), width)

        columns = {"timestamp": field(0, trace.timestamp_bits)}
        masks = (field(trace.timestamp_bits, len(trace.events)) if trace.events
                 else np.zeros(len(rows), dtype=np.uint64))
        for f in trace.payload:
            columns[f.name] = field(f.offset, f.bits)
            if f.overflow:
                columns[f"{f.name}.overflow"] = field(f.offset + f.bits, 1).astype(bool)
        return cls(trace.events, masks, columns)

    @classmethod
    def concatenate(cls, parts):
        """The records of ``parts`` (of one trace) one after the other."""
        parts = list(parts)
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        return cls(first.events, np.concatenate([p.masks for p in parts]),
                   {name: np.concatenate([p.columns[name] for p in parts])
                    for name in first.columns})

    @property
    def names(self):
        """The keys of a record: ``"timestamp"``, ``"events"``, then the payload's."""
        return ("timestamp", "events", *(name for name in self.columns if name != "timestamp"))

    def __len__(self):
        return len(self.masks)

    def _record(self, mask, values):
        """The dict of one record: its mask and ``{column: value}`` as Python numbers."""
        record = {"timestamp": values["timestamp"],
                  "events": [name for e, name in enumerate(self.events) if mask >> e & 1]}
        for name, value in values.items():
            if name != "timestamp":
                record[name] = value
        return record

    def __getitem__(self, index):
        if isinstance(index, slice):
            return TraceRecords(self.events, self.masks[index],
                                {name: column[index] for name, column in self.columns.items()})
        return self._record(int(self.masks[index]),
                            {name: column[index].item() if column.dtype != object
                             else column[index] for name, column in self.columns.items()})

    def __iter__(self):
        names = list(self.columns)
        columns = [self.columns[name].tolist() for name in names]
        for mask, *values in zip(self.masks.tolist(), *columns):
            yield self._record(mask, dict(zip(names, values)))

    def __eq__(self, other):
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    def __repr__(self):
        return f"TraceRecords({len(self)} records of {', '.join(self.names)})"

    def column(self, name):
        """The values of field ``name`` (``"timestamp"``, a payload field or
        ``"<field>.overflow"``), one per record."""
        return self.columns[name]

    def has_event(self, name):
        """A ``bool`` array: which records have event ``name``."""
        return (self.masks >> np.uint64(self.events.index(name)) & np.uint64(1)).astype(bool)

    def to_json(self):
        """The records as a list of dicts (as :meth:`__getitem__` gives them)."""
        return list(self)

    @classmethod
    def from_json(cls, records):
        """The records :meth:`to_json` wrote. Their event names are numbered in the order they
        first appear (the masks differ from the HMM's; the records are equal)."""
        records = list(records)
        events = list(dict.fromkeys(e for record in records for e in record["events"]))
        masks = [sum(1 << events.index(e) for e in record["events"]) for record in records]
        names = list(dict.fromkeys(k for record in records for k in record if k != "events"))
        if not records:
            names = ["timestamp"]
        columns = {}
        for name in names:
            values = [record[name] for record in records]
            if name.endswith(".overflow"):
                columns[name] = np.array(values, dtype=bool)
            else:
                wide = any(v >> _WORD for v in values)
                columns[name] = np.array(values, dtype=object if wide else np.uint64)
        return cls(events, masks, columns)
