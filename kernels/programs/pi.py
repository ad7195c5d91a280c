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

from amaranth.hdl import Mux, unsigned

from ..pipeline import Acquire, Compute, Load, Lock, Loop, Program, Release, Store, While

__all__ = ["PI_SUM_BITS", "pi_series", "pi_step"]

#: Bits of a thread's sum of terms, each below ``2**(F + 2)``.
PI_SUM_BITS = 64
_COUNT_BITS = 32


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
