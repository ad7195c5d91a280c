"""What every command pays before it starts: the modules the command line imports."""

import subprocess
import sys

from hwgen.cli.main import make_parser


def test_the_command_line_imports_no_plotting_or_page_code():
    # matplotlib and Jinja2 cost most of a second at start-up; only what draws or writes a page
    # imports them.
    code = ("import sys\nfrom hwgen.cli.main import make_parser\nmake_parser()\n"
            "print(sorted(m for m in ('matplotlib', 'jinja2', 'hwgen.report', "
            "'hwgen.roofline.figure') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_the_report_help_names_every_kind_of_json_it_reads():
    from hwgen.report.sections import kinds

    help_text = " ".join(make_parser().commands["report"].format_help().split())
    assert f"a JSON file ({', '.join(kinds())}) or a folder of them" in help_text
    assert len(kinds()) >= 5
