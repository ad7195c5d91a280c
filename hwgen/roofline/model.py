"""The extended roofline of da Silva et al. ("Performance Modeling for FPGAs: Extending the
Roofline Model with High-Level Synthesis Tools"), populated from simulation and synthesis.

On an FPGA the compute roof is not fixed: it is the performance of one processing element times
how many of them fit, so it moves with every optimisation, while the I/O roofs are the board's
links. For one design point (one PE configuration, :class:`hwgen.roofline.sweep.DesignPoint`) on ``d``
devices of a board:

- perf_PE = ops per cycle of one PE over a full frame (simulated, steady state included) x the
  clock, in GBops/s (10**9 ops per second; for 8-bit pixels an op is a byte operation);
- SC = the most PEs whose system fits one device in LUT, FF, block RAM and DSP: SC x the
  resources per PE + the system's memory interconnect for SC PEs on the channels of the link's
  share (estimated; :func:`system_scalability`), and the resource that limits them;
- compute roof CP = SC x perf_PE x d;
- CI = ops per byte read or written over the frame (what crosses the PE's ports);
- I/O roof = CI x BW, with BW the bandwidth of the link that bounds the point at ``d`` devices;
- attainable = min(CP, CI x BW), and the bound names the limiting resource or the link.

Which link bounds a point: by default the tightest of the board's links at that device count
(``Link.board_bandwidth_gbps``), as for links in series: on the EX500 the data of both FPGAs
crosses their PCIe x8 links and then the shared x16 one, so one FPGA gets 4.2 GB/s and two get
5.5 GB/s. When a board's links are alternatives (HBM or DDR4 on an Alveo U280), name the one the
design uses (``link=``).

The clock is the board's default, a given figure, or the Fmax nextpnr measured for each point;
every point says which. Ceilings (as in that paper's figures) are horizontal lines under a point's
compute roof: the pipelining ceiling is the compute roof of the same point without pipelining,
and the frequency ceilings are its compute roof at lower clocks.
"""

import gc
import math
import warnings
from dataclasses import dataclass, field, replace
from functools import cache
from fractions import Fraction

from amaranth.hdl import UnusedElaboratable

from ..boards import Board
from ..kernels import WindowFilter, beat_bytes, channels_for, window_system_pe

from ..errors import HwgenError, ParameterError
from ..catalog import resolve_board, system_of
from ..resources.estimate import estimate
from ..resources.estimate_system import estimate_overhead, estimate_rest
from ..sim.system import instrument_system
from ..sim.cycle_data import ratio
from .sweep import DesignPoint, Measurement, measure, simulate_systems
from ..versions import tool_versions

__all__ = ["RESOURCES", "CLOCK_CHOICES", "RooflinePoint", "SystemCheck", "Ceiling", "Roofline",
           "PLACEMENT_CEILING", "LOGIC_CELL_CEILING", "scalability", "system_scalability",
           "placeable", "logic_cells",
           "system_overhead", "window_overhead",
           "board_scalability", "point_scalability", "find_link", "bounding_link", "bytes_per_cycle",
           "system_bytes_per_cycle", "check_clock",
           "build_roofline"]

#: Resources scalability divides (``Resources.as_counts()`` keys).
RESOURCES = ("lut", "ff", "bram", "dsp")
#: ``clock=`` choices besides a number in MHz.
CLOCK_CHOICES = ("board", "fmax")
#: PEs of the small system whose overhead per PE gives :func:`system_scalability` its first guess
#: (enough to share the channels of a fast link: a small system of a channel per PE is wires).
GUESS_PES = 32
#: Where nextpnr places and routes the ECP5, SC's system fills at most this share of the
#: device's LUT and FF (an assumption: no LUT-limited ECP5 system was placed here yet).
PLACEMENT_CEILING = {"ecp5": 0.9}
#: Where nextpnr places and routes the iCE40, SC's system's LUT + FF are at most this share of
#: the device's logic cells (a LUT and a flip-flop each; nextpnr-ice40 pairs few of them, and
#: the cells of a block share their clock enable and reset): on the iCE40UP5K, systems of line U1
#: PEs of 3,295 LUT + FF by Yosys (62%) placed and of 4,560 (86%) did not (docs/systems.md).
LOGIC_CELL_CEILING = {"ice40": 0.75}
#: Frequency ceilings by default: these fractions of a point's clock.
DEFAULT_CEILING_FRACTIONS = (0.25, 0.5, 0.75)


