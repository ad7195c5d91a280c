"""FPGA boards as data: devices, resources, I/O links, toolchain family and default clock.

A :class:`Board` is read from a TOML or JSON file (the built-in boards are such files in this
package) and validated up front: every mistake gives a one-line :class:`BoardError` that names
the field and what is allowed. Every figure carries its source.
"""

import json
import math
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

__all__ = ["BoardError", "FAMILIES", "XILINX_FAMILIES", "Toolchain", "Resources", "Link", "Board",
           "load_board"]

#: Families the toolchain knows. ``intel`` boards have no open synthesis flow.
FAMILIES = ("ice40", "ecp5", "xilinx", "gowin", "intel")
#: ``synth_xilinx -family`` values hwgen accepts.
XILINX_FAMILIES = ("xc6v", "xc7", "xcu", "xcup")


class BoardError(ValueError):
    """A board file or board description that is not valid; the message is one line."""


def _check(condition, message):
    if not condition:
        raise BoardError(message)


def _int(where, name, value, minimum=0):
    _check(isinstance(value, int) and not isinstance(value, bool) and value >= minimum,
           f"{where}.{name} must be an integer >= {minimum}, not {value!r}")
    return value


def _number(where, name, value):
    _check(isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
           and math.isfinite(value), f"{where}.{name} must be a positive number, not {value!r}")
    return float(value)


def _text(where, name, value, allow_empty=False):
    _check(isinstance(value, str) and (allow_empty or value.strip()),
           f"{where}.{name} must be a non-empty string, not {value!r}")
    return value


def _optional_text(where, name, value):
    return None if value is None else _text(where, name, value)


def _table(where, cls, data):
    """Check ``data`` is a dict with exactly the fields of ``cls`` (optional ones may be missing)."""
    _check(isinstance(data, dict), f"{where} must be a table of fields, not {data!r}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BoardError(f"{where} has unknown field {unknown[0]!r}; allowed: "
                         f"{', '.join(sorted(known))}")
    missing = [f.name for f in fields(cls) if f.name not in cls._optional and f.name not in data]
    if missing:
        raise BoardError(f"{where} is missing field {missing[0]!r}")
    return {name: data.get(name) for name in known}


@dataclass(frozen=True)
class Toolchain:
    """What the open toolchain needs to know about a board's device.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    yosys_family : str or None
        For ``xilinx``: the ``synth_xilinx -family`` value, one of :data:`XILINX_FAMILIES`.
    nextpnr_device : str or None
        For ``ecp5`` / ``ice40``: nextpnr's device option without dashes (``85k``, ``up5k``).
    package : str or None
        nextpnr's ``--package`` value.
    speed_grade : str or None
        nextpnr-ecp5's ``--speed`` value (6, 7 or 8).
    estimate_proxy : str or None
        For ``intel`` (no open flow): the cost table the estimator uses instead
        (``xilinx-xc7`` for devices with 6-input fracturable LUTs).
    """
    family: str
    yosys_family: str | None = None
    nextpnr_device: str | None = None
    package: str | None = None
    speed_grade: str | None = None
    estimate_proxy: str | None = None

    _optional = ("yosys_family", "nextpnr_device", "package", "speed_grade", "estimate_proxy")

    def __post_init__(self):
        where = "toolchain"
        _check(self.family in FAMILIES,
               f"{where}.family must be one of {', '.join(FAMILIES)}, not {self.family!r}")
        self._family_only("yosys_family", "xilinx", XILINX_FAMILIES)
        if self.family in ("ecp5", "ice40"):
            _text(where, "nextpnr_device", self.nextpnr_device)
            _text(where, "package", self.package)
        if self.family == "ecp5":
            _check(self.speed_grade in ("6", "7", "8"),
                   f"{where}.speed_grade must be one of 6, 7, 8 for ecp5, not {self.speed_grade!r}")
        for name in ("nextpnr_device", "package", "speed_grade"):
            _optional_text(where, name, getattr(self, name))
        self._family_only("estimate_proxy", "intel", _PROXIES)

    def _family_only(self, name, family, allowed):
        """``name`` is one of ``allowed`` on a ``family`` board and absent on any other."""
        value = getattr(self, name)
        if self.family == family:
            _check(value in allowed, f"toolchain.{name} must be one of {', '.join(allowed)} for "
                                     f"{'an' if family[0] in 'aeiou' else 'a'} {family} board, "
                                     f"not {value!r}")
        else:
            _check(value is None, f"toolchain.{name} is only for {family} boards, not {self.family}")

    @property
    def cost_family(self):
        """Name of the estimator's cost table: ``ecp5``, ``ice40``, ``gowin``, ``xilinx-xc7``..."""
        if self.family == "intel":
            return self.estimate_proxy
        if self.family == "xilinx":
            return f"xilinx-{self.yosys_family}"
        return self.family

    @property
    def has_open_flow(self):
        """Whether Yosys can synthesize for this family here."""
        return self.family != "intel"

    @property
    def has_place_and_route(self):
        """Whether nextpnr places and routes this family here (gives Fmax)."""
        return self.family in ("ecp5", "ice40")


