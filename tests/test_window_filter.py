"""Window filters against independent numpy references, and their off-chip fetch counts."""

import gc
import itertools
from collections import Counter

import numpy as np
import pytest
import scipy.ndimage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
from hwgen.kernels import WindowFilter, dilation, erosion
from hwgen.sim import MemoryModel, run_window_filter

WIDTH, HEIGHT = 24, 12   # 24 is divisible by every unroll below; 12 rows fit U=8 strips of 5x5
UNROLLS = [1, 2, 3, 4, 8]
SIZES = [(1, 1), (2, 2), (3, 3), (5, 5), (3, 5)]


def _distinct_masks(size):
    """Named masks of a size, without repeats (a 1x1 cross is a 1x1 rect)."""
    seen, names = [], []
    for name, make in ref.MASKS.items():
        mask = make(*size)
        if not any(np.array_equal(mask, other) for other in seen):
            seen.append(mask)
            names.append(name)
    return names


CASES = [
    (op, buffer, unroll, size, mask, bits)
    for op, buffer, unroll, size, bits in itertools.product(
        ["max", "min"], ["none", "smart", "line"], UNROLLS, SIZES, [8, 12])
    for mask in _distinct_masks(size)
]


def _image(rng, height, width, bits):
    return rng.integers(0, 1 << bits, size=(height, width))


