"""The estimator: what it counts, and how it prices a design."""

import numpy as np
import pytest
from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.boards import cost_families, get_board
from hwgen.boards import cost_table
from hwgen.catalog import make_window_filter
from hwgen.cli.main import main
from hwgen.kernels.pipeline.arbiter import select
from hwgen.resources.estimate import count_primitives, estimate, price, rom_luts
from hwgen.resources.synth import synthesize
from hwgen.sim import instrument_pe

from designs import Registers


class Max(wiring.Component):
    def __init__(self):
        super().__init__({"a": In(8), "b": In(8), "y": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(Mux(self.a > self.b, self.a, self.b))
        return m


class TwoLanes(wiring.Component):
    """Two lanes that compute and register the same maximum, written out twice."""

    def __init__(self):
        super().__init__({"a": In(8), "b": In(8), "y0": Out(8), "y1": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [self.y0.eq(Mux(self.a > self.b, self.a, self.b)),
                     self.y1.eq(Mux(self.a > self.b, self.a, self.b))]
        return m


class Accumulator(wiring.Component):
    """``acc <= max(acc, x)`` while ``en``: the register keeps its value when ``x`` is smaller."""

    def __init__(self):
        super().__init__({"x": In(8), "en": In(1), "acc": Out(8)})

    def elaborate(self, platform):
        m = Module()
        with m.If(self.en):
            m.d.sync += self.acc.eq(Mux(self.acc > self.x, self.acc, self.x))
        return m


class Table(wiring.Component):
    """A ROM in logic: a switch on ``sel`` choosing one of ``values``, else ``default``."""

    def __init__(self, values, default, width=12):
        self.values, self.default = values, default
        super().__init__({"sel": In(4), "y": Out(width)})

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.sel):
            for k, value in enumerate(self.values):
                with m.Case(k):
                    m.d.comb += self.y.eq(value)
            with m.Default():
                m.d.comb += self.y.eq(self.default)
        return m


class Saturating(wiring.Component):
    """``counters`` 24-bit counters that stop at their largest value, one in a register and, as
    a RAM table does, one in a memory word; and the flags of ``flags`` threads with a flag
    that any of them is set."""

    def __init__(self, counters=4, flags=8):
        self.counters = counters
        super().__init__({"inc": In(counters), "flags": In(flags), "any": Out(1),
                          "full": Out(counters), "counts": Out(24 * counters)})

    def elaborate(self, platform):
        m = Module()
        for k in range(self.counters):
            count = Signal(24)
            with m.If(self.inc[k] & ~count.all()):
                m.d.sync += count.eq(count + 1)
            m.d.comb += [self.full[k].eq(count.all()), self.counts[24 * k:24 * k + 24].eq(count)]
        flags = Signal.like(self.flags)
        m.d.sync += flags.eq(self.flags)
        m.d.comb += self.any.eq(flags.any())
        return m


class Selection(wiring.Component):
    """A parking stage's hand-over: one of ``ways`` contexts chosen by a one-hot grant, and
    a gate of its own beside it (a value or zero)."""

    def __init__(self, ways=8, bits=16):
        self.ways, self.bits = ways, bits
        super().__init__({"grant": In(ways), "values": In(ways * bits), "y": Out(bits),
                          "gated": Out(bits)})

    def elaborate(self, platform):
        m = Module()
        values = [self.values[i * self.bits:(i + 1) * self.bits] for i in range(self.ways)]
        m.d.comb += [self.y.eq(select(self.grant, values)),
                     self.gated.eq(Mux(self.grant[0], values[1], 0))]
        return m


class Handover(wiring.Component):
    """Two slots each load a 16-bit context chosen by a one-hot grant, then overwrite its top
    byte with zeros under the same enable (a stage writing its context, then a field of it);
    a third register hands one slot on by an and-or selection. The top bytes are constant:
    Yosys keeps 8 bits of each register."""

    def __init__(self, ways=4):
        self.ways = ways
        super().__init__({"grant": In(ways), "values": In(ways * 16), "load": In(2),
                          "pick": In(2), "y": Out(16)})

    def elaborate(self, platform):
        m = Module()
        values = [self.values[i * 16:(i + 1) * 16] for i in range(self.ways)]
        slots = [Signal(16, name=f"slot{k}") for k in range(2)]
        for k, slot in enumerate(slots):
            with m.If(self.load[k]):
                m.d.sync += [slot.eq(select(self.grant, values)), slot[8:].eq(0)]
        m.d.sync += self.y.eq(select(self.pick, slots))
        return m


class Gates(wiring.Component):
    """An and of two words of which 5 bits are read, a multiplexer of which 3 are."""

    def __init__(self):
        super().__init__({"a": In(12), "b": In(12), "s": In(1), "y": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(Cat((self.a & self.b)[:5], Mux(self.s, self.a, self.b)[4:7]))
        return m


class Table33(wiring.Component):
    """A 33 x 32 memory with a synchronous read port, between the characterised depths 32 and
    64 (LUT RAM on ECP5 and Xilinx)."""

    def __init__(self):
        super().__init__({"we": In(1), "waddr": In(6), "wdata": In(32), "raddr": In(6),
                          "rdata": Out(32)})

    def elaborate(self, platform):
        from amaranth.lib.memory import Memory
        m = Module()
        m.submodules.mem = mem = Memory(shape=32, depth=33, init=[])
        write, read = mem.write_port(), mem.read_port()
        m.d.comb += [write.en.eq(self.we), write.addr.eq(self.waddr), write.data.eq(self.wdata),
                     read.addr.eq(self.raddr), self.rdata.eq(read.data)]
        return m


def line_pe(unroll=1, size=3, width=512):
    return make_window_filter("dilation", size=(size, size), mask="rect", pixel_bits=8, width=width,
                              height=64, unroll=unroll, buffer="line", pipeline=True,
                              tree_stages=None, credits=None)


def test_registers_count_their_bits():
    kinds, memories, _, unmodelled = count_primitives(Registers())
    ff_bits = sum(width * n for (kind, width), n in kinds.items() if kind == "ff")
    assert ff_bits == 12 + 8
    assert kinds["add_const", 13] == 1   # count + 1 is one bit wider than count
    assert memories == [] and not unmodelled


def test_logic_that_drives_nothing_is_not_counted():
    assert count_primitives(Registers(dead=True)) == count_primitives(Registers())


def test_a_compare_and_select_is_one_minmax():
    kinds, _, _, _ = count_primitives(Max())
    assert dict(kinds) == {("minmax", 8): 1}


def test_duplicate_logic_and_registers_are_counted_once():
    kinds, _, _, _ = count_primitives(TwoLanes())
    assert dict(kinds) == {("minmax", 8): 1, ("ff", 8): 1}


def test_a_register_choosing_its_own_value_keeps_the_comparison_only():
    kinds, _, _, _ = count_primitives(Accumulator())
    assert dict(kinds) == {("cmp", 8): 1, ("ff", 8): 1}


def test_a_switch_of_constants_is_a_rom_of_its_distinct_columns():
    rng = np.random.default_rng(3)
    values = [int(v) for v in rng.integers(0, 1 << 12, 11)]
    values = [v & ~0x800 | (~v & 1) << 11 for v in values]   # bit 11 inverts bit 0: one LUT
    kinds, _, _, _ = count_primitives(Table(values, default=0x800))
    # Truth-table columns (each case's bit, then the default's) that vary, up to inversion.
    bits = (np.array([*values, 0x800])[:, None] >> np.arange(12)) & 1
    columns = {min(tuple(c), tuple(1 - c)) for c in bits.T if c.min() != c.max()}
    assert dict(kinds) == {("rom", 4): len(columns)}
    assert rom_luts({"lut_inputs": 4}, kinds) == len(columns)
    assert rom_luts({"lut_inputs": 3}, kinds) == 2 * len(columns)


def test_a_counters_saturation_test_is_a_word_test_and_a_flag_gather_a_reduction():
    kinds, _, _, _ = count_primitives(Saturating(counters=4, flags=8))
    # Each counter's all-ones test is read by its enable and its output: one cell per counter.
    assert kinds["reduce_word", 24] == 4
    assert kinds["reduce", 8] == 1
    assert kinds["add_const", 25] == 4


def test_an_and_or_selection_is_one_select_of_its_ways():
    kinds, _, _, _ = count_primitives(Selection(ways=8, bits=16))
    # Its 8 gates and 7 ors are one selection; the lone gate stays a gate.
    assert dict(kinds) == {("select", (8, 16, 16)): 1, ("and", 16): 1}


def test_bits_a_later_assignment_and_an_and_or_selection_make_constant_are_not_kept():
    kinds, _, _, _ = count_primitives(Handover(ways=4))
    # Each register keeps its low byte; each selection is read on those 8 bits only.
    assert sum(w * n for (kind, w), n in kinds.items() if kind == "ff") == 3 * 8
    assert kinds["select", (4, 8, 16)] == 1 and kinds["select", (2, 8, 16)] == 1


def test_bits_a_later_assignment_and_an_and_or_selection_make_constant_are_ffs_yosys_removes():
    synthesized = synthesize(Handover(ways=4), "ulx3s-85f", name="handover", fmax=False)
    assert estimate(Handover(ways=4), "ulx3s-85f").ff == synthesized.ff


def test_gates_and_multiplexers_count_the_bits_read():
    kinds, _, _, _ = count_primitives(Gates())
    assert dict(kinds) == {("and", 5): 1, ("mux", 3): 1}


@pytest.mark.parametrize("ways", [2, 3, 4, 5, 8, 12, 16, 32])
def test_ecp5_prices_a_selection_as_a_tree_of_lut4s(ways):
    # Per bit, 2 * ways inputs into a tree of 4-input LUTs: each LUT after the first adds 3.
    table = cost_table("ecp5")
    bits = 20
    cost = price({**table, "calibration": {}}, {("select", (ways, bits, bits)): 1}, [])
    assert cost["lut"] == bits * -(-(2 * ways - 1) // 3)


def test_line_buffer_memory_is_counted_with_its_shape():
    _, memories, _, _ = count_primitives(line_pe(unroll=2, size=3, width=512))
    # N-1 = 2 rows of U = 2 pixels of 8 bits per word, W / U = 256 words.
    assert (256, 2 * 2 * 8, "sync") in memories


@pytest.mark.parametrize("family", ["ecp5", "xilinx-xc7"])
def test_every_estimated_family_has_a_cost_table(family):
    assert family in cost_families()


@pytest.mark.parametrize("board, blocks", [
    # The line buffer, 512 words x 16 bits = 8 Kbit, takes one 18 Kbit DP16KD / RAMB18 or two
    # 4 Kbit SB_RAM40_4K. The result FIFO (16 results of 8 pixel bits, a 16-bit address, a mask
    # bit and the "last" flag, read combinationally) goes to LUT RAM on ECP5 and Xilinx; the
    # iCE40 has no LUT RAM, so there it is block RAM read a cycle ahead: 26 bits in 16-bit-wide
    # SB_RAM40_4K, two more.
    ("ulx3s-85f", 1), ("arty-a7-100t", 1), ("icebreaker", 2 + -(-(8 + 16 + 1 + 1) // 16)),
])
def test_line_buffer_block_ram_follows_block_capacity(board, blocks):
    assert estimate(line_pe(unroll=1), board).bram == blocks


@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t", "alveo-u280"])
def test_estimate_grows_with_unroll(board):
    small, large = estimate(line_pe(unroll=2), board), estimate(line_pe(unroll=8), board)
    assert large.lut > small.lut and large.ff > small.ff


def test_register_estimate_is_one_ff_per_bit():
    for board in ("ulx3s-85f", "arty-a7-100t", "icebreaker"):
        assert estimate(Registers(), board).ff == 20


def test_intel_board_is_estimated_with_its_proxy_table():
    result = estimate(line_pe(unroll=4), "d5005")
    assert result.proxy and result.cost_family == get_board("d5005").toolchain.estimate_proxy
    assert result.lut > 0 and result.ff > 0


def test_estimate_command_prints_resources(capsys):
    code = main(["estimate", "dilation", "--buffer", "line", "--unroll", "4", "--board", "ulx3s-85f"])
    out = capsys.readouterr().out
    assert code == 0
    assert "LUT " in out and "FF " in out and "block RAM " in out


def test_estimate_command_writes_json(tmp_path, capsys):
    path = tmp_path / "e.json"
    assert main(["estimate", "dilation", "--board", "xd1000", "--json", str(path), "-q"]) == 0
    import json
    data = json.loads(path.read_text())
    assert data["proxy"] is True and data["board"] == "xd1000"
    assert data["tool_versions"]["amaranth"] and data["parameters"]["unroll"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t"])
def test_a_memory_between_characterised_depths_is_built_as_yosys_builds_it(board):
    design = Table33()
    synthesized = synthesize(design, board, name="table33", fmax=False)
    estimated = estimate(Table33(), board)
    # LUT RAM, not the block RAM of the characterised 64-word memory.
    assert estimated.bram == synthesized.bram == 0


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    dict(buffer="line", unroll=4, size=(5, 3), mask="rect", width=96, height=64),
    dict(buffer="smart", unroll=3, size=(3, 3), mask="cross", width=80, height=40),
])
def test_instrumented_pe_estimate_is_within_5_percent_of_yosys(args):
    board = get_board("ulx3s-85f")

    def design():
        pe = make_window_filter("dilation", pixel_bits=8, pipeline=True, tree_stages="fast",
                                credits=None, **args)
        return instrument_pe(pe, platform=board.elaboration_platform())
    synthesized = synthesize(design(), board, name="instrumented", fmax=False)
    estimated = estimate(design(), board)
    assert abs(estimated.lut - synthesized.lut) <= 0.05 * synthesized.lut
    assert abs(estimated.ff - synthesized.ff) <= 0.05 * synthesized.ff
    assert estimated.dsp == synthesized.dsp
    assert estimated.bram == synthesized.bram


@pytest.mark.slow
def test_a_vector_gemm_estimate_is_within_5_percent_of_yosys():
    # Its parking stages hand on 306-bit contexts of 8 threads: selections are most of its LUTs.
    from hwgen.kernels.pipeline import Pipeline
    from hwgen.programs import GemmJob

    def design():
        return Pipeline(GemmJob("vector", dim=8, threads=8).program)
    synthesized = synthesize(design(), "ulx3s-85f", name="gemm_vector", fmax=False,
                             require_fit=False)
    estimated = estimate(design(), "ulx3s-85f")
    assert abs(estimated.lut - synthesized.lut) <= 0.05 * synthesized.lut
    assert abs(estimated.ff - synthesized.ff) <= 0.05 * synthesized.ff


#: The held-out histogram's LUTs per board: within 5% of Yosys on every family.
HISTOGRAM_BOARDS = ["ulx3s-85f", "arty-a7-100t", "alveo-u280", "icebreaker"]


def histogram_example(board):
    """The example histogram program on ``board``: Yosys's figures and the estimate."""
    from pathlib import Path
    from hwgen.discovery import load_spec
    from hwgen.kernels.pipeline import Pipeline
    example = Path(__file__).resolve().parent.parent / "examples" / "histogram.py"

    def design():
        return Pipeline(load_spec(f"{example}:Histogram", "PROGRAM")().program)
    synthesized = synthesize(design(), board, name="histogram_example", fmax=False,
                             require_fit=False)
    return synthesized, estimate(design(), board)


@pytest.mark.slow
def test_the_example_histograms_registers_are_estimated_as_yosys_keeps_them():
    # Its 8-bit bin field holds 4 bits: the top 4 are 0 in every parking slot after the stage
    # that computes it, which Yosys removes (the estimate kept them: FF 10% over).
    synthesized, estimated = histogram_example("ulx3s-85f")
    assert abs(estimated.ff - synthesized.ff) <= 0.02 * synthesized.ff


@pytest.mark.slow
@pytest.mark.parametrize("board", HISTOGRAM_BOARDS)
def test_the_example_histograms_luts_are_within_five_percent_of_yosys(board):
    # Held out of the calibration. It was 11.8% over on ECP5 while its per-thread slot states
    # (one register of every thread's field) took one clock enable for all fields, its counter
    # bank's fitted gates set the gate factor, and its selections were scaled by a fit; 6.5%
    # over while the measurement module's readout (words cleared beside their reset, ORed
    # four at a time, gates only registers read) set the gate factor the programs' gates take.
    # On the Xilinx families it was 9.2% and 8.1% over while a static stage's choice between
    # the granted slot and another source was a multiplexer per bit (a LUT6 takes it whole).
    synthesized, estimated = histogram_example(board)
    assert abs(estimated.lut - synthesized.lut) <= 0.05 * synthesized.lut
