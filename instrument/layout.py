"""The layout manifest of an HMM: where every value lives on its port and how to decode it.

The build writes it as JSON next to the Verilog; a host needs nothing else to read every value by
name. Addresses are word addresses on the port (see :mod:`hwgen.instrument.port`).

Scalar values live in the *snapshot*: one register of packed fields that the ``snapshot``
command fills at once, read word by word (field ``f`` is bits ``f.offset .. f.offset + f.bits``
of the little-endian concatenation of the words; a counter's overflow flag is the bit above).
Tables (state profiles, histogram bins, accumulator tables) and traces (records) are regions of
entries, one entry every ``stride_words`` words.
"""

import json
import zlib
from dataclasses import dataclass, field

__all__ = ["Field", "TableLayout", "TraceLayout", "Group", "HMMLayout", "COMMANDS",
           "STATUS_BITS", "REGISTERS", "READ_LATENCY_CYCLES"]

#: Bits of the control register, written to execute commands (several may be set at once).
COMMANDS = {"clear": 1, "run": 2, "freeze": 4, "snapshot": 8}
#: Bits of the status register (the control register's address, read).
STATUS_BITS = {"running": 0, "busy": 1}
#: Fixed register addresses.
REGISTERS = {"control": 0, "layout_id": 1}
#: The fewest cycles from a read request to its data (an HMM's port may take more: its layout's
#: ``read_latency_cycles``).
READ_LATENCY_CYCLES = 3


def _bits_of(words, offset, bits, word_bits):
    """Bits ``offset .. offset + bits`` of little-endian ``words``."""
    first, last = offset // word_bits, (offset + bits - 1) // word_bits
    value = 0
    for index in range(last, first - 1, -1):
        value = (value << word_bits) | words[index]
    return (value >> (offset - first * word_bits)) & ((1 << bits) - 1)


@dataclass(frozen=True)
class Field:
    """A packed field: ``bits`` wide at bit ``offset``; with ``overflow``, a flag bit follows.

    Its value is ``scale`` times the bits: a field with a ``scale`` other than 1 is a constant
    multiple of a count the HMM keeps once (another field at the same bits, see
    :class:`~hwgen.instrument.probe.Scaled`), and shares its overflow flag.
    """
    name: str
    offset: int
    bits: int
    overflow: bool = False
    scale: int = 1

    @property
    def total_bits(self):
        return self.bits + self.overflow

    def decode(self, words, word_bits, base=0):
        """``(value, overflow flag or None)`` from words holding the field at ``base + offset``."""
        value = _bits_of(words, base + self.offset, self.bits, word_bits)
        flag = None
        if self.overflow:
            flag = bool(_bits_of(words, base + self.offset + self.bits, 1, word_bits))
        return self.scale * value, flag

    def to_json(self):
        return {"name": self.name, "offset": self.offset, "bits": self.bits,
                "overflow": self.overflow, **({"scale": self.scale} if self.scale != 1 else {})}

    @classmethod
    def from_json(cls, obj):
        return cls(obj["name"], obj["offset"], obj["bits"], obj["overflow"], obj.get("scale", 1))


