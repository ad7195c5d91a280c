"""Jobs for the multithreaded-pipeline programs: their data in memory and numpy models.

A job builds its :class:`hwgen.kernels.pipeline.Program`, lays out its inputs in a flat memory image,
and checks what the pipeline left in memory against a numpy model of the same arithmetic.
"""

from functools import cached_property

import numpy as np

from .kernels.programs import (GEMM_VARIANTS, PI_SUM_BITS, default_block_rows, gemm, pi_series,
                              pi_step)

from .errors import HwgenError, ParameterError

__all__ = ["PROGRAMS", "MAX_THREADS", "PI_MAX_STEPS", "GemmJob", "PiJob", "program_of"]


#: Steps of the pi series at most (its loop counter has 32 bits).
PI_MAX_STEPS = 2 ** 32 - 1
#: Hardware threads of a program at most.
MAX_THREADS = 64


def _check_int(parameter, value, low, high):
    """Raise :class:`ParameterError` unless ``value`` is an integer in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(parameter, f"must be an integer, not {value!r}")
    if not low <= value <= high:
        raise ParameterError(parameter, f"must be between {low} and {high}, not {value}")


def _signed(values, bits):
    """Raw ``bits``-bit words as signed integers."""
    values = np.asarray(values, dtype=object) & ((1 << bits) - 1)
    return np.where(values >= 1 << (bits - 1), values - (1 << bits), values)


class GemmJob:
    """``C = A @ B`` on seeded random ``dim x dim`` matrices, row-major at 0, dim², 2·dim².

    Parameters
    ----------
    variant : str
    dim, threads, element_bits, frac_bits, lanes : int
        See :func:`hwgen.kernels.programs.gemm`.
    seed : int
        Seed of the random matrices (every element value of the width is possible).
    """
    name = "gemm"
    description = "C = A @ B on random square matrices, integer or fixed point"
    variants = GEMM_VARIANTS
    size_option = "--dim"
    #: The options of ``hwgen run gemm``: their defaults and what is allowed.
    options = {
        "variant": {"default": "naive", "allowed": list(GEMM_VARIANTS)},
        "dim": {"default": 8, "allowed": "1..4096; vector, blocked: a multiple of lanes"},
        "threads": {"default": 8, "allowed": "1..64 (blocked: 2..64)"},
        "lanes": {"default": 4, "allowed": "vector, blocked: elements per vector request, "
                                           "divides dim"},
        "element_bits": {"default": 32, "allowed": "2..64"},
        "frac_bits": {"default": 0, "allowed": "0 (integers)..element_bits - 1"},
    }

    def __init__(self, variant, *, dim, threads, element_bits=32, frac_bits=0, lanes=4, seed=0):
        self.check(variant, dim=dim, threads=threads, element_bits=element_bits,
                   frac_bits=frac_bits, lanes=lanes)
        self.program = gemm(variant, dim=dim, threads=threads, element_bits=element_bits,
                            frac_bits=frac_bits, lanes=lanes)
        self.variant = variant
        self.dim = dim
        self.threads = threads
        self.element_bits = element_bits
        self.frac_bits = frac_bits
        self.lanes = lanes
        self.seed = seed

    @cached_property
    def _matrices(self):
        # Drawn when first needed: the cycle model and the estimate need the program only, and
        # the matrices of a large dim take seconds to draw.
        # 64 random bits per element, cut to the element width.
        halves = np.random.default_rng(self.seed).integers(
            0, 1 << 32, size=(2, self.dim, self.dim, 2), dtype=np.uint64).astype(object)
        return _signed(halves[..., 0] << 32 | halves[..., 1], self.element_bits)

    @property
    def a(self):
        """The left matrix, signed integers."""
        return self._matrices[0]

    @property
    def b(self):
        """The right matrix, signed integers."""
        return self._matrices[1]

    @staticmethod
    def check(variant, *, dim, threads, element_bits, frac_bits, lanes):
        """Raise :class:`ParameterError`, naming the parameter, for one :func:`gemm` refuses."""
        if variant not in GEMM_VARIANTS:
            raise ParameterError("variant", f"must be one of {', '.join(GEMM_VARIANTS)}, "
                                            f"not {variant!r}")
        _check_int("dim", dim, 1, 4096)
        _check_int("threads", threads, 2 if variant == "blocked" else 1, MAX_THREADS)
        _check_int("element_bits", element_bits, 2, 64)
        _check_int("frac_bits", frac_bits, 0, element_bits - 1)
        if variant in ("vector", "blocked"):
            _check_int("lanes", lanes, 1, dim)
            if dim % lanes:
                raise ParameterError("lanes", f"must divide dim {dim}, not {lanes}")

    def memory(self):
        """The memory image and run-time parameters: ``(storage, params)``."""
        mask = (1 << self.element_bits) - 1
        n = self.dim * self.dim
        storage = [int(v) & mask for v in self.a.ravel()] + [int(v) & mask for v in self.b.ravel()]
        storage += [0] * n
        return storage, {"a_base": 0, "b_base": n, "c_base": 2 * n}

    def expected(self):
        """The numpy model: each product shifted by frac_bits, sums wrapped to the element width."""
        if self.element_bits > 32:
            products = (self.a[:, :, None] * self.b[None, :, :]) >> self.frac_bits
            return _signed(products.sum(axis=1), self.element_bits)
        # Products of two 32-bit numbers fit in 63 bits, and sums that wrap at 64 bits still hold
        # the low element_bits exactly: int64 arithmetic, a row at a time, keeps large matrices
        # fast and small.
        a, b = self.a.astype(np.int64), self.b.astype(np.int64)
        rows = [((a[i, :, None] * b) >> self.frac_bits).sum(axis=0) for i in range(self.dim)]
        return _signed(np.array(rows).astype(object), self.element_bits)

    def result(self, storage):
        n = self.dim * self.dim
        return _signed(np.array(storage[2 * n:3 * n], dtype=object), self.element_bits).reshape(
            self.dim, self.dim)

    def matches(self, storage):
        return bool((self.result(storage) == self.expected()).all())

    def cycle_budget(self, memory, host):
        """Far more cycles than any job needs; more means the pipeline is stuck."""
        accesses = 2 * self.dim ** 3 + self.dim ** 2     # the naive variant's, the most
        element_bytes = -(-self.element_bits // 8)
        return (memory.cycle_budget(accesses, accesses * element_bytes)
                + self.threads * (host.launch_delay_cycles + 100))

    def parameters(self):
        parameters = {"variant": self.variant, "dim": self.dim, "threads": self.threads,
                      "element_bits": self.element_bits, "frac_bits": self.frac_bits}
        if self.variant in ("vector", "blocked"):
            parameters["lanes"] = self.lanes
        if self.variant == "blocked":
            parameters["block_rows"] = default_block_rows(self.dim, self.threads, self.lanes)
        return parameters

    def hardware(self):
        """The parameters that decide the pipeline's hardware (every one of gemm's: dim is built
        into its loops)."""
        return self.parameters()

    def describe(self):
        kind = f"Q{self.element_bits - self.frac_bits}.{self.frac_bits}" if self.frac_bits else "int"
        return (f"gemm {self.variant}: DIM {self.dim}, {self.threads} threads, "
                f"{kind}{self.element_bits if not self.frac_bits else ''}")


#: How far the rounded step of the pi series may be from 2**F / steps.
PI_STEP_TOLERANCE = 0.01


class PiJob:
    """The pi series over ``steps`` steps, result at element address 0.

    Parameters
    ----------
    steps, threads : int
    frac_bits : int
        See :func:`hwgen.kernels.programs.pi_series`.
    """
    name = "pi"
    description = "pi as a fixed-point series summed by every thread, with a lock"
    variants = ("series",)
    size_option = "--steps"
    #: The options of ``hwgen run pi``: their defaults and what is allowed.
    options = {
        "variant": {"default": "series", "allowed": ["series"]},
        "steps": {"default": 64, "allowed": "1..2**32 - 1"},
        "threads": {"default": 8, "allowed": "1..64"},
        "frac_bits": {"default": 20, "allowed": "4..28"},
    }

    def __init__(self, *, steps, threads, frac_bits=20):
        _check_int("steps", steps, 1, PI_MAX_STEPS)
        _check_int("threads", threads, 1, MAX_THREADS)
        _check_int("frac_bits", frac_bits, 4, 28)
        self.step = pi_step(steps, frac_bits)
        # The series sums over a step of 2**F / steps rounded to an integer: past a few hundred
        # thousand steps at F = 20 that rounding, not the series, decides the result.
        if abs(self.step * steps - (1 << frac_bits)) > PI_STEP_TOLERANCE * (1 << frac_bits):
            raise HwgenError(
                f"--steps {steps} with --frac-bits {frac_bits}: the step 2**{frac_bits}/{steps} "
                f"rounds to {self.step}, more than {PI_STEP_TOLERANCE:.0%} off; raise --frac-bits "
                f"(up to 28) or use at most {(1 << frac_bits) // 50:,} steps")
        self.program = pi_series(threads=threads, frac_bits=frac_bits)
        self.steps = steps
        self.threads = threads
        self.frac_bits = frac_bits

    def memory(self):
        return [0], {"steps": self.steps, "step": self.step, "result": 0}

    def expected(self):
        """The numpy model of the fixed-point series and the per-thread reduction."""
        f = self.frac_bits
        i = np.arange(self.steps, dtype=object)
        x = ((2 * i + 1) * self.step) >> 1
        q = (1 << (2 * f + 2)) // ((1 << f) + ((x * x) >> f))
        shares = [(int(q[t::self.threads].sum()) % (1 << PI_SUM_BITS) * self.step) >> f
                  for t in range(self.threads)]
        return sum(shares) % (1 << self.program.element_bits)

    def result(self, storage):
        return storage[0]

    def matches(self, storage):
        return self.result(storage) == self.expected()

    def cycle_budget(self, memory, host):
        """Far more cycles than any job needs; more means the pipeline is stuck."""
        accesses = 2 * self.threads      # each thread reads and writes the result once
        return (16 * (self.steps + self.threads) * (self.frac_bits + 8)
                + memory.cycle_budget(accesses, accesses * self.program.element_bits // 8)
                + self.threads * host.launch_delay_cycles)

    def parameters(self):
        return {"variant": "series", "steps": self.steps, "threads": self.threads,
                "frac_bits": self.frac_bits, "step": self.step}

    def hardware(self):
        """The parameters that decide the pipeline's hardware: steps and step are run-time
        parameters."""
        return {"variant": "series", "threads": self.threads, "frac_bits": self.frac_bits}

    def describe(self):
        return f"pi series: {self.steps} steps, {self.threads} threads, Q.{self.frac_bits}"

    def value(self, storage):
        """The pi approximation the pipeline computed."""
        return self.result(storage) / (1 << self.frac_bits)


PROGRAMS = {"gemm": GemmJob, "pi": PiJob}


def program_of(name, hardware):
    """The :class:`hwgen.kernels.pipeline.Program` of program ``name`` (a key of
    :data:`PROGRAMS`) that a job's ``hardware()`` parameters describe."""
    hardware = dict(hardware)
    variant = hardware.pop("variant")
    if name == "gemm":
        return gemm(variant, **hardware)
    return pi_series(**hardware)
