"""Fast resource estimates: count a design's primitives and price them from a cost table.

The method of estimation models characterised once instead of synthesis every time (as in
Wijesundera et al., "Framework for Rapid Performance Estimation of Embedded Soft Core
Processors"): every primitive kind (adders, comparators, multiplexers, registers, memories...)
is synthesized once per family in isolation at several widths
(``tools/characterize_costs.py`` writes ``boards/costs/<family>.json``); a design is then
estimated by elaborating it to its bit-level netlist (:mod:`hwgen.resources.netlist`), dropping what
Yosys would drop (logic that drives no output, registers stuck at their initial value),
classifying every remaining cell as one of :data:`KINDS` with its width, and adding up their
costs, interpolated over the width.

What the counting folds the way Yosys does:

- cells that compute the same function of the same inputs are one cell (``opt_merge``),
  registers included;
- a multiplexer that selects between the two operands of a comparison is one ``minmax``;
- the hold (enable) and the constant reset (synchronous reset) of a register's next-state logic
  go into the flip-flop's clock enable and reset pins: they cost no logic; so does a
  multiplexer deeper in the next-state logic that chooses the register's own value
  (``acc <= max(acc, x)`` keeps its comparison only);
- inversions fold into the LUTs that read them: ``~`` costs nothing;
- a table of constants chosen by the cases of one switch (a ROM in logic, such as a walk's
  offsets) is one function of the selector per output bit, priced in closed form from the
  family's LUT inputs rather than as its cases' comparisons and gates.

Multipliers, shifts by a variable amount, divisions and instances are not modelled; they are
listed in :attr:`Estimate.unmodelled` (and cost nothing) so a user sees what the figure misses.
"""

import gc
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..boards import BoardError, cost_table

from ..errors import HwgenError
from .netlist import input_nets, live_cells, merge_duplicates, netlist
from ..catalog import resolve_board

__all__ = ["KINDS", "RESOURCES", "LUT_GROUPS", "Estimate", "count_primitives", "count_netlist", "estimate",
           "lut_groups", "rom_luts", "price"]

#: Primitive kinds the estimator counts; each has a micro-benchmark in the characterisation.
KINDS = {
    "add": "a + b or a - b, both operands variable (width of the result)",
    "add_const": "a + C or a - C, a counter step (width of the result)",
    "cmp": "a < b, a <= b, a > b, a >= b (width of an operand)",
    "cmp_const": "a < C and the like (width of a)",
    "eq": "a == b, a != b (width of an operand)",
    "eq_const": "a == C, a != C, a case of a switch (bits compared)",
    "minmax": "Mux(a > b, a, b) and the like: the comparison and its multiplexer (width of an operand)",
    "mux": "a 2:1 multiplexer per bit (width multiplexed)",
    "and": "bitwise and / or of two operands (width)",
    "xor": "bitwise xor of two operands (width)",
    "reduce": "an and / or reduction of one operand to one bit (width of the operand)",
    "reduce_xor": "an xor reduction (width of the operand)",
    "ff": "a register with clock enable and synchronous reset (bits)",
}
RESOURCES = ("lut", "ff", "carry", "bram", "dsp")
#: Kinds whose LUTs the calibration scales together (``memory`` is every memory's LUTs).
LUT_GROUPS = {
    "adder": ("add", "add_const"),
    "comparison": ("cmp", "cmp_const"),
    "minmax": ("minmax",),
    "mux": ("mux",),
    "glue": ("and", "xor", "eq", "eq_const", "reduce", "reduce_xor", "ff"),
    "memory": (),
}
_GROUP_OF = {kind: group for group, kinds in LUT_GROUPS.items() for kind in kinds}

#: Vendor block-RAM primitives a design may instantiate itself; each is one block of its family.
BLOCK_PRIMITIVES = {"DP16KD"}

_COMPARE = {"u<", "u>", "u<=", "u>=", "s<", "s>", "s<=", "s>="}
_FREE = {"~", "u", "s"}   # inversion and sign/zero extension
_UNMODELLED = {"*", "<<", "u>>", "s>>", "u//", "s//", "u%", "s%"}


def count_primitives(design, ports=None, platform=None):
    """Count the primitives of ``design``, elaborated for ``platform``, as Yosys would keep them.

    Returns
    -------
    (Counter, list, Counter, Counter)
        ``{(kind, width): count}``, the memories as ``(depth, width, read)`` with ``read`` either
        ``"sync"`` or ``"async"``, ``{type: count}`` of vendor block-RAM primitives the design
        instantiates itself (:data:`BLOCK_PRIMITIVES`), and ``{description: count}`` of cells
        that are not modelled.
    """
    return count_netlist(netlist(design, ports, platform))


