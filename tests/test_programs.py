# amaranth: UnusedElaboratable=no
"""GEMM and the pi series on the pipeline, exact against numpy models of the same arithmetic."""

import math

import numpy as np
import pytest
from amaranth.hdl import Fragment

from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import GEMM_VARIANTS, gemm, pi_series, pi_step
from hwgen.sim import HostModel, MemoryModel, run_threads


def to_signed(words, bits):
    words = np.asarray(words, dtype=np.int64) & ((1 << bits) - 1)
    return np.where(words >= 1 << (bits - 1), words - (1 << bits), words)


def gemm_model(a, b, bits, frac):
    """Each product shifted right by frac (floor), the sums wrapped to bits, as signed words."""
    a, b = a.astype(object), b.astype(object)
    c = np.zeros((a.shape[0], b.shape[1]), dtype=object)
    for k in range(a.shape[1]):
        c += np.outer(a[:, k], b[k, :]) >> frac
    return to_signed((c % (1 << bits)).astype(np.int64), bits)


def run_gemm(variant, a, b, *, threads, bits=32, frac=0, lanes=4, memory=MemoryModel(),
             host=HostModel(0)):
    dim = a.shape[0]
    n = dim * dim
    pe = Pipeline(gemm(variant, dim=dim, threads=threads, element_bits=bits, frac_bits=frac,
                       lanes=lanes))
    mask = (1 << bits) - 1
    storage = [int(v) & mask for v in a.ravel()] + [int(v) & mask for v in b.ravel()] + [0] * n
    run = run_threads(pe, storage, params={"a_base": 0, "b_base": n, "c_base": 2 * n},
                      memory=memory, host=host, max_cycles=200 * dim ** 3)
    assert storage[:2 * n] == [int(v) & mask for v in np.concatenate([a.ravel(), b.ravel()])]
    return to_signed(storage[2 * n:], bits).reshape(dim, dim), run


@pytest.mark.parametrize("variant", GEMM_VARIANTS)
@pytest.mark.parametrize("dim, threads, lanes", [(4, 3, 2), (6, 4, 3), (8, 5, 4)])
def test_integer_gemm_is_exact(variant, dim, threads, lanes):
    rng = np.random.default_rng(dim * 10 + threads)
    a = rng.integers(-(1 << 31), 1 << 31, size=(dim, dim))
    b = rng.integers(-(1 << 31), 1 << 31, size=(dim, dim))
    c, run = run_gemm(variant, a, b, threads=threads, lanes=lanes)
    assert (c == gemm_model(a, b, 32, 0)).all()
    assert run.bytes_written >= 4 * dim * dim


@pytest.mark.parametrize("variant", GEMM_VARIANTS)
def test_fixed_point_gemm_is_exact(variant):
    rng = np.random.default_rng(7)
    bits, frac = 16, 8
    a = rng.integers(-(1 << 10), 1 << 10, size=(4, 4))   # -4.0 .. 4.0 in Q8.8: no overflow
    b = rng.integers(-(1 << 10), 1 << 10, size=(4, 4))
    c, _ = run_gemm(variant, a, b, threads=2, bits=bits, frac=frac, lanes=2)
    assert (c == gemm_model(a, b, bits, frac)).all()
    close = np.abs(c / 256 - (a / 256) @ (b / 256))
    assert close.max() < 0.1   # and it is the fixed-point product, not noise


@pytest.mark.parametrize("variant", GEMM_VARIANTS)
def test_gemm_is_exact_with_a_slow_unsteady_memory(variant):
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, size=(4, 4))
    b = rng.integers(-1000, 1000, size=(4, 4))
    memory = MemoryModel(latency_cycles=5, jitter_cycles=3, backpressure=0.25, seed=9)
    c, _ = run_gemm(variant, a, b, threads=4, lanes=2, memory=memory, host=HostModel(13))
    assert (c == gemm_model(a, b, 32, 0)).all()


