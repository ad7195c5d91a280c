"""The memory model's random stream: one definition for both simulation engines.

The memory model draws its jitter and backpressure from this stream, and the compiled engine's
clock loop (``cxxrtl_harness.cc``) implements the same three functions, so a seed gives the same
draws, hence the same cycles, in Amaranth's simulator and in the compiled model.

The generator is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
generators", 2014): 64 bits of state, one addition and three xor-shift-multiply rounds per draw,
easy to write identically in any language, and good enough for timing noise.
"""

__all__ = ["RandomStream"]

_MASK = (1 << 64) - 1


class RandomStream:
    """SplitMix64 draws from a seed.

    Parameters
    ----------
    seed : int
        Any integer; its low 64 bits are the initial state.
    """

    def __init__(self, seed=0):
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an integer, not {seed!r}")
        self._state = seed & _MASK

    def next(self):
        """The next 64-bit draw."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def uniform(self):
        """A float in [0, 1) from the top 53 bits of a draw."""
        return (self.next() >> 11) * (1.0 / (1 << 53))

    def below(self, n):
        """An integer in [0, n): a draw modulo ``n`` (the bias, under n / 2**64, is negligible
        for the small ``n`` of memory jitter)."""
        return self.next() % n
