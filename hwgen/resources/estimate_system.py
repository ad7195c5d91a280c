"""The estimate of what a system of PEs needs besides its PEs: its interconnect, its control
and its HMM, without estimating the PEs again.

A system of P identical PEs (:class:`hwgen.kernels.PESystem`) costs P PEs plus the rest, and only
the rest changes with P in a way worth estimating: estimating the whole system elaborates every
PE, so the time grows with P x the PE (tens of seconds for a hundred PEs on a large device, and
SC's search estimates several such systems). :func:`estimate_overhead` elaborates the system
with every PE replaced by a :class:`Shell` (its ports around an instance the estimate does not
price, as Yosys keeps a black box's inputs) and adds, per PE, what the PE costs more inside the
system than alone (its addresses are wider: they span P frames). :func:`estimate_rest` does not
even build the system: the interconnect is the sum of its channels, each size of channel
estimated once, and the control is estimated on a few shells and extrapolated, so SC's search
takes about as long for a hundred PEs as for five.

The interconnect's LUTs are priced with factors of their own per cost family
(:func:`estimate_interconnect`): the family tables' calibration, made on window filters and
pipeline programs, put it at about half of Yosys's count on the ECP5 and 1.5 times on the XC7.
``benchmarks/interconnect_estimate.py --fit`` fits them against Yosys and writes
``interconnect_costs.json`` beside this module.
"""

import json
from collections import Counter
from functools import cache
from pathlib import Path

from amaranth.hdl import Instance, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow

from ..boards import cost_table
from ..catalog import resolve_board
from ..kernels import Interconnect, PESystem
from ..kernels.interconnect import channel_groups
from ..kernels.system import FAN_OUT
from .estimate import count_primitives, estimate, lut_groups, price, rom_luts, uncalibrated_luts

__all__ = ["FACTORS_PATH", "OWN_GROUPS", "EXACT_CONTROL_PES", "Shell", "estimate_interconnect",
           "estimate_overhead", "estimate_rest", "interconnect_lut_correction"]

