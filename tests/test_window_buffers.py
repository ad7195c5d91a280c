"""Each buffer strategy alone: drive its pixel stream with the beats its fetch pattern reads, in
the documented order, and check every step's results against windows cut out with numpy."""

import gc

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from hwgen.kernels import LineBuffer, SmartBuffer, Unbuffered
from hwgen.kernels.mask import structuring_element
from hwgen.sim.stimulus import run_cycles

MASKS = {
    "rect": lambda n, m: np.ones((n, m), dtype=bool),
    "cross": lambda n, m: structuring_element("cross", n, m),
    "random": lambda n, m: _random_mask(n, m),
}


def _random_mask(n, m):
    """A fixed mask of ``n x m`` with no mirror symmetry (for the sizes used here)."""
    mask = np.random.default_rng(200 + n * 10 + m).integers(0, 2, (n, m)).astype(bool)
    mask[n // 2, m // 2] = True
    assert (mask != mask[::-1]).any() and (mask != mask[:, ::-1]).any()
    return mask


def reference(image, mask, op):
    """``ref[y, x]``: ``op`` over the active entries of the window whose top left is ``(y, x)``."""
    windows = sliding_window_view(image, mask.shape)
    return getattr(np, op)(windows[..., mask], axis=-1)


def unbuffered_steps(image, mask, unroll, rng):
    """Beats and expected events of the ``none`` strategy: per output row, per group of ``U``
    outputs, one beat per active entry (row-major) of the ``U`` pixels the entry covers."""
    height, width = image.shape
    out_h, out_w = height - mask.shape[0] + 1, width - mask.shape[1] + 1
    entries = list(zip(*mask.nonzero()))
    steps = []
    for y in range(out_h):
        for x0 in range(0, out_w, unroll):
            lanes = min(unroll, out_w - x0)
            beats = [[image[y + i, x0 + j + u] if u < lanes else rng.integers(256)
                      for u in range(unroll)] for i, j in entries]
            steps.append((beats, [(y, x0 + u) for u in range(lanes)]))
    return steps


def smart_steps(image, mask, unroll, rng):
    """Strips of ``U`` output rows; per strip and image column one beat of ``N + U - 1`` pixels
    down the column. A step yields outputs from the strip's ``M``-th column on."""
    height, width = image.shape
    (n, m), out_h = mask.shape, height - mask.shape[0] + 1
    steps = []
    for top in range(0, out_h, unroll):
        rows = min(unroll, out_h - top)
        for x in range(width):
            beat = [image[top + k, x] if k < n + rows - 1 else rng.integers(256)
                    for k in range(n + unroll - 1)]
            outputs = [(top + u, x - m + 1) for u in range(rows)] if x >= m - 1 else None
            steps.append(([beat], outputs))
    return steps


def line_steps(image, mask, unroll, rng):
    """Raster order, ``U`` pixels a beat; lane ``u`` of a beat completes the window whose
    bottom right pixel it is, once the window fits."""
    height, width = image.shape
    n, m = mask.shape
    steps = []
    for y in range(height):
        for x0 in range(0, width, unroll):
            beat = [image[y, x0 + u] for u in range(unroll)]
            outputs = [(y - n + 1, x0 + u - m + 1) for u in range(unroll) if x0 + u >= m - 1]
            steps.append(([beat], outputs if y >= n - 1 and outputs else None))
    return steps


STRATEGIES = {
    Unbuffered: unbuffered_steps,
    SmartBuffer: smart_steps,
    LineBuffer: line_steps,
}


def pack(values, bits):
    return sum(int(v) << (k * bits) for k, v in enumerate(values))


def unpack(word, bits, count):
    return [(word >> (k * bits)) & ((1 << bits) - 1) for k in range(count)]


def simulate(dut, steps, rng, *, before=(), gaps=0.3):
    """Feed the beats of ``steps`` after a restart, with random idle cycles between beats, and
    record per cycle ``(results valid, results payload, skipped)``.

    ``before`` are steps fed after an earlier restart; their results are let out before the
    restart that begins ``steps``. Returns the cycle of that restart, the cycle of each step's
    last beat and the record.
    """
    bits = dut.pixel_bits
    beat_valid, beat_data = dut.pixels.valid, dut.pixels.payload.as_value()
    inputs, restart, last_beats = [], None, []
    for frame in (before, steps):
        inputs += [[(beat_valid, 0)]] * (dut.latency + 1)
        restart = len(inputs)
        # A frame's first beat comes two cycles after its restart at the earliest.
        inputs += [[(dut.restart, 1)], [(dut.restart, 0)]]
        last_beats = []
        for beats, _ in frame:
            for beat in beats:
                while rng.random() < gaps:
                    inputs.append([(beat_valid, 0)])
                inputs.append([(beat_valid, 1), (beat_data, pack(beat, bits))])
            last_beats.append(len(inputs) - 1)
    inputs += [[(beat_valid, 0)]] * (dut.latency + 2)
    recorded = run_cycles(dut, inputs, [dut.results.valid, dut.results.payload.as_value(),
                                        dut.skipped])
    return restart, last_beats, recorded


def check(dut, image, mask, op, seed, *, latency, before=()):
    """Simulate a frame of ``image`` (after the steps ``before``, if any) and check every step's
    results, or its skip, ``latency`` cycles after its last beat."""
    rng = np.random.default_rng(seed)
    steps = STRATEGIES[type(dut)](image, mask, dut.unroll, rng)
    ref = reference(image, mask, op)
    restart, last_beats, recorded = simulate(dut, steps, rng, before=before)
    events = {cycle: (valid, payload, skipped)
              for cycle, (valid, payload, skipped) in enumerate(recorded)
              if cycle > restart and (valid or skipped)}
    expected = {last + latency: outputs for (_, outputs), last in zip(steps, last_beats)}
    assert sorted(events) == sorted(expected), "results or skips in the wrong cycles"
    for cycle, outputs in expected.items():
        valid, payload, skipped = events[cycle]
        if outputs is None:
            assert (valid, skipped) == (0, 1), f"cycle {cycle}: the step should be skipped"
            continue
        assert (valid, skipped) == (1, 0), f"cycle {cycle}: the step should give results"
        lanes = unpack(payload, dut.pixel_bits, dut.unroll)
        if type(dut) is LineBuffer:     # lane u is the window ending at the beat's lane u
            lanes = lanes[dut.unroll - len(outputs):]
        got = lanes[:len(outputs)]
        assert got == [ref[y, x] for y, x in outputs], f"cycle {cycle}"
    # The closed-form counts describe the very beats and steps this frame took.
    assert dut.steps == len(steps)
    assert dut.writing_steps == sum(outputs is not None for _, outputs in steps)
    assert dut.beats_per_step == len(steps[0][0])


CASES = [
    # strategy, (N, M), mask, (W, H), U, tree_stages, op
    (Unbuffered, (3, 3), "rect", (9, 6), 1, 0, "max"),
    (Unbuffered, (3, 3), "cross", (9, 6), 3, 0, "min"),
    (Unbuffered, (2, 4), "random", (10, 5), 4, 0, "max"),
    (SmartBuffer, (3, 3), "rect", (7, 9), 1, 0, "max"),
    (SmartBuffer, (3, 3), "rect", (7, 9), 4, 4, "max"),
    (SmartBuffer, (5, 3), "cross", (6, 11), 3, 2, "min"),
    (SmartBuffer, (3, 4), "random", (8, 7), 2, 1, "max"),
    (SmartBuffer, (1, 3), "rect", (6, 4), 2, 1, "max"),
    (LineBuffer, (3, 3), "rect", (8, 6), 1, 0, "max"),
    (LineBuffer, (3, 3), "rect", (8, 6), 4, 4, "min"),
    (LineBuffer, (4, 5), "random", (10, 7), 2, 3, "max"),
    (LineBuffer, (3, 1), "rect", (6, 5), 3, 1, "max"),
    (LineBuffer, (2, 3), "cross", (9, 4), 9, 2, "max"),
]


@pytest.mark.parametrize("strategy,size,mask,frame,unroll,tree_stages,op", CASES,
                         ids=[f"{c[0].name}-{c[1][0]}x{c[1][1]}-{c[2]}-u{c[4]}-t{c[5]}"
                              for c in CASES])
def test_buffer_gives_the_reduction_of_every_window_numpy_cuts(strategy, size, mask, frame,
                                                                unroll, tree_stages, op):
    mask = MASKS[mask](*size)
    width, height = frame
    seed = sum(frame) * 100 + unroll * 10 + tree_stages
    image = np.random.default_rng(seed).integers(0, 256, (height, width))
    dut = strategy(op, mask, width=width, height=height, unroll=unroll, tree_stages=tree_stages)
    # One cycle per register in the trees (a chain of accumulators without a buffer).
    check(dut, image, mask, op, seed, latency=1 if strategy is Unbuffered else tree_stages)


@pytest.mark.parametrize("strategy", [Unbuffered, SmartBuffer, LineBuffer])
def test_restart_begins_a_new_frame_wherever_the_last_one_stopped(strategy):
    rng = np.random.default_rng(7)
    mask = np.ones((3, 3), dtype=bool)
    first, second = (rng.integers(0, 256, (6, 8)) for _ in range(2))
    dut = strategy("max", mask, width=8, height=6, unroll=2, tree_stages=0)
    # Half a frame, then the second frame from its start: what the second gives is all it sees.
    steps = STRATEGIES[strategy](first, mask, 2, rng)
    check(dut, second, mask, "max", 8, latency=1 if strategy is Unbuffered else 0,
          before=steps[:len(steps) // 2 + 1])


def test_buffers_have_the_documented_ports():
    mask = np.ones((3, 3), dtype=bool)
    for strategy, in_lanes in ((Unbuffered, 4), (SmartBuffer, 6), (LineBuffer, 4)):
        dut = strategy("max", mask, width=8, height=8, unroll=4, pixel_bits=5)
        members = dut.signature.members
        assert set(members) == {"restart", "pixels", "results", "skipped"}
        assert len(dut.pixels.payload.as_value()) == in_lanes * 5
        assert len(dut.results.payload.as_value()) == 4 * 5
        assert members["pixels"].signature.always_ready
        assert members["results"].signature.always_ready


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("strategy,kwargs,error,message", [
    (Unbuffered, dict(unroll=7), ValueError, "unroll must be at most the output width 6"),
    (SmartBuffer, dict(unroll=7), ValueError, "unroll must be at most the output height 6"),
    (LineBuffer, dict(unroll=3), ValueError, "unroll must divide the image width 8"),
    (Unbuffered, dict(tree_stages=1), ValueError, "tree_stages must be between 0 and 0"),
    (SmartBuffer, dict(tree_stages=5), ValueError, "tree_stages must be between 0 and 4"),
    (LineBuffer, dict(tree_stages="lean"), TypeError, "tree_stages must be an integer"),
    (LineBuffer, dict(mask=np.ones(3)), ValueError, "mask must be a 2-D array"),
    (SmartBuffer, dict(mask=np.zeros((3, 3))), ValueError, "at least one entry"),
    (SmartBuffer, dict(height=2), ValueError, "size 3x3 must fit in the image 2x8"),
    (Unbuffered, dict(pixel_bits=17), ValueError, "pixel_bits must be between 1 and 16"),
    (LineBuffer, dict(op="median"), ValueError, "op must be one of"),
])
def test_bad_parameters_name_the_parameter(strategy, kwargs, error, message):
    params = dict(op="max", mask=np.ones((3, 3)), width=8, height=8)
    params.update(kwargs)
    with pytest.raises(error, match=message):
        strategy(params.pop("op"), params.pop("mask"), **params)
    gc.collect()
