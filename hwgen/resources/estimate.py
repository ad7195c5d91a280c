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
  go into the flip-flop's clock enable and reset pins: they cost no logic, the enable of every
  field of a register its own (``opt_dff``: the first assignment to a held bit); so does a
  multiplexer deeper in the next-state logic that chooses the register's own value
  (``acc <= max(acc, x)`` keeps its comparison only);
- inversions fold into the LUTs that read them: ``~`` costs nothing;
- a table of constants chosen by the cases of one switch (a ROM in logic, such as a walk's
  offsets) is one function of the selector per output bit, priced in closed form from the
  family's LUT inputs rather than as its cases' comparisons and gates.

- a register bit stuck at its initial value (its next state is, through multiplexers, the
  assignments a later one under the same condition does not shadow, and gates, only itself,
  that constant or other stuck bits: a context field a stage overwrites with constant bits,
  handed on through and-or selections) is a constant, and nothing reads its next state;
  register bits with the same next state, enable and reset are one (Yosys merges them bit by
  bit once its flip-flops are single bits: the copies a pipeline's thread contexts make of the
  same value);
- gates, multiplexers and a register's choices count only the bits something reads (Yosys
  maps them bit by bit and removes the bits nothing reads), and not the bits a later
  assignment under the same condition sets;
- a multiplier is counted with the operand and result widths Yosys's ``wreduce`` leaves it
  (operands without their zero top bits and no wider than the result, the result as wide as
  its bits that are read), and priced as the family's DSP mapping builds it
  (:func:`dsp_blocks`: ``mul2dsp`` splits it by the DSP's widths; parts below the DSP's
  minimum widths are multipliers in LUTs); a shift by a constant is wiring, a shift by a
  variable a barrel shifter, one multiplexer level per bit of the amount;
- an and-or selection (an or of values each gated by one bit: a parking stage handing on the
  context of the thread its scheduler grants) is one ``select`` of its ways, priced per bit
  read as the family's tree of LUTs over grants and values; a register's choice between two
  values beside its enable (a slot loaded from one of two sources) is a ``mux_ff``, several
  choices on one bit one ``mux_chain`` (a function of all their inputs, a tree of LUTs); a
  choice between a selection and another value is a ``mux_select``, one way more of the
  selection's tree on a LUT6 family (a ``mux_ff`` on a LUT4 one);
- a choice between a constant and a signal that an adder reads is an ``add_gate``, priced at
  what it adds to the adder alone (a LUT per bit before an ECP5 or iCE40 carry chain);
- constants are folded as ``opt_expr`` folds them once the stuck register bits are constants:
  gates, multiplexers, reductions, unsigned comparisons, equalities and switch cases their
  constant inputs decide, and assignments under a condition never true (a loop's exit that a
  thread id cannot take: the parking stage it enters loads its slots from one source less);
