"""The library speaks Python, the command line speaks flags: library calls raise
``ParameterError`` naming their parameter; the CLI prints the option of the one flag table."""

import re
from pathlib import Path

import pytest

from hwgen.boards import get_board
from hwgen.catalog import make_window_filter, resolve_board
from hwgen.cli.flags import FLAGS
from hwgen.cli.main import main
from hwgen.errors import ParameterError
from hwgen.resources.synth import synthesize
from hwgen.roofline.cluster import check_scheduler
from hwgen.roofline.model import bounding_link, check_clock

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = [path for folder in ("hwgen", "kernels", "sim", "boards", "instrument")
           for path in (ROOT / folder).rglob("*.py") if "cli" not in path.parts]


def test_no_library_message_names_a_command_line_option():
    # A message that starts with an option (`"--unroll must ...`, `"-j must ...`) belongs to
    # the command line, not to the library.
    flag = re.compile(r"""(?:Error|ParameterError)\(\s*f?["'](?:--[a-z]|-[a-zA-Z] )""")
    found = [f"{path.relative_to(ROOT)}" for path in LIBRARY if flag.search(path.read_text())]
    assert found == []


def test_every_parameter_the_library_names_has_an_option():
    named = {match for path in LIBRARY
             for match in re.findall(r'ParameterError\(\s*"(\w+)"', path.read_text())}
    assert named, "no ParameterError found: the scan is broken"
    assert sorted(named - set(FLAGS)) == []


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("call, parameter, text", [
    (lambda: make_window_filter("dilation", width=16, height=8, unroll=3, buffer="line"),
     "unroll", "unroll must divide the image width 16 for the line buffer, not 3"),
    (lambda: make_window_filter("dilation", width=16, height=8, size=(9, 3)),
     "size", "size 9x3 must fit in the image 8x16 (rows x cols)"),
    (lambda: make_window_filter("dilation", width=8, height=8, mask="star"),
     "mask", "mask must be one of"),
    (lambda: resolve_board("no-such-board"), "board", "board: "),
    (lambda: bounding_link(get_board("ex500"), 3, None), "devices", "devices must be between 1"),
    (lambda: check_clock(-5), "clock", "clock must be board or fmax or a positive number"),
    (lambda: check_scheduler("local:0"), "scheduler", "scheduler local:N needs at least one"),
    (lambda: synthesize(make_window_filter("dilation", width=8, height=5), "ulx3s-85f",
                        seeds=0), "seeds", "seeds must be a positive integer, not 0"),
])
def test_library_calls_name_their_parameter(call, parameter, text):
    with pytest.raises(ParameterError) as error:
        call()
    assert error.value.parameter == parameter
    assert str(error.value).startswith(text)
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize("argv, line", [
    (["build", "dilation", "--buffer", "line", "--unroll", "3", "--width", "16", "--height", "8"],
     "hwgen: error: --unroll must divide the image width 16 for the line buffer, not 3\n"),
    (["build", "dilation", "--pixel-bits", "17"],
     "hwgen: error: --pixel-bits must be between 1 and 16, not 17\n"),
    (["roofline", "dilation", "--image", "16x8", "--unroll", "8", "--buffer", "smart"],
     "hwgen: error: --unroll must be at most the output height 6 for the smart buffer, not 8 "
     "(design point smart U8)\n"),
    (["synth", "dilation", "--width", "8", "--height", "5", "--seeds", "0"],
     "hwgen: error: --seeds must be a positive integer, not 0\n"),
    (["roofline", "dilation", "--board", "ex500", "--devices", "3", "--image", "16x8",
      "--unroll", "1"],
     "hwgen: error: --devices must be between 1 and ex500's 2, not 3\n"),
])
def test_the_command_line_prints_the_option(argv, line, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err == line
    assert list(tmp_path.iterdir()) == []


def test_an_output_folder_that_is_a_file_names_out(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["build", "dilation", "--width", "8", "--height", "5", "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: --out") and "not a folder" in err
