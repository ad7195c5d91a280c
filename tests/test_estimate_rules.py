"""Logic priced by rule, not by a fitted factor: a gate in front of an adder (``add_gate``), the
clock enable of every field of a register, the and-or selections (``select``), a register's
clear as its synchronous reset, trees of one gate (``gate_tree``) and gates that only
registers read (``and_ff``), a register's choice beside a selection (``mux_select``)."""

import pytest
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.boards import cost_table
from hwgen.resources.estimate import count_primitives, price
from hwgen.resources.synth import synthesize

FAMILIES = ["ecp5", "xilinx-xc7", "xilinx-xcup", "ice40"]


class GatedCounters(wiring.Component):
    """``counters`` registers of ``width`` bits, each restarting from a 1-bit amount when its
    flush bit is set, ``low <= Mux(flush, 0, low) + amount``, as a counter bank's low parts;
    with ``read_gate``, the gated values are outputs as well."""

    def __init__(self, counters, width, read_gate=False):
        self._counters, self._width, self._read_gate = counters, width, read_gate
        super().__init__({"flush": In(counters), "amount": In(counters),
                          "low": Out(counters * width), "kept": Out(counters * width)})

    def elaborate(self, platform):
        m = Module()
        w = self._width
        for i in range(self._counters):
            low = Signal(w, name=f"low{i}")
            kept = Mux(self.flush[i], 0, low)
            m.d.sync += low.eq(kept + self.amount[i])
            m.d.comb += self.low[i * w:(i + 1) * w].eq(low)
            if self._read_gate:
                m.d.comb += self.kept[i * w:(i + 1) * w].eq(kept)
        return m


class GatedOutputs(wiring.Component):
    """The same gates, ``Mux(flush, 0, value)``, read by no adder."""

    def __init__(self, counters, width):
        self._counters, self._width = counters, width
        super().__init__({"flush": In(counters), "value": In(counters * width),
                          "kept": Out(counters * width)})

    def elaborate(self, platform):
        m = Module()
        w = self._width
        for i in range(self._counters):
            value = self.value[i * w:(i + 1) * w]
            m.d.comb += self.kept[i * w:(i + 1) * w].eq(Mux(self.flush[i], 0, value))
        return m


def test_a_gate_an_adder_reads_is_an_add_gate():
    # The amount is one bit: the adder reads the gate through the extension to its width.
    kinds = count_primitives(GatedCounters(4, 5))[0]
    assert kinds["add_gate", 5] == 4
    assert kinds["and", 5] == 0


def test_a_gate_an_adder_and_an_output_read_is_an_add_gate():
    # In front of a carry chain the gate takes a LUT whatever else reads it.
    kinds = count_primitives(GatedCounters(4, 5, read_gate=True))[0]
    assert kinds["add_gate", 5] == 4
    assert kinds["and", 5] == 0


def test_a_gate_no_adder_reads_stays_a_gate():
    kinds = count_primitives(GatedOutputs(4, 5))[0]
    assert kinds["and", 5] == 4
    assert kinds["add_gate", 5] == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_an_add_gate_costs_what_it_adds_to_the_adder_as_characterised(family):
    table = cost_table(family)
    gated, adder = table["operators"]["add_gate"], table["operators"]["add"]
    assert gated["widths"] == adder["widths"]
    for width, with_gate, alone in zip(gated["widths"], gated["lut"], adder["lut"]):
        cost = price(table, {("add_gate", width): 1}, [])
        assert cost["lut"] == pytest.approx(max(0, with_gate - alone))


def test_yosys_builds_a_gate_per_bit_in_front_of_a_carry_chain_on_ecp5_and_none_on_xilinx():
    # The characterised gated adders: ECP5's CCU2C and iCE40's SB_CARRY take no gate, a
    # Xilinx adder's LUT6 does.
    for family, per_bit in (("ecp5", 1), ("ice40", 1), ("xilinx-xc7", 0), ("xilinx-xcup", 0)):
        table = cost_table(family)
        gated, adder = table["operators"]["add_gate"], table["operators"]["add"]
        for width, with_gate, alone in zip(gated["widths"], gated["lut"], adder["lut"]):
            if width >= 8:
                assert with_gate - alone == pytest.approx(per_bit * width, abs=1), (family, width)