@pytest.mark.parametrize("op,buffer,unroll,size,mask,bits", CASES,
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_output_and_fetch_counts_match_reference(op, buffer, unroll, size, mask, bits):
    # A seed of its own per case, the same in every process.
    rng = np.random.default_rng(CASES.index((op, buffer, unroll, size, mask, bits)))
    image = _image(rng, HEIGHT, WIDTH, bits)
    pe = WindowFilter(op, size, mask=mask, pixel_bits=bits, width=WIDTH, height=HEIGHT,
                      unroll=unroll, buffer=buffer)
    run = run_window_filter(pe, image)
    element = ref.MASKS[mask](*size)
    np.testing.assert_array_equal(run.image, ref.window_filter(image, element, op))
    outputs = (HEIGHT - size[0] + 1) * (WIDTH - size[1] + 1)
    assert run.traffic.read_elements == ref.expected_reads(buffer, HEIGHT, WIDTH, element, unroll)
    assert run.traffic.write_elements == outputs
    assert run.figures.bytes_read == run.traffic.read_elements * (2 if bits > 8 else 1)
    assert run.figures.ops == outputs * (int(element.sum()) - 1)


@pytest.mark.parametrize("size", [(3, 3), (5, 5), (3, 5)])
@pytest.mark.parametrize("mask", ["rect", "cross"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_odd_sizes_match_scipy(op, mask, size):
    rng = np.random.default_rng(7)
    image = _image(rng, 14, 16, 8)
    element = ref.MASKS[mask](*size)
    pe = WindowFilter(op, size, mask=element, width=16, height=14, unroll=2, buffer="line")
    run = run_window_filter(pe, image)
    scipy_op = scipy.ndimage.grey_dilation if op == "max" else scipy.ndimage.grey_erosion
    full = scipy_op(image, footprint=element)
    n, m = size
    cropped = full[n // 2: n // 2 + image.shape[0] - n + 1, m // 2: m // 2 + image.shape[1] - m + 1]
    np.testing.assert_array_equal(run.image, cropped)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_dilation_and_erosion_are_max_and_min():
    assert dilation(width=8, height=8).op.name == "max"
    assert erosion(width=8, height=8).op.name == "min"
    assert WindowFilter("dilation", width=8, height=8).op.name == "max"
    assert WindowFilter("erosion", width=8, height=8).op.name == "min"
    gc.collect()


@st.composite
def _designs(draw):
    buffer = draw(st.sampled_from(["none", "smart", "line"]))
    height = draw(st.integers(1, 10))
    width = draw(st.integers(1, 14))
    rows = draw(st.integers(1, min(height, 4)))
    cols = draw(st.integers(1, min(width, 4)))
    mask = np.array(draw(st.lists(st.lists(st.booleans(), min_size=cols, max_size=cols),
                                  min_size=rows, max_size=rows)), dtype=bool)
    if not mask.any():
        mask[draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))] = True
    if buffer == "line":
        unroll = draw(st.sampled_from([u for u in range(1, width + 1) if width % u == 0]))
    elif buffer == "smart":
        unroll = draw(st.integers(1, height - rows + 1))
    else:
        unroll = draw(st.integers(1, width - cols + 1))
    bits = draw(st.integers(1, 16))
    fill = draw(st.sampled_from(["random", "zero", "max"]))
    pipeline = draw(st.booleans())
    return buffer, height, width, mask, unroll, bits, fill, pipeline


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(design=_designs(), op=st.sampled_from(["max", "min"]), seed=st.integers(0, 2**16))
def test_random_shapes_and_images(design, op, seed):
    buffer, height, width, mask, unroll, bits, fill, pipeline = design
    rng = np.random.default_rng(seed)
    image = {"random": _image(rng, height, width, bits),
             "zero": np.zeros((height, width), dtype=np.int64),
             "max": np.full((height, width), (1 << bits) - 1)}[fill]
    pe = WindowFilter(op, mask.shape, mask=mask.astype(int), pixel_bits=bits, width=width,
                      height=height, unroll=unroll, buffer=buffer, pipeline=pipeline)
    run = run_window_filter(pe, image)
    np.testing.assert_array_equal(run.image, ref.window_filter(image, mask, op))
    assert run.traffic.read_elements == ref.expected_reads(buffer, height, width, mask, unroll)


def _expected_read_addresses(buffer, height, width, mask, unroll):
    """Every pixel address each strategy must read, with multiplicity."""
    n, m = mask.shape
    out_h, out_w = height - n + 1, width - m + 1
    reads = Counter()
    if buffer == "none":
        for y, x, (i, j) in itertools.product(range(out_h), range(out_w), zip(*mask.nonzero())):
            reads[(y + i) * width + x + j] += 1
    elif buffer == "line":
        reads.update(range(height * width))
    else:
        for top in range(0, out_h, unroll):
            rows = n + min(unroll, out_h - top) - 1
            reads.update(r * width + c for r in range(top, top + rows) for c in range(width))
    return reads


@pytest.mark.parametrize("pipeline", [True, False])
@pytest.mark.parametrize("buffer,unroll,size,mask", [
    ("none", 3, (3, 3), "cross"), ("none", 1, (2, 3), "rect"),
    ("smart", 4, (3, 3), "rect"), ("smart", 3, (5, 5), "ellipse"),
    ("line", 4, (3, 3), "rect"), ("line", 2, (2, 5), "cross"),
])
def test_random_latency_and_backpressure_lose_nothing(buffer, unroll, size, mask, pipeline):
    rng = np.random.default_rng(11)
    height, width = 11, 16
    image = _image(rng, height, width, 8)
    memory = MemoryModel(latency_cycles=2, jitter_cycles=6, backpressure=0.35, seed=3)
    pe = WindowFilter("max", size, mask=mask, width=width, height=height, unroll=unroll,
                      buffer=buffer, pipeline=pipeline)
    run = run_window_filter(pe, image, memory=memory, record_addresses=True)
    element = ref.MASKS[mask](*size)
    np.testing.assert_array_equal(run.image, ref.window_filter(image, element, "max"))
    assert Counter(run.traffic.read_addresses) == _expected_read_addresses(
        buffer, height, width, element, unroll)
    out_h, out_w = height - size[0] + 1, width - size[1] + 1
    dst = height * width
    assert Counter(run.traffic.write_addresses) == Counter(range(dst, dst + out_h * out_w))


def test_fractional_bandwidth_throttles_without_loss():
    rng = np.random.default_rng(5)
    image = _image(rng, 10, 16, 8)
    pe = WindowFilter("min", (3, 3), width=16, height=10, unroll=4, buffer="line")
    fast = run_window_filter(pe, image)
    slow = run_window_filter(pe, image, memory=MemoryModel(bandwidth_bytes_per_cycle=2.5))
    np.testing.assert_array_equal(slow.image, fast.image)
    moved = slow.figures.bytes_read + slow.figures.bytes_written
    # The memory cannot move more than 2.5 bytes a cycle (plus what its bucket starts with).
    assert moved <= 2.5 * slow.figures.cycles + 2.5 + 4
    assert slow.figures.cycles > fast.figures.cycles


# -- timing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("buffer,unroll", [("smart", 1), ("smart", 4), ("line", 1), ("line", 8)])
def test_pipelined_filters_take_one_step_per_cycle(buffer, unroll):
    """Doubling the frame height adds exactly one cycle per added step."""
    cycles = {}
    for height in (10, 18):
        pe = WindowFilter("max", (3, 3), width=32, height=height, unroll=unroll, buffer=buffer)
        image = np.random.default_rng(height).integers(0, 256, (height, 32))
        steps = (32 * height // unroll if buffer == "line"
                 else -(-(height - 2) // unroll) * 32)
        cycles[height] = (run_window_filter(pe, image).figures.cycles, steps)
    (c1, s1), (c2, s2) = cycles[10], cycles[18]
    assert c2 - c1 == s2 - s1
    assert c1 - s1 <= pe.datapath_latency + 8   # fill and drain only


@pytest.mark.parametrize("buffer,unroll,size", [
    ("none", 1, (3, 3)), ("none", 2, (2, 3)), ("smart", 1, (3, 3)), ("smart", 3, (1, 2)),
    ("line", 1, (3, 3)), ("line", 2, (2, 3)),
])
def test_unpipelined_initiation_interval(buffer, unroll, size):
    """Without pipelining a step waits for the previous result: the documented interval.

    A step that writes a result takes beats + 3 + datapath latency cycles, a step that writes
    nothing (window not complete yet) beats + 2 + latency.
    """
    height, width = 8, 12
    n, m = size
    pe = WindowFilter("max", size, width=width, height=height, unroll=unroll, buffer=buffer,
                      pipeline=False)
    out_h, out_w = height - n + 1, width - m + 1
    if buffer == "none":
        beats, writing, silent = n * m, out_h * -(-out_w // unroll), 0
    elif buffer == "smart":
        strips = -(-out_h // unroll)
        beats, writing, silent = 1, strips * out_w, strips * (m - 1)
    else:
        per_row = width // unroll
        first = max(0, -(-(m - unroll) // unroll))
        beats, writing = 1, out_h * (per_row - first)
        silent = height * per_row - writing
    latency = pe.datapath_latency
    expected = writing * (beats + 3 + latency) + silent * (beats + 2 + latency)
    image = np.random.default_rng(1).integers(0, 256, (height, width))
    assert run_window_filter(pe, image).figures.cycles == expected


@pytest.mark.parametrize("pipeline", [True, False])
@pytest.mark.parametrize("buffer", ["none", "smart", "line"])
def test_ideal_cycles_predicts_the_simulation(buffer, pipeline):
    pe = WindowFilter("min", (3, 2), mask="cross", width=12, height=9, unroll=3, buffer=buffer,
                      pipeline=pipeline)
    image = np.random.default_rng(2).integers(0, 256, (9, 12))
    assert run_window_filter(pe, image).figures.cycles == pe.ideal_cycles()


@pytest.mark.slow
@pytest.mark.parametrize("unroll", [1, 4, 8])
def test_line_buffer_reaches_hw_over_u_on_512x512(unroll):
    pe = WindowFilter("max", (3, 3), width=512, height=512, unroll=unroll, buffer="line")
    image = np.random.default_rng(unroll).integers(0, 256, (512, 512))
    run = run_window_filter(pe, image)
    ideal = 512 * 512 / unroll
    assert ideal <= run.figures.cycles <= 1.01 * ideal


# -- parameters ---------------------------------------------------------------------------------

# A component whose constructor raised is never elaborated; Amaranth warns about it when it is
# collected, which the collection inside these tests makes happen here.
_REJECTED_OBJECTS_ARE_UNUSED = pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")


@pytest.mark.parametrize("kwargs,message", [
    (dict(unroll=0), "unroll must be a positive integer"),
    (dict(unroll=5, buffer="line"), "unroll must divide the image width"),
    (dict(unroll=20, buffer="smart", height=16), "unroll must be at most the output height"),
    (dict(unroll=20, buffer="none", width=16), "unroll must be at most the output width"),
    (dict(size=(17, 3), height=16), "must fit in the image"),
    (dict(mask=np.ones((2, 2))), "mask shape 2x2 must equal the window size 3x3"),
    (dict(mask=np.zeros((3, 3))), "at least one entry"),
    (dict(mask="star"), "mask must be one of rect, cross, ellipse"),
    (dict(buffer="fifo"), "buffer must be one of none, smart, line"),
    (dict(pixel_bits=17), "pixel_bits must be between 1 and 16"),
    (dict(tree_stages=9), "tree_stages must be between 0 and 4"),
])
@_REJECTED_OBJECTS_ARE_UNUSED
def test_bad_parameters_name_the_parameter(kwargs, message):
    params = dict(width=16, height=16)
    params.update(kwargs)
    with pytest.raises(ValueError, match=message):
        WindowFilter("max", params.pop("size", (3, 3)), **params)
    gc.collect()


@_REJECTED_OBJECTS_ARE_UNUSED
def test_bad_op_names_the_choices():
    with pytest.raises(ValueError, match="op must be one of max, min, dilation, erosion"):
        WindowFilter("median")
    gc.collect()
