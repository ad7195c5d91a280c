"""``hwgen report``: one self-contained HTML page of what the commands measured."""

import sys
from pathlib import Path

from ..options import add_option, add_quiet_option
from ..outputs import check_file_option, write_files

__all__ = ["add_options", "run"]

DESCRIPTION = ("Turn the JSON that sim, run, synth and overhead write (--json), the "
               "roofline.json of roofline and explore and the explore.json of explore --fast "
               "into one HTML page: headline figures, a "
               "ring per state machine, a bar per stream, histograms, thread states over time, "
               "the roofline, the synthesis and overhead tables. The page is one file with "
               "its figures inline and loads nothing. A folder gives a section per JSON file "
               "in it. A file of an unknown schema, or of a newer version than this hwgen "
               "reads, is refused (docs/json.md).")


class _PathHelp:
    """The help of DIR_OR_JSON, which names the kinds of JSON the page's renderers know: made when
    the help is shown, so that other commands do not import the page's code (argparse formats a
    help as ``help % values``)."""

    def __mod__(self, values):
        from ...report.sections import kinds
        return (f"a JSON file ({', '.join(kinds())}) or a folder of them, such as roofline's "
                f"--out") % values

    def strip(self):
        return "DIR_OR_JSON"


def add_options(parser):
    parser.add_argument("path", metavar="DIR_OR_JSON", help=_PathHelp())
    add_option(parser, "--out", metavar="FILE.html", default=None, help="the page to write",
               shown="the JSON file's name with .html, or DIR/report.html")
    add_quiet_option(parser)


def _default_out(path):
    path = Path(path)
    return path / "report.html" if path.is_dir() else path.with_suffix(".html")


def run(args):
    out = Path(args.out) if args.out else _default_out(args.path)
    check_file_option("--out", out)
    from ...report import read_inputs, report_html
    documents, skipped = read_inputs(args.path)
    write_files({out: report_html(documents)})
    if not args.quiet:
        for file, why in skipped:
            print(f"hwgen: skipped {file}: {why}", file=sys.stderr)
        print(f"wrote {out} ({', '.join(d.kind for d in documents)})")
    return 0
