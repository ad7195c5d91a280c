"""The pi series: ``pi ~ sum over i < steps of 4 / (1 + x_i**2) * step``, ``x_i = (i + 0.5) * step``.

Fixed point with ``frac_bits`` (F) fraction bits. The host passes ``steps`` and
``step ~ 2**F / steps`` (see :func:`pi_step`) as run-time parameters. Thread ``t`` takes the
steps ``i = t, t + T, ...``:

* ``x = ((2 * i + 1) * step) >> 1``
* ``d = 2**F + ((x * x) >> F)``
* ``q = 2**(2F + 2) // d`` (4 / (1 + x**2) in fixed point), by restoring division one quotient bit
  per pass through a loop of F + 3 passes
* ``sum += q``

and finally, inside a critical section, adds ``(sum * step) >> F`` to the element at ``result``
(which must start at zero): ``result / 2**F`` approximates pi. A thread's sum has
:data:`PI_SUM_BITS` bits, enough for every term of ``2**32 - 1`` steps at ``F = 28`` without
wrapping; the result wraps modulo ``2**element_bits`` in memory.
"""

import numpy as np
from amaranth.hdl import Mux, unsigned

from ..pipeline import Acquire, Compute, Load, Lock, Loop, Program, Release, Store, While
from ..pipeline.job import Job, Option, ProgramShape, add_counts, share

__all__ = ["PI_MAX_STEPS", "PI_STEP_TOLERANCE", "PI_SUM_BITS", "PiJob", "pi_series", "pi_step"]

#: Bits of a thread's sum of terms, each below ``2**(F + 2)``.
PI_SUM_BITS = 64
_COUNT_BITS = 32
#: Steps of the series at most (its loop counter has 32 bits).
PI_MAX_STEPS = 2 ** _COUNT_BITS - 1
#: How far the rounded step of the series may be from 2**F / steps.
PI_STEP_TOLERANCE = 0.01