class Fields(wiring.Component):
    """``fields`` two-bit state registers, each set to 1, 2 or 3 under its own three
    conditions (in that priority): one register of ``fields`` fields, or (``apart``) a register
    each."""

    def __init__(self, fields, apart):
        self._fields, self._apart = fields, apart
        super().__init__({"a": In(fields), "b": In(fields), "c": In(fields),
                          "state": Out(2 * fields)})

    def elaborate(self, platform):
        m = Module()
        n = self._fields
        if self._apart:
            registers = [Signal(2, name=f"state{t}") for t in range(n)]
        else:
            whole = Signal(2 * n)
            registers = [whole[2 * t:2 * t + 2] for t in range(n)]
        for t, field in enumerate(registers):
            with m.If(self.a[t]):
                m.d.sync += field.eq(1)
            with m.Elif(self.b[t]):
                m.d.sync += field.eq(2)
            with m.Elif(self.c[t]):
                m.d.sync += field.eq(3)
            m.d.comb += self.state[2 * t:2 * t + 2].eq(field)
        return m


def test_every_field_of_a_register_has_its_own_clock_enable():
    # Yosys gives each field the enable of its own conditions: a register of four fields
    # written apart costs what four registers cost, the first choice of each field free.
    def choices(apart):
        kinds = count_primitives(Fields(4, apart))[0]
        return sum(w * n for (k, w), n in kinds.items() if k == "mux_ff")
    assert choices(apart=False) == choices(apart=True)
    # Per field: a's choice is the enable, b's a choice between constants (a wire of its
    # condition), c's a choice between the field and a constant on both bits.
    assert choices(apart=True) == 4 * 2


@pytest.mark.parametrize("family", FAMILIES)
def test_a_selection_is_priced_at_its_characterised_cost_whatever_the_calibration(family):
    table = cost_table(family)
    entry = table["operators"]["select"]
    for ways, luts in zip(entry["widths"], entry["lut"]):
        cost = price(table, {("select", (ways, 3 * entry["bits"], 100)): 1}, [])
        assert cost["lut"] == pytest.approx(3 * luts)


class ChainedSlot(wiring.Component):
    """A slot of 16 bits loaded from one of two sources, or (``result``) with its low byte
    then overwritten by an operation's result: the low byte is chosen twice beside the
    enable."""

    def __init__(self, result):
        self._result = result
        super().__init__({"a": In(16), "b": In(16), "r": In(8), "ea": In(1), "eb": In(1),
                          "done": In(1), "y": Out(16)})

    def elaborate(self, platform):
        m = Module()
        slot = Signal(16)
        with m.If(self.ea | self.eb):
            with m.If(self.ea):
                m.d.sync += slot.eq(self.a)
            with m.If(self.eb):
                m.d.sync += slot.eq(self.b)
        with m.Elif(self._result and self.done):
            m.d.sync += slot[:8].eq(self.r)
        m.d.comb += self.y.eq(slot)
        return m


def test_a_bit_chosen_twice_beside_its_enable_is_one_chain_of_two():
    kinds = count_primitives(ChainedSlot(result=False))[0]
    assert dict((k, v) for k, v in kinds.items() if k[0].startswith("mux")) == {("mux_ff", 16): 1}
    kinds = count_primitives(ChainedSlot(result=True))[0]
    assert kinds["mux_chain", (2, 8)] == 1 and kinds["mux_ff", 8] == 1


@pytest.mark.parametrize("family, luts_per_bit", [("ecp5", 2), ("ice40", 2), ("xilinx-xc7", 1),
                                                   ("xilinx-xcup", 1)])
