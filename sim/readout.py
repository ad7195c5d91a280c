"""What a host read from an HMM, decoded by name."""

from dataclasses import dataclass

from ..instrument.layout import Group

from .trace_records import TraceRecords

__all__ = ["HMMReadout"]


@dataclass(frozen=True)
class HMMReadout:
    """Every value an HMM held when it was read.

    Attributes
    ----------
    layout_id : int
        Of the layout the words were decoded with.
    values : dict of str to int
        Every scalar value and every table entry (``<table>.<label>``) by name.
    overflow : dict of str to bool
        The overflow flag of every counter (a set flag: the value is a lower bound).
    tables : dict of str to dict of str to int
        Each table's counts by label.
    traces : dict of str to TraceRecords
        Each trace's records, oldest first, as columns (a sequence of record dicts too).
    groups : tuple of hwgen.instrument.layout.Group
        What each probe measured, by role.
    """
    layout_id: int
    values: dict
    overflow: dict
    tables: dict
    traces: dict
    groups: tuple

    def __getitem__(self, name):
        return self.values[name]

    def _of_kind(self, kind):
        return [g for g in self.groups if g.kind == kind]

    def fsms(self):
        """``{profile: {state: cycles}}``."""
        return {g.name: dict(self.tables[g["table"]]) for g in self._of_kind("profile")}

    def streams(self):
        """``{stream: {"transferring": n, "blocking": n, "idle": n}}``."""
        return {g.name: {role: self.values[name] for role, name in g.roles}
                for g in self._of_kind("stream")}

    def histograms(self):
        """``{histogram: {"bins": {label: n}, "count": n, "sum": n, "min": n, "max": n}}``."""
        return {g.name: {"bins": dict(self.tables[g["table"]]),
                         **{role: self.values[name] for role, name in g.roles if role != "table"}}
                for g in self._of_kind("histogram")}

    @property
    def saturated(self):
        """Names of the values whose overflow flag is set."""
        return sorted(name for name, flag in self.overflow.items() if flag)

    def to_json(self):
        return {
            "layout_id": self.layout_id,
            "values": self.values,
            "overflow": self.overflow,
            "saturated": self.saturated,
            "fsms": self.fsms(),
            "streams": self.streams(),
            "histograms": self.histograms(),
            "tables": self.tables,
            "traces": {name: records.to_json() for name, records in self.traces.items()},
            "groups": [g.to_json() for g in self.groups],
        }

    @classmethod
    def from_json(cls, obj):
        return cls(obj["layout_id"], dict(obj["values"]), dict(obj["overflow"]),
                   {name: dict(table) for name, table in obj["tables"].items()},
                   {name: TraceRecords.from_json(records)
                    for name, records in obj["traces"].items()},
                   tuple(Group.from_json(g) for g in obj["groups"]))