- a one-bit reduction of an arithmetic word (a counter's saturation test) is a ``reduce_word``
  at its own cost; the other reductions (``reduce``: a program's flags, any thread in a state,
  a mask of ready slots) at theirs too, the smallest tree of LUTs (a fitted factor for them
  stood in for other logic of the calibration programs: 11.5 on iCE40);
- a register's clear that joins its reset is its synchronous reset (its branch condition, if
  only resets read it, melts into the reset's LUT); a tree of one and / or
  gate over three or more words is a ``gate_tree``, one tree of LUTs per bit; a gate only
  registers read is an ``and_ff``, a LUT per bit before the flip-flop.

Divisions, remainders and instances are not modelled; they are listed in
:attr:`Estimate.unmodelled` (and cost nothing) so a user sees what the figure misses.
"""

import gc
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..boards import BoardError, cost_table

from ..errors import HwgenError
from .netlist import (BitAssignments, input_nets, live_bits, live_cells, merge_duplicates,
                      netlist, substitute)
from ..catalog import resolve_board

__all__ = ["KINDS", "RESOURCES", "LUT_GROUPS", "UNCALIBRATED", "DSP_MAPPING", "Estimate",
           "count_primitives", "count_netlist", "estimate", "lut_groups", "uncalibrated_luts",
           "rom_luts", "price", "dsp_blocks", "multiplier_parts", "partial_product_bits"]

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
    "mux_ff": "a 2:1 multiplexer of a register's next state beside its enable: a pipeline slot "
              "loaded from one of two sources (width multiplexed; characterised as ``mux``)",
    "mux_chain": "k 2:1 multiplexers in a row on a bit of a register's next state beside its "
                 "enable (a slot loaded from one of two sources, or from its source and its "
                 "operation's result): one function of 2 k + 1 inputs per bit, a tree of LUTs "
                 "((k, bits); priced from ``mux``)",
    "mux_select": "a 2:1 choice of a register's next state, beside its enable, between an "
                  "and-or selection and another value (a static stage's context loaded from "
                  "the granted slot or from another source): on a LUT6 one way more of the "
                  "selection's tree ((ways of the selection, bits); priced from ``select``), on "
                  "a LUT4 a ``mux_ff``",
    "and": "bitwise and / or of two operands (width)",
    "and_ff": "bitwise and / or that only registers read (width; characterised as ``and``)",
    "xor": "bitwise xor of two operands (width)",
    "reduce": "an and / or reduction of one operand to one bit (width of the operand)",
    "reduce_xor": "an xor reduction (width of the operand)",
    "reduce_word": "an and / or reduction of an arithmetic word: a counter's saturation or "
                   "terminal-count test (width of the word)",
    "ff": "a register with clock enable and synchronous reset (bits)",
    "shift": "a << s or a >> s, s variable: a barrel shifter (width of a; priced per level)",
    "mul": "a * b: (a bits, b bits, result bits, signed) as Yosys gets them",
    "select": "an and-or selection of one of several values by a grant, Mux(g0, v0, 0) | "
              "Mux(g1, v1, 0) | ...: (ways, bits read, bits)",
    "scheduler": "a round-robin thread scheduler, a parking stage's choice of the next ready "
                 "thread (hwgen.kernels.pipeline.arbiter.RoundRobin, every grant taken): the "
                 "search from the last thread served and its update (threads)",
    "csub": "a conditional subtraction Mux(a >= b, a - b, a): a restoring divider's step "
            "(bits read)",
    "gate_tree": "a tree of one bitwise and / or over three or more words, a | b | c | ..., "
                 "every inner gate read by the tree only: one function of its ways per bit, "
                 "a tree of LUTs ((ways, bits read); priced in closed form)",
    "add_gate": "a choice between a constant and a signal that only adders read, Mux(s, 0, a) "
                "+ b: a counter restarting from its amount (bits gated; characterised as the "
                "gated adder, priced as what the gate adds to the adder)",
}
#: Kinds priced at their isolated cost, outside the calibrated groups (the calibration designs
#: do not pin them down; a multiplier, a barrel shifter, a counter's saturation test, a
#: scheduler and a divider's step are logic of their own, characterised whole; a gate in front
#: of an adder is what it adds to the adder; an and-or selection is the smallest tree of LUTs
#: per bit, as Yosys builds it in a program too, where a fitted factor stood in for the
#: programs' other logic and moved with it, as it did for the flag reductions; a tree of one
#: gate is priced in closed form; a gate only registers read has nothing to melt into).
UNCALIBRATED = ("shift", "mul", "reduce_word", "scheduler", "csub", "add_gate", "select",
                "gate_tree", "and_ff", "reduce", "mux_select")
RESOURCES = ("lut", "ff", "carry", "bram", "dsp")
#: Kinds whose LUTs the calibration scales together (``memory`` is every memory's LUTs).
#: ``register_mux`` (a register's
#: choice between two values: a slot loaded from one of two sources, which does not melt into
#: other logic as a filter's multiplexers do) and ``gate`` (the other and / or gates, which
#: melt into the logic that reads them) are apart because the programs have thousands of them
#: and the window filters few.
LUT_GROUPS = {
    "adder": ("add", "add_const"),
    "comparison": ("cmp", "cmp_const"),
    "minmax": ("minmax",),
    "mux": ("mux",),
    "register_mux": ("mux_ff", "mux_chain"),
    "gate": ("and",),
    "glue": ("xor", "eq", "eq_const", "reduce_xor", "ff"),
    "memory": (),
}
_GROUP_OF = {kind: group for group, kinds in LUT_GROUPS.items() for kind in kinds}

#: Vendor block-RAM primitives a design may instantiate itself; each is one block of its family.
BLOCK_PRIMITIVES = {"DP16KD"}

_COMPARE = {"u<", "u>", "u<=", "u>=", "s<", "s>", "s<=", "s>="}
_UNSIGNED = {"u<", "u>", "u<=", "u>="}
_FREE = {"~", "u", "s"}   # inversion and sign/zero extension
_SHIFTS = {"<<", "u>>", "s>>"}

#: At most this many rounds of folding constants (:func:`_folded`) per design.
_FOLD_ROUNDS = 4


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
    assigned = BitAssignments(cells)
    stuck = _stuck_bits(cells, live, assigned)
    taken = _taken(cells, live)
    # Constants Yosys folds (opt_expr after opt_dff) can make more register bits stuck and more
    # logic dead: fold, merge and look again until no new register bit is stuck.
    for _round in range(_FOLD_ROUNDS):
        replacement = _folded(cells, live, emitted.outputs, stuck, assigned)
        if not replacement:
            break
        substitute(emitted, replacement)
        merge_duplicates(emitted)
        live = live_cells(emitted)
        assigned = BitAssignments(cells)
        known, stuck = stuck, _stuck_bits(cells, live, assigned)
        if stuck.keys() <= known.keys():    # nothing new to fold
            break
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
    readers = Counter(source for index in live
                      for source in {net >> 16 for net in input_nets(cells[index]) if net >= 2})
    enables = _feedback_muxes(cells, live, readers)
    # Per net: how many cells read it, and how many registers read it as a reset condition.
    net_reads = Counter(net for index in live for net in input_nets(cells[index]) if net >= 2)
    reset_reads = Counter()
    for index in live:
        if cells[index][0] == "assign" and index in feeds_ff:
            assignments = cells[index][2]
            resets = _resets(assignments, len(cells[index][1]))
            reset_reads.update(cond for cond, _start, _value in
                               assignments[len(assignments) - resets:])
    outputs = {net >> 16 for net in emitted.outputs if net >= 2}
    registered = _registered(cells, live, feeds_ff) - outputs
    operand_gates = _adder_operands(cells, live)
    selects, in_selects = _and_or_selects(cells, live, readers)
    trees, in_trees = _gate_trees(cells, live, readers, in_selects | selects.keys())
    used = live_bits(emitted, live, stuck, assigned)
    kept_ff = _kept_ff_bits(cells, live, used, stuck, assigned)
    alu = _alu_comparisons(cells, live)   # comparisons folded into a subtraction
    schedulers, in_schedulers = _schedulers(cells, live, taken)
    subtractions, in_subtractions = _conditional_subtractions(cells, live, alu, readers, outputs)
    word_tests = _word_tests(cells, live)
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
            if op in _FREE or index in absorbed or index in alu or index in in_selects \
                    or index in in_schedulers or index in in_subtractions or index in in_trees:
                continue
            if index in trees:
                bits = _bits_read(used.get(index, 0), width)
                if bits:
                    kinds["gate_tree", (trees[index], bits)] += 1
                continue
            if index in schedulers:
                kinds["scheduler", schedulers[index]] += 1
                continue
            if index in subtractions:
                bits = _bits_read(used.get(index, 0), len(inputs[1]))
                if bits:
                    kinds["csub", bits] += 1
                continue
            if index in selects:
                ways = selects[index]
                read = used.get(index, 0)
                bits = bin(read).count("1") if read >= 0 else width
                if bits:
                    kinds["select", (ways, bits, width)] += 1
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
                    _select(kinds, a, b, read=used.get(index, 0),
                            gate="add_gate" if index in operand_gates
                            else "and_ff" if index in registered else "and")
            elif op in ("+", "-"):
                constant = len(inputs) == 1 or any(_const(v) for v in inputs)
                kinds["add_const" if constant else "add", width] += 1
            elif op in _COMPARE:
                kinds["cmp_const" if any(_const(v) for v in inputs) else "cmp", width] += 1
            elif op in ("==", "!="):
                if width == 1 and any(_const(v) for v in inputs):
                    continue   # a wire or its inverse
                kinds["eq_const" if any(_const(v) for v in inputs) else "eq", width] += 1
            elif op in ("&", "|", "^"):     # a gate per bit read: opt_clean drops the others
                bits = _bits_read(used.get(index, 0), width)
                if bits:
                    kinds["xor" if op == "^" else "and_ff" if index in registered
                          else "and", bits] += 1
            elif op in ("r&", "r|", "b"):
                if width > 1:
                    kinds["reduce_word" if index in word_tests else "reduce", width] += 1
            elif op == "r^":
                if width > 1:
                    kinds["reduce_xor", width] += 1
            elif op == "*":
                _multiplier(kinds, inputs, used.get(index, 0))
            elif op in _SHIFTS:
                if not _const(inputs[1]):     # as wide as its read bits (wreduce)
                    used_bits = used.get(index, 0)
                    width = used_bits.bit_length() if used_bits >= 0 else width
                    levels = len(_shorten(inputs[1], False))
                    kinds["shift", (width, min(levels, max(1, (width - 1).bit_length())))] += 1
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
            # A branch's condition (its test and not the earlier ones') that only resets read
            # melts into the reset's LUT (``and_ff``).
            folded = sum(1 for bit in range(1, len(cell[2]))
                         if reset_reads[index << 16 | bit]
                         and reset_reads[index << 16 | bit] == net_reads[index << 16 | bit])
            if len(cell[2]) - 1 - folded > 0:
                kinds["and", len(cell[2]) - 1 - folded] += 1
        elif kind == "assign":
            _assignments(cells, cell, feeds_ff.get(index), kinds, used.get(index, 0), selects)
        elif kind == "part":
            _kind, value, _signed, _offset, width, stride = cell
            choices = max(1, -(-(len(value) - width) // stride) + 1)
            if choices > 1:
                kinds["mux", width * (choices - 1)] += 1
        elif kind == "ff":
            if kept_ff.get(index):
                kinds["ff", kept_ff[index]] += 1
        elif kind == "memory":
            memories.append((cell[1], cell[2], "async" if index in async_read else "sync"))
        elif kind in ("read", "write"):
            continue
        elif kind == "instance" and cell[1] in BLOCK_PRIMITIVES:
            instances[cell[1]] += 1
        else:
            unmodelled[f"{kind} {cell[1]}"] += 1     # an instance or another cell type
    return kinds, memories, instances, unmodelled


def _shorten(value, signed):
    """``value`` without its top bits that repeat the sign (``signed``) or are constant zeros,
    as Amaranth writes an operand of an arithmetic cell for Yosys."""
    value = list(value)
    if signed:
        while len(value) > 1 and value[-1] == value[-2]:
            value.pop()
    else:
        while value and value[-1] == 0:
            value.pop()
    return value


def _operands(a, b):
    """The two operands of an arithmetic cell as Amaranth writes them for Yosys: both shortened
    unsigned, or both signed when that is the only way to shorten one (or, against a constant,
    shortens the other more); returns ``(a, b, signed)``."""
    short = {signed: (_shorten(a, signed), _shorten(b, signed)) for signed in (False, True)}
    if _const(a):
        signed = len(short[True][1]) < len(short[False][1])
    elif _const(b):
        signed = len(short[True][0]) < len(short[False][0])
    else:
        signed = any(len(short[True][i]) < len(v) and len(short[False][i]) == len(v)
                     for i, v in enumerate((a, b)))
    return (*short[signed], signed)


def _multiplier(kinds, inputs, used):
    """Count ``a * b`` as Yosys gets it: operands shortened as Amaranth writes them (not cut
    to the result: Yosys keeps their width), the result as wide as its read bits. A constant
    power of two is a shift (wiring), a one-bit operand an and gate."""
    y = used.bit_length() if used >= 0 else len(inputs[0])
    a, b, signed = _operands(*inputs)
    for value in (a, b):
        if _const(value) and not signed and sum(value) <= 1:
            return                                  # times a power of two or zero
    if not a or not b or not y:
        return
    if min(len(a), len(b)) == 1 and not signed:
        kinds["and", y] += 1
        return
    kinds["mul", (len(a), len(b), y, signed)] += 1


def _taken(cells, live):
    """Bits anded with a constant 1, before constants are folded (:func:`_folded` makes the
    and a wire): a round robin's any-request whose grant is always taken (``accept`` tied
    to 1)."""
    return {value[0] for index in live for cell in [cells[index]]
            if cell[0] == "op" and cell[1] == "&" and len(cell[2]) == 2
            and len(cell[2][0]) == 1 and (1,) in cell[2]
            for value in cell[2] if value != (1,)}


def _schedulers(cells, live, taken):
    """Round-robin schedulers (:class:`~hwgen.kernels.pipeline.arbiter.RoundRobin` with every
    grant taken, as a parking stage uses it; an arbiter whose grant waits for its consumer,
    as the interconnect's, is counted cell by cell), found by their lowest-set-bit search
    ``c & (~c + 1)`` over the candidates ``c = Mux(any(r & above), r & above, r)`` of the
    requests ``r``, with the update of the last served, ``grant | (grant - 1)``, and
    ``any(r)``.

    ``taken`` is :func:`_taken`, found before constants are folded.

    Returns ``({the search's and: threads}, the scheduler's other cells)``: Yosys builds the
    whole as one small carry-chain circuit that its cells' isolated costs misprice (a LUT or
    two per thread under at 16 threads on Xilinx 7-series), so it is priced whole.
    """
    by_operand = {}     # (op, first operand): the cells that may be a scheduler's update
    for index in live:
        cell = cells[index]
        if cell[0] == "op" and cell[1] in ("-", "|", "r|"):
            by_operand.setdefault((cell[1], tuple(_shorten(cell[2][0], False))), []).append(index)
    roots, inside = {}, set()
    for index in live:
        cell = cells[index]
        if cell[0] != "op" or cell[1] != "&" or len(cell[2]) != 2:
            continue
        for candidates, lowest in (cell[2], cell[2][::-1]):
            parts = _scheduler_parts(cells, index, tuple(_shorten(candidates, False)), lowest,
                                     by_operand, taken)
            if parts:
                roots[index] = len(_shorten(candidates, False))
                inside.update(parts)
                break
    return roots, inside


def _scheduler_parts(cells, index, candidates, lowest, by_operand, taken):
    """The cells of the scheduler whose search is the and ``index`` of ``candidates`` and
    ``lowest`` (``~candidates + 1``), or None when they are not all there or its grant is not
    always taken (``taken``: its any-request anded with a constant 1 enables its update)."""
    add = _whole(cells, lowest)
    if add is None or cells[add][1] != "+" or len(cells[add][2]) != 2 \
            or not _const(cells[add][2][1]) or tuple(_shorten(cells[add][2][1], False)) != (1,):
        return None
    inverse = _whole(cells, tuple(_shorten(cells[add][2][0], False)))
    if inverse is None or cells[inverse][1] != "~" or cells[inverse][2][0] != candidates:
        return None
    choice = _whole(cells, candidates)
    if choice is None or cells[choice][1] != "m":
        return None
    (any_preferred,), preferred, requests = cells[choice][2]
    masked = _whole(cells, preferred)
    if any_preferred < 2 or masked is None or cells[masked][1] != "&" \
            or cells[any_preferred >> 16][:2] != ("op", "r|") \
            or cells[any_preferred >> 16][2][0] != preferred:
        return None
    grant = tuple(index << 16 | bit for bit in range(len(candidates)))
    minus = [m for m in by_operand.get(("-", grant), ())
             if tuple(_shorten(cells[m][2][1], False)) == (1,)]
    update = [o for o in by_operand.get(("|", grant), ()) for m in minus
              if tuple(_shorten(cells[o][2][1], False)) == tuple(_shorten(
                  tuple(m << 16 | bit for bit in range(len(cells[m][2][0]))), False))]
    valid = [v for v in by_operand.get(("r|", tuple(_shorten(requests, False))), ())
             if v << 16 in taken]
    if not minus or not update or not valid:
        return None
    return {add, inverse, choice, masked, any_preferred >> 16, minus[0], update[0], valid[0]}


def _conditional_subtractions(cells, live, alu, readers, outputs):
    """Conditional subtractions ``Mux(a >= b, a - b, a)`` (or ``Mux(a < b, a, a - b)``): the
    step of a restoring divider, the comparison the subtraction's carry (:func:`_alu_comparisons`).

    Returns ``({multiplexer: subtraction}, the subtractions)``, of subtractions read by
    nothing else (no other cell, no output): the
    multiplexer's select comes out of the carry chain, so it cannot melt into the LUTs of the
    subtraction (on Xilinx a LUT per bit, where the fitted multiplexer factor is 0).
    """
    roots, inside = {}, set()
    for index in live:
        cell = cells[index]
        if cell[0] != "op" or cell[1] != "m" or cell[2][0][0] < 2:
            continue
        (sel,), chosen, other = cell[2]
        test = sel >> 16
        if test not in alu or cells[test][1] not in ("u>=", "u<"):
            continue
        if cells[test][1] == "u<":
            chosen, other = other, chosen
        sub = chosen[0] >> 16 if chosen and chosen[0] >= 2 else None
        if sub is None or cells[sub][:2] != ("op", "-") \
                or chosen != tuple(sub << 16 | bit for bit in range(len(chosen))):
            continue
        minuend, subtrahend = (tuple(_shorten(v, False)) for v in cells[sub][2])
        if (minuend, subtrahend) != tuple(tuple(_shorten(v, False)) for v in cells[test][2]) \
                or tuple(_shorten(other, False)) != minuend:
            continue
        if readers[sub] == 1 and sub not in outputs:    # else both are counted as they are
            roots[index] = sub
            inside.add(sub)
    return roots, inside


def _alu_comparisons(cells, live):
    """Unsigned comparisons of two operands that a subtraction of the same two operands also
    computes: Yosys's ``alumacc`` makes both one ALU, the comparison its carry out (a
    restoring divider's ``rem >= d`` beside ``rem - d``)."""
    subtractions = {(tuple(_shorten(a, False)), tuple(_shorten(b, False)))
                    for index in live if cells[index][0] == "op" and cells[index][1] == "-"
                    and len(cells[index][2]) == 2 for a, b in [cells[index][2]]}
    return {index for index in live if cells[index][0] == "op" and cells[index][1] in _UNSIGNED
            and (tuple(_shorten(cells[index][2][0], False)),
                 tuple(_shorten(cells[index][2][1], False))) in subtractions}


#: How many registers, multiplexers and memories :func:`_word_tests` looks through for an adder.
_WORD_DEPTH = 8


def _word_tests(cells, live):
    """One-bit and / or reductions of arithmetic words: of a value that an adder computes,
    read through registers, multiplexers, assignments and memories (a counter's saturation
    test ``count.all()``, whether it counts in a register or in a RAM table). They are logic
    of their own, not a program's control: a program's reductions gather flags (any thread
    in a state, a mask of ready slots)."""
    writes = {}
    for index in live:
        if cells[index][0] == "write":
            writes.setdefault(cells[index][1], []).append(cells[index][2])

    def sources(index):
        cell = cells[index]
        if cell[0] == "ff":
            values = [cell[1]]
        elif cell[0] == "assign":
            values = [cell[1], *(value for _cond, _start, value in cell[2])]
        elif cell[0] == "op" and cell[1] == "m":
            values = cell[2][1:]
        elif cell[0] == "read":
            values = writes.get(cell[1], [])
        else:
            return set()
        return {net >> 16 for value in values for net in value if net >= 2}

    def arithmetic(value):
        seen, frontier = set(), {net >> 16 for net in value if net >= 2}
        for _ in range(_WORD_DEPTH):
            if any(cells[index][0] == "op" and cells[index][1] in ("+", "-")
                   for index in frontier):
                return True
            seen |= frontier
            frontier = {source for index in frontier for source in sources(index)} - seen
        return False

    return {index for index in live if cells[index][0] == "op"
            and cells[index][1] in ("r&", "r|", "b") and len(cells[index][2][0]) > 1
            and arithmetic(cells[index][2][0])}


def _stuck_bits(cells, live, assigned):
    """``{net: value}`` of the register bits stuck at their initial value: their next state
    is, through multiplexers and the assignments not shadowed (``assigned``: the netlist's
    :class:`~hwgen.resources.netlist.BitAssignments`), only themselves, that constant or other
    stuck bits (Yosys's ``opt_dff`` makes them constants; their logic goes).

    A bit stuck can make the bits it feeds stuck too. A bit found not stuck is looked at again
    only when a register bit its search met becomes stuck: the search depends on nothing else,
    and more stuck bits only ever make more bits stuck, so the set found is the same whatever
    the order."""
    pending = [index << 16 | bit for index in live if cells[index][0] == "ff"
               for bit in range(len(cells[index][1]))]
    queued = set(pending)
    waiting = {}    # register bit -> bits whose search met it while it was not stuck
    stuck = {}
    while pending:
        own = pending.pop()
        queued.discard(own)
        cell, bit = cells[own >> 16], own & 0xffff
        value = cell[2] >> bit & 1
        met = set()
        if _stuck(cells, cell[1][bit], own, value, stuck, 0, assigned, met):
            stuck[own] = value
            for other in waiting.pop(own, ()):
                if other not in stuck and other not in queued:
                    pending.append(other)
                    queued.add(other)
        else:
            for net in met:
                waiting.setdefault(net, set()).add(own)
    return stuck


#: How deep :func:`_folded` follows a net through the cells that compute it.
_FOLD_DEPTH = 200


def _folded(cells, live, outputs, stuck, assigned):
    """``{net: what it folds into}`` for the nets live cells and ``outputs`` read: a constant
    (0 or 1) or another net, as Yosys's ``opt_expr`` folds them once ``opt_dff`` has made the stuck
    register bits (``stuck``) constants. Gates, multiplexers, assignments, switches and
    unsigned comparisons whose constant inputs decide them: a loop's test ``k < 8`` of a ``k``
    set to a 3-bit thread id (its top bits stuck at 0) is 1, so the edge taken when it fails is
    never valid, and a parking stage it enters has one source less to load its slots from."""
    memo = {}

    def bits(value, depth):
        return [fold(n, depth) for n in value]

    def fold(net, depth):
        if net < 2:
            return net
        if net in stuck:
            return stuck[net]
        found = memo.get(net)
        if found is not None:
            return found
        if depth > _FOLD_DEPTH:
            return net
        depth += 1
        cell, bit = cells[net >> 16], net & 0xffff
        kind = cell[0]
        op = cell[1] if kind == "op" else None
        found = net
        if op == "~":
            a = fold(cell[2][0][bit], depth)
            found = 1 - a if a < 2 else net
        elif op in ("&", "|"):
            decides = 0 if op == "&" else 1
            inputs = bits([value[bit] for value in cell[2]], depth)
            if decides in inputs:
                found = decides
            else:
                rest = {n for n in inputs if n != 1 - decides}
                found = rest.pop() if len(rest) == 1 else 1 - decides if not rest else net
        elif op == "^":
            inputs = bits([value[bit] for value in cell[2]], depth)
            if all(n < 2 for n in inputs):
                found = sum(inputs) & 1
        elif op == "m":
            (sel,), a, b = cell[2]
            sel = fold(sel, depth)
            if sel < 2:
                found = fold((a if sel else b)[bit], depth)
            else:
                a, b = fold(a[bit], depth), fold(b[bit], depth)
                if a == b:
                    found = a
        elif op in ("r|", "b", "r&"):
            decides = 0 if op == "r&" else 1
            inputs = bits(cell[2][0], depth)
            if decides in inputs:
                found = decides
            elif all(n == 1 - decides for n in inputs):
                found = 1 - decides
        elif op in _UNSIGNED or op in ("==", "!="):
            found = _compare(op, bits(cell[2][0], depth), bits(cell[2][1], depth), net)
        elif kind == "matches":
            value = bits(cell[1], depth)
            found = _matches(value, cell[2], net)
        elif kind == "priority":
            en = fold(cell[1], depth)
            inputs = bits(cell[2][:bit + 1], depth)
            if en == 0 or inputs[-1] == 0 or 1 in inputs[:-1]:
                found = 0
            elif en == 1 and all(n == 0 for n in inputs[:-1]) and inputs[-1] < 2:
                found = inputs[-1]      # a constant only: a switch's cases stay its own
        elif kind == "assign":
            pairs, default = assigned[net]
            candidates = []
            for cond, value in pairs:
                cond = fold(cond, depth)
                if cond == 0:
                    continue
                candidates.append(fold(value, depth))
                if cond == 1:
                    break
            else:
                if default:
                    candidates.append(fold(cell[1][bit], depth))
            if candidates and all(n == candidates[0] for n in candidates):
                found = candidates[0]
        memo[net] = found
        return found

    replacement = {}
    for net in [net for index in live for net in input_nets(cells[index])] + list(outputs):
        if net >= 2 and net not in replacement:
            folded = fold(net, 0)
            if folded != net:
                replacement[net] = folded
    return replacement


def _compare(op, a, b, net):
    """An unsigned comparison or an equality of the bits ``a`` and ``b`` (0, 1 or a net): its
    constant value when the constant bits decide it, else ``net``."""
    if op in ("==", "!="):
        if any(x < 2 and y < 2 and x != y for x, y in zip(a, b)):
            return int(op == "!=")
        if all(x == y for x, y in zip(a, b)):
            return int(op == "==")
        return net
    # The smallest and largest value each operand can take, its unknown bits 0 or 1.
    low_a = sum(1 << i for i, n in enumerate(a) if n == 1)
    high_a = sum(1 << i for i, n in enumerate(a) if n != 0)
    low_b = sum(1 << i for i, n in enumerate(b) if n == 1)
    high_b = sum(1 << i for i, n in enumerate(b) if n != 0)
    if op in ("u>", "u>="):
        op = "u<" if op == "u>" else "u<="
        low_a, high_a, low_b, high_b = low_b, high_b, low_a, high_a
    if op == "u<":
        return 1 if high_a < low_b else 0 if low_a >= high_b else net
    return 1 if high_a <= low_b else 0 if low_a > high_b else net


def _matches(value, patterns, net):
    """Whether ``value`` (bits: 0, 1 or a net) matches one of ``patterns`` (most significant
    bit first, ``-`` any): 1 or 0 where its constant bits decide it, else ``net``."""
    undecided = False
    for pattern in patterns:
        verdict = 1
        for char, n in zip(reversed(pattern), value):
            if char == "-":
                continue
            if n >= 2:
                verdict = None
            elif n != int(char):
                verdict = 0
                break
        if verdict == 1:
            return 1
        undecided |= verdict is None
    return net if undecided else 0


def _kept_ff_bits(cells, live, used, stuck, assigned):
    """``{register cell: bits Yosys keeps}``: register bits that are read, not ``stuck``
    (:func:`_stuck_bits`) and not equal to another (the same next state, enable and reset:
    Yosys merges them bit by bit)."""
    registers = [index for index in live if cells[index][0] == "ff"]
    # Partition refinement of the other bits: start with every bit its own class and merge
    # bits whose next state, read through the classes, is the same, until no merge is left.
    bits = [index << 16 | bit for index in registers for bit in range(len(cells[index][1]))
            if index << 16 | bit not in stuck and used.get(index, 0) >> bit & 1]
    klass = {net: net for net in bits}
    interned = {}   # expression -> its number: equal expressions compare as one integer
    while True:
        signature = {}
        memo = {}
        merged = {}
        for net in bits:
            index, bit = net >> 16, net & 0xffff
            cell = cells[index]
            key = (cell[2] >> bit & 1, cell[3],
                   _next_state(cells, cell[1][bit], net, (klass, stuck, memo, assigned,
                                                          interned)))
            merged[net] = signature.setdefault(key, net)
        if len(signature) == len(set(klass.values())):
            break
        klass = merged
    kept = {}
    for net in set(klass.values()):
        kept[net >> 16] = kept.get(net >> 16, 0) + 1
    return kept


def _stuck(cells, net, own, value, stuck, depth, assigned, met):
    """Whether ``net`` is, through multiplexers, assignments and gates, only ``own`` or
    ``value`` (``own`` -1: only ``value``). A gate is ``value`` when one input is that constant
    and the gate lets it through (a 0 into an and, a 1 into an or: a context field of constant
    bits handed on by an and-or selection), or when all its inputs are ``own`` or ``value``.
    Adds to ``met`` the register bits met that are not stuck (yet)."""
    if net < 2:
        return net == value
    if net == own or net in stuck:
        return net == own or stuck[net] == value
    cell, bit = cells[net >> 16], net & 0xffff
    kind = cell[0]
    if kind == "ff":
        met.add(net)
        return False
    if depth > 64 or kind not in ("assign", "op"):
        return False
    op = cell[1] if kind == "op" else None
    if kind == "assign":     # what the bit can take: not the values later ones shadow
        pairs, default = assigned[net]
        leaves = [leaf for _cond, leaf in pairs] + ([cell[1][bit]] if default else [])
    elif op == "m":
        leaves = [cell[2][1][bit], cell[2][2][bit]]
    elif op == "~":
        return _stuck(cells, cell[2][0][bit], -1, 1 - value, stuck, depth + 1, assigned, met)
    elif op in ("&", "|"):
        leaves = [operand[bit] for operand in cell[2]]
        if value == (op == "|"):
            for leaf in leaves:
                if _stuck(cells, leaf, -1, value, stuck, depth + 1, assigned, met):
                    return True
    else:
        return False
    for leaf in leaves:     # a loop, not all(): this runs for every bit of every register
        if not _stuck(cells, leaf, own, value, stuck, depth + 1, assigned, met):
            return False
    return True


def _next_state(cells, net, own, context):
    """A register bit's next state as a hashable expression: its enable (the hold: a choice of
    its own value) peeled off as Yosys's flip-flop enable takes it, the rest read bit by bit
    through gates, multiplexers and assignments down to registers (their class) and other
    cells (their net). ``context`` is what :func:`_bit` needs."""
    cell, bit = cells[net >> 16], net & 0xffff
    if net >= 2 and cell[0] == "assign" and cell[1][bit] == own:
        return ("hold", tuple((_bit(cells, cond, context), _bit(cells, value, context))
                              for cond, value in context[3][net][0]))
    if net >= 2 and cell[0] == "op" and cell[1] == "m" \
            and own in (cell[2][1][bit], cell[2][2][bit]):
        (sel,), a, b = cell[2]
        other = b[bit] if a[bit] == own else a[bit]
        return ("hold", a[bit] == own, _bit(cells, sel, context), _bit(cells, other, context))
    return _bit(cells, net, context)


def _bit(cells, net, context):
    """One bit as an expression (see :func:`_next_state`), numbered: ``context`` is ``(klass,
    stuck, memo, assigned, interned)``, ``interned`` numbering each expression (from 2 on, past
    the constants 0 and 1) so that equal expressions are one integer, cheap to hash and
    compare however deep they are."""
    if net < 2:
        return net
    klass, stuck, memo, assigned, interned = context
    found = memo.get(net)
    if found is not None:
        return found
    if net in stuck:
        return stuck[net]
    cell, bit = cells[net >> 16], net & 0xffff
    kind = cell[0]
    op = cell[1] if kind == "op" else None
    if kind == "ff":
        found = ("q", klass.get(net, net))
    elif op in ("&", "|", "^"):
        found = (op, *sorted(_bit(cells, v[bit], context) for v in cell[2]))
    elif op == "~":
        found = ("~", _bit(cells, cell[2][0][bit], context))
    elif op == "m":
        (sel,), a, b = cell[2]
        found = ("m", _bit(cells, sel, context), _bit(cells, a[bit], context),
                 _bit(cells, b[bit], context))
    elif kind == "assign":
        pairs, default = assigned[net]
        found = ("a", _bit(cells, cell[1][bit], context) if default else None,
                 tuple((_bit(cells, cond, context), _bit(cells, value, context))
                       for cond, value in pairs))
    else:
        found = ("n", net)
    number = memo[net] = interned.setdefault(found, len(interned) + 2)
    return number


def _const(value):
    return all(net < 2 for net in value)


def _outputs(value, source):
    """Whether ``value`` is the output of cell ``source`` in order, but for bits folded into
    constants (:func:`_folded`: a register's stuck bits, read as constants)."""
    return not _const(value) and all(net < 2 or net == source << 16 | bit
                                     for bit, net in enumerate(value))


def _whole(cells, value):
    """The operator cell whose whole output ``value`` is (but for bits folded into constants),
    or None."""
    source = next((net >> 16 for net in value if net >= 2), None)
    if source is None or not _outputs(value, source):
        return None
    cell = cells[source]
    if cell[0] != "op" or len(cell[2][1 if cell[1] == "m" else 0]) != len(value):
        return None
    return source


def _gated(cell):
    """Whether ``cell`` is ``Mux(g, v, 0)``: a value gated by one bit."""
    return cell[0] == "op" and cell[1] == "m" and _const(cell[2][2]) \
        and not any(cell[2][2]) and not _const(cell[2][1])


def _and_or_selects(cells, live, readers):
    """And-or selections: trees of ``|`` whose leaves are values gated by one bit each
    (``Mux(g, v, 0)``), every inner cell read by the tree only; how a parking stage hands on
    the context of the thread its scheduler grants (:func:`~hwgen.kernels.pipeline.arbiter.select`).

    Returns ``({root: ways}, cells inside the trees)``: Yosys maps each bit of a selection to
    one tree of LUTs over its grants and values, which the cells' isolated costs (an and gate
    per way, an or gate per join) misprice, the more so the more ways.
    """
    trees = {}
    for index in live:
        cell = cells[index]
        if cell[0] != "op" or cell[1] != "|":
            continue
        inner, leaves, stack = [], [], list(cell[2])
        while stack:
            source = _whole(cells, stack.pop())
            if source is None or readers[source] != 1:
                break
            if cells[source][0] == "op" and cells[source][1] == "|":
                inner.append(source)
                stack.extend(cells[source][2])
            elif _gated(cells[source]):
                leaves.append(source)
            else:
                break
        else:
            trees[index] = (len(leaves), inner + leaves)
    inside = {source for _ways, cells_of in trees.values() for source in cells_of}
    return {root: ways for root, (ways, _cells) in trees.items() if root not in inside}, inside


def _registered(cells, live, feeds_ff):
    """Cells that only registers read (their next state: directly, or through the assignment
    list that is a register's next state), outputs aside: a gate there is a LUT per bit before
    the flip-flop, with nothing to melt into."""
    only = {}
    for index in live:
        cell = cells[index]
        to_ff = cell[0] == "ff" or index in feeds_ff
        for source in {net >> 16 for net in input_nets(cell) if net >= 2}:
            only[source] = only.get(source, True) and to_ff
    return {index for index, flag in only.items() if flag}


def _gate_trees(cells, live, readers, taken):
    """Trees of one bitwise and / or (``a | b | c | ...``) over three or more ways, every inner
    gate read by the tree only and none in ``taken`` (the and-or selections): Yosys maps each
    bit to one tree of LUTs over its ways (a hardware measurement module's readout ORs four
    registered words into one: a LUT4 per bit, where three gates were counted).

    Returns ``({root: ways}, inner gates)``.
    """
    trees = {}
    for index in live:
        cell = cells[index]
        if cell[0] != "op" or cell[1] not in ("&", "|") or index in taken:
            continue
        inner, ways, stack = [], 0, list(cell[2])
        while stack:
            value = stack.pop()
            source = _whole(cells, value)
            if source is not None and source not in taken and readers[source] == 1 \
                    and cells[source][0] == "op" and cells[source][1] == cell[1] \
                    and len(cells[source][2][0]) == len(cell[2][0]):
                inner.append(source)
                stack.extend(cells[source][2])
            else:
                ways += 1
        if ways > 2:
            trees[index] = (ways, inner)
    inside = {source for _ways, cells_of in trees.values() for source in cells_of}
    return {root: ways for root, (ways, _cells) in trees.items() if root not in inside}, inside


def _adder_operands(cells, live):
    """Multiplexers that an adder (``+`` or ``-``) reads, directly or through a zero or sign
    extension: their choices between a constant and a signal gate an adder's operand (a
    counter bank's low part restarting from this cycle's amount, ``Mux(flush, 0, low) +
    amount``). On ECP5 and iCE40 such a gate is a LUT4 per bit in front of the carry chain,
    whose cells take no more inputs, whatever else reads it; on Xilinx it goes into the
    adder's own LUT. So it is an ``add_gate``, priced per family at what it adds to an adder
    alone, not by the factor fitted for the other gates (which melt into the LUTs that read
    them)."""
    operands, extensions = set(), {}    # extensions: cell -> the extensions that read it
    for index in live:
        cell = cells[index]
        if cell[0] == "op" and cell[1] in ("+", "-", "u", "s"):
            for source in {net >> 16 for net in input_nets(cell) if net >= 2}:
                if cell[1] in ("+", "-"):
                    operands.add(source)
                else:
                    extensions.setdefault(source, set()).add(index)
    # What an extension that an adder reads extends is an operand too (extensions of
    # extensions: a few levels at most).
    for _level in range(4):
        operands |= {source for source, extended in extensions.items() if extended & operands}
    return {index for index in operands if cells[index][0] == "op" and cells[index][1] == "m"}


def _feedback_muxes(cells, live, readers):
    """Multiplexers that choose a register's own output for its next state, read by nothing
    else (``readers``: how many live cells read each cell): Yosys turns each such choice into
    the flip-flop's clock enable (an accumulator's ``acc <= max(acc, x)`` keeps the comparison
    and loses the multiplexer)."""
    enables = set()
    for index in live:
        cell = cells[index]
        if cell[0] != "ff":
            continue
        stack = [cell[1]]
        while stack:
            value = stack.pop()
            sources = {net >> 16 for net in value if net >= 2}
            if len(sources) != 1 or _outputs(value, index):
                continue
            source = sources.pop()
            if readers[source] != 1:
                continue
            feeding = cells[source]
            if feeding[0] == "assign":
                stack.append(feeding[1])
                stack.extend(value for _cond, _start, value in feeding[2])
            elif feeding[0] == "op" and feeding[1] == "m" and len(feeding[2][1]) == len(cell[1]):
                _, a, b = feeding[2]
                if _outputs(a, index) or _outputs(b, index):
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


def _bits_read(read, width):
    """How many of a cell's ``width`` output bits the mask ``read`` (:func:`live_bits`; -1:
    all) has."""
    return width if read < 0 else bin(read & ((1 << width) - 1)).count("1")


def _select(kinds, previous, chosen, read=-1, gate="and"):
    """Count a bitwise 2:1 choice between nets, on the bits ``read`` (a mask of the choice's
    bits; those no one reads, Yosys removes): constant against constant is a wire of the
    condition, a constant against a signal an and/or gate (of kind ``gate``), two signals a
    multiplexer (``mux``)."""
    gates = muxes = 0
    for bit, (old, new) in enumerate(zip(previous, chosen)):
        if old < 2 and new < 2 or not read >> bit & 1:
            continue
        if old >= 2 and new >= 2:
            muxes += 1
        else:
            gates += 1
    if gates:
        kinds[gate, gates] += 1
    if muxes:
        kinds["mux", muxes] += 1


def _assignments(cells, cell, ff_index, kinds, read, selects=None):
    """Multiplexers of an assignment list, on its bits ``read`` (a mask); a register's hold
    and reset cost nothing. ``selects``: the and-or selections' roots and their ways."""
    _kind, default, assignments = cell
    assignments = list(assignments)
    width = len(default)
    # A register's last assignments of one constant to all its bits (its domain's reset, and
    # a clear such as ``with m.Else(): r.eq(0)`` that no later assignment overrides) are its
    # synchronous reset: Yosys's opt_dff folds each such choice into the flip-flop's reset pin,
    # one reset condition for all: a LUT before the reset pin where there are several.
    resets = _resets(assignments, width) if ff_index is not None else 0
    del assignments[len(assignments) - resets:]
    if resets > 1 and read:
        kinds["and_ff", 1] += 1
    current = list(default)
    # A default that is a register's own output (directly, or through the comb logic that
    # computes its next state) is a hold: Yosys makes it the register's clock enable.
    first = next((net for net in default if net >= 2), 0)
    holds = first >= 2 and cells[first >> 16][0] == "ff" and _outputs(default, first >> 16)
    # Per bit: Yosys's opt_dff gives every group of bits its own enable, so the first
    # assignment to a held bit is its clock enable (an array of per-thread fields in one
    # register, each written under its own conditions, has one enable per field).
    held = (1 << width) - 1 if holds else 0
    # A register's: the bits of each choice, the ways of a selection it chooses (0: none);
    # per bit, how many choices.
    choices, sides, levels = [], [], Counter()
    for k, (cond, start, value) in enumerate(assignments):
        bits = slice(start, start + len(value))
        written = (1 << len(value)) - 1 << start
        enabled, held = held & written, held & ~written
        # Bits a later assignment under the same condition sets are not chosen here.
        shadowed = 0
        for later, later_start, later_value in assignments[k + 1:]:
            if later == cond:
                shadowed |= (1 << len(later_value)) - 1 << later_start
        if ff_index is None:
            _select(kinds, current[bits], value, (read & ~shadowed & ~enabled) >> start)
        else:
            # A register's choices are counted per bit once all are known (below).
            mask = read & ~shadowed & ~enabled
            chosen = [start + bit for bit, (old, new) in enumerate(zip(current[bits], value))
                      if mask >> start + bit & 1 and not (old < 2 and new < 2)]
            choices.append(chosen)
            levels.update(chosen)
            sides.append(_selected(selects, current[bits], value))
        # After the choice a bit is a function of the condition: no longer a constant; a bit
        # this assignment enables takes its value.
        current[bits] = [new if enabled >> bit & 1 or old == new
                         else first if first >= 2 else cond
                         for bit, old, new in zip(range(start, start + len(value)),
                                                  current[bits], value)]
    # A bit chosen once is a 2:1 multiplexer beside its enable (``mux_ff``); a bit chosen k
    # times is one function of its k conditions and k + 1 values (``mux_chain``), which the
    # LUTs of a family take whole (a LUT6 holds two levels, where a LUT4 needs two LUTs).
    # A bit chosen once between an and-or selection and another value is one way more of the
    # selection's tree (``mux_select``) on a LUT6: the choice takes the last LUT's spare inputs.
    for chosen, ways in zip(choices, sides):
        once = sum(levels[bit] == 1 for bit in chosen)
        if once and ways:
            kinds["mux_select", (ways, once)] += 1
        elif once:
            kinds["mux_ff", once] += 1
    chains = Counter(k for k in levels.values() if k > 1)
    for k, bits in chains.items():
        kinds["mux_chain", (k, bits)] += 1


def _resets(assignments, width):
    """How many of a register's last ``assignments`` are its synchronous reset: each of one
    constant to all ``width`` bits, the same constant (see :func:`_assignments`)."""
    resets = 0
    for _cond, start, value in reversed(assignments):
        if not (_const(value) and start == 0 and len(value) == width) \
                or resets and value != assignments[-1][2]:
            break
        resets += 1
    return resets


def _selected(selects, previous, chosen):
    """The ways of the and-or selection (in ``selects``) whose output is one side of a 2:1
    choice between ``previous`` and ``chosen``, whole; 0 when neither side is one."""
    for side in (chosen, previous):
        roots = {net >> 16 for net in side if net >= 2}
        if selects and len(roots) == 1 and all(net >= 2 for net in side):
            root = roots.pop()
            if root in selects:
                return selects[root]
    return 0


#: Yosys's DSP mapping per cost family (``mul2dsp``'s parameters in the family's ``synth_*``):
#: widest operands of one block, widest part of a split operand, narrowest operands and result
#: a block takes, and whether the block multiplies signed numbers only (an unsigned operand
#: then takes a bit more). iCE40: ``synth_ice40`` maps to SB_MAC16 only with ``-dsp``, which
#: the flow does not pass: multipliers are LUTs there.
DSP_MAPPING = {
    "ecp5": {"a_max": 18, "b_max": 18, "a_part": 18, "b_part": 18, "a_min": 2, "b_min": 2,
             "y_min": 1, "signed_only": False},
    "xilinx-xc7": {"a_max": 25, "b_max": 18, "a_part": 18, "b_part": 18, "a_min": 2,
                   "b_min": 2, "y_min": 9, "signed_only": True},
    "xilinx-xc6v": {"a_max": 25, "b_max": 18, "a_part": 18, "b_part": 18, "a_min": 2,
                    "b_min": 2, "y_min": 9, "signed_only": True},
    "xilinx-xcup": {"a_max": 27, "b_max": 18, "a_part": 18, "b_part": 18, "a_min": 2,
                    "b_min": 2, "y_min": 9, "signed_only": True},
    "ice40": None,
}


def partial_product_bits(a, b, y):
    """Bits of the partial-product array of an ``a`` x ``b`` multiplier truncated to ``y``
    bits (the pairs i < a, j < b with i + j < y): what a multiplier in LUTs builds."""
    return sum(max(0, min(b, y - i)) for i in range(min(a, y)))


def multiplier_parts(a, b, y, mapping, signed=False):
    """How Yosys builds an ``a`` x ``b`` -> ``y`` multiplier (both operands ``signed`` or not)
    under a family's :data:`DSP_MAPPING` (``None``: no DSP mapping), following ``mul2dsp``: the
    wider operand is split into parts of the DSP's part width (less a bit for a signed-only
    DSP) while wider than the DSP takes, then the other; each part is a block unless narrower
    than the DSP's minimum (then a multiplier in LUTs), and a part whose product lands wholly
    above the result's bits is dropped. The parts' shifted products are summed by adders.

    Returns ``(blocks, adder_bits, soft_bits)``: DSP blocks, bits of the adders that join
    the parts (each as wide as the result bits above its part's offset), and partial-product
    bits multiplied in LUTs.
    """
    found = [0, 0, 0]

    def split(a, b, y, a_signed, b_signed, offset, top):
        width = y_top - offset     # result bits this part can still reach
        if width <= 0:
            return
        if top and a < b:
            a, b, a_signed, b_signed = b, a, b_signed, a_signed
        if mapping is None or a < mapping["a_min"] or b < mapping["b_min"] \
                or y < mapping["y_min"]:
            found[2] += partial_product_bits(a, b, min(y, width))
            return
        headroom = int(mapping["signed_only"])
        if headroom and top and not (a_signed or b_signed):
            a, b, a_signed, b_signed = a + 1, b + 1, True, True
        for side in ("a", "b"):
            whole, part = (a, b)[side == "b"], mapping[side + "_part"] - headroom
            if whole > mapping[side + "_max"]:
                n = (whole - mapping[side + "_max"] + part - 1) // part
                other = b if side == "a" else a
                for i in range(n + 1):
                    bits = part + headroom if i < n else whole - n * part
                    part_y = min(y, other + mapping[side + "_part"]) if i < n else other + bits
                    signed = bool(headroom) if i < n else (a_signed if side == "a" else b_signed)
                    if side == "a":
                        split(bits, b, part_y, signed, b_signed, offset + i * part, False)
                    else:
                        split(a, bits, part_y, a_signed, signed, offset + i * part, False)
                    if i:
                        found[1] += max(0, width - i * part)
                return
        found[0] += 1

    y_top = y
    split(a, b, y, signed, signed, 0, True)
    return tuple(found)


def dsp_blocks(a, b, y, family, signed=False):
    """DSP blocks Yosys uses for an ``a`` x ``b`` -> ``y`` multiplier on a cost family (see
    :func:`multiplier_parts`)."""
    return multiplier_parts(a, b, y, DSP_MAPPING.get(family), signed)[0]


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
    """Cost of one memory from the characterised memories of the same read kind.

    At a characterised depth, that memory scaled over the width. Between two characterised
    depths: where both are LUT RAM (or flip-flops), the two interpolated over the depth; where
    the shallower is LUT RAM and the deeper block RAM, Yosys chose LUT RAM at the one and block
    RAM at the other, since LUT RAM grows with the depth and a block does not; the estimate
    takes the one nearer in the ratio of depths (LUT RAM scaled to the depth up to the
    geometric mean of the two, block RAM beyond). Deeper than every characterised depth: the
    deepest, repeated. Shallower than every characterised depth (a FIFO of two entries): as the
    shallowest where the family made that LUT RAM, else registers (:func:`_register_file`: on
    the iCE40, which has no LUT RAM, pricing two words as sixteen put an interconnect at seven
    times what Yosys makes of it)."""
    entries = [e for e in table["memories"] if e["read"] == read]
    depths = sorted({e["depth"] for e in entries})
    if depth < depths[0] and _memory_at(entries, depths[0], width)["ff"] >= depths[0] * width:
        return _register_file(table, depth, width, read)
    below = [d for d in depths if d <= depth]
    above = [d for d in depths if d >= depth]
    if not above:
        cost = _memory_at(entries, depths[-1], width)
        return {r: v * -(-depth // depths[-1]) for r, v in cost.items()}
    deep = _memory_at(entries, above[0], width)
    if not below or below[-1] == above[0]:
        return deep
    shallow_depth, deep_depth = below[-1], above[0]
    shallow = _memory_at(entries, shallow_depth, width)
    if shallow["bram"]:
        return deep
    if not deep["bram"]:
        t = (depth - shallow_depth) / (deep_depth - shallow_depth)
        return {r: shallow[r] + t * (deep[r] - shallow[r]) for r in RESOURCES}
    if depth * depth <= shallow_depth * deep_depth:
        return {r: shallow[r] * depth / shallow_depth for r in RESOURCES}
    return deep


def _register_file(table, depth, width, read):
    """A memory of a few words as Yosys's ``memory_map`` builds it: a register per word, a
    multiplexer tree that reads one (``depth - 1`` 2:1 choices per bit) and, for a synchronous
    read, the read register; each word's write enable is a decode of the address (one LUT)."""
    cost = {r: _kind_cost(table, "ff", depth * width)[r] for r in RESOURCES}
    if depth > 1:
        for r, v in _kind_cost(table, "mux", (depth - 1) * width).items():
            cost[r] += v
    if read == "sync":
        for r, v in _kind_cost(table, "ff", width).items():
            cost[r] += v
    cost["lut"] += depth
    return cost


def _memory_at(entries, depth, width):
    """The characterised memories of one ``depth``, scaled over the width: LUT, FF and carry
    interpolated (extrapolated below the narrowest); block RAM whole, that of the memory at or
    above ``width`` (repeated for
    wider memories)."""
    row = sorted((e for e in entries if e["depth"] == depth), key=lambda e: e["width"])
    widths = [e["width"] for e in row]
    cost = {}
    for resource in RESOURCES:
        if resource == "bram":
            wider = [e for e in row if e["width"] >= width]
            cost[resource] = (wider[0]["bram"] if wider
                              else row[-1]["bram"] * -(-width // row[-1]["width"]))
        else:
            values = [e[resource] for e in row]
            if width < widths[0] and len(widths) > 1:
                # Narrower than every characterised memory: along the first two's slope (a
                # clamp would price a 2-bit queue as an 8-bit one).
                slope = (values[1] - values[0]) / (widths[1] - widths[0])
                cost[resource] = max(0.0, values[0] - slope * (widths[0] - width))
            else:
                cost[resource] = _interp(widths, values, width)
    return cost


def _operator(table, kind):
    """The characterised costs of ``kind`` (a table without it is out of date: say so)."""
    try:
        return table["operators"][kind]
    except KeyError:
        raise HwgenError(f"the {table['family']} cost table has no {kind!r} costs; rerun "
                         f"tools/characterize_costs.py {table['family']} --kinds {kind} "
                         f"--no-calibrate") from None


def _kind_cost(table, kind, width):
    """``{resource: value}`` of one primitive at its isolated cost."""
    if kind == "mux_ff":    # alone, the multiplexer; it packs otherwise beside a register
        kind = "mux"
    if kind == "and_ff":
        kind = "and"
    if kind == "mux_chain":     # per bit a tree of LUTs over its 2 k + 1 inputs
        levels, bits = width
        luts = -(-2 * levels // (table["lut_inputs"] - 1))
        return {r: luts * v for r, v in _kind_cost(table, "mux", bits).items()}
    if kind == "gate_tree":     # per bit read, the smallest tree of LUTs over its ways
        ways, bits = width
        luts = bits * -(-(ways - 1) // (table["lut_inputs"] - 1))
        return {r: float(luts) if r == "lut" else 0.0 for r in RESOURCES}
    if kind == "mul":
        model = table.get("multiplier")
        if model is None:
            raise HwgenError(f"the {table['family']} cost table has no multiplier model; rerun "
                             f"tools/characterize_costs.py {table['family']} --kinds mul shift")
        a, b, y, signed = width
        blocks, adder_bits, soft_bits = multiplier_parts(a, b, y, DSP_MAPPING.get(table["family"]),
                                                         signed)
        features = (blocks, adder_bits, soft_bits)
        cost = {resource: max(0.0, sum(c * f for c, f in zip(model[resource], features)))
                for resource in ("lut", "ff", "carry")}
        return {**cost, "bram": 0.0, "dsp": blocks}
    if kind == "mux_select":    # what one way more adds to the selection's tree
        ways, bits = width
        entry = _operator(table, "select")
        return {r: bits / entry["bits"] * max(0.0, _interp(entry["widths"], entry[r], ways + 1)
                                              - _interp(entry["widths"], entry[r], ways))
                for r in RESOURCES}
    entry = _operator(table, kind)
    if kind == "scheduler":     # its register (the last thread served) is counted as ff
        return {r: 0.0 if r == "ff" else _interp(entry["widths"], entry[r], width)
                for r in RESOURCES}
    if kind == "shift":
        bits, levels = width
        # Characterised with the full amount (ceil(log2(bits)) levels); fewer levels, less.
        scale = levels / max(1, (bits - 1).bit_length())
        return {r: scale * _interp(entry["widths"], entry[r], bits) for r in RESOURCES}
    if kind == "add_gate":
        # Characterised as the gated adder: the gate costs what it adds to the adder alone.
        adder = _operator(table, "add")
        return {r: max(0.0, _interp(entry["widths"], entry[r], width)
                       - _interp(adder["widths"], adder[r], width)) for r in RESOURCES}
    if kind == "select":
        ways, bits, _width = width
        # Characterised per number of ways at entry["bits"] bits; every bit is a tree of its own.
        return {r: bits / entry["bits"] * _interp(entry["widths"], entry[r], ways)
                for r in RESOURCES}
    return {r: _interp(entry["widths"], entry[r], width) for r in RESOURCES}


def _for_family(table, kinds):
    """``kinds`` as ``table``'s family takes them: on a LUT4 family (or a table calibrated
    before ``mux_ff`` was a kind) a register's choice beside a selection is a ``mux_ff``."""
    if table["lut_inputs"] >= 6 and "register_mux" in \
            table.get("calibration", {}).get("lut_factors", {"register_mux": 1}):
        return kinds
    found = Counter()
    for (kind, width), count in kinds.items():
        if kind == "mux_select":
            found["mux_ff", width[1]] += count
        else:
            found[kind, width] += count
    return found


def lut_groups(table, kinds, memories, *, own=()):
    """LUTs of the counted primitives at their isolated cost, summed per :data:`LUT_GROUPS`
    (:data:`UNCALIBRATED` kinds and ROMs aside); the :data:`UNCALIBRATED` kinds in ``own`` in
    a group of their own, named after the kind, for a fit that scales them."""
    groups = dict.fromkeys((*LUT_GROUPS, *own), 0.0)
    kinds = _for_family(table, kinds)
    for (kind, width), count in kinds.items():
        if kind in own:
            groups[kind] += count * _kind_cost(table, kind, width)["lut"]
        elif kind != "rom" and kind not in UNCALIBRATED:
            groups[_GROUP_OF[kind]] += count * _kind_cost(table, kind, width)["lut"]
    for depth, width, read in memories:
        groups["memory"] += _memory_cost(table, depth, width, read)["lut"]
    return groups


def uncalibrated_luts(table, kinds, *, own=()):
    """LUTs of the :data:`UNCALIBRATED` kinds (multipliers, barrel shifters, ...) at their
    isolated cost, but for those in ``own`` (see :func:`lut_groups`)."""
    kinds = _for_family(table, kinds)
    return sum(count * _kind_cost(table, kind, width)["lut"]
               for (kind, width), count in kinds.items()
               if kind in UNCALIBRATED and kind not in own)


def _as_calibrated(kinds, factors):
    """``kinds`` as a table calibrated before ``select`` and ``mux_ff`` were kinds counted
    them: a selection as an and gate per way and an or gate per join, each as wide as the
    selection (all its bits, read or not, as they were counted); a register's multiplexer as a
    multiplexer."""
    found = Counter()
    for (kind, width), count in kinds.items():
        if kind == "select" and "register_mux" not in factors:
            ways, _bits, whole = width
            found["and", whole] += (2 * ways - 1) * count
        elif kind == "mux_ff" and "register_mux" not in factors:
            found["mux", width] += count
        elif kind == "mux_chain" and "register_mux" not in factors:
            levels, bits = width
            found["mux", bits] += levels * count
        else:
            found[kind, width] += count
    return found


def price(table, kinds, memories, instances=()):
    """Total cost ``{resource: value}`` of counted primitives under a cost table.

    LUTs are the isolated costs per group times the table's calibration factors (1 without),
    plus the ROMs' LUTs in closed form (``rom`` kinds: output bits by selector width) and the
    multipliers' and barrel shifters' at their isolated cost; each instantiated block-RAM
    primitive is one block. A table calibrated before ``select`` and ``mux_ff`` were kinds
    prices them as its fit saw them (:func:`_as_calibrated`).
    """
    factors = table.get("calibration", {}).get("lut_factors")
    kinds = _for_family(table, kinds)
    if factors:
        kinds = _as_calibrated(kinds, factors)
    total = dict.fromkeys(RESOURCES, 0.0)
    total["bram"] += sum(instances.values()) if instances else 0
    for (kind, width), count in kinds.items():
        if kind == "rom":
            continue
        for resource, value in _kind_cost(table, kind, width).items():
            total[resource] += count * value
    for depth, width, read in memories:
        for resource, value in _memory_cost(table, depth, width, read).items():
            total[resource] += value
    if factors:
        groups = lut_groups(table, kinds, memories)
        total["lut"] = sum(factors[group] * value for group, value in groups.items() if value) \
            + uncalibrated_luts(table, kinds)
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
    # A system's memory interconnect has LUT factors of its own (fitted against Yosys); the
    # module that prices it builds on this one, hence the import here.
    from .estimate_system import interconnect_lut_correction
    total["lut"] += interconnect_lut_correction(design, board)
    return Estimate(
        name=name, board=board.name, cost_family=family, proxy=board.family == "intel",
        lut=round(total["lut"]), ff=round(total["ff"]), carry=round(total["carry"]),
        bram=round(total["bram"]), dsp=round(total["dsp"]), unmodelled=dict(unmodelled),
        seconds=time.perf_counter() - started)
