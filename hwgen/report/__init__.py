"""One self-contained HTML page of what hwgen's commands measured (``hwgen report``).

Each command's JSON is drawn by a section renderer (:mod:`.sections`), which turns it into
blocks (:mod:`.blocks`): headline figures, tables, facts, figures drawn with matplotlib as inline
SVG (:mod:`.figures`), a source-line view. The page (:mod:`.page`) puts them into a Jinja2
template shipped with the package, with its own CSS and no scripts: it loads nothing.
"""

from .blocks import Section
from .inputs import Document, document, read_inputs
from .page import render_page
from .sections import register

# The renderers register themselves on import, in the order they are tried.
from . import simulation, threads, roofline, explore, synthesis, profile  # noqa: F401  (registration)

__all__ = ["Document", "Section", "document", "read_inputs", "register", "report_html"]


def report_html(documents):
    """The page of ``documents`` (:class:`Document`), as HTML text."""
    sections = [d.section() for d in documents]
    return render_page(sections, sources=[d.source for d in documents])
