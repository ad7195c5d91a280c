"""What ``hwgen synth`` and ``hwgen overhead`` found of a kernel's PE or a program's pipeline."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from .schema import check_schema, stamp

__all__ = ["OverheadRecord", "SynthRecord"]

if TYPE_CHECKING:   # the synthesis flow, imported where a record is read back
    from ..resources.overhead import Overhead
    from ..resources.synth import SynthResult


def _subject(obj):
    """``(what, name)``: ``("kernel", name)`` or ``("program", name)``."""
    what = "program" if "program" in obj else "kernel"
    return what, obj[what]


@dataclass(frozen=True)
class SynthRecord:
    """One synthesis (``hwgen synth``) and the design it is of.

    Parameters
    ----------
    what : str
        ``"kernel"`` or ``"program"``.
    name : str
        The kernel's or program's name.
    parameters : dict
        The PE's or the job's parameters.
    instrumented : bool
        Whether the design carried its HMM.
    measured : str
        How the reports name that (``"with the HMM"``, ``"bare"``).
    synthesis : SynthResult
        The figures, with the versions of the tools that made them.
    """
    SCHEMA = "hwgen.synth"
    SCHEMA_VERSION = 1

    what: str
    name: str
    parameters: dict
    instrumented: bool
    measured: str
    synthesis: SynthResult

    def to_json(self):
        """The record as written to ``--json``; keys and units: docs/json.md."""
        synthesis = self.synthesis.to_json()
        return stamp(self.SCHEMA, self.SCHEMA_VERSION, {
            "tool_versions": synthesis.pop("tool_versions"), self.what: self.name,
            "parameters": self.parameters, "instrumented": self.instrumented,
            "measured": self.measured, **synthesis})

    @classmethod
    def from_json(cls, obj):
        check_schema(obj, cls.SCHEMA, cls.SCHEMA_VERSION)
        from ..resources.synth import SynthResult

        what, name = _subject(obj)
        synthesis = SynthResult.from_json({f.name: obj[f.name] for f in fields(SynthResult)
                                           if f.name != "cached"}, cached=obj["cached"])
        return cls(what, name, obj["parameters"], obj["instrumented"], obj["measured"],
                   synthesis)


@dataclass(frozen=True)
class OverheadRecord:
    """One comparison of a design bare and with its HMM (``hwgen overhead``).

    Parameters
    ----------
    what : str
        ``"kernel"`` or ``"program"``.
    name : str
        The kernel's or program's name.
    design : str
        The design's name (as its files are named).
    parameters : dict
    probes : str
        The HMM's preset.
    overhead : Overhead
        Both syntheses and the board's device.
    """
    SCHEMA = "hwgen.overhead"
    SCHEMA_VERSION = 1

    what: str
    name: str
    design: str
    parameters: dict
    probes: str
    overhead: Overhead

    def to_json(self):
        """The record as written to ``--json``; keys and units: docs/json.md."""
        return stamp(self.SCHEMA, self.SCHEMA_VERSION, {
            self.what: self.name, "design": self.design, "parameters": self.parameters,
            "probes": self.probes, **self.overhead.to_json()})

    @classmethod
    def from_json(cls, obj):
        check_schema(obj, cls.SCHEMA, cls.SCHEMA_VERSION)
        from ..resources.overhead import Overhead

        what, name = _subject(obj)
        return cls(what, name, obj["design"], obj["parameters"], obj["probes"],
                   Overhead.from_json(obj))
