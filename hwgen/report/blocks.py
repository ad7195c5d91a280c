"""The parts a section of the page is made of; the template draws each by its ``kind``.

A section renderer (:mod:`hwgen.report.sections`) turns one command's JSON into a
:class:`Section` of these blocks; it never writes HTML itself.
"""

from dataclasses import dataclass, field

from .values import Value, plain

__all__ = ["Section", "Headline", "Facts", "Column", "Table", "Figure", "SourceLine",
           "SourceFile", "Source", "Note", "Group", "facts_of"]


@dataclass(frozen=True)
class Section:
    """What the page shows of one input.

    Attributes
    ----------
    kind : str
        The renderer's kind (``sim``, ``run``...), also the CSS class of the section.
    title, subtitle : str
    source : str
        Where the figures come from (a file, or the command that wrote the page).
    blocks : list
    """
    kind: str
    title: str
    subtitle: str
    source: str
    blocks: list


@dataclass(frozen=True)
class Headline:
    """The few figures that say how the run went, large: ``items`` are ``(label, Value)``."""
    items: list
    kind: str = field(default="headline", init=False)


@dataclass(frozen=True)
class Facts:
    """A titled two-column list of ``(name, Value)``: parameters, tool versions, settings."""
    title: str
    items: list
    kind: str = field(default="facts", init=False)


@dataclass(frozen=True)
class Column:
    """A table column: its name, its unit (said in the header) and whether it holds numbers
    (right-aligned)."""
    name: str
    unit: str = ""
    numeric: bool = True


@dataclass(frozen=True)
class Table:
    """``rows`` of :class:`Value`, one per column."""
    title: str
    columns: list
    rows: list
    caption: str = ""
    kind: str = field(default="table", init=False)


@dataclass(frozen=True)
class Figure:
    """A drawn figure, inline SVG, with what it shows and its units."""
    title: str
    svg: str
    caption: str
    name: str
    kind: str = field(default="figure", init=False)


@dataclass(frozen=True)
class SourceLine:
    """One line of a source-line view: ``share`` (0..1 of the busiest line) sets its shade."""
    number: int
    code: str
    share: float
    figures: list
    details: str


@dataclass(frozen=True)
class SourceFile:
    name: str
    lines: list


@dataclass(frozen=True)
class Source:
    """Source lines shaded by the share of the cycles they were active in, figures on hover;
    ``columns`` name the figures each line shows beside its code."""
    title: str
    columns: list
    files: list
    caption: str = ""
    kind: str = field(default="source", init=False)


@dataclass(frozen=True)
class Note:
    """A sentence the reader should not miss; ``level`` is ``info`` or ``warning``."""
    text: str
    level: str = "info"
    kind: str = field(default="note", init=False)


@dataclass(frozen=True)
class Group:
    """A titled run of blocks; a ``collapsed`` one opens on a click (no JavaScript), a
    ``side_by_side`` one puts its blocks in a row where the page is wide enough."""
    title: str
    blocks: list
    collapsed: bool = False
    side_by_side: bool = False
    kind: str = field(default="group", init=False)


def _flatten(data, prefix=""):
    for name, value in data.items():
        if isinstance(value, dict) and value:
            yield from _flatten(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value


def facts_of(title, data, *, unset=None):
    """:class:`Facts` of a JSON object, nested objects flattened to dotted names; ``unset``
    names what ``null`` means where it is a setting left at its default, not an undefined
    figure."""
    def shown(value):
        if value is None and unset is not None:
            return Value(unset, note="not set: the command's default applies")
        return plain(value)
    return Facts(title, [(name, shown(value)) for name, value in _flatten(data)])