def scalability(used, available):
    """``(SC, limiting resource)``: PEs that fit, ``floor(min(available / used))``.

    Resources a PE does not use do not limit it; a PE that uses none fits without limit, which
    is refused.
    """
    ratios = {r: Fraction(available[r], used[r]) for r in RESOURCES if used[r] > 0}
    if not ratios:
        raise ValueError("a PE that uses no LUT, FF, block RAM or DSP has no scalability limit")
    limiting = min(ratios, key=ratios.get)
    return math.floor(ratios[limiting]), limiting


def placeable(board):
    """The resources of one device of ``board`` that SC's system may fill: every one, less the
    placement headroom of :data:`PLACEMENT_CEILING` in LUT and FF where the family is placed
    and routed by nextpnr."""
    counts = board.resources.as_counts()
    ceiling = PLACEMENT_CEILING.get(board.family) if board.toolchain.has_place_and_route \
        else None
    if ceiling is None:
        return counts
    return {r: math.floor(v * ceiling) if r in ("lut", "ff") else v for r, v in counts.items()}


def logic_cells(board):
    """The most LUT + FF SC's system may have on one device of ``board`` where nextpnr packs
    them into logic cells (:data:`LOGIC_CELL_CEILING`), ``None`` elsewhere."""
    ceiling = LOGIC_CELL_CEILING.get(board.family) if board.toolchain.has_place_and_route \
        else None
    return None if ceiling is None else math.floor(board.resources.as_counts()["lut"] * ceiling)


def system_scalability(per_pe, available, overhead=None, *, most=None, cells=None):
    """``(SC, limiting resource)``: the largest P whose system fits, ``P x per_pe + overhead(P)``
    within ``available`` in every resource, below the bare PEs' bound (:func:`scalability`),
    found by estimating a few systems near it; the limiting resource is the one the system of SC + 1 PEs overflows
    most. ``overhead(P)`` is what a system of P PEs needs besides them (its interconnect, its
    HMM), never negative and not shrinking as P grows; ``None``: nothing. With ``most``, the
    search stops there: ``min(SC, most)``, for a caller that wants no more PEs. With ``cells``,
    LUT + FF are at most that many too (logic cells, :func:`logic_cells`); when they bind, the
    limiting resource is ``lut``.
    """
    bound, limiting = scalability(per_pe, available)
    if cells is not None and per_pe["lut"] + per_pe["ff"] > 0:
        packed = cells // (per_pe["lut"] + per_pe["ff"])
        if packed < bound:
            bound, limiting = packed, "lut"
    if most is not None:
        bound = min(bound, most)
    if overhead is None:
        return bound, limiting

    def need(pes):
        extra = overhead(pes)
        return {r: pes * per_pe[r] + extra[r] for r in RESOURCES}

    def fits(pes):
        needed = need(pes)
        return all(needed[r] <= available[r] for r in RESOURCES) \
            and (cells is None or needed["lut"] + needed["ff"] <= cells)

    # The system of `low` PEs fits, none above `high` does. Systems are estimated near SC only:
    # a guess from the overhead per PE of a small system, refined by that of the guessed one,
    # galloping from it, then bisection.
    low, high = 0, bound
    guess = min(bound, GUESS_PES)
    if guess:
        for _ in range(2):
            slope = {r: per_pe[r] + Fraction(overhead(guess)[r], guess) for r in RESOURCES}
            guess = min(math.floor(available[r] / slope[r]) for r in RESOURCES if slope[r] > 0)
            guess = max(1, min(bound, guess))
        step = 1
        if fits(guess):
            low = guess
            while low < high:
                probe = min(high, low + step)
                if not fits(probe):
                    high = probe - 1
                    break
                low, step = probe, 2 * step
        else:
            high = guess - 1
            while low < high:
                probe = max(low + 1, high + 1 - step)
                if fits(probe):
                    low = probe
                    break
                high, step = probe - 1, 2 * step
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    over = need(low + 1)
    ratios = {r: Fraction(over[r], available[r]) if available[r] else math.inf
              for r in RESOURCES if over[r] > 0}
    if cells is not None and over["lut"] + over["ff"] > cells:
        ratios["lut"] = max(ratios.get("lut", 0), Fraction(over["lut"] + over["ff"], cells))
    return low, max(ratios, key=ratios.get)