@dataclass(frozen=True)
class TableLayout:
    """A table of saturating counts: one entry per label, each ``bits`` + overflow flag; entry
    ``label`` is the readout value ``<name>.<label>``, or the label's name in ``values``."""
    name: str
    kind: str              # "profile", "histogram" or "accumulate"
    base: int
    stride_words: int
    bits: int
    labels: tuple
    values: tuple = ()

    @property
    def entry_names(self):
        return self.values or tuple(f"{self.name}.{label}" for label in self.labels)

    def address(self, entry, word):
        return self.base + entry * self.stride_words + word

    def entry_words(self, word_bits):
        """Words of an entry that hold its count and flag."""
        return -(-(self.bits + 1) // word_bits)

    def to_json(self):
        return {"name": self.name, "kind": self.kind, "base": self.base,
                "stride_words": self.stride_words, "bits": self.bits, "labels": list(self.labels),
                **({"values": list(self.values)} if self.values else {})}

    @classmethod
    def from_json(cls, obj):
        return cls(obj["name"], obj["kind"], obj["base"], obj["stride_words"], obj["bits"],
                   tuple(obj["labels"]), tuple(obj.get("values", ())))


@dataclass(frozen=True)
class TraceLayout:
    """A trace buffer: ``depth`` records of timestamp, one bit per event, and payload fields.

    ``labels`` names the codes of some payload fields: ``((field name, (name of code 0, name of
    code 1, ...)), ...)``, for example a state machine's states. A sampler's ``period`` is the
    number of cycles between its records (``None`` for other traces).
    """
    name: str
    kind: str              # "trace", "sampler", "changes" or "thread_states"
    base: int
    stride_words: int
    depth: int
    mode: str
    timestamp_bits: int
    events: tuple          # trigger names, bit i of the events field is events[i]
    payload: tuple         # Fields, offsets within the record
    consumed_register: int
    written: str           # snapshot field names
    dropped: str
    labels: tuple = ()
    period: int | None = None

    @property
    def pointer_bits(self):
        return self.depth.bit_length()

    def address(self, slot, word):
        return self.base + slot * self.stride_words + word

    @property
    def record_bits(self):
        return self.timestamp_bits + len(self.events) + sum(f.total_bits for f in self.payload)

    def entry_words(self, word_bits):
        """Words of a record."""
        return -(-self.record_bits // word_bits)

    def decode_record(self, words, word_bits):
        """A record as ``{"timestamp": t, "events": [names], <payload field>: value, ...}``."""
        bits = 0
        for word in reversed(words):
            bits = (bits << word_bits) | word
        record = {"timestamp": bits & ((1 << self.timestamp_bits) - 1)}
        mask = bits >> self.timestamp_bits
        record["events"] = [name for i, name in enumerate(self.events) if mask >> i & 1]
        for f in self.payload:
            record[f.name] = (bits >> f.offset) & ((1 << f.bits) - 1)
            if f.overflow:
                record[f"{f.name}.overflow"] = bool(bits >> (f.offset + f.bits) & 1)
        return record

    def to_json(self):
        return {"name": self.name, "kind": self.kind, "base": self.base,
                "stride_words": self.stride_words, "depth": self.depth, "mode": self.mode,
                "timestamp_bits": self.timestamp_bits, "events": list(self.events),
                "payload": [f.to_json() for f in self.payload],
                "consumed_register": self.consumed_register, "written": self.written,
                "dropped": self.dropped,
                "labels": {field: list(names) for field, names in self.labels},
                "period": self.period}

    @classmethod
    def from_json(cls, obj):
        return cls(obj["name"], obj["kind"], obj["base"], obj["stride_words"], obj["depth"],
                   obj["mode"], obj["timestamp_bits"], tuple(obj["events"]),
                   tuple(Field.from_json(f) for f in obj["payload"]), obj["consumed_register"],
                   obj["written"], obj["dropped"],
                   tuple((field, tuple(names)) for field, names in obj["labels"].items()),
                   obj["period"])


@dataclass(frozen=True)
class Group:
    """What a probe measured, by role: ``{"role": value, table or trace name}``.

    Kinds: ``counter`` (role ``value``), ``stream`` (``transferring``, ``blocking``, ``idle``),
    ``profile`` (``table``), ``histogram`` (``count``, ``sum``, ``min``, ``max``, ``table``),
    ``latency`` (``histogram`` group name, ``wait_cycles``, ``untracked``), ``trace``,
    ``sampler``, ``changes`` and ``thread_states`` (``trace``).
    """
    kind: str
    name: str
    roles: tuple           # ((role, name), ...)

    def __getitem__(self, role):
        return dict(self.roles)[role]

    def to_json(self):
        return {"kind": self.kind, "name": self.name, "roles": dict(self.roles)}

    @classmethod
    def from_json(cls, obj):
        return cls(obj["kind"], obj["name"], tuple(obj["roles"].items()))


@dataclass(frozen=True)
class HMMLayout:
    """Everything a host needs to drive an HMM's port and decode what it reads.

    Attributes
    ----------
    word_bits, addr_bits : int
        Port widths.
    snapshot_base : int
        Word address of the snapshot's first word.
    fields : tuple of Field
        The snapshot's fields.
    tables, traces : tuple
    groups : tuple of Group
    details : dict
        Parameters worth recording (counter bits, stream and FSM sources, ...).
    read_latency_cycles : int
        Cycles from a read strobe on the port to its word.
    """
    word_bits: int
    addr_bits: int
    snapshot_base: int
    fields: tuple
    tables: tuple
    traces: tuple
    groups: tuple
    details: dict = field(default_factory=dict, compare=False, hash=False)
    read_latency_cycles: int = READ_LATENCY_CYCLES

    @property
    def stored_fields(self):
        """The fields with bits of their own: a field that scales another's shares its bits."""
        return tuple({(f.offset, f.total_bits): f for f in reversed(self.fields)}.values())[::-1]

    @property
    def snapshot_bits(self):
        """Bits the snapshot holds."""
        return sum(f.total_bits for f in self.stored_fields)

    @property
    def snapshot_words(self):
        """Words from the snapshot's base to its last field's last bit."""
        end = max((f.offset + f.total_bits for f in self.fields), default=0)
        return max(1, -(-end // self.word_bits))

    def snapshot_field(self, name):
        """The snapshot field called ``name``."""
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"no value named {name!r} in this HMM")

    def table(self, name):
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"no table named {name!r} in this HMM")

    def trace(self, name):
        for t in self.traces:
            if t.name == name:
                return t
        raise KeyError(f"no trace named {name!r} in this HMM")

    def groups_of(self, kind):
        return [g for g in self.groups if g.kind == kind]

    @property
    def layout_id(self):
        """CRC-32 of the layout: the HMM answers it at register ``layout_id``."""
        text = json.dumps(self._body(), sort_keys=True, separators=(",", ":"))
        return zlib.crc32(text.encode()) & ((1 << min(32, self.word_bits)) - 1)

    def decode_snapshot(self, words):
        """``({name: value}, {name: overflow flag})`` of every snapshot field."""
        values, overflow = {}, {}
        for f in self.fields:
            value, flag = f.decode(words, self.word_bits)
            values[f.name] = value
            if flag is not None:
                overflow[f.name] = flag
        return values, overflow

    def _body(self):
        return {
            "word_bits": self.word_bits,
            "addr_bits": self.addr_bits,
            "read_latency_cycles": self.read_latency_cycles,
            "registers": REGISTERS,
            "commands": COMMANDS,
            "status_bits": STATUS_BITS,
            "snapshot": {"base": self.snapshot_base, "words": self.snapshot_words,
                         "fields": [f.to_json() for f in self.fields]},
            "tables": [t.to_json() for t in self.tables],
            "traces": [t.to_json() for t in self.traces],
            "groups": [g.to_json() for g in self.groups],
        }

    def to_json(self):
        return {"hmm_layout": 1, "layout_id": self.layout_id, **self._body(),
                "details": self.details}

    @classmethod
    def from_json(cls, obj):
        if obj.get("hmm_layout") != 1:
            raise ValueError(f"not an HMM layout of version 1: "
                             f"hmm_layout={obj.get('hmm_layout')!r}")
        layout = cls(
            word_bits=obj["word_bits"], addr_bits=obj["addr_bits"],
            snapshot_base=obj["snapshot"]["base"],
            fields=tuple(Field.from_json(f) for f in obj["snapshot"]["fields"]),
            tables=tuple(TableLayout.from_json(t) for t in obj["tables"]),
            traces=tuple(TraceLayout.from_json(t) for t in obj["traces"]),
            groups=tuple(Group.from_json(g) for g in obj["groups"]),
            details=obj.get("details", {}), read_latency_cycles=obj["read_latency_cycles"])
        if layout.layout_id != obj["layout_id"]:
            raise ValueError("the layout's layout_id does not match its contents")
        return layout
