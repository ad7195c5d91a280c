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


def test_a_command_imports_only_its_own_module():
    # `hwgen sim` needs neither the other commands nor the roofline's and synthesis's flow
    # (nor tqdm, which only a progress bar needs) to parse its options and records.
    code = ("import sys\nfrom hwgen.cli.main import make_parser\nimport hwgen.records\n"
            "make_parser(['sim', 'dilation', '-q'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('hwgen.cli.commands.', "
            "'hwgen.roofline', 'hwgen.resources', 'tqdm', 'multiprocessing'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['hwgen.cli.commands.sim']"


def test_the_parser_of_one_command_is_the_full_parsers():
    full = make_parser()
    assert make_parser(["--help"]).format_help() == full.format_help()
    for name, sub in full.commands.items():
        lazy = make_parser(["--version", name, "--help"])
        assert list(lazy.commands) == [name]
        assert lazy.commands[name].format_help() == sub.format_help()