def pi_step(steps, frac_bits=20):
    """The ``step`` parameter for ``steps`` steps: ``2**frac_bits / steps``, rounded."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps < 2 ** _COUNT_BITS:
        raise ValueError(f"steps must be an integer between 1 and {2 ** _COUNT_BITS - 1}, "
                         f"not {steps!r}")
    return ((1 << frac_bits) + steps // 2) // steps


def pi_series(*, threads, frac_bits=20, element_bits=32, addr_width=16):
    """The pi-series program.

    Parameters
    ----------
    threads : int
        Hardware threads, 1 to 64.
    frac_bits : int
        Fraction bits F, 4 to 28.
    element_bits : int
        Width of the result element, F + 3 to 64.
    addr_width : int
        Width of the ``result`` address.

    Returns
    -------
    Program
        Run-time parameters ``steps``, ``step`` and ``result``.
    """
    if isinstance(frac_bits, bool) or not isinstance(frac_bits, int) or not 4 <= frac_bits <= 28:
        raise ValueError(f"frac_bits must be an integer between 4 and 28, not {frac_bits!r}")
    if (isinstance(element_bits, bool) or not isinstance(element_bits, int)
            or not frac_bits + 3 <= element_bits <= 64):
        raise ValueError(f"element_bits must be an integer between {frac_bits + 3} and 64, "
                         f"not {element_bits!r}")
    f = frac_bits
    quotient_bits = f + 3
    context = {
        "i": unsigned(_COUNT_BITS),
        "x": unsigned(f + 2),
        "rem": unsigned(2 * f + 3),
        "divisor": unsigned(2 * f + 5),
        "q": unsigned(quotient_bits),
        "n": unsigned(quotient_bits.bit_length()),
        "sum": unsigned(PI_SUM_BITS),
        "pi": unsigned(element_bits),
    }
    params = {"steps": unsigned(_COUNT_BITS), "step": unsigned(f + 1),
              "result": unsigned(addr_width)}
    lock = Lock("pi")

    def divide_setup(c, p):
        d = (1 << f) + ((c.x * c.x) >> f)
        return {"divisor": d << (quotient_bits - 1), "rem": 1 << (2 * f + 2), "q": 0,
                "n": quotient_bits}

    def divide_step(c, p):
        fits = c.rem >= c.divisor
        return {"rem": Mux(fits, c.rem - c.divisor, c.rem), "q": (c.q << 1) | fits,
                "divisor": c.divisor >> 1, "n": c.n - 1}

    body = [
        Compute(lambda c, p: {"i": c.tid}, name="first step"),
        While(lambda c, p: c.i < p.steps, [
            Compute(lambda c, p: {"x": ((2 * c.i + 1) * p.step) >> 1}, ops=2, name="x"),
            Compute(divide_setup, ops=2, name="1 + x^2"),
            Loop([Compute(divide_step, ops=1, name="divide")], repeat=lambda c, p: c.n != 0),
            Compute(lambda c, p: {"sum": c.sum + c.q, "i": c.i + threads}, ops=1, name="sum"),
        ]),
        Acquire(lock),
        Load(lambda c, p: p.result, into="pi", name="load pi"),
        Compute(lambda c, p: {"pi": c.pi + ((c.sum * p.step) >> f)}, ops=2, name="add share"),
        Store(lambda c, p: p.result, lambda c, p: c.pi, name="store pi"),
        Release(lock),
    ]
    return Program("pi", threads=threads, context=context, body=body, params=params,
                   element_bits=element_bits, addr_width=addr_width)


class PiJob(Job):
    """The pi series over ``steps`` steps, result at element address 0.

    Parameters
    ----------
    steps, threads : int
    frac_bits : int
        See :func:`pi_series`.
    """
    name = "pi"
    description = "pi as a fixed-point series summed by every thread, with a lock"
    options = (
        Option("variant", str, "series", "the one variant", choices=("series",)),
        Option("steps", int, 64, "steps of the series (a run-time parameter)", low=1,
               high=PI_MAX_STEPS, hardware=False),
        Option("threads", int, 8, "hardware threads", low=1, high=64),
        Option("frac_bits", int, 20, "fixed-point fraction bits", low=4, high=28),
    )

    def check(self):
        self.step = pi_step(self.steps, self.frac_bits)
        # The series sums over a step of 2**F / steps rounded to an integer: past a few hundred
        # thousand steps at F = 20 that rounding, not the series, decides the result.
        f = self.frac_bits
        if abs(self.step * self.steps - (1 << f)) > PI_STEP_TOLERANCE * (1 << f):
            raise ValueError(
                f"steps {self.steps} with frac_bits {f}: the step 2**{f}/{self.steps} rounds to "
                f"{self.step}, more than {PI_STEP_TOLERANCE:.0%} off; raise frac_bits (up to 28) "
                f"or use at most {(1 << f) // 50:,} steps")

    @classmethod
    def build_program(cls, *, variant, threads, frac_bits):
        return pi_series(threads=threads, frac_bits=frac_bits)

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

    def cycle_budget(self, memory, host):
        """Far more cycles than any job needs; more means the pipeline is stuck."""
        accesses = 2 * self.threads      # each thread reads and writes the result once
        return (16 * (self.steps + self.threads) * (self.frac_bits + 8)
                + memory.cycle_budget(accesses, accesses * self.program.element_bits // 8)
                + self.threads * host.launch_delay_cycles)

    def parameters(self):
        return {**super().parameters(), "step": self.step}

    def describe(self):
        return f"pi series: {self.steps} steps, {self.threads} threads, Q.{self.frac_bits}"

    def value(self, storage):
        """The pi approximation the pipeline computed."""
        return self.result(storage) / (1 << self.frac_bits)

    def summary(self, storage):
        return {"pi": self.value(storage)}

    def shape(self):
        """Per thread: its share of the steps, each a divide loop of F + 3 passes, then one
        critical section."""
        threads, f, steps = self.threads, self.frac_bits, self.steps
        divide = f + 3
        section = {"load": 1, "compute": 1, "store": 1, "release": 1}
        paths = []
        for t in range(threads):
            n = share(steps, t, threads)
            body = {"join": 1 + divide, "compute": 3 + divide}
            paths.append(add_counts((1, {"compute": 1, "acquire": 1}), (1, section), (n, body)))
        eb = -(-self.program.element_bits // 8)
        return ProgramShape("pi", tuple(paths), threads, threads, threads * eb, threads * eb,
                            steps * (5 + divide) + 2 * threads, sections=threads,
                            section=section, stage_visits=steps * divide)