def test_a_chain_of_two_is_one_lut6_or_two_lut4s_per_bit(family, luts_per_bit):
    # Five inputs (two conditions, three values): a LUT6 holds them, a LUT4 does not.
    table = {**cost_table(family), "calibration": {}}
    chain = price(table, {("mux_chain", (2, 8)): 1}, [])["lut"]
    assert chain == pytest.approx(luts_per_bit * price(table, {("mux", 8): 1}, [])["lut"])


class ClearedWords(wiring.Component):
    """``words`` registers of ``width`` bits, each loaded from its input when its bit of ``c``
    is set and cleared to 0 otherwise (``with m.Else(): r.eq(0)``, beside the domain's reset),
    then ORed into one registered output, as a measurement module's readout blocks."""

    def __init__(self, words, width):
        self._words, self._width = words, width
        super().__init__({"x": In(words * width), "c": In(words), "y": Out(width)})

    def elaborate(self, platform):
        m = Module()
        w = self._width
        registers = []
        for k in range(self._words):
            register = Signal(w, name=f"r{k}")
            with m.If(self.c[k]):
                m.d.sync += register.eq(self.x[k * w:(k + 1) * w])
            with m.Else():
                m.d.sync += register.eq(0)
            registers.append(register)
        tree = registers[0]
        for register in registers[1:]:
            tree = tree | register
        m.d.sync += self.y.eq(tree)
        return m


def test_a_registers_clear_beside_its_reset_is_its_synchronous_reset():
    # Both constants are the flip-flops' reset value: opt_dff makes them one reset condition,
    # no multiplexer (counted before as a 32-bit register multiplexer).
    kinds = count_primitives(ClearedWords(1, 32))[0]
    assert not any(kind.startswith("mux") for kind, _width in kinds)


def test_a_branch_condition_only_a_reset_reads_melts_into_the_resets_lut():
    # The Else's condition (not c) is read only as the clear that joins the reset: Yosys
    # builds one LUT per register for both (36 LUT for four words and their OR).
    kinds = count_primitives(ClearedWords(4, 32))[0]
    assert kinds["and_ff", 1] == 4 and kinds["and", 1] == 0


def test_an_or_of_four_words_is_one_tree_per_bit():
    kinds = count_primitives(ClearedWords(4, 32))[0]
    assert kinds["gate_tree", (4, 32)] == 1
    assert kinds["and", 32] == 0 and kinds["and_ff", 32] == 0


@pytest.mark.parametrize("family, ways, luts_per_bit", [
    ("ecp5", 4, 1), ("ecp5", 8, 3), ("ice40", 5, 2), ("xilinx-xc7", 6, 1), ("xilinx-xc7", 8, 2),
    ("xilinx-xcup", 11, 2)])
def test_a_gate_tree_is_the_smallest_tree_of_luts_per_bit(family, ways, luts_per_bit):
    table = cost_table(family)
    assert price(table, {("gate_tree", (ways, 10)): 1}, [])["lut"] == luts_per_bit * 10


@pytest.mark.slow
@pytest.mark.parametrize("board", ["ulx3s-85f", "arty-a7-100t"])
def test_cleared_words_and_their_or_tree_cost_what_yosys_builds(board):
    # Four words cleared beside their reset and ORed: a LUT per bit of the OR, a reset
    # condition per word (Yosys: 36 LUT on both); counted as register multiplexers and three
    # gates per bit, the estimate said 200.
    from hwgen.resources.estimate import estimate
    synthesized = synthesize(ClearedWords(4, 32), board, fmax=False)
    estimated = estimate(ClearedWords(4, 32), board)
    assert abs(estimated.lut - synthesized.lut) <= 0.1 * synthesized.lut


class Registered(wiring.Component):
    """A bitwise and of two inputs that only a register reads, or (``read``) that an
    output reads as well."""

    def __init__(self, read):
        self._read = read
        super().__init__({"a": In(8), "b": In(8), "y": Out(8), "z": Out(8)})

    def elaborate(self, platform):
        m = Module()
        register = Signal(8)
        gate = self.a & self.b
        m.d.sync += register.eq(gate)
        m.d.comb += self.y.eq(register)
        if self._read:
            m.d.comb += self.z.eq(gate)
        return m


