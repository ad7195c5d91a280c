"""What a report is made of: the JSON files commands wrote, each known by a section renderer."""

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import HwgenError
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


def document(data, source):
    """The :class:`Document` of a JSON object; HwgenError when no renderer knows it."""
    renderer = renderer_for(data)
    if renderer is None:
        raise HwgenError(f"{source} is not a JSON file hwgen knows how to report (the JSON of "
                         f"{_known()})")
    return Document(data, source, renderer)


def _load(path):
    try:
        return json.loads(Path(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HwgenError(f"{path} is not JSON ({error})") from None
    except OSError as error:
        raise HwgenError(f"cannot read {str(path)!r} ({error.strerror})") from None


def read_inputs(path):
    """``(documents, skipped)`` of a JSON file or of the ``*.json`` files in a folder (in name
    order); ``skipped`` lists a folder's files no renderer knows, with why."""
    path = Path(path)
    if not path.exists():
        raise HwgenError(f"DIR_OR_JSON: {str(path)!r} does not exist")
    if path.is_file():
        return [document(_load(path), str(path))], []
    documents, skipped = [], []
    for file in sorted(path.glob("*.json")):
        try:
            documents.append(document(_load(file), str(file)))
        except HwgenError as error:
            skipped.append(str(error))
    if not documents:
        raise HwgenError(f"DIR_OR_JSON: {str(path)!r} holds no JSON file hwgen knows how to "
                         f"report (the JSON of {_known()})")
    return documents, skipped