#: The interconnect's LUT factors per cost family.
FACTORS_PATH = Path(__file__).with_name("interconnect_costs.json")
#: Kinds the families' calibration leaves unscaled that the interconnect's fit scales: its
#: and-or multiplexers of whole beats, a larger share of it than of any calibration design.
OWN_GROUPS = ("select",)
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
    where they were fitted (what :func:`hwgen.resources.estimate.estimate` gives for it, summed
    over its channels)."""
    return _interconnect_prices(interconnect, resolve_board(board))[1]


def _interconnect_prices(interconnect, board):
    """``(the family table's price, the calibrated one)`` of an interconnect: the sum over its
    channels of a channel of as many PEs (channels are independent logic), each size estimated
    once per process (:func:`_channel_prices`)."""
    sizes = Counter(len(group) for group in interconnect.groups if len(group) > 1)
    found = ({r: 0 for r in _RESOURCES}, {r: 0 for r in _RESOURCES})
    for size, count in sizes.items():
        prices = _channel_prices(size, interconnect.addr_width, interconnect.rd_beat,
                                 interconnect.wr_beat, interconnect.reads_in_flight, board)
        for total, price_ in zip(found, prices):
            for r in _RESOURCES:
                total[r] += count * price_[r]
    return found


_CHANNELS = {}


def _channel_prices(pes, addr_width, rd_beat, wr_beat, reads_in_flight, board):
    """``(the family table's price, the calibrated one)`` of one channel of ``pes`` PEs,
    estimated once per process."""
    family = board.toolchain.cost_family
    key = (pes, addr_width, rd_beat, wr_beat, reads_in_flight, family)
    if key not in _CHANNELS:
        _CHANNELS[key] = _price_channel(pes, addr_width, rd_beat, wr_beat, reads_in_flight,
                                        board)
    return _CHANNELS[key]


def _price_channel(pes, addr_width, rd_beat, wr_beat, reads_in_flight, board):
    family = board.toolchain.cost_family
    channel = Interconnect(pes=pes, channels=1, addr_width=addr_width, rd_beat=rd_beat,
                           wr_beat=wr_beat, reads_in_flight=reads_in_flight)
    table = cost_table(family)
    kinds, memories, instances, _ = count_primitives(channel,
                                                     platform=board.elaboration_platform())
    total = price(table, kinds, memories, instances)
    generic = {r: round(total[r]) for r in _RESOURCES}
    factors = _factors(family)
    if factors is None:
        return generic, generic
    groups = lut_groups(table, kinds, memories, own=OWN_GROUPS)
    lut = sum(factors.get(group, 0.0) * value for group, value in groups.items()) \
        + uncalibrated_luts(table, kinds, own=OWN_GROUPS) + rom_luts(table, kinds)
    return generic, {**generic, "lut": round(lut)}


def interconnect_lut_correction(design, board):
    """LUTs to add to the family table's estimate of ``design`` for the interconnect in it (an
    :class:`hwgen.kernels.Interconnect`, a system, or either instrumented): its calibrated
    price less the table's; 0 for any other design."""
    target = getattr(design, "design", design)     # an instrumented design's own
    interconnect = target if isinstance(target, Interconnect) \
        else getattr(target, "interconnect", None)
    if not isinstance(interconnect, Interconnect):
        return 0
    generic, calibrated = _interconnect_prices(interconnect, resolve_board(board))
    return calibrated["lut"] - generic["lut"]


def estimate_overhead(system, board, *, instrument=None):
    """``{"lut", "ff", "bram", "dsp"}`` of ``system`` besides its PEs, estimated on ``board``:
    its interconnect (:func:`estimate_interconnect`) and control, and its HMM when
    ``instrument`` is given (a function that returns a system instrumented; its probes must not
    look inside the PEs). Without an HMM, the control is estimated on the system of a channel
    per PE (wires), so the estimate's time grows with the PEs of a channel, not of the
    system."""
    board = resolve_board(board)
    interconnect = system.interconnect
    shells = [Shell(pe) for pe in system.pes]
    if instrument is None:
        control = estimate(type(system)(shells), board).resources()
        calibrated = _interconnect_prices(interconnect, board)[1]
        return {r: control[r] + calibrated[r] for r in _RESOURCES}
    return estimate(instrument(type(system)(shells, channels=interconnect.channels)),
                    board).resources()


#: Above this many PEs, the system's control is extrapolated (see :func:`estimate_rest`).
EXACT_CONTROL_PES = 24


def estimate_rest(pe, pes, channels, board):
    """``{"lut", "ff", "bram", "dsp"}`` of a :class:`hwgen.kernels.PESystem` of ``pes`` PEs like
    ``pe`` (as the system builds them: addresses for every frame) on ``channels`` channels,
    besides its PEs, without building it: the interconnect as the sum of its channels
    (:func:`estimate_interconnect`'s prices, each size of channel estimated once), and the
    system's control (the launch of one PE per cycle, a done flag per PE). The control is
    estimated on a system of shells up to :data:`EXACT_CONTROL_PES` PEs and extrapolated
    linearly above (a comparison and a flag per PE), so the time does not grow with the PEs."""
    board = resolve_board(board)
    sizes = Counter(len(group) for group in channel_groups(pes, channels) if len(group) > 1)
    found = dict(_control(pe, pes, board))
    for size, count in sizes.items():
        calibrated = _channel_prices(size, pe.addr_width, pe.rd_beat, pe.wr_beat,
                                     pe.max_outstanding_reads, board)[1]
        for r in _RESOURCES:
            found[r] += count * calibrated[r]
    return found


def _control(pe, pes, board):
    if pes <= EXACT_CONTROL_PES:
        return _control_of(pe, pes, board)
    # Two sizes a FAN_OUT apart, both with the control's register trees (above FAN_OUT PEs),
    # which grow by a register per FAN_OUT PEs.
    low = _control_of(pe, EXACT_CONTROL_PES - FAN_OUT, board)
    high = _control_of(pe, EXACT_CONTROL_PES, board)
    step = FAN_OUT
    return {r: max(0, round(high[r] + (high[r] - low[r]) * (pes - EXACT_CONTROL_PES) / step))
            for r in _RESOURCES}


_CONTROLS = {}


def _control_of(pe, pes, board):
    """The control of a system of ``pes`` shells of ``pe``, a channel each (wires)."""
    key = (repr(pe.parameters()), pe.addr_width, pes, board.toolchain.cost_family)
    if key not in _CONTROLS:
        system = PESystem([Shell(pe) for _ in range(pes)])
        _CONTROLS[key] = estimate(system, board).resources()
    return _CONTROLS[key]
