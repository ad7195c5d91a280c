"""The records of what hwgen's commands measured, as they write them to JSON.

Each record owns its JSON: ``to_json()`` gives what ``--json`` writes, stamped with its schema
and version, and ``from_json()`` reads it back, refusing another schema or a newer version
(:class:`SchemaError`). :func:`read_record` finds the record of any stamped object. The keys,
their units and the versions are documented in docs/json.md.
"""

from .explore import ExploreResult
from .measured import OverheadRecord, SynthRecord
from .run import RunResult
from .schema import SchemaError, schema_of
from .sim import SimResult

__all__ = ["RECORDS", "ExploreResult", "OverheadRecord", "RunResult", "SchemaError", "SimResult", "SynthRecord",
           "read_record"]

#: The record class of every schema, by name.
RECORDS = {cls.SCHEMA: cls for cls in (SimResult, RunResult, SynthRecord, OverheadRecord,
                                              ExploreResult)}


def read_record(obj):
    """The record a JSON object stamped with its schema holds; :class:`SchemaError` for an
    unstamped object, an unknown schema or a newer version than this hwgen reads."""
    name, version = schema_of(obj)
    if name is None:
        raise SchemaError("no schema: not a record hwgen wrote")
    if name not in RECORDS:
        raise SchemaError(f"unknown schema {name!r} (this hwgen reads {', '.join(RECORDS)})")
    return RECORDS[name].from_json(obj)