_PROXIES = ("xilinx-xc6v", "xilinx-xc7", "xilinx-xcup")


@dataclass(frozen=True)
class Resources:
    """What one device offers.

    Parameters
    ----------
    lut : int
        Look-up tables (Intel: ALUTs).
    lut_inputs : int
        Inputs of one LUT (4 for iCE40/ECP5, 6 for Xilinx 6-series and later).
    ff : int
        Flip-flops (registers).
    bram_blocks : int
        Block RAM blocks, counted in ``bram_kind`` units (Xilinx: 18 Kbit halves).
    bram_block_bits : int
        Bits of one block, parity bits included.
    bram_kind : str
        What one block is (``DP16KD``, ``RAMB18``, ``M20K``...).
    dsp : int
        DSP blocks or hard multipliers, counted in ``dsp_kind`` units.
    dsp_kind : str
        What one DSP is.
    source : str
        Where these figures come from (datasheet and table).
    bram_bits : int or None
        Total block RAM bits, when the blocks are of mixed sizes (default:
        ``bram_blocks * bram_block_bits``).
    """
    lut: int
    lut_inputs: int
    ff: int
    bram_blocks: int
    bram_block_bits: int
    bram_kind: str
    dsp: int
    dsp_kind: str
    source: str
    bram_bits: int | None = None

    _optional = ("bram_bits",)

    def __post_init__(self):
        where = "resources"
        for name in ("lut", "ff", "bram_blocks", "bram_block_bits", "dsp"):
            _int(where, name, getattr(self, name))
        _check(_int(where, "lut_inputs", self.lut_inputs) in range(3, 9),
               f"{where}.lut_inputs must be between 3 and 8, not {self.lut_inputs}")
        for name in ("bram_kind", "dsp_kind", "source"):
            _text(where, name, getattr(self, name))
        if self.bram_bits is None:
            object.__setattr__(self, "bram_bits", self.bram_blocks * self.bram_block_bits)
        _int(where, "bram_bits", self.bram_bits)

    def as_counts(self):
        """``{"lut", "ff", "bram", "dsp"}``: what scalability divides by."""
        return {"lut": self.lut, "ff": self.ff, "bram": self.bram_blocks, "dsp": self.dsp}


@dataclass(frozen=True)
class Link:
    """An I/O link: host interface or off-chip memory.

    Parameters
    ----------
    name : str
        What the link is (``PCIe Gen3 x8``, ``HBM2``).
    bandwidth_gbps : float
        Bandwidth in GB/s (10**9 bytes per second).
    measured : bool
        ``True`` for a measured (sustained) figure, ``False`` for a nominal (peak) one.
    per_device : bool
        ``True`` when every device of the board has a link like this one (the roofline multiplies
        by the device count), ``False`` for one link the whole board shares.
    source : str
        Where the figure comes from.
    """
    name: str
    bandwidth_gbps: float
    measured: bool
    per_device: bool
    source: str

    _optional = ()

    def __post_init__(self):
        where = f"links[{self.name!r}]" if isinstance(self.name, str) else "links[]"
        _text(where, "name", self.name)
        object.__setattr__(self, "bandwidth_gbps", _number(where, "bandwidth_gbps", self.bandwidth_gbps))
        for name in ("measured", "per_device"):
            _check(isinstance(getattr(self, name), bool),
                   f"{where}.{name} must be true or false, not {getattr(self, name)!r}")
        _text(where, "source", self.source)

    def board_bandwidth_gbps(self, device_count):
        """Bandwidth of this link over the whole board."""
        return self.bandwidth_gbps * (device_count if self.per_device else 1)