def count_netlist(emitted):
    """:func:`count_primitives` of an emitted :class:`~hwgen.resources.netlist.Netlist`."""
    merge_duplicates(emitted)
    cells = emitted.cells
    live = live_cells(emitted)
    kinds = Counter()
    unmodelled = Counter()
    instances = Counter()
    memories = []
    roms, rom_cases = _roms(cells, live)
    async_read = {cell[1] for cell in cells if cell[0] == "read" and cell[3] is None}
    # Next-state logic of registers: assignment list index -> the flip-flop that reads it.
    feeds_ff = {}
    for index in live:
        cell = cells[index]
        if cell[0] == "ff":
            sources = {net >> 16 for net in cell[1] if net >= 2}
            if len(sources) == 1:
                feeds_ff[sources.pop()] = index
    enables = _feedback_muxes(cells, live)
    absorbed = set()   # comparisons folded into a minmax
    for index in live:
        cell = cells[index]
        if cell[0] == "op" and cell[1] == "m":
            (sel,), a, b = cell[2]
            if sel >= 2 and cells[sel >> 16][0] == "op" and cells[sel >> 16][1] in _COMPARE \
                    and {a, b} == set(cells[sel >> 16][2]):
                absorbed.add(sel >> 16)

    for index in sorted(live):
        cell = cells[index]
        kind = cell[0]
        if kind == "op":
            op, inputs = cell[1], cell[2]
            width = len(inputs[0])
            if op in _FREE or index in absorbed:
                continue
            if op == "m":
                (sel,), a, b = inputs
                minmax = sel >= 2 and sel >> 16 in absorbed
                if index in enables:
                    if minmax:      # the comparison stays; its multiplexer is the enable
                        kinds["cmp", len(a)] += 1
                elif minmax:
                    kinds["minmax", len(a)] += 1
                else:
                    _select(kinds, a, b)
            elif op in ("+", "-"):
                constant = len(inputs) == 1 or any(_const(v) for v in inputs)
                kinds["add_const" if constant else "add", width] += 1
            elif op in _COMPARE:
                kinds["cmp_const" if any(_const(v) for v in inputs) else "cmp", width] += 1
            elif op in ("==", "!="):
                if width == 1 and any(_const(v) for v in inputs):
                    continue   # a wire or its inverse
                kinds["eq_const" if any(_const(v) for v in inputs) else "eq", width] += 1
            elif op in ("&", "|"):
                kinds["and", width] += 1
            elif op == "^":
                kinds["xor", width] += 1
            elif op in ("r&", "r|", "b"):
                if width > 1:
                    kinds["reduce", width] += 1
            elif op == "r^":
                if width > 1:
                    kinds["reduce_xor", width] += 1
            else:
                unmodelled[f"operator {op} ({width} bits)"] += 1
        elif index in roms:
            columns, select_bits = roms[index]
            if columns:
                kinds["rom", select_bits] += columns
        elif index in rom_cases:
            continue
        elif kind == "matches":
            for pattern in cell[2]:
                bits = sum(ch != "-" for ch in pattern)
                if bits > 1:   # one bit is a wire or its inverse
                    kinds["eq_const", bits] += 1
        elif kind == "priority":
            if len(cell[2]) > 1:
                kinds["and", len(cell[2]) - 1] += 1
        elif kind == "assign":
            _assignments(cells, cell, feeds_ff.get(index), kinds)
        elif kind == "part":
            _kind, value, _signed, _offset, width, stride = cell
            choices = max(1, -(-(len(value) - width) // stride) + 1)
            if choices > 1:
                kinds["mux", width * (choices - 1)] += 1
        elif kind == "ff":
            data, init = cell[1], cell[2]
            bits = sum(1 for i, net in enumerate(data) if net != (init >> i) & 1)
            if bits:
                kinds["ff", bits] += 1
        elif kind == "memory":
            memories.append((cell[1], cell[2], "async" if index in async_read else "sync"))
        elif kind in ("read", "write"):
            continue
        elif kind == "instance" and cell[1] in BLOCK_PRIMITIVES:
            instances[cell[1]] += 1
        else:
            unmodelled[f"{kind} {cell[1]}"] += 1     # an instance or another cell type
    return kinds, memories, instances, unmodelled


def _const(value):
    return all(net < 2 for net in value)


def _feedback_muxes(cells, live):
    """Multiplexers that choose a register's own output for its next state, read by nothing
    else: Yosys turns each such choice into the flip-flop's clock enable (an accumulator's
    ``acc <= max(acc, x)`` keeps the comparison and loses the multiplexer)."""
    readers = Counter(source for index in live
                      for source in {net >> 16 for net in input_nets(cells[index]) if net >= 2})
    enables = set()
    for index in live:
        cell = cells[index]
        if cell[0] != "ff":
            continue
        own = tuple(range(index << 16, (index << 16) + len(cell[1])))
        stack = [cell[1]]
        while stack:
            value = stack.pop()
            sources = {net >> 16 for net in value if net >= 2}
            if len(sources) != 1 or value == own:
                continue
            source = sources.pop()
            if readers[source] != 1:
                continue
            feeding = cells[source]
            if feeding[0] == "assign":
                stack.append(feeding[1])
                stack.extend(value for _cond, _start, value in feeding[2])
            elif feeding[0] == "op" and feeding[1] == "m" and len(feeding[2][1]) == len(own):
                _, a, b = feeding[2]
                if a == own or b == own:
                    enables.add(source)
                else:
                    stack.extend((a, b))
    return enables


def _roms(cells, live):
    """ROMs in logic: assignment lists with a constant default and constant assignments, each
    under a case of one switch (a priority match over ``matches`` cells of one selector).

    Returns ``({index: (columns, selector bits)}, cases)``: columns counts the output bits that
    are neither constant nor a copy (or inverse) of another; ``cases`` are the switch's cells
    that nothing but ROMs reads (their comparisons are the ROM LUTs' inputs, not logic).
    """
    roms, switches = {}, set()
    for index in live:
        cell = cells[index]
        if cell[0] != "assign" or not cell[2] or not _const(cell[1]):
            continue
        default, assignments = cell[1], cell[2]
        width = len(default)
        switch = {cond >> 16 if cond >= 2 else None for cond, _start, _value in assignments}
        if len(switch) != 1 or any(not _const(value) or start != 0 or len(value) != width
                                   for _cond, start, value in assignments):
            continue
        switch = switch.pop()
        if switch is None or cells[switch][0] != "priority":
            continue
        inputs = cells[switch][2]     # a constant one is the switch's Default case
        tests = {net >> 16 for net in inputs if net >= 2}
        selectors = {cells[test][1] if cells[test][0] == "matches" else None for test in tests}
        if len(selectors) != 1 or None in selectors:
            continue
        # Each output bit's value in every case (and when none matches, unless a Default
        # case always does); the columns that vary cost LUTs.
        rows = [value for _cond, _start, value in assignments]
        if not any(net < 2 for net in inputs):
            rows.append(default)
        distinct = {min(column, tuple(1 - bit for bit in column))
                    for column in zip(*rows) if len(set(column)) > 1}
        roms[index] = (len(distinct), len(selectors.pop()))
        switches.add(switch)
        switches.update(tests)
    readers = {net >> 16 for index in live if index not in roms and index not in switches
               for net in input_nets(cells[index]) if net >= 2}
    return roms, switches - readers


def rom_luts(table, kinds):
    """LUTs of the counted ROMs, in closed form: an output bit that is a function of ``s``
    selector bits takes one LUT up to the LUT's inputs, then one per slice of its truth table
    (the slices' multiplexers are the families' dedicated muxes: MUXF7/F8, PFUMX/L6MUX)."""
    return sum(count * 2 ** max(0, select_bits - table["lut_inputs"])
               for (kind, select_bits), count in kinds.items() if kind == "rom")


def _select(kinds, previous, chosen):
    """Count a bitwise 2:1 choice between nets: constant against constant is a wire of the
    condition, a constant against a signal an and/or gate, two signals a multiplexer."""
    gates = muxes = 0
    for old, new in zip(previous, chosen):
        if old < 2 and new < 2:
            continue
        if old < 2 or new < 2:
            gates += 1
        else:
            muxes += 1
    if gates:
        kinds["and", gates] += 1
    if muxes:
        kinds["mux", muxes] += 1


def _assignments(cells, cell, ff_index, kinds):
    """Multiplexers of an assignment list; a register's hold and reset cost nothing."""
    _kind, default, assignments = cell
    assignments = list(assignments)
    width = len(default)
    if ff_index is not None and assignments and _const(assignments[-1][2]) \
            and assignments[-1][1] == 0 and len(assignments[-1][2]) == width:
        assignments.pop()               # synchronous reset
    current = list(default)
    # A default that is a register's own output (directly, or through the comb logic that
    # computes its next state) is a hold: Yosys makes it the register's clock enable.
    first = default[0]
    holds = first >= 2 and cells[first >> 16][0] == "ff" \
        and default == tuple(range(first, first + width))
    if holds and assignments:
        _cond, start, value = assignments.pop(0)   # clock enable (the first condition)
        current[start:start + len(value)] = value
    for cond, start, value in assignments:
        bits = slice(start, start + len(value))
        _select(kinds, current[bits], value)
        # After the choice a bit is a function of the condition: no longer a constant.
        current[bits] = [new if old == new else first if first >= 2 else cond
                         for old, new in zip(current[bits], value)]


@dataclass(frozen=True)
class Estimate:
    """Estimated resources of one design on one board (``lut`` in LUT equivalents)."""
    name: str
    board: str
    cost_family: str
    proxy: bool
    lut: int
    ff: int
    carry: int
    bram: int
    dsp: int
    unmodelled: dict
    seconds: float

    def resources(self):
        return {"lut": self.lut, "ff": self.ff, "bram": self.bram, "dsp": self.dsp}

    def to_json(self):
        return {"name": self.name, "board": self.board, "cost_family": self.cost_family,
                "proxy": self.proxy, "lut": self.lut, "ff": self.ff, "carry": self.carry,
                "bram": self.bram, "dsp": self.dsp, "unmodelled": self.unmodelled,
                "seconds": self.seconds}


def _interp(widths, values, width):
    """Linear interpolation over the characterised widths, extrapolated from the last two."""
    if width <= widths[-1]:
        return float(np.interp(width, widths, values))
    slope = (values[-1] - values[-2]) / (widths[-1] - widths[-2])
    return values[-1] + slope * (width - widths[-1])


def _memory_cost(table, depth, width, read):
    """Cost of one memory: the characterised memory of the same read kind with the nearest
    depth at or above ``depth``, scaled over the width between its characterised widths."""
    entries = [e for e in table["memories"] if e["read"] == read]
    depths = sorted({e["depth"] for e in entries})
    fitting = [d for d in depths if d >= depth]
    nearest = fitting[0] if fitting else depths[-1]
    row = sorted((e for e in entries if e["depth"] == nearest), key=lambda e: e["width"])
    widths = [e["width"] for e in row]
    cost = {}
    for resource in RESOURCES:
        values = [e[resource] for e in row]
        if resource == "bram":
            # Block counts are whole: take the characterised memory at or above this width,
            # repeated for wider memories.
            above = [e for e in row if e["width"] >= width]
            if above:
                cost[resource] = above[0]["bram"]
            else:
                cost[resource] = row[-1]["bram"] * -(-width // row[-1]["width"])
        else:
            cost[resource] = _interp(widths, values, width)
    if not fitting and depth > nearest:
        for resource in RESOURCES:
            cost[resource] *= -(-depth // nearest)
    return cost


def lut_groups(table, kinds, memories):
    """LUTs of the counted primitives at their isolated cost, summed per :data:`LUT_GROUPS`."""
    groups = dict.fromkeys(LUT_GROUPS, 0.0)
    for (kind, width), count in kinds.items():
        if kind == "rom":
            continue
        entry = table["operators"][kind]
        groups[_GROUP_OF[kind]] += count * _interp(entry["widths"], entry["lut"], width)
    for depth, width, read in memories:
        groups["memory"] += _memory_cost(table, depth, width, read)["lut"]
    return groups


def price(table, kinds, memories, instances=()):
    """Total cost ``{resource: value}`` of counted primitives under a cost table.

    LUTs are the isolated costs per group times the table's calibration factors (1 without),
    plus the ROMs' LUTs in closed form (``rom`` kinds: output bits by selector width); each
    instantiated block-RAM primitive is one block.
    """
    total = dict.fromkeys(RESOURCES, 0.0)
    total["bram"] += sum(instances.values()) if instances else 0
    for (kind, width), count in kinds.items():
        if kind == "rom":
            continue
        entry = table["operators"][kind]
        for resource in RESOURCES:
            total[resource] += count * _interp(entry["widths"], entry[resource], width)
    for depth, width, read in memories:
        for resource, value in _memory_cost(table, depth, width, read).items():
            total[resource] += value
    factors = table.get("calibration", {}).get("lut_factors")
    if factors:
        groups = lut_groups(table, kinds, memories)
        total["lut"] = sum(factors[group] * value for group, value in groups.items())
    total["lut"] += rom_luts(table, kinds)
    return total


def estimate(design, board, *, name="top", ports=None):
    """Estimate LUT, FF, block RAM and DSP of ``design`` on ``board`` without synthesis.

    For a board without an open flow (Intel) the board's ``estimate_proxy`` cost table is used
    and the result says so (``proxy=True``).
    """
    board = resolve_board(board)
    started = time.perf_counter()
    family = board.toolchain.cost_family
    try:
        table = cost_table(family)
    except BoardError as error:
        raise HwgenError(str(error)) from None
    # Building the netlist allocates hundreds of thousands of short-lived objects and no
    # garbage cycles worth collecting: pausing the collector saves a seventh of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        kinds, memories, instances, unmodelled = count_primitives(
            design, ports, platform=board.elaboration_platform())
    finally:
        if collecting:
            gc.enable()
    total = price(table, kinds, memories, instances)
    return Estimate(
        name=name, board=board.name, cost_family=family, proxy=board.family == "intel",
        lut=round(total["lut"]), ff=round(total["ff"]), carry=round(total["carry"]),
        bram=round(total["bram"]), dsp=round(total["dsp"]), unmodelled=dict(unmodelled),
        seconds=time.perf_counter() - started)