@pytest.mark.parametrize("variant", GEMM_VARIANTS)
def test_gemm_512_elaborates(variant):
    pe = Pipeline(gemm(variant, dim=512, threads=8))
    Fragment.get(pe, None)
    assert pe.addr_width == 20


def test_gemm_naive_adds_partial_sums_when_threads_outnumber_k():
    # With more threads than dim, some threads have no k of their own and add zero.
    rng = np.random.default_rng(5)
    a = rng.integers(-50, 50, size=(3, 3))
    b = rng.integers(-50, 50, size=(3, 3))
    c, _ = run_gemm("naive", a, b, threads=5)
    assert (c == a @ b).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"variant": "tiled"}, "variant must be one of naive, nocritical, vector, blocked"),
    ({"dim": 0}, "dim must be between 1 and 4096"),
    ({"variant": "vector", "lanes": 3}, "lanes must divide dim 8"),
    ({"variant": "blocked", "threads": 1}, "threads must be between 2 and 64"),
    ({"variant": "blocked", "block_rows": 3}, "block_rows must divide dim 8"),
    ({"frac_bits": 32}, "frac_bits must be between 0 and 31"),
])
def test_gemm_rejects_bad_parameters(kwargs, match):
    args = {"variant": "naive", "dim": 8, "threads": 4, **kwargs}
    with pytest.raises(ValueError, match=match):
        gemm(args.pop("variant"), **args)


def pi_model(steps, step, threads, frac):
    """The series in fixed point, summed per thread and reduced, as the program states it."""
    total = 0
    for t in range(threads):
        partial = 0
        for i in range(t, steps, threads):
            x = (2 * i + 1) * step // 2
            partial += (4 << (2 * frac)) // ((1 << frac) + x * x // (1 << frac))
        total += (partial % (1 << 64)) * step >> frac
    return total % (1 << 32)


def run_pi(steps, threads, frac=20, host=HostModel(0), memory=MemoryModel()):
    storage = [0, 0]
    step = pi_step(steps, frac)
    run = run_threads(Pipeline(pi_series(threads=threads, frac_bits=frac)), storage,
                      params={"steps": steps, "step": step, "result": 1},
                      host=host, memory=memory, max_cycles=100 * (steps + threads) * (frac + 8))
    assert storage[1] == pi_model(steps, step, threads, frac)
    return storage[1], run


@pytest.mark.parametrize("steps, threads", [(1, 1), (5, 3), (3, 8), (40, 8), (97, 6)])
def test_pi_series_is_exact(steps, threads):
    run_pi(steps, threads)


def test_pi_series_with_few_fraction_bits_is_exact():
    run_pi(23, 4, frac=8, memory=MemoryModel(latency_cycles=4, jitter_cycles=2))


def test_pi_series_approaches_pi():
    result, run = run_pi(256, 8)
    assert abs(result / (1 << 20) - math.pi) < 1e-4
    # 23 quotient bits per step at one divide pass per cycle bound the run from below.
    assert run.cycles > 256 * 23


def test_pi_step_rounds_and_validates():
    assert pi_step(3, 4) == 5 and pi_step(6, 4) == 3 and pi_step(1, 20) == 1 << 20
    with pytest.raises(ValueError, match="steps must be an integer between 1"):
        pi_step(0)


@pytest.mark.slow
def test_gemm_16_on_a_slow_memory_is_exact_and_keeps_the_variant_order():
    rng = np.random.default_rng(16)
    a = rng.integers(-(1 << 31), 1 << 31, size=(16, 16))
    b = rng.integers(-(1 << 31), 1 << 31, size=(16, 16))
    cycles = {}
    for variant in GEMM_VARIANTS:
        c, run = run_gemm(variant, a, b, threads=8, memory=MemoryModel(latency_cycles=4),
                          host=HostModel())
        assert (c == gemm_model(a, b, 32, 0)).all()
        cycles[variant] = run.cycles
    assert cycles["naive"] > cycles["nocritical"] > cycles["vector"] > cycles["blocked"]
