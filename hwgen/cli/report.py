"""``--report FILE.html`` of the commands that measure: the page ``hwgen report`` makes of their
JSON, made from the very same JSON."""

import json
from pathlib import Path

from .options import add_output_option
from .outputs import check_file_option

__all__ = ["add_report_option", "check_report_option", "report_file"]


def add_report_option(parser):
    add_output_option(parser, "--report", "FILE.html",
                      "one self-contained HTML page of the figures, as `hwgen report` makes of "
                      "the JSON", ".html")


def check_report_option(args):
    check_file_option("--report", args.report)


def report_file(args, data, source):
    """``{path: html}`` of the page ``--report`` asks for (``{}`` without it): ``data`` goes
    through JSON text first, so the page is the one ``hwgen report`` makes of the file."""
    if args.report is None:
        return {}
    # The page's code (Jinja2, matplotlib) only where a page is asked for.
    from ..report import document, report_html
    return {Path(args.report): report_html([document(json.loads(json.dumps(data)), source)])}