@dataclass(frozen=True)
class Board:
    """An FPGA board: its device(s), what each offers, its links and its default clock.

    Parameters
    ----------
    name : str
        Short name, lower case (``ulx3s-85f``).
    description : str
        One line for people.
    device : str
        Part number of one FPGA.
    device_count : int
        FPGAs on the board, at least 1 (resources are per device).
    toolchain : Toolchain
        Family and place-and-route settings.
    resources : Resources
        What one device offers.
    links : tuple of Link
        I/O links, at least one.
    clock_mhz : float
        Default clock when no Fmax is measured.
    clock_source : str
        Where the clock figure comes from.
    """
    name: str
    description: str
    device: str
    device_count: int
    toolchain: Toolchain
    resources: Resources
    links: tuple
    clock_mhz: float
    clock_source: str

    _optional = ()

    def __post_init__(self):
        where = "board"
        _check(isinstance(self.name, str) and self.name and self.name == self.name.strip().lower()
               and " " not in self.name,
               f"{where}.name must be a lower-case name without spaces, not {self.name!r}")
        _text(where, "description", self.description)
        _text(where, "device", self.device)
        _int(where, "device_count", self.device_count, minimum=1)
        _check(isinstance(self.toolchain, Toolchain), f"{where}.toolchain must be a Toolchain")
        _check(isinstance(self.resources, Resources), f"{where}.resources must be a Resources")
        _check(isinstance(self.links, tuple) and self.links
               and all(isinstance(link, Link) for link in self.links),
               f"{where}.links must be a non-empty tuple of Link")
        names = [link.name for link in self.links]
        _check(len(set(names)) == len(names), f"{where}.links has two links named alike")
        object.__setattr__(self, "clock_mhz", _number(where, "clock_mhz", self.clock_mhz))
        _text(where, "clock_source", self.clock_source)

    @property
    def family(self):
        return self.toolchain.family

    def elaboration_platform(self):
        """What a design sees as ``platform`` in ``elaborate()`` when it is built for this board.

        Designs pick vendor primitives by ``platform.family``, named as Amaranth's vendor
        platforms name it for Lattice parts (``"ecp5"``, ``"ice40"``); other boards give their
        toolchain family. Passing a real Amaranth platform of the same part works the same way.
        """
        return TargetPlatform(family=self.family, device=self.device,
                              package=self.toolchain.package,
                              speed=self.toolchain.speed_grade)

    def to_json(self):
        """Plain data, as written to a board file (``links`` a list)."""
        data = asdict(self)
        data["links"] = [asdict(link) for link in self.links]
        return data

    @classmethod
    def from_json(cls, data):
        """Build and validate a board from plain data (a parsed TOML or JSON board file)."""
        top = _table("board", cls, data)
        toolchain = Toolchain(**_table("toolchain", Toolchain, top["toolchain"]))
        resources = Resources(**_table("resources", Resources, top["resources"]))
        links = top["links"]
        _check(isinstance(links, list) and links, "board.links must be a non-empty list of links")
        links = tuple(Link(**_table(f"links[{i}]", Link, link)) for i, link in enumerate(links))
        return cls(**{**top, "toolchain": toolchain, "resources": resources, "links": links})


@dataclass(frozen=True)
class TargetPlatform:
    """The part a design is elaborated for, out of context (no pins, no clocks)."""
    family: str
    device: str
    package: str | None = None
    speed: str | None = None


def load_board(path):
    """Read and validate a board file (``.toml`` or ``.json``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    _check(suffix in (".toml", ".json"), f"board file must end in .toml or .json, not {path.name!r}")
    try:
        text = path.read_text()
    except OSError as error:
        raise BoardError(f"cannot read board file {str(path)!r} ({error.strerror})") from None
    try:
        data = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        message = str(error).splitlines()[0]
        raise BoardError(f"board file {path.name!r} is not valid {suffix[1:].upper()}: {message}") from None
    try:
        return Board.from_json(data)
    except BoardError as error:
        raise BoardError(f"board file {path.name!r}: {error}") from None
