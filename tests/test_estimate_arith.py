"""The estimator on multipliers, shifts and the registers Yosys drops or merges."""

import math

import pytest
from amaranth.hdl import Cat, Module, Signal, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.estimate import (count_primitives, dsp_blocks, estimate, multiplier_parts,
                                      partial_product_bits)
from hwgen.resources.synth import synthesize


class Product(wiring.Component):
    """``y = a * b`` kept to ``y_bits`` bits."""

    def __init__(self, a_bits, b_bits, y_bits, is_signed=False):
        shape = signed if is_signed else unsigned
        super().__init__({"a": In(shape(a_bits)), "b": In(shape(b_bits)), "y": Out(y_bits)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq((self.a * self.b)[:len(self.y)])
        return m


class Shifts(wiring.Component):
    """A 16-bit value shifted left by a 4-bit amount and right by the constant 3."""

    def __init__(self):
        super().__init__({"a": In(16), "s": In(4), "left": Out(16), "right": Out(13)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.left.eq(self.a << self.s), self.right.eq(self.a >> 3)]
        return m


class Copies(wiring.Component):
    """Two 8-bit registers loaded under the same enable, the second with the low half of the
    first's input and 4 bits of its own, and a register that only ever loads zero: Yosys
    keeps 8 + 4 flip-flops (it merges the copied bits one by one)."""

    def __init__(self):
        super().__init__({"en": In(1), "d": In(8), "e": In(4), "y0": Out(8), "y1": Out(8),
                          "z": Out(8)})

    def elaborate(self, platform):
        m = Module()
        zero = Signal(8)
        with m.If(self.en):
            m.d.sync += [self.y0.eq(self.d), self.y1.eq(Cat(self.d[:4], self.e)), zero.eq(0)]
        m.d.comb += self.z.eq(zero)
        return m


def _muls(kinds):
    return {width: n for (kind, width), n in kinds.items() if kind == "mul"}


def test_a_multiplier_is_counted_with_its_operand_and_result_widths():
    assert _muls(count_primitives(Product(12, 8, 20))[0]) == {(12, 8, 20, False): 1}
    # Only the low 10 result bits are read; the operands keep their width.
    assert _muls(count_primitives(Product(12, 8, 10))[0]) == {(12, 8, 10, False): 1}
    assert _muls(count_primitives(Product(12, 8, 20, is_signed=True))[0]) == \
        {(12, 8, 20, True): 1}


def test_shifts_by_a_variable_are_barrel_shifters_and_by_a_constant_wiring():
    kinds, _, _, unmodelled = count_primitives(Shifts())
    # 16 bits shifted by up to 15: four levels of multiplexers.
    assert {k: n for k, n in kinds.items() if k[0] == "shift"} == {("shift", (16, 4)): 1}
    assert not unmodelled


def test_registers_that_copy_each_other_or_hold_a_constant_are_not_counted():
    kinds, _, _, _ = count_primitives(Copies())
    assert sum(width * n for (kind, width), n in kinds.items() if kind == "ff") == 8 + 4


@pytest.mark.parametrize("a, b, y", [(5, 7, 12), (9, 4, 6), (18, 18, 20), (3, 30, 33)])
def test_partial_product_bits_are_the_pairs_below_the_result_width(a, b, y):
    assert partial_product_bits(a, b, y) == sum(1 for i in range(a) for j in range(b) if i + j < y)


@pytest.mark.parametrize("a, b", [(18, 18), (36, 18), (36, 36), (50, 20), (54, 54)])
def test_full_ecp5_products_take_one_block_per_18_bit_part_pair(a, b):
    # ECP5: unsigned operands cut in 18-bit parts, one MULT18X18D per pair of parts.
    assert dsp_blocks(a, b, a + b, "ecp5") == math.ceil(a / 18) * math.ceil(b / 18)


def test_parts_landing_above_the_result_are_dropped():
    # 36 x 36 kept to 36 bits on ECP5: parts at offsets 0, 18, 18, 36; the last is dropped.
    assert dsp_blocks(36, 36, 36, "ecp5") == 3
    # Two 18-bit parts joined by one adder over the result bits above the second part.
    blocks, adder_bits, soft_bits = multiplier_parts(36, 18, 54, {
        "a_max": 18, "b_max": 18, "a_part": 18, "b_part": 18, "a_min": 2, "b_min": 2,
        "y_min": 1, "signed_only": False})
    assert (blocks, adder_bits, soft_bits) == (2, 54 - 18, 0)


def test_small_products_stay_in_luts_below_the_dsp_minimum():
    # Xilinx maps no product narrower than 9 result bits; iCE40's flow maps none.
    assert dsp_blocks(8, 8, 8, "xilinx-xc7") == 0
    assert dsp_blocks(16, 16, 32, "ice40") == 0
    assert multiplier_parts(8, 8, 8, None) == (0, 0, partial_product_bits(8, 8, 8))


def test_a_program_estimate_models_its_multipliers():
    pe = Pipeline(GemmJob("naive", dim=8, threads=2, element_bits=16).program)
    result = estimate(pe, "ulx3s-85f")
    assert not any("*" in what for what in result.unmodelled)
    assert result.dsp == 1     # one 16 x 16 product: one MULT18X18D


@pytest.mark.slow
@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t"])
@pytest.mark.parametrize("a, b, y, is_signed", [
    (16, 16, 32, False), (24, 24, 48, False), (32, 32, 32, False), (20, 9, 29, False),
    (26, 17, 43, False), (24, 24, 48, True), (40, 12, 40, True),
])
def test_dsp_blocks_match_synthesis(board, a, b, y, is_signed):
    design = Product(a, b, y, is_signed)
    synthesized = synthesize(design, board, name=f"mul_{a}x{b}_{y}", fmax=False)
    assert estimate(design, board).dsp == synthesized.dsp


@pytest.mark.slow
@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t"])
def test_program_dsp_blocks_match_synthesis(board):
    pe = Pipeline(PiJob(steps=64, threads=2, frac_bits=10).program)
    synthesized = synthesize(pe, board, name="pi_t2", fmax=False, require_fit=False)
    assert estimate(pe, board).dsp == synthesized.dsp
