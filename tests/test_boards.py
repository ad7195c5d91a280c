"""Board data, user board files and their validation."""

import json

import pytest

from hwgen.boards import Board, BoardError, builtin_boards, get_board, load_board

# Figures as the issue states them (the seeds' platforms), independent of the board files.
SEEDS = {
    "ex500": {"device_count": 2, "lut": 150_720, "ff": 301_440, "bram_bits": 416 * 36 * 1024,
              "dsp": 768, "clock_mhz": 250.0},
    "xd1000": {"device_count": 1, "lut": 143_520, "ff": 143_520, "bram_bits": 9_383_040},
}


def test_builtin_boards_are_the_issues_list():
    names = set(builtin_boards())
    assert {"ex500", "xd1000", "d5005", "alveo-u280", "icebreaker", "ulx3s-85f"} <= names
    families = {(b.family, b.toolchain.yosys_family) for b in builtin_boards().values()}
    assert ("xilinx", "xc7") in families and ("xilinx", "xcup") in families


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_boards_carry_the_seeds_figures(name):
    board = get_board(name)
    expected = SEEDS[name]
    resources = board.resources
    assert board.device_count == expected["device_count"]
    assert resources.lut == expected["lut"]
    assert resources.ff == expected["ff"]
    assert resources.bram_bits == expected["bram_bits"]
    if "dsp" in expected:
        assert resources.dsp == expected["dsp"]
    if "clock_mhz" in expected:
        assert board.clock_mhz == expected["clock_mhz"]


def test_ex500_links_are_measured_pcie_per_fpga_and_shared():
    links = {link.name: link for link in get_board("ex500").links}
    per_fpga = [l for l in links.values() if l.per_device]
    shared = [l for l in links.values() if not l.per_device]
    assert [l.bandwidth_gbps for l in per_fpga] == [4.2]
    assert [l.bandwidth_gbps for l in shared] == [5.5]
    assert all(l.measured for l in links.values())
    assert per_fpga[0].board_bandwidth_gbps(2) == pytest.approx(8.4)


def test_xd1000_hypertransport_and_u280_hbm():
    assert [l.bandwidth_gbps for l in get_board("xd1000").links] == [0.5]
    hbm = [l for l in get_board("alveo-u280").links if "HBM" in l.name]
    assert [l.bandwidth_gbps for l in hbm] == [460.0]


def test_open_toolchain_boards_name_their_nextpnr_device():
    ulx3s = get_board("ulx3s-85f").toolchain
    assert (ulx3s.family, ulx3s.nextpnr_device, ulx3s.speed_grade) == ("ecp5", "85k", "6")
    ice = get_board("icebreaker").toolchain
    assert (ice.family, ice.nextpnr_device, ice.package) == ("ice40", "up5k", "sg48")


def test_intel_boards_have_no_open_flow_and_a_proxy():
    for name in ("xd1000", "d5005"):
        tc = get_board(name).toolchain
        assert not tc.has_open_flow
        assert tc.cost_family.startswith("xilinx-")


@pytest.mark.parametrize("board", builtin_boards().values(), ids=lambda b: b.name)
def test_every_figure_has_a_source(board):
    assert board.resources.source.strip()
    assert board.clock_source.strip()
    assert all(link.source.strip() for link in board.links)


@pytest.mark.parametrize("board", builtin_boards().values(), ids=lambda b: b.name)
def test_board_round_trips_through_json(board, tmp_path):
    path = tmp_path / "board.json"
    path.write_text(json.dumps(board.to_json()))
    assert load_board(path) == board


USER_BOARD = """
name = "my-board"
description = "an ECP5-25 on a breadboard"
device = "LFE5U-25F-6BG256C"
device_count = 1
clock_mhz = 48.0
clock_source = "the oscillator"

[toolchain]
family = "ecp5"
nextpnr_device = "25k"
package = "CABGA256"
speed_grade = "6"

[resources]
lut = 24288
lut_inputs = 4
ff = 24288
bram_blocks = 56
bram_block_bits = 18432
bram_kind = "DP16KD"
dsp = 28
dsp_kind = "MULT18X18D"
source = "Lattice FPGA-DS-02012 Table 1.1"

[[links]]
name = "SPI flash"
bandwidth_gbps = 0.01
measured = false
per_device = true
source = "nominal"
"""


def test_user_board_from_toml(tmp_path):
    path = tmp_path / "my-board.toml"
    path.write_text(USER_BOARD)
    board = get_board(str(path))
    assert isinstance(board, Board)
    assert (board.name, board.family, board.resources.lut, board.resources.bram_bits) == \
        ("my-board", "ecp5", 24288, 56 * 18432)
    assert board.links[0].bandwidth_gbps == 0.01


@pytest.mark.parametrize("edit, words", [
    (("lut = 24288", "lut = -3"), ["resources.lut", "integer"]),
    (("family = \"ecp5\"", "family = \"altera\""), ["toolchain.family", "ice40", "ecp5"]),
    (("speed_grade = \"6\"", "speed_grade = \"9\""), ["toolchain.speed_grade", "6, 7, 8"]),
    (("measured = false", "measured = \"no\""), ["measured", "true or false"]),
    (("bandwidth_gbps = 0.01", "bandwidth_gbps = 0"), ["bandwidth_gbps", "positive"]),
    (("clock_mhz = 48.0\n", ""), ["missing", "clock_mhz"]),
    (("dsp = 28", "dsp = 28\ndsps = 1"), ["unknown field", "dsps"]),
    (("name = \"my-board\"", "name = \"My Board\""), ["board.name", "lower-case"]),
    (("[[links]]", "[links]"), ["links", "list"]),
    (("device_count = 1", "device_count = 1 1"), ["not valid TOML"]),
])
def test_bad_board_files_give_one_line_errors(tmp_path, edit, words):
    old, new = edit
    assert old in USER_BOARD
    path = tmp_path / "bad.toml"
    path.write_text(USER_BOARD.replace(old, new))
    with pytest.raises(BoardError) as info:
        load_board(path)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_xilinx_board_needs_its_yosys_family(tmp_path):
    data = get_board("arty-a7-100t").to_json()
    data["toolchain"]["yosys_family"] = None
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BoardError, match="yosys_family must be one of xc6v, xc7, xcu, xcup"):
        load_board(path)


def test_unknown_board_names_the_choices():
    with pytest.raises(BoardError, match="ulx3s-85f") as info:
        get_board("ulx3s")
    assert "board must be one of" in str(info.value)


def test_board_file_must_be_toml_or_json(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("name: x")
    with pytest.raises(BoardError, match=r"\.toml or \.json"):
        load_board(path)
