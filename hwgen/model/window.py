"""The cycle model of a window filter (:class:`hwgen.kernels.WindowFilter`), in closed form.

A frame is ``n`` steps of ``B`` read beats each (:attr:`WindowFilter.beats_per_step`). The
PE's timing, from ``docs/window_filters.md`` and the memory model (:mod:`hwgen.sim.memory`):

* **Fill and drain**: the last step's first beat issues at ``t_last``; its last response
  arrives ``(B - 1) + L`` cycles later (``L`` the read latency), the reduction takes ``d``
  cycles (:attr:`~WindowFilter.datapath_latency`), and writing the result, returning to idle
  and ``done`` take three more: ``cycles = t_last + (B - 1) + L + d + 3``.
* **Issue**: one read beat per cycle at most, ``B`` cycles per step.
* **Credits**: a step needs one of ``C`` credits, which returns ``R = (B - 1) + L + d + 3``
  cycles after the step started for a step that writes, one cycle sooner for a step that
  completes no window. Step ``k + C`` starts no sooner than ``R`` after step ``k``, so every
  ``C`` steps take ``max(R, C B)`` cycles.
* **Bandwidth**: reads and writes share ``bw`` bytes per cycle, and a step never goes faster
  than its beats (the budget a step leaves unused is lost), so the steps that write and those
  that do not each take ``max(B, their bytes / bw)``; the frame ends ``L + d + 3`` after its
  last read, which goes out before the writes still in flight.
* **Not pipelined** (one credit): a step that writes takes ``B + L + d + 2`` cycles, one that
  does not ``B + L + d + 1``; a step's beats wait for the bandwidth budget (a token bucket of
  ``bw + one beat`` bytes, simulated over one step until it repeats).

Jitter and backpressure turn latencies and beat times into expected values (:mod:`.memory`).
Without them the prediction is exact while one beat per cycle bounds a pipelined PE, and for
unpipelined steps without a bandwidth limit; bound by the credits or the bandwidth, it is
within a few cycles (``exact`` says which).
"""

from ..kernels import WindowFilter
from ..sim.memory import MemoryModel
from .characterisation import CHARACTERISATION
from .memory import beat_cycles, hold_cycles, jitter_max, read_latency
from .prediction import Prediction

__all__ = ["predict_image_pe", "predict_window", "spread_terms"]


def _bucket_step(credit, beats, bw, cap):
    """Cycles a step's read beats of ``beats`` bytes each take through a token bucket that
    starts at ``credit``; returns (cycles, credit after the last beat)."""
    cycles = 0
    for size in beats:
        while credit <= 0:          # not ready: the budget accrues
            credit = min(cap, credit + bw)
            cycles += 1
        credit = min(cap, credit - size + bw)
        cycles += 1
    return cycles, credit


def spread_terms(pe, memory, steps):
    """The terms that random backpressure adds beyond the mean beat times, before their fitted
    factors: requests, responses and writes are ports that stall at random, and the slowest path
    through them is longer than the mean one. Pipelined, a frame's term is
    ``sqrt(beats x p) / (1 - p)``; one step at a time, each step's ``B`` beats pass two such
    ports, ``sqrt((B - 1) p) / (1 - p)`` per step."""
    p = memory.backpressure
    b1 = beat_cycles(memory)
    beats = pe.beats_per_step
    if pe.pipeline:
        return {"pipelined": (steps * beats * p) ** 0.5 * b1, "step": 0.0}
    return {"pipelined": 0.0, "step": steps * ((beats - 1) * p) ** 0.5 * b1}


def _spread(pe, memory, steps):
    factors = CHARACTERISATION["window"]["backpressure_spread"]
    terms = spread_terms(pe, memory, steps)
    return {key: factors[key] * value for key, value in terms.items()}


def _by_bandwidth(total_bytes, write_bytes, bw):
    """Cycles of a frame that the bandwidth bounds: the budget may go negative by one beat, so
    the last write goes out once all other bytes have had their budget; then DONE follows."""
    return (total_bytes - write_bytes) / bw + 2


def _unpipelined(pe, memory, steps, writing, beats, read_bytes, write_bytes, latency):
    b1 = beat_cycles(memory)
    settle = latency + pe.datapath_latency
    issue = beats * b1
    bw = memory.bandwidth_bytes_per_cycle
    if bw is not None:
        # The bucket refills while the step waits for its result; iterate to its steady state.
        cap = bw + max(read_bytes, write_bytes)
        credit = 0.0
        for _ in range(8):
            burst, credit = _bucket_step(credit, [read_bytes] * beats, bw, cap)
            credit = min(cap, credit + bw * (settle + 2) - write_bytes * writing / steps)
        issue = max(issue, burst)
    write_wait = b1 - 1
    issue += _spread(pe, memory, steps)["step"] / steps
    return (writing * (issue + settle + 2 + write_wait)
            + (steps - writing) * (issue + settle + 1))


