"""The estimator's register analysis (stuck bits, bits read, registers Yosys keeps) against a
plain reference of each rule: the fast versions (a bit's assignments looked up once, a bit
searched again only when a register bit it met becomes stuck, expressions compared as
interned numbers) must find exactly what the plain fixpoints find, on every program and on
window-filter PEs with and without their hardware measurement module."""

import importlib
from pathlib import Path

import pytest

from hwgen.boards import get_board
from hwgen.catalog import board_tree_policy, make_window_filter
from hwgen.discovery import load_spec
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.netlist import (BitAssignments, bit_assignments, input_nets, live_bits,
                                     live_cells, merge_duplicates, netlist)
from hwgen.sim import instrument_pe

# The module (the package's ``estimate`` is its function of that name).
estimator = importlib.import_module("hwgen.resources.estimate")
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "histogram.py"


# --- the plain references -------------------------------------------------------------------

def reference_stuck_bits(cells, live):
    """Every register bit searched again on every pass until a pass finds no new stuck bit."""
    registers = [index for index in live if cells[index][0] == "ff"]
    stuck = {}
    changed = True
    while changed:
        changed = False
        for index in registers:
            data, init = cells[index][1], cells[index][2]
            for bit, net in enumerate(data):
                own = index << 16 | bit
                if own not in stuck and reference_stuck(cells, net, own, init >> bit & 1, stuck, 0):
                    stuck[own] = init >> bit & 1
                    changed = True
    return stuck


def reference_stuck(cells, net, own, value, stuck, depth):
    if net < 2:
        return net == value
    if net == own or net in stuck:
        return net == own or stuck[net] == value
    cell, bit = cells[net >> 16], net & 0xffff
    if depth > 64 or cell[0] not in ("assign", "op"):
        return False
    op = cell[1] if cell[0] == "op" else None
    if cell[0] == "assign":
        pairs, default = bit_assignments(cell, bit)
        leaves = [leaf for _cond, leaf in pairs] + ([cell[1][bit]] if default else [])
    elif op == "m":
        leaves = [cell[2][1][bit], cell[2][2][bit]]
    elif op == "~":
        return reference_stuck(cells, cell[2][0][bit], -1, 1 - value, stuck, depth + 1)
    elif op in ("&", "|"):
        leaves = [operand[bit] for operand in cell[2]]
        if value == (op == "|") and any(reference_stuck(cells, leaf, -1, value, stuck, depth + 1)
                                        for leaf in leaves):
            return True
    else:
        return False
    return all(reference_stuck(cells, leaf, own, value, stuck, depth + 1) for leaf in leaves)


def reference_live_bits(emitted, live, constant):
    """A mask per cell, widened bit by bit."""
    cells = emitted.cells
    used = {index: -1 for index in live if cells[index][0] in ("memory", "write")}
    whole = set(used)
    stack = list(emitted.outputs)
    for index in used:
        stack.extend(input_nets(cells[index]))
    while stack:
        n = stack.pop()
        index, bit = n >> 16, n & 0xffff
        if n < 2 or index == 0:
            continue
        mask = used.get(index, 0)
        if mask >> bit & 1:
            continue
        used[index] = mask | 1 << bit
        if index in whole:
            continue
        cell = cells[index]
        op = cell[1] if cell[0] == "op" else None
        if op in ("&", "|", "^", "~"):
            stack.extend(value[bit] for value in cell[2])
        elif op == "m":
            (sel,), a, b = cell[2]
            stack += (sel, a[bit], b[bit])
        elif op in ("+", "-", "*"):
            for value in cell[2]:
                stack.extend(value[:bit + 1])
        elif op in ("<<", "u>>", "s>>") and all(net < 2 for net in cell[2][1]):
            value, amount = cell[2][0], sum(net << i for i, net in enumerate(cell[2][1]))
            source = bit - amount if op == "<<" else bit + amount
            if op == "s>>":
                source = min(source, len(value) - 1)
            if 0 <= source < len(value):
                stack.append(value[source])
        elif cell[0] == "ff":
            if n not in constant:
                stack += (cell[1][bit], cell[3][0], cell[3][2])
        elif cell[0] == "assign":
            pairs, default = bit_assignments(cell, bit)
            stack.extend(net for pair in pairs for net in pair)
            if default:
                stack.append(cell[1][bit])
        else:
            whole.add(index)
            stack.extend(input_nets(cell))
    return used