#: Estimates of systems besides their PEs, by the system's parameters, the cost family and the
#: probes: SC's searches (the roofline's points, ``--pes max``, ``explore --fast``, confirm)
#: estimate the same systems again and again.
_OVERHEADS = {}


def system_overhead(system, pe, board, *, probes=None):
    """``overhead(P)`` for :func:`system_scalability`: what ``system(P)``, a system of P PEs like
    ``pe``, with its HMM of ``probes`` when given, needs besides P bare PEs, estimated
    (:func:`hwgen.resources.estimate.estimate` on ``board``): its interconnect, its control and
    its HMM (:func:`hwgen.resources.estimate_system.estimate_overhead`, the PEs as black boxes),
    plus P times what a PE costs more inside the system (wider addresses). The ``full`` probes
    look inside the PEs: then the whole system is estimated, minus P bare PEs. Estimates are
    kept for the process (``_OVERHEADS``)."""
    board = resolve_board(board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
        bare = estimate(pe, board).resources()
    platform = board.elaboration_platform()

    def instrument(design):
        return instrument_system(design, probes=probes, platform=platform)

    def overhead(pes):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
            design = system(pes)
            # A user's PE may not describe itself: then the PE object is the key.
            described = hasattr(pe, "parameters")
            key = (repr(design.parameters()) if described else (pe, pes, design.count),
                   board.toolchain.cost_family, probes, tuple(bare.values()))
            if key not in _OVERHEADS:
                if probes == "full":
                    used = estimate(instrument(design), board).resources()
                    extra = {r: used[r] - pes * bare[r] for r in RESOURCES}
                else:
                    rest = estimate_overhead(design, board,
                                             instrument=None if probes is None else instrument)
                    inner = estimate(design.pes[0], board).resources()
                    extra = {r: rest[r] + pes * max(0, inner[r] - bare[r]) for r in RESOURCES}
                _OVERHEADS[key] = {r: max(0, extra[r]) for r in RESOURCES}
            del design
            gc.collect()     # the PEs estimated or shelled, never built: warn of none
        return _OVERHEADS[key]
    return overhead


def board_scalability(pe, board, *, per_pe=None, bytes_per_cycle=None, probes=None,
                      overhead=None, most=None):
    """``(SC, limiting resource)`` on one device of ``board`` of the window filter ``pe``: the
    most such PEs whose system (:func:`hwgen.kernels.window_system_of`) fits it, with its
    interconnect for a link of ``bytes_per_cycle`` (``None``: unlimited, a channel per PE) and,
    when ``probes`` names a preset, its HMM; how many PEs ``--pes max`` builds and the
    roofline's SC. ``per_pe`` is one PE's resources (default: the estimate; ``roofline
    --resources synth`` gives Yosys's); the rest of the system is always estimated, by
    ``overhead`` when given (:func:`window_overhead` of the same arguments, to reuse its
    estimates); ``most`` as for :func:`system_scalability`."""
    board = resolve_board(board)
    if per_pe is None:
        per_pe = estimate(pe, board).resources()
    if overhead is None:
        overhead = window_overhead(pe, board, bytes_per_cycle=bytes_per_cycle, probes=probes)
    return system_scalability(per_pe, placeable(board), overhead, most=most,
                              cells=logic_cells(board))


def window_overhead(pe, board, *, bytes_per_cycle=None, probes=None):
    """:func:`system_overhead` of the system :func:`hwgen.catalog.system_of` builds of ``pe``
    (a window filter or an image PE of the user's) for a link of ``bytes_per_cycle``. For a
    window filter without ``probes`` the system is not built: its rest is
    :func:`hwgen.resources.estimate_system.estimate_rest` of one of its PEs
    (:func:`hwgen.kernels.window_system_pe`), plus P times what that PE costs more than ``pe``;
    each is kept for the process."""
    if probes is not None or not isinstance(pe, WindowFilter):
        return system_overhead(lambda pes: system_of(pe, pes, bytes_per_cycle=bytes_per_cycle),
                               pe, board, probes=probes)
    board = resolve_board(board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
        bare = estimate(pe, board).resources()
    family = board.toolchain.cost_family
    inner = {}    # the system's PE and its estimate, by address width

    def overhead(pes):
        key = ("window", repr(pe.parameters()), pes, bytes_per_cycle, family)
        if key not in _OVERHEADS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
                system_pe = window_system_pe(pe, pes)
                if system_pe.addr_width not in inner:
                    inner[system_pe.addr_width] = estimate(system_pe, board).resources()
                grown = inner[system_pe.addr_width]
                channels = channels_for(pes, beat_bytes(system_pe), bytes_per_cycle)
                rest = estimate_rest(system_pe, pes, channels, board)
                del system_pe
                gc.collect()     # the PE stands in shells, never built: warn of none
            _OVERHEADS[key] = {r: max(0, rest[r] + pes * max(0, grown[r] - bare[r]))
                               for r in RESOURCES}
        return _OVERHEADS[key]
    return overhead


def find_link(board, name):
    """The link of ``board`` named ``name``, or the only one whose name contains it (any case)."""
    for link in board.links:
        if link.name == name:
            return link
    matches = [link for link in board.links if name.lower() in link.name.lower()]
    if len(matches) != 1:
        names = "; ".join(link.name for link in board.links)
        raise ParameterError("link", f"must name one link of {board.name} ({names}), not {name!r}")
    return matches[0]


def _check_devices(board, devices):
    if isinstance(devices, bool) or not isinstance(devices, int) \
            or not 1 <= devices <= board.device_count:
        raise ParameterError("devices", f"must be between 1 and {board.name}'s "
                                        f"{board.device_count}, not {devices!r}")


def bounding_link(board, devices, name=None):
    """``(link, GB/s)`` that bounds a design on ``devices`` devices of ``board``: the named link,
    or the tightest at that device count."""
    _check_devices(board, devices)
    if name is not None:
        link = find_link(board, name)
    else:
        link = min(board.links, key=lambda link: link.board_bandwidth_gbps(devices))
    return link, link.board_bandwidth_gbps(devices)


def bytes_per_cycle(bandwidth_gbps, clock_mhz):
    """A link's bandwidth in bytes per clock cycle (GB/s over GHz)."""
    return bandwidth_gbps * 1000 / clock_mhz


def system_bytes_per_cycle(board, clock_mhz, link=None):
    """Bytes per cycle at ``clock_mhz`` of the link that bounds one device of ``board`` (the
    named ``link``, or the tightest): what a system's memory channels are sized for (see
    :func:`hwgen.kernels.channels_for`)."""
    return bytes_per_cycle(bounding_link(board, 1, link)[1], clock_mhz)


@cache
def _beats(point):
    """``(widest beat bytes, read + write beat bytes)`` of a design point's PE."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # built for its beats only
        pe = point.build()
        beats = beat_bytes(pe), sum(b.lanes * b.element_bytes for b in (pe.rd_beat, pe.wr_beat))
        del pe
        gc.collect()
    return beats


def _product(*factors):
    """The product of ``factors``, or ``None`` (undefined) when one of them is."""
    if any(f is None for f in factors):
        return None
    return math.prod(factors)


@dataclass(frozen=True)
class SystemCheck:
    """A simulated system of ``pes`` PEs sharing one memory, against the model's prediction.

    The system runs on frames of :func:`hwgen.roofline.sweep.system_height` rows (shorter than the full
    frame, which takes long to simulate P times), so the prediction takes perf_PE and CI of one PE
    on that frame:
    ``min(pes x pe_ops_per_cycle, ci x bandwidth, port_ops_per_cycle)`` ops per cycle, the last
    the roof of the system's memory channels (each a read beat and a write beat per cycle;
    ``None`` when unknown). A figure that cannot be
    computed (a PE that ran no cycle or moved no byte) is ``None``, and so is what depends on it.
    ``saturated`` names the HMM values that saturated in the system's PEs (``pe<i>.<name>``).
    """
    pes: int
    height: int
    bandwidth_bytes_per_cycle: float
    pe_ops_per_cycle: float | None
    pe_ci_ops_per_byte: float | None
    cycles: int
    ops: int
    bytes_read: int
    bytes_written: int
    saturated: tuple = ()
    port_ops_per_cycle: float | None = None

    def _roofs(self):
        roofs = {"compute": self.compute_ops_per_cycle, "io": self.io_ops_per_cycle}
        if self.port_ops_per_cycle is not None:
            roofs["port"] = self.port_ops_per_cycle
        return roofs

    @property
    def compute_ops_per_cycle(self):
        return _product(self.pes, self.pe_ops_per_cycle)

    @property
    def io_ops_per_cycle(self):
        return _product(self.pe_ci_ops_per_byte, self.bandwidth_bytes_per_cycle)

    @property
    def predicted_ops_per_cycle(self):
        roofs = self._roofs()
        if any(roof is None for roof in roofs.values()):
            return None
        return min(roofs.values())

    @property
    def predicted_bound(self):
        """``compute``, ``io`` or ``port``: the lowest roof."""
        if self.predicted_ops_per_cycle is None:
            return None
        roofs = self._roofs()
        return min(roofs, key=roofs.get)

    @property
    def simulated_ops_per_cycle(self):
        return ratio(self.ops, self.cycles)

    @property
    def error(self):
        """Simulated over predicted, minus one."""
        if self.simulated_ops_per_cycle is None or self.predicted_ops_per_cycle is None:
            return None
        simulated_over_predicted = ratio(self.simulated_ops_per_cycle,
                                         self.predicted_ops_per_cycle)
        return None if simulated_over_predicted is None else simulated_over_predicted - 1

    def to_json(self):
        return {"pes": self.pes, "height": self.height,
                "bandwidth_bytes_per_cycle": self.bandwidth_bytes_per_cycle,
                "pe_ops_per_cycle": self.pe_ops_per_cycle,
                "pe_ci_ops_per_byte": self.pe_ci_ops_per_byte,
                "port_ops_per_cycle": self.port_ops_per_cycle, "cycles": self.cycles,
                "ops": self.ops, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written,
                "predicted_ops_per_cycle": self.predicted_ops_per_cycle,
                "predicted_bound": self.predicted_bound,
                "simulated_ops_per_cycle": self.simulated_ops_per_cycle, "error": self.error,
                "saturated": list(self.saturated)}

    @classmethod
    def from_json(cls, data):
        return cls(**{name: data[name] for name in (
            "pes", "height", "bandwidth_bytes_per_cycle", "pe_ops_per_cycle",
            "pe_ci_ops_per_byte", "cycles", "ops", "bytes_read", "bytes_written")},
            saturated=tuple(data["saturated"]),
            port_ops_per_cycle=data.get("port_ops_per_cycle"))


@dataclass(frozen=True)
class RooflinePoint:
    """One design point on ``devices`` devices of a board: its inputs and derived figures.

    Parameters
    ----------
    measurement : Measurement
        The PE's full-frame figures, resources per PE and (maybe) Fmax.
    devices : int
        Devices the PEs fill.
    available_per_device : dict
        ``{"lut", "ff", "bram", "dsp"}`` one device offers.
    clock_mhz : float
    clock_source : str
        Where the clock comes from (board, given, nextpnr).
    link : str
        Name of the link that bounds the point.
    bandwidth_gbps : float
        That link's bandwidth at ``devices`` devices.
    system : SystemCheck or None
        A simulated system of PEs, when one was asked for.
    scale : tuple or None
        ``(SC, limiting resource)`` of the whole system on one device (PEs, interconnect for
        :attr:`channel_link`), as :func:`build_roofline` finds it with
        :func:`system_scalability`; ``None`` (a point placed by hand, without a board to
        estimate its interconnect on): the bare PEs' :func:`scalability`.

    A figure that cannot be computed is ``None``, and so is every figure derived from it: a PE
    that ran no cycle has no perf_PE, one that moved no byte no CI, and such a point has no
    attainable performance and is not placed on the roofline.
    """
    measurement: Measurement
    devices: int
    available_per_device: dict
    clock_mhz: float
    clock_source: str
    link: str
    bandwidth_gbps: float
    system: SystemCheck | None = None
    scale: tuple | None = field(default=None, compare=False)   # derived from the rest

    @property
    def label(self):
        return self.measurement.point.label

    @property
    def ci_ops_per_byte(self):
        return self.measurement.frame.ci

    @property
    def ops_per_cycle(self):
        return self.measurement.frame.ops_per_cycle

    @property
    def _scale(self):
        if self.scale is not None:
            return self.scale
        return scalability(self.measurement.resources, self.available_per_device)

    @property
    def sc_pes_per_device(self):
        return self._scale[0]

    @property
    def limiting_resource(self):
        return self._scale[1]

    @property
    def channel_link(self):
        """Bytes per cycle of this link's share per device at this clock: what the memory
        channels of the system of SC PEs are sized for."""
        return bytes_per_cycle(self.bandwidth_gbps / self.devices, self.clock_mhz)

    @property
    def perf_pe_gbops(self):
        return _product(self.ops_per_cycle, self.clock_mhz / 1000)

    @property
    def cp_gbops(self):
        """Compute roof: SC x perf_PE x devices."""
        return _product(self.sc_pes_per_device, self.perf_pe_gbops, self.devices)

    @property
    def io_roof_gbops(self):
        """I/O roof at this point's CI: CI x BW."""
        return _product(self.ci_ops_per_byte, self.bandwidth_gbps)

    @property
    def placed(self):
        """Whether the point has a place on the roofline (its CI and perf_PE are defined)."""
        return self.cp_gbops is not None and self.io_roof_gbops is not None

    @property
    def attainable_gbops(self):
        return min(self.cp_gbops, self.io_roof_gbops) if self.placed else None

    @property
    def bound(self):
        """``compute`` or ``io`` (``None`` for a point that is not placed)."""
        if not self.placed:
            return None
        return "compute" if self.cp_gbops < self.io_roof_gbops else "io"

    @property
    def bound_by(self):
        """The limiting resource (compute-bound) or the link (I/O-bound)."""
        if not self.placed:
            return None
        return self.limiting_resource if self.bound == "compute" else self.link

    @property
    def channels(self):
        """Memory channels of the system of SC PEs on one device: this link's share per device
        at this clock in whole beats, at most one per PE (:func:`hwgen.kernels.channels_for`);
        ``None`` when no PE fits."""
        sc = self.sc_pes_per_device
        if not sc:
            return None
        return channels_for(sc, _beats(self.measurement.point)[0], self.channel_link)

    @property
    def port_roof_gbops(self):
        """The interconnect's roof: each channel moves a read beat and a write beat per cycle,
        so CI x channels x (read + write beat bytes) x the clock, on every device. The channels
        carry the link (or serve one PE each), so this roof is never below the lower of the
        compute and I/O roofs."""
        if self.channels is None or self.ci_ops_per_byte is None:
            return None
        port_bytes = self.channels * _beats(self.measurement.point)[1]
        return self.ci_ops_per_byte * port_bytes * self.clock_mhz / 1000 * self.devices

    @property
    def saturated(self):
        """HMM values that saturated in the simulations behind the point's figures (the PE's
        frames, then its system's as ``system <name>``): those figures are lower bounds."""
        system = () if self.system is None else self.system.saturated
        return self.measurement.frame.saturated + tuple(f"system {name}" for name in system)

    def to_json(self):
        return {
            **self.measurement.to_json(),
            "devices": self.devices,
            "available_per_device": dict(self.available_per_device),
            "clock_mhz": self.clock_mhz,
            "clock_source": self.clock_source,
            "link": self.link,
            "bandwidth_gbps": self.bandwidth_gbps,
            "ci_ops_per_byte": self.ci_ops_per_byte,
            "ops_per_cycle": self.ops_per_cycle,
            "scaled": self.measurement.frame.scaled,
            "sc_pes_per_device": self.sc_pes_per_device,
            "limiting_resource": self.limiting_resource,
            "perf_pe_gbops": self.perf_pe_gbops,
            "cp_gbops": self.cp_gbops,
            "io_roof_gbops": self.io_roof_gbops,
            "channels": self.channels,
            "port_roof_gbops": self.port_roof_gbops,
            "attainable_gbops": self.attainable_gbops,
            "bound": self.bound,
            "bound_by": self.bound_by,
            "saturated": list(self.saturated),
            "system": None if self.system is None else self.system.to_json(),
        }

    @classmethod
    def from_json(cls, data):
        system = data["system"]
        return cls(measurement=Measurement.from_json(data), devices=data["devices"],
                   available_per_device=dict(data["available_per_device"]),
                   clock_mhz=data["clock_mhz"], clock_source=data["clock_source"],
                   link=data["link"], bandwidth_gbps=data["bandwidth_gbps"],
                   system=None if system is None else SystemCheck.from_json(system),
                   scale=(data["sc_pes_per_device"], data["limiting_resource"]))


@dataclass(frozen=True)
class Ceiling:
    """A horizontal line under a point's compute roof: what it would reach without an
    optimisation (``kind`` ``pipeline``) or at a lower clock (``kind`` ``clock``)."""
    kind: str
    label: str
    gbops: float

    def to_json(self):
        return {"kind": self.kind, "label": self.label, "gbops": self.gbops}


@dataclass(frozen=True)
class Roofline:
    """Every design point of a sweep on a board, at every device count asked for.

    Parameters
    ----------
    kernel : str
    board : Board
    points : tuple of RooflinePoint
        Design points in sweep order, each at every device count.
    options : dict
        How the figures were found: ``resources``, ``clock``, ``link``, ``devices``,
        ``ceiling_clocks_mhz`` (``None`` for the default fractions), ``pes``.
    """
    kernel: str
    board: Board
    points: tuple
    options: dict

    @property
    def device_counts(self):
        return sorted({p.devices for p in self.points})

    @property
    def scaled(self):
        """Whether any point's figures were scaled from short frames."""
        return any(p.measurement.frame.scaled for p in self.points)

    @property
    def suspect(self):
        """The points whose figures rest on a saturated HMM counter."""
        return [p for p in self.points if p.saturated]

    def ranked(self):
        """Placed points by attainable performance, best first (fewer LUT per PE first on a
        tie), then the points that are not placed."""
        return sorted(self.points, key=lambda p: (not p.placed, -(p.attainable_gbops or 0),
                                                  p.measurement.resources["lut"], p.label))

    def best(self):
        """The point that attains the most, or ``None`` when no point is placed."""
        first = self.ranked()[0]
        return first if first.placed else None

    def io_roofs(self):
        """``(link, [device counts], GB/s)`` for every distinct roof the board's links draw."""
        roofs = []
        for link in self.board.links:
            by_bandwidth = {}
            for d in self.device_counts:
                by_bandwidth.setdefault(link.board_bandwidth_gbps(d), []).append(d)
            roofs += [(link, counts, gbps) for gbps, counts in by_bandwidth.items()]
        return roofs

    def ceilings(self, point):
        """The :class:`Ceiling` lines under ``point``'s compute roof, highest first (none for a
        point that is not placed)."""
        if not point.placed:
            return []
        found = []
        design = point.measurement.point
        if design.pipeline:
            for other in self.points:
                twin = other.measurement.point
                if other.devices == point.devices and not twin.pipeline and other.placed \
                        and replace(twin, pipeline=True) == design:
                    found.append(Ceiling("pipeline", "no pipelining", other.cp_gbops))
        clocks = self.options["ceiling_clocks_mhz"]
        if clocks is None:
            clocks = [point.clock_mhz * f for f in DEFAULT_CEILING_FRACTIONS]
        for mhz in clocks:
            if mhz < point.clock_mhz:
                found.append(Ceiling("clock", f"{mhz:g} MHz",
                                     point.cp_gbops * mhz / point.clock_mhz))
        return sorted(found, key=lambda c: -c.gbops)

    def to_json(self):
        best = self.best()
        return {
            "tool_versions": tool_versions(),
            "kernel": self.kernel,
            "board": self.board.to_json(),
            "options": dict(self.options),
            "units": {"performance": "GBops/s (10**9 ops per second)",
                      "ci": "ops per byte read or written", "bandwidth": "GB/s (10**9 bytes/s)"},
            "scaled": self.scaled,
            "suspect": [{"label": p.label, "devices": p.devices, "saturated": list(p.saturated)}
                        for p in self.suspect],
            "points": [p.to_json() for p in self.points],
            "best": None if best is None else {
                "label": best.label, "devices": best.devices,
                "attainable_gbops": best.attainable_gbops, "bound": best.bound,
                "bound_by": best.bound_by,
                "ceilings": [c.to_json() for c in self.ceilings(best)]},
        }

    @classmethod
    def from_json(cls, data):
        return cls(kernel=data["kernel"], board=Board.from_json(data["board"]),
                   points=tuple(RooflinePoint.from_json(p) for p in data["points"]),
                   options=dict(data["options"]))


def _clock(clock, board, measurement):
    if clock == "board":
        return board.clock_mhz, f"board default ({board.clock_source})"
    if clock == "fmax":
        if measurement.fmax_mhz is None:
            raise HwgenError(f"nextpnr found no Fmax for {measurement.point.label}")
        return measurement.fmax_mhz, f"Fmax from {measurement.fmax_source}"
    return float(clock), "given"


def check_clock(clock):
    """``board``, ``fmax`` or a positive number of MHz."""
    if clock in CLOCK_CHOICES:
        return clock
    if isinstance(clock, bool) or not isinstance(clock, (int, float)) or not clock > 0 \
            or not math.isfinite(clock):
        raise ParameterError("clock", f"must be {' or '.join(CLOCK_CHOICES)} or a positive "
                                      f"number of MHz, not {clock!r}")
    return clock


def build_roofline(points, board, *, devices=None, resources="estimate", clock="board", link=None,
                   pes=None, ceiling_clocks_mhz=None, jobs=1, progress=False, engine=None,
                   cluster=None):
    """Measure ``points`` on ``board`` and place them on the roofline.

    Parameters
    ----------
    points : list of DesignPoint
    board : Board or str
    devices : list of int or None
        Device counts (default: every count up to the board's).
    resources : str
        ``estimate`` or ``synth`` (see :func:`hwgen.roofline.sweep.measure`).
    clock : str or float
        ``board`` (its default clock), ``fmax`` (nextpnr's, per point) or MHz.
    link : str or None
        The link that bounds every point (default: the tightest at each device count).
    pes : int or None
        Also simulate a system of this many PEs per point and device count, sharing a memory
        whose bandwidth is the bounding link's, and record it against the prediction.
    ceiling_clocks_mhz : list of float or None
        Frequency ceilings (default: a quarter, half and three quarters of each point's clock).
    jobs, progress, cluster
        See :func:`hwgen.roofline.sweep.run_tasks`.
    engine : str or None
        The simulation engine (see :func:`hwgen.roofline.sweep.measure`).
    """
    board = resolve_board(board)
    if pes is not None and (isinstance(pes, bool) or not isinstance(pes, int) or pes < 1):
        raise ParameterError("pes", f"must be a positive integer, not {pes!r}")
    devices = list(range(1, board.device_count + 1)) if devices is None else list(devices)
    if not devices:
        raise ParameterError("devices", "must name at least one device count")
    for count in devices:
        bounding_link(board, count, link)
    clock = check_clock(clock)
    if ceiling_clocks_mhz is not None:
        ceiling_clocks_mhz = [float(check_clock(mhz)) for mhz in ceiling_clocks_mhz]
    if not points:
        raise HwgenError("a roofline needs at least one design point")
    measurements = measure(points, board, resources=resources, fmax=clock == "fmax", jobs=jobs,
                           progress=progress, engine=engine, cluster=cluster)
    available = board.resources.as_counts()
    placed = []
    for m in measurements:
        mhz, source = _clock(clock, board, m)
        scales = {}
        for count in devices:
            bound, gbps = bounding_link(board, count, link)
            point = RooflinePoint(m, count, available, mhz, source, bound.name, gbps)
            if point.channel_link not in scales:
                scales[point.channel_link] = point_scalability(m, board, point.channel_link)
            placed.append(replace(point, scale=scales[point.channel_link]))
    if pes is not None:
        requests = [(p.measurement.point, pes, bytes_per_cycle(p.bandwidth_gbps, p.clock_mhz))
                    for p in placed]
        runs = simulate_systems(requests, jobs=jobs, progress=progress, engine=engine,
                                cluster=cluster)
        placed = [replace(p, system=_system_check(pes, bandwidth, run))
                  for p, (_, _, bandwidth), run in zip(placed, requests, runs)]
    options = {"resources": resources, "clock": clock, "link": link, "devices": devices,
               "ceiling_clocks_mhz": ceiling_clocks_mhz, "pes": pes, "engine": engine}
    return Roofline(kernel=points[0].kernel, board=board, points=tuple(placed), options=options)


def point_scalability(measurement, board, link):
    """``(SC, limiting resource)`` of a measured design point on one device of ``board``: its
    resources per PE (estimated or synthesized) and, for a window filter, its system's
    interconnect for ``link`` bytes per cycle, estimated (:func:`system_scalability`)."""
    design = measurement.point
    if not isinstance(design, DesignPoint):     # no system of other kernels' PEs is built
        return scalability(measurement.resources, board.resources.as_counts())
    available = placeable(board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # estimated, never built
        pe = design.build()
    return system_scalability(measurement.resources, available,
                              window_overhead(pe, board, bytes_per_cycle=link),
                              cells=logic_cells(board))


def _system_check(pes, bandwidth, run):
    pe = run["pe"]
    saturated = tuple(run["saturated"]) + tuple(f"pe alone.{name}" for name in pe.saturated)
    return SystemCheck(pes=pes, height=run["height"], bandwidth_bytes_per_cycle=bandwidth,
                       pe_ops_per_cycle=pe.ops_per_cycle, pe_ci_ops_per_byte=pe.ci,
                       cycles=run["cycles"], ops=run["ops"], bytes_read=run["bytes_read"],
                       bytes_written=run["bytes_written"], saturated=saturated,
                       port_ops_per_cycle=run.get("port_ops_per_cycle"))