def predict_window(pe, memory=MemoryModel()):
    """Predict one frame of a window filter, or of any image PE (:func:`predict_image_pe`).

    Parameters
    ----------
    pe : WindowFilter or image PE
    memory : MemoryModel

    Returns
    -------
    Prediction
    """
    if not isinstance(pe, WindowFilter):
        return predict_image_pe(pe, memory)
    traffic = pe.traffic()
    n = traffic.steps
    beats = pe.beats_per_step
    writing = pe.writing_steps
    d = pe.datapath_latency
    credits = pe.credits
    read_bytes = pe.rd_beat.lanes * pe.rd_beat.element_bytes
    write_bytes = pe.wr_beat.lanes * pe.wr_beat.element_bytes
    total_bytes = traffic.bytes_read + traffic.bytes_written
    bw = memory.bandwidth_bytes_per_cycle
    b1 = beat_cycles(memory)
    exact = memory.jitter_cycles == 0 and memory.backpressure == 0
    common = dict(ideal_cycles=pe.ideal_cycles(), ops=traffic.ops, bytes_read=traffic.bytes_read,
                  bytes_written=traffic.bytes_written)

    if not pe.pipeline:
        # A step's beats go back to back; earlier steps' responses are long gone.
        latency = read_latency(memory, b1, beats)
        cycles = _unpipelined(pe, memory, n, writing, beats, read_bytes, write_bytes, latency)
        bound = "step"
        if bw is not None and _by_bandwidth(total_bytes, write_bytes, bw) > cycles:
            cycles, bound = _by_bandwidth(total_bytes, write_bytes, bw), "bandwidth"
        return Prediction(cycles=cycles, bound=bound, exact=exact and bw is None, **common)

    unit = beats * b1                                   # cycles per step at one beat per cycle
    per_step_bw = total_bytes / n / bw if bw is not None else 0.0
    # Requests go out back to back, or in bursts of back-to-back steps when the credits bound;
    # their spacing sets how much in-order jitter adds.
    latency = read_latency(memory, max(unit, per_step_bw) / beats)
    # Each burst of C steps waits for the slowest response of the burst before it.
    burst_latency = (memory.latency_cycles + hold_cycles(memory)
                     + jitter_max(memory.jitter_cycles, credits * beats))
    r_write = (beats - 1) * b1 + burst_latency + d + 3 + (b1 - 1)
    r_skip = r_write - 1 - (b1 - 1)
    jumps = (n - 1) // credits
    # Steps that complete no window and come first (the line buffer's first N - 1 rows) return
    # their credits a cycle sooner.
    prefix = (pe.rows - 1) * (pe.width // pe.unroll) if pe.buffer == "line" else 0
    skip_jumps = min(jumps, prefix // credits)
    t_last = (skip_jumps * max(r_skip, credits * unit)
              + (jumps - skip_jumps) * max(r_write, credits * unit)
              + (n - 1 - jumps * credits) * unit)
    tail = (beats - 1) * b1 + latency + d + 3 + (b1 - 1)
    cycles = t_last + tail
    bound = "credits" if r_write > credits * unit and jumps else "issue"
    cycles += _spread(pe, memory, n)["pipelined"]
    if bw is not None:
        # Steps that write nothing move fewer bytes, and a step never goes faster than its
        # beats: the bandwidth's spare budget is lost (the bucket holds one beat more at most).
        # Bytes count the enabled lanes only (partial strips, groups and row starts mask some).
        step_bytes = traffic.bytes_read / n
        phases = ((n - writing) * max(unit, step_bytes / bw)
                  + writing * max(unit, (step_bytes + traffic.bytes_written / writing) / bw))
        # The last read goes out before the writes of the steps still in flight, which follow
        # it by the latency; the budget may go one beat negative.
        settle = latency + d + 2
        in_flight = min(traffic.bytes_written,
                        max(write_bytes, settle * bw * traffic.bytes_written / total_bytes))
        last_read = phases - (in_flight + read_bytes) / bw
        by_bandwidth = max(phases - write_bytes / bw + 2, last_read + latency + d + 3)
        if by_bandwidth > cycles:
            cycles, bound = by_bandwidth, "bandwidth"
    return Prediction(cycles=cycles, bound=bound, exact=exact and bound == "issue", **common)


def predict_image_pe(pe, memory=MemoryModel()):
    """Predict one frame of an image PE of the user's from what it says of itself.

    The PE's closed-form traffic (``traffic()``) gives ops and bytes. Its cycles come from its
    own ``cycles(latency_cycles)`` when it has one (exact with a memory that only delays), else
    from the stated default: its ports' beats, one read beat and one write beat per cycle, an
    optimistic bound (``bound="port"``). Either way a bandwidth bounds from below
    (``bound="bandwidth"``).

    Raises
    ------
    ValueError
        For a PE without closed-form traffic: nothing to predict from.
    """
    traffic = pe.traffic()
    if traffic is None:
        raise ValueError(f"{type(pe).__name__} has no closed-form traffic (traffic() is None): "
                         f"the cycle model has nothing to predict from")
    reads = -(-traffic.reads // pe.rd_beat.lanes)
    writes = -(-traffic.writes // pe.wr_beat.lanes)
    plain = memory.jitter_cycles == 0 and memory.backpressure == 0
    if hasattr(pe, "cycles"):
        cycles, bound, exact = pe.cycles(memory.latency_cycles), "pe", plain
    else:
        cycles, bound, exact = max(reads, writes) + memory.latency_cycles, "port", False
    ideal = pe.cycles(1) if hasattr(pe, "cycles") else max(reads, writes) + 1
    bw = memory.bandwidth_bytes_per_cycle
    if bw is not None:
        by_bandwidth = (traffic.bytes_read + traffic.bytes_written) / bw
        exact = False
        if by_bandwidth > cycles:
            cycles, bound = by_bandwidth, "bandwidth"
    return Prediction(cycles=cycles, bound=bound, exact=exact, ideal_cycles=ideal,
                      ops=traffic.ops, bytes_read=traffic.bytes_read,
                      bytes_written=traffic.bytes_written)