def reference_kept_ff_bits(cells, live, used, stuck):
    """Partition refinement on next states written out as nested tuples."""
    registers = [index for index in live if cells[index][0] == "ff"]
    bits = [index << 16 | bit for index in registers for bit in range(len(cells[index][1]))
            if index << 16 | bit not in stuck and used.get(index, 0) >> bit & 1]
    klass = {net: net for net in bits}
    while True:
        signature, memo, merged = {}, {}, {}
        for net in bits:
            cell = cells[net >> 16]
            bit = net & 0xffff
            key = (cell[2] >> bit & 1, cell[3],
                   reference_next_state(cells, cell[1][bit], net, klass, stuck, memo))
            merged[net] = signature.setdefault(key, net)
        if len(signature) == len(set(klass.values())):
            break
        klass = merged
    kept = {}
    for net in set(klass.values()):
        kept[net >> 16] = kept.get(net >> 16, 0) + 1
    return kept


def reference_next_state(cells, net, own, klass, stuck, memo):
    cell, bit = cells[net >> 16], net & 0xffff
    if net >= 2 and cell[0] == "assign" and cell[1][bit] == own:
        return ("hold", tuple((reference_bit(cells, c, klass, stuck, memo),
                               reference_bit(cells, v, klass, stuck, memo))
                              for c, v in bit_assignments(cell, bit)[0]))
    if net >= 2 and cell[0] == "op" and cell[1] == "m" \
            and own in (cell[2][1][bit], cell[2][2][bit]):
        (sel,), a, b = cell[2]
        other = b[bit] if a[bit] == own else a[bit]
        return ("hold", a[bit] == own, reference_bit(cells, sel, klass, stuck, memo),
                reference_bit(cells, other, klass, stuck, memo))
    return reference_bit(cells, net, klass, stuck, memo)


def reference_bit(cells, net, klass, stuck, memo):
    if net < 2:
        return net
    if net in stuck:
        return stuck[net]
    if net in memo:
        return memo[net]
    cell, bit = cells[net >> 16], net & 0xffff
    op = cell[1] if cell[0] == "op" else None

    def of(n):
        return reference_bit(cells, n, klass, stuck, memo)
    if cell[0] == "ff":
        found = ("q", klass.get(net, net))
    elif op in ("&", "|", "^"):
        found = (op, *sorted((of(v[bit]) for v in cell[2]), key=repr))
    elif op == "~":
        found = ("~", of(cell[2][0][bit]))
    elif op == "m":
        (sel,), a, b = cell[2]
        found = ("m", of(sel), of(a[bit]), of(b[bit]))
    elif cell[0] == "assign":
        pairs, default = bit_assignments(cell, bit)
        found = ("a", of(cell[1][bit]) if default else None,
                 tuple((of(c), of(v)) for c, v in pairs))
    else:
        found = ("n", net)
    memo[net] = found
    return found


# --- the designs ------------------------------------------------------------------------------

def program(name):
    if name == "histogram":
        return Pipeline(load_spec(f"{EXAMPLE}:Histogram", "PROGRAM")().program)
    if name == "pi":
        return Pipeline(PiJob(steps=64, threads=8, frac_bits=20).program)
    return Pipeline(GemmJob(name, dim=8, threads=8).program)


def filter_pe(buffer, unroll, instrumented):
    board = get_board("ulx3s-85f")
    pe = make_window_filter("dilation", size=(5, 3), mask="rect", pixel_bits=8, width=96,
                            height=64, unroll=unroll, buffer=buffer, pipeline=True,
                            tree_stages=board_tree_policy(board), credits=None)
    return instrument_pe(pe, platform=board.elaboration_platform()) if instrumented else pe


def check_analysis(design):
    emitted = netlist(design)
    merge_duplicates(emitted)
    cells = emitted.cells
    live = live_cells(emitted)
    assigned = BitAssignments(cells)
    stuck = estimator._stuck_bits(cells, live, assigned)
    assert stuck == reference_stuck_bits(cells, live)
    used = live_bits(emitted, live, stuck, assigned)
    assert used == reference_live_bits(emitted, live, stuck)
    kept = estimator._kept_ff_bits(cells, live, used, stuck, assigned)
    assert kept == reference_kept_ff_bits(cells, live, used, stuck)
    return stuck, kept


@pytest.mark.parametrize("name", ["histogram", "pi"])
def test_the_register_analysis_finds_what_the_plain_fixpoints_find_on_programs(name):
    stuck, kept = check_analysis(program(name))
    assert stuck and kept      # both rules have something to find here


@pytest.mark.parametrize("buffer, unroll, instrumented", [
    ("line", 4, True), ("smart", 3, False), ("none", 8, False)])
def test_the_register_analysis_finds_what_the_plain_fixpoints_find_on_pes(buffer, unroll,
                                                                          instrumented):
    check_analysis(filter_pe(buffer, unroll, instrumented))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["naive", "nocritical", "vector", "blocked"])
def test_the_register_analysis_finds_what_the_plain_fixpoints_find_on_the_gemms(name):
    check_analysis(program(name))
