"""What a report is made of: the JSON files commands wrote, each known by a section renderer."""

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import HwgenError
from ..records import SchemaError, read_record, schema_of
from .sections import kinds, renderer_for

__all__ = ["Document", "document", "read_inputs"]


@dataclass(frozen=True)
class Document:
    """One command's JSON, the renderer that knows it and where it came from."""
    data: dict
    source: str
    renderer: object

    @property
    def kind(self):
        return self.renderer.kind

    def section(self):
        return self.renderer.render(self.data, self.source)


def _known():
    return ", ".join(kinds())


def _through_record(data):
    """``data`` read through its record (:func:`hwgen.records.read_record`) and written again
    when it is stamped with a schema, so the page shows what the library reads; an unstamped
    object (a line profile, a roofline, a record of a hwgen before the stamps) as it is.
    :class:`~hwgen.records.SchemaError` for an unknown schema or a newer version."""
    if schema_of(data)[0] is None:
        return data
    return read_record(data).to_json()


def document(data, source):
    """The :class:`Document` of a JSON object a command made (ValueError when no renderer knows
    it: that is a bug)."""
    data = _through_record(data)
    renderer = renderer_for(data)
    if renderer is None:
        raise ValueError(f"{source}: no section renderer knows this JSON ({_known()} do)")
    return Document(data, source, renderer)


def _load(path):
    try:
        data = json.loads(Path(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HwgenError(f"DIR_OR_JSON: {str(path)!r} is not JSON ({error})") from None
    except OSError as error:
        raise HwgenError(f"DIR_OR_JSON: cannot read {str(path)!r} ({error.strerror})") from None
    try:
        return _through_record(data)
    except SchemaError as error:
        raise _Refused(path, str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        raise _Refused(path, f"not a complete {data['schema']} record "
                             f"({type(error).__name__}: {error})") from None


class _Refused(HwgenError):
    """A JSON file whose record this hwgen does not read, and why."""

    def __init__(self, path, reason):
        super().__init__(f"DIR_OR_JSON: {str(path)!r}: {reason}")
        self.reason = reason


def read_inputs(path):
    """``(documents, skipped)`` of a JSON file or of the ``*.json`` files in a folder (in name
    order); ``skipped`` lists the ``(file, why)`` of a folder's files no renderer knows."""
    path = Path(path)
    if not path.exists():
        raise HwgenError(f"DIR_OR_JSON: {str(path)!r} does not exist")
    if path.is_file():
        data = _load(path)
        if renderer_for(data) is None:
            raise HwgenError(f"DIR_OR_JSON: {str(path)!r} is not the JSON of a command hwgen "
                             f"reports ({_known()})")
        return [Document(data, str(path), renderer_for(data))], []
    documents, skipped = [], []
    for file in sorted(path.glob("*.json")):
        try:
            data = _load(file)
        except _Refused as error:
            skipped.append((str(file), error.reason))
            continue
        except HwgenError:
            skipped.append((str(file), "not JSON"))
            continue
        if renderer_for(data) is None:
            skipped.append((str(file), "not the JSON of a command hwgen reports"))
        else:
            documents.append(Document(data, str(file), renderer_for(data)))
    if not documents:
        raise HwgenError(f"DIR_OR_JSON: {str(path)!r} holds no JSON of a command hwgen reports "
                         f"({_known()})")
    return documents, skipped
