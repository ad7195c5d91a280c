"""Expected delays of the memory model (:class:`hwgen.sim.memory.MemoryModel`) in closed form.

Jitter and backpressure are random; a model of them gives expected values:

* a port that backpressure stalls with probability ``p`` per cycle takes ``1 / (1 - p)``
  cycles per beat, and a due response waits ``p / (1 - p)`` cycles more;
* when a burst of ``C`` requests waits for the responses of the burst before it, the slowest
  of them sets the pace: :func:`jitter_max`, the expected largest of ``C`` draws;
* responses keep request order and transfer one per cycle, so a response waits for the slowest
  earlier one: with requests ``g`` cycles apart and jitter uniform in ``0..J``, its extra
  latency is ``max over i >= 0 of (J_i - i (g - 1))``, whose expectation :func:`jitter_delay`
  sums exactly.
"""

from functools import cache

__all__ = ["beat_cycles", "hold_cycles", "jitter_delay", "jitter_max", "read_latency"]


def beat_cycles(memory):
    """Expected cycles a port needs to transfer one beat under backpressure."""
    return 1 / (1 - memory.backpressure)


def hold_cycles(memory):
    """Expected cycles a due response is held back by backpressure."""
    p = memory.backpressure
    return p / (1 - p)


@cache
def _jitter_delay(jitter, slack, count):
    total = 0.0
    for x in range(jitter):
        below = 1.0            # P(every J_i - i slack <= x)
        for i in range(count):
            if x + i * slack + 1 >= jitter + 1:
                break
            below *= (x + i * slack + 1) / (jitter + 1)
        total += 1 - below
    return total


def jitter_delay(jitter, gap, count=None):
    """Expected extra latency of an in-order response with jitter uniform in ``0..jitter``,
    requests ``gap`` cycles apart, of which ``count`` (itself included; ``None`` for a long
    stream) can hold it back.

    Responses transfer one per cycle, so a late response delays every later one that cannot
    catch up: response ``k`` is late by ``max over i of (J_(k-i) - i (gap - 1))``. Requests every
    cycle never catch up, and a long stream of them is late by the largest draw so far."""
    if not jitter:
        return 0.0
    slack = max(0, round(gap) - 1)
    return _jitter_delay(jitter, slack, count or 256)


def read_latency(memory, gap, count=None):
    """Expected cycles from an accepted read to its response's transfer, requests ``gap``
    cycles apart, ``count`` of them in a row (see :func:`jitter_delay`)."""
    return (memory.latency_cycles + jitter_delay(memory.jitter_cycles, gap, count)
            + hold_cycles(memory))


def jitter_max(jitter, count):
    """Expected largest of ``count`` draws of jitter uniform in ``0..jitter``."""
    return jitter - sum(((x + 1) / (jitter + 1)) ** count for x in range(jitter))
