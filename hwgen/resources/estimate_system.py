"""The estimate of what a system of PEs needs besides its PEs: its interconnect, its control
and its HMM, without estimating the PEs again.

A system of P identical PEs (:class:`hwgen.kernels.PESystem`) costs P PEs plus the rest, and only
the rest changes with P in a way worth estimating: estimating the whole system elaborates every
PE, so the time grows with P x the PE (tens of seconds for a hundred PEs on a large device, and
SC's search estimates several such systems). :func:`estimate_overhead` elaborates the system
with every PE replaced by a :class:`Shell` (its ports around an instance the estimate does not
price, as Yosys keeps a black box's inputs) and adds, per PE, what the PE costs more inside the
system than alone (its addresses are wider: they span P frames).

The interconnect's LUTs are priced with factors of their own per cost family
(:func:`estimate_interconnect`): the family tables' calibration, made on window filters and
pipeline programs, put it at about half of Yosys's count on the ECP5 and 1.5 times on the XC7.
``benchmarks/interconnect_estimate.py --fit`` fits them against Yosys and writes
``interconnect_costs.json`` beside this module.
"""

import json
from functools import cache
from pathlib import Path

from amaranth.hdl import Instance, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow

from ..boards import cost_table
from ..catalog import resolve_board
from .estimate import count_primitives, estimate, lut_groups, price, rom_luts, uncalibrated_luts

__all__ = ["FACTORS_PATH", "Shell", "estimate_interconnect", "estimate_overhead"]

#: The interconnect's LUT factors per cost family.
FACTORS_PATH = Path(__file__).with_name("interconnect_costs.json")
_RESOURCES = ("lut", "ff", "bram", "dsp")


@cache
def _factors(family):
    """The interconnect's LUT factors of ``family`` (``None``: none fitted, the table's own)."""
    if not FACTORS_PATH.exists():
        return None
    entry = json.loads(FACTORS_PATH.read_text()).get(family)
    return None if entry is None else entry["lut_factors"]

class Shell(wiring.Component):
    """A PE's ports around an instance of nothing: the PE as a black box.

    Attributes the system reads of its PEs (beats, address width, reads in flight,
    parameters...) are the PE's.

    Parameters
    ----------
    pe : wiring.Component
        The PE it stands for.
    """

    def __init__(self, pe):
        self._pe = pe
        super().__init__(pe.signature)

    def __getattr__(self, name):
        if name.startswith("_") or name in self._pe.signature.members:
            raise AttributeError(name)   # the ports are the shell's own
        return getattr(self._pe, name)

    def elaborate(self, platform):
        m = Module()
        ports = {}
        for path, member, value in self.signature.flatten(self):
            name = "__".join(str(part) for part in path)
            ports[("o_" if member.flow == Flow.Out else "i_") + name] = value
        m.submodules.pe = Instance("hwgen_pe_shell", **ports)
        return m


def estimate_interconnect(interconnect, board):
    """``{"lut", "ff", "bram", "dsp"}`` of a :class:`hwgen.kernels.Interconnect` on ``board``:
    the estimate, its LUTs priced with the interconnect's factors of the board's cost family
    where they were fitted."""
    return _interconnect_prices(interconnect, resolve_board(board))[1]


def _interconnect_prices(interconnect, board):
    """``(the family table's price, the calibrated one)`` of an interconnect, counted once."""
    family = board.toolchain.cost_family
    table = cost_table(family)
    kinds, memories, instances, _ = count_primitives(interconnect,
                                                     platform=board.elaboration_platform())
    total = price(table, kinds, memories, instances)
    generic = {r: round(total[r]) for r in _RESOURCES}
    factors = _factors(family)
    if factors is None:
        return generic, generic
    groups = lut_groups(table, kinds, memories)
    lut = sum(factors.get(group, 0.0) * value for group, value in groups.items()) \
        + uncalibrated_luts(table, kinds) + rom_luts(table, kinds)
    return generic, {**generic, "lut": round(lut)}


def estimate_overhead(system, board, *, instrument=None):
    """``{"lut", "ff", "bram", "dsp"}`` of ``system`` besides its PEs, estimated on ``board``:
    its interconnect (:func:`estimate_interconnect`) and control, and its HMM when
    ``instrument`` is given (a function that returns a system instrumented; its probes must not
    look inside the PEs)."""
    shelled = type(system)([Shell(pe) for pe in system.pes],
                           channels=system.interconnect.channels)
    interconnect = shelled.interconnect
    if instrument is not None:
        shelled = instrument(shelled)
    found = estimate(shelled, board).resources()
    if all(len(group) == 1 for group in interconnect.groups):
        return found          # a channel per PE: wires
    generic, calibrated = _interconnect_prices(interconnect, resolve_board(board))
    return {r: max(0, found[r] - generic[r] + calibrated[r]) for r in found}