def test_a_gate_only_a_register_reads_is_an_and_ff():
    # It cannot melt into the LUTs of what reads it: a LUT per bit before the flip-flop.
    assert count_primitives(Registered(read=False))[0] == {("and_ff", 8): 1, ("ff", 8): 1}
    kinds = count_primitives(Registered(read=True))[0]
    assert kinds["and", 8] == 1 and kinds["and_ff", 8] == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_an_and_ff_is_priced_at_its_isolated_cost_whatever_the_calibration(family):
    table = cost_table(family)
    bare = {**table, "calibration": {}}
    assert price(table, {("and_ff", 8): 1}, [])["lut"] == pytest.approx(
        price(bare, {("and", 8): 1}, [])["lut"])


class GrantedContext(wiring.Component):
    """A static stage's 16-bit context register loaded from the slot of four a round-robin
    scheduler grants (an and-or selection) when one is granted, else (``other``) from another
    source under its own condition, as a stage after a parking stage and a second edge."""

    def __init__(self, other):
        self._other = other
        super().__init__({"requests": In(4), "slots": In(4 * 16), "o": In(16), "eo": In(1),
                          "y": Out(16)})

    def elaborate(self, platform):
        from hwgen.kernels.pipeline.arbiter import RoundRobin, select
        m = Module()
        m.submodules.scheduler = scheduler = RoundRobin(4)
        m.d.comb += [scheduler.requests.eq(self.requests), scheduler.accept.eq(1)]
        chosen = select(scheduler.grant, [self.slots[16 * t:16 * (t + 1)] for t in range(4)])
        context = Signal(16)
        with m.If(scheduler.valid):
            m.d.sync += context.eq(chosen)
        with m.Elif(self._other and self.eo):
            m.d.sync += context.eq(self.o)
        m.d.comb += self.y.eq(context)
        return m


def test_a_registers_choice_beside_a_selection_is_a_mux_select():
    kinds = count_primitives(GrantedContext(other=True))[0]
    assert kinds["mux_select", (4, 16)] == 1 and kinds["mux_ff", 16] == 0
    kinds = count_primitives(GrantedContext(other=False))[0]
    assert not any(kind.startswith("mux") for kind, _width in kinds)


@pytest.mark.parametrize("family, luts_per_bit", [("ecp5", None), ("ice40", None),
                                                   ("xilinx-xc7", 0), ("xilinx-xcup", 0)])
def test_a_mux_select_is_a_way_more_on_a_lut6_and_a_register_mux_on_a_lut4(family, luts_per_bit):
    # Four ways and the choice are five and-or terms: a 4-way selection's second LUT6 takes
    # them; a LUT4 family prices the choice as it always did, as a mux_ff.
    table = cost_table(family)
    cost = price(table, {("mux_select", (4, 16)): 1}, [])["lut"]
    if luts_per_bit is None:
        assert cost == pytest.approx(price(table, {("mux_ff", 16): 1}, [])["lut"])
    else:
        assert cost == luts_per_bit * 16


@pytest.mark.slow
def test_a_registers_choice_beside_a_selection_costs_what_yosys_builds_on_xilinx():
    # Yosys (synth_xilinx): 48 LUT with the choice, 47 without: the choice is free there; a
    # mux_ff per bit put the estimate 15 LUT over.
    from hwgen.resources.estimate import estimate
    synthesized = synthesize(GrantedContext(other=True), "arty-a7-100t", fmax=False)
    estimated = estimate(GrantedContext(other=True), "arty-a7-100t")
    alone = synthesize(GrantedContext(other=False), "arty-a7-100t", fmax=False)
    assert abs(synthesized.lut - alone.lut) <= 2
    assert abs(estimated.lut - synthesized.lut) <= 0.1 * synthesized.lut
