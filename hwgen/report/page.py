"""The page: sections put into the Jinja2 template shipped with the package."""

import itertools
import re

import jinja2
from markupsafe import Markup

from .. import __version__

__all__ = ["render_page"]

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("hwgen.report", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)

# Where a figure's SVG refers to its own parts by id.
_REFERENCE = re.compile(r'(\bid="|href="#|url\(#)')
_SIZE = re.compile(r'<svg([^>]*?) width="([\d.]+)pt" height="([\d.]+)pt"')


def _scoped(svg, prefix, title):
    """``svg`` with its ids prefixed (several figures share one page), sized in CSS pixels and
    named for screen readers."""
    svg = _REFERENCE.sub(lambda m: f"{m[1]}{prefix}-", svg)

    def size(match):
        width, height = (float(v) * 4 / 3 for v in match.group(2, 3))
        return (f'<svg{match[1]} width="{width:.0f}" height="{height:.0f}" role="img" '
                f'aria-label="{Markup.escape(title)}"')
    return _SIZE.sub(size, svg, count=1)


def _shade(share):
    """A source line's background: transparent when idle, darker red the busier it is."""
    if share <= 0:
        return "transparent"
    return f"rgba(214, 39, 40, {0.06 + 0.5 * share:.3f})"


def render_page(sections, *, sources, title="hwgen report"):
    """The HTML text of a page of ``sections`` (:class:`hwgen.report.blocks.Section`);
    ``sources`` names what they come from."""
    numbers = itertools.count(1)

    def svg(figure):
        return Markup(_scoped(figure.svg, f"fig{next(numbers)}", figure.title))

    anchors = [f"{section.kind}-{index}" for index, section in enumerate(sections, 1)]
    return _ENVIRONMENT.get_template("report.html.j2").render(
        title=title, version=__version__, sources=sources, sections=list(zip(anchors, sections)),
        svg=svg, shade=_shade)
