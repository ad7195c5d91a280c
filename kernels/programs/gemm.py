"""Matrix multiplication ``C = A @ B`` on ``dim x dim`` matrices, in four variants.

Elements are signed ``element_bits``-bit integers, or fixed-point numbers with ``frac_bits``
fraction bits. Every product is ``(a * b) >> frac_bits`` (an arithmetic shift of the full
product), and every sum wraps modulo ``2**element_bits``: the result does not depend on the
order of the additions, so every variant gives the same bits. The matrices are row-major at
the run-time parameters ``a_base``, ``b_base`` and ``c_base`` (element addresses).

``naive``
    Thread ``t`` computes, for every output ``C[i][j]``, the partial sum over
    ``k = t, t + T, ...`` and adds it into ``C[i][j]`` in memory inside a critical section
    (``C`` must start at zero).
``nocritical``
    Thread ``t`` owns rows ``i = t, t + T, ...`` of ``C`` and computes each element whole; no
    lock.
``vector``
    As ``nocritical``, but each request reads ``lanes`` consecutive elements of ``A``'s row
    (``lanes`` must divide ``dim``).
``blocked``
    Thread 0 is a preloader: it copies ``A`` block by block (``block_rows`` rows at a time, with
    ``lanes``-wide requests) into a double-buffered local memory. The other threads compute each
    block's outputs ``lanes`` at a time (segments of a row), reading ``A`` from local memory and
    ``lanes`` consecutive elements of a row of ``B`` per request. A barrier per block lets the
    preloader fill one buffer while the others compute from the other one.
"""

from functools import cached_property

import numpy as np
from amaranth.hdl import Mux, signed, unsigned
from amaranth.lib import data

from ..pipeline import (Acquire, Barrier, Compute, If, Load, LocalMemory, LocalRead, LocalWrite,
                        Lock, Loop, Program, Release, Store, Wait, While)
from ..pipeline.job import Job, Option, ProgramShape, add_counts, share

__all__ = ["GEMM_VARIANTS", "GemmJob", "gemm", "default_block_rows", "signed_values"]

GEMM_VARIANTS = ("naive", "nocritical", "vector", "blocked")


def _int(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {allowed}, not {value}")
    return value


def default_block_rows(dim, threads, lanes):
    """The fewest rows per block that give every computing thread a segment of each block."""
    segments_per_row = dim // lanes
    for rows in range(1, dim + 1):
        if dim % rows == 0 and rows * segments_per_row >= threads - 1:
            return rows
    return dim


def gemm(variant, *, dim, threads, element_bits=32, frac_bits=0, lanes=4, block_rows=None,
         addr_width=None):
    """The GEMM program of one variant.

    Parameters
    ----------
    variant : str
        One of :data:`GEMM_VARIANTS`.
    dim : int
        Matrix size, 1 to 4096.
    threads : int
        Hardware threads, 1 to 64 (``blocked``: at least 2, thread 0 preloads).
    element_bits : int
        2 to 64.
    frac_bits : int
        Fixed-point fraction bits, 0 (integers) to ``element_bits - 1``.
    lanes : int
        Elements per vector request (``vector``, ``blocked``); must divide ``dim``.
    block_rows : int or None
        Rows of ``A`` per block (``blocked``); must divide ``dim``. Default:
        :func:`default_block_rows`.
    addr_width : int or None
        Width of element addresses. Default: enough for three matrices.

    Returns
    -------
    Program
    """
    if variant not in GEMM_VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(GEMM_VARIANTS)}, not {variant!r}")
    _int("dim", dim, 1, 4096)
    _int("threads", threads, 2 if variant == "blocked" else 1, 64)
    _int("element_bits", element_bits, 2, 64)
    _int("frac_bits", frac_bits, 0, element_bits - 1)
    if addr_width is None:
        addr_width = max(1, (3 * dim * dim - 1).bit_length())
    _int("addr_width", addr_width, 1, 64)
    if variant in ("vector", "blocked"):
        _int("lanes", lanes, 1, dim)
        if dim % lanes:
            raise ValueError(f"lanes must divide dim {dim}, not {lanes}")
    if variant == "blocked":
        if block_rows is None:
            block_rows = default_block_rows(dim, threads, lanes)
        _int("block_rows", block_rows, 1, dim)
        if dim % block_rows:
            raise ValueError(f"block_rows must divide dim {dim}, not {block_rows}")

    shape = _Shapes(dim, threads, element_bits, frac_bits, lanes)
    params = {name: unsigned(addr_width) for name in ("a_base", "b_base", "c_base")}
    if variant == "naive":
        context, body = _naive(shape)
    elif variant == "nocritical":
        context, body = _rows(shape, vector=False)
    elif variant == "vector":
        context, body = _rows(shape, vector=True)
    else:
        context, body = _blocked(shape, block_rows)
    return Program(f"gemm_{variant}", threads=threads, context=context, body=body, params=params,
                   element_bits=element_bits, addr_width=addr_width)


class _Shapes:
    """Sizes and arithmetic shared by the variants."""

    def __init__(self, dim, threads, element_bits, frac_bits, lanes):
        self.dim = dim
        self.threads = threads
        self.lanes = lanes
        self.element = signed(element_bits)
        self.frac_bits = frac_bits
        # Counters run past dim by at most a thread count or a vector.
        self.index = unsigned((dim + max(threads, lanes)).bit_length())

    def product(self, a, b):
        return (a * b) >> self.frac_bits

    def vector(self):
        return data.ArrayLayout(self.element, self.lanes)


def _naive(s):
    dim, threads = s.dim, s.threads
    context = {"i": s.index, "j": s.index, "k": s.index,
               "a": s.element, "b": s.element, "acc": s.element, "sum": s.element}
    lock = Lock("c")

    def c_addr(c, p):
        return p.c_base + c.i * dim + c.j

    body = [Loop([
        Compute(lambda c, p: {"k": c.tid, "acc": 0}, name="start partial sum"),
        While(lambda c, p: c.k < dim, [
            Load(lambda c, p: p.a_base + c.i * dim + c.k, into="a", name="load a"),
            Load(lambda c, p: p.b_base + c.k * dim + c.j, into="b", name="load b"),
            Compute(lambda c, p: {"acc": c.acc + s.product(c.a, c.b), "k": c.k + threads},
                    ops=2, name="mac"),
        ]),
        Acquire(lock),
        Load(c_addr, into="sum", name="load c"),
        Compute(lambda c, p: {"sum": c.sum + c.acc}, ops=1, name="add partial sum"),
        Store(c_addr, lambda c, p: c.sum, name="store c"),
        Release(lock),
        Compute(lambda c, p: {"j": Mux(c.j == dim - 1, 0, c.j + 1),
                              "i": Mux(c.j == dim - 1, c.i + 1, c.i)}, name="next output"),
    ], repeat=lambda c, p: c.i != dim)]
    return context, body


def _rows(s, *, vector):
    dim, threads, lanes = s.dim, s.threads, s.lanes
    context = {"i": s.index, "j": s.index, "k": s.index, "acc": s.element}
    if vector:
        context.update(a=s.vector(), b=s.vector())
        step = [
            Load(lambda c, p: p.a_base + c.i * dim + c.k, into="a", lanes=lanes, name="load a"),
            *[Load(lambda c, p, v=v: p.b_base + (c.k + v) * dim + c.j, into=("b", v),
                   name=f"load b{v}") for v in range(lanes)],
            Compute(lambda c, p: {"acc": c.acc + sum(s.product(c.a[v], c.b[v])
                                                     for v in range(lanes)),
                                  "k": c.k + lanes}, ops=2 * lanes, name="mac"),
        ]
    else:
        context.update(a=s.element, b=s.element)
        step = [
            Load(lambda c, p: p.a_base + c.i * dim + c.k, into="a", name="load a"),
            Load(lambda c, p: p.b_base + c.k * dim + c.j, into="b", name="load b"),
            Compute(lambda c, p: {"acc": c.acc + s.product(c.a, c.b), "k": c.k + 1},
                    ops=2, name="mac"),
        ]
    body = [
        Compute(lambda c, p: {"i": c.tid}, name="first row"),
        While(lambda c, p: c.i < dim, [
            Loop([
                Loop(step, repeat=lambda c, p: c.k != dim),
                Store(lambda c, p: p.c_base + c.i * dim + c.j, lambda c, p: c.acc, name="store c"),
                Compute(lambda c, p: {"j": c.j + 1, "k": 0, "acc": 0}, name="next column"),
            ], repeat=lambda c, p: c.j != dim),
            Compute(lambda c, p: {"i": c.i + threads, "j": 0}, name="next row"),
        ]),
    ]
    return context, body


def _blocked(s, block_rows):
    dim, threads, lanes = s.dim, s.threads, s.lanes
    per_row = dim // lanes               # vectors per row: words of A, segments of C
    per_block = block_rows * per_row     # words of A and segments of C per block
    blocks = dim // block_rows
    workers = threads - 1
    count = unsigned((max(per_block, blocks, per_row + workers, block_rows + workers) + 1)
                     .bit_length())
    # w: the preloader's word in the block, a computing thread's word in the row of A.
    context = {"b": count, "w": count, "r": count, "q": count, "kl": count, "k": s.index,
               "a_word": s.vector(), "b_row": s.vector(), "acc": s.vector()}
    a_block = LocalMemory("a_block", shape=s.vector(), depth=2 * per_block)
    loaded = Barrier("block_loaded")

    def buffer(c):
        return c.b[0] * per_block

    preload = [Loop([
        Loop([
            Load(lambda c, p: p.a_base + c.b * (block_rows * dim) + c.w * lanes, into="a_word",
                 lanes=lanes, name="load a"),
            LocalWrite(a_block, lambda c, p: buffer(c) + c.w, lambda c, p: c.a_word,
                       name="write a_block"),
            Compute(lambda c, p: {"w": c.w + 1}, name="next word"),
        ], repeat=lambda c, p: c.w != per_block),
        Wait(loaded, name="block loaded"),
        Compute(lambda c, p: {"b": c.b + 1, "w": 0}, name="next block"),
    ], repeat=lambda c, p: c.b != blocks)]

    # Segment (r, q) of a block is C[b * block_rows + r][q * lanes : (q + 1) * lanes]; a thread
    # steps through its segments workers at a time, carrying q over into r.
    carry = While(lambda c, p: c.q >= per_row, [
        Compute(lambda c, p: {"q": c.q - per_row, "r": c.r + 1}, name="carry segment"),
    ])

    def mac(c, p):
        last_lane = c.kl == lanes - 1
        return {"acc": [c.acc[l] + s.product(c.a_word[c.kl], c.b_row[l]) for l in range(lanes)],
                "k": c.k + 1, "kl": Mux(last_lane, 0, c.kl + 1), "w": c.w + last_lane}

    compute = [Loop([
        Wait(loaded, name="block ready"),
        Compute(lambda c, p: {"r": 0, "q": c.tid - 1}, name="first segment"),
        carry,
        While(lambda c, p: c.r < block_rows, [
            Compute(lambda c, p: {"k": 0, "kl": 0, "w": 0, "acc": [0] * lanes},
                    name="start segment"),
            Loop([
                LocalRead(a_block, lambda c, p: buffer(c) + c.r * per_row + c.w, into="a_word",
                          name="read a_block"),
                Loop([
                    Load(lambda c, p: p.b_base + c.k * dim + c.q * lanes, into="b_row",
                         lanes=lanes, name="load b"),
                    Compute(mac, ops=2 * lanes, name="mac"),
                ], repeat=lambda c, p: c.kl != 0),
            ], repeat=lambda c, p: c.k != dim),
            Store(lambda c, p: p.c_base + (c.b * block_rows + c.r) * dim + c.q * lanes,
                  lambda c, p: c.acc, lanes=lanes, name="store c"),
            Compute(lambda c, p: {"q": c.q + workers}, name="next segment"),
            carry,
        ]),
        Compute(lambda c, p: {"b": c.b + 1}, name="next block"),
    ], repeat=lambda c, p: c.b != blocks)]
    return context, [If(lambda c, p: c.tid == 0, preload, compute)]


def signed_values(values, bits):
    """Raw ``bits``-bit words as signed integers (an object array)."""
    values = np.asarray(values, dtype=object) & ((1 << bits) - 1)
    return np.where(values >= 1 << (bits - 1), values - (1 << bits), values)


def _element_bytes(bits):
    return -(-bits // 8)


class GemmJob(Job):
    """``C = A @ B`` on seeded random ``dim x dim`` matrices, row-major at 0, dim², 2·dim².

    Parameters
    ----------
    variant : str
    dim, threads, element_bits, frac_bits, lanes : int
        See :func:`gemm`.
    seed : int
        Seed of the random matrices (every element value of the width is possible).
    """
    name = "gemm"
    description = "C = A @ B on random square matrices, integer or fixed point"
    options = (
        Option("variant", str, "naive", "how the threads share the work", choices=GEMM_VARIANTS),
        Option("dim", int, 8, "matrix size", low=1, high=4096),
        Option("threads", int, 8, "hardware threads (blocked: from 2)", low=1, high=64),
        Option("lanes", int, 4, "vector, blocked: elements per vector request, divides dim",
               low=1, high=4096, variants=("vector", "blocked")),
        Option("element_bits", int, 32, "bits per matrix element", low=2, high=64),
        Option("frac_bits", int, 0, "fixed-point fraction bits, 0 = integers, below "
                                    "element_bits", low=0, high=63),
        Option("seed", int, 0, "seed of the random matrices", low=0, hardware=False),
    )

    def __init__(self, variant="naive", **options):
        super().__init__(variant=variant, **options)

    @classmethod
    def build_program(cls, *, variant, **hardware):
        return gemm(variant, **hardware)

    @cached_property
    def _matrices(self):
        # Drawn when first needed: the cycle model and the estimate need the program only, and
        # the matrices of a large dim take seconds to draw.
        # 64 random bits per element, cut to the element width.
        halves = np.random.default_rng(self.seed).integers(
            0, 1 << 32, size=(2, self.dim, self.dim, 2), dtype=np.uint64).astype(object)
        return signed_values(halves[..., 0] << 32 | halves[..., 1], self.element_bits)

    @property
    def a(self):
        """The left matrix, signed integers."""
        return self._matrices[0]

    @property
    def b(self):
        """The right matrix, signed integers."""
        return self._matrices[1]

    def memory(self):
        mask = (1 << self.element_bits) - 1
        n = self.dim * self.dim
        storage = [int(v) & mask for v in self.a.ravel()] + [int(v) & mask for v in self.b.ravel()]
        storage += [0] * n
        return storage, {"a_base": 0, "b_base": n, "c_base": 2 * n}

    def expected(self):
        """The numpy model: each product shifted by frac_bits, sums wrapped to the element width."""
        if self.element_bits > 32:
            products = (self.a[:, :, None] * self.b[None, :, :]) >> self.frac_bits
            return signed_values(products.sum(axis=1), self.element_bits)
        # Products of two 32-bit numbers fit in 63 bits, and sums that wrap at 64 bits still hold
        # the low element_bits exactly: int64 arithmetic, a row at a time, keeps large matrices
        # fast and small.
        a, b = self.a.astype(np.int64), self.b.astype(np.int64)
        rows = [((a[i, :, None] * b) >> self.frac_bits).sum(axis=0) for i in range(self.dim)]
        return signed_values(np.array(rows).astype(object), self.element_bits)

    def result(self, storage):
        n = self.dim * self.dim
        return signed_values(np.array(storage[2 * n:3 * n], dtype=object),
                             self.element_bits).reshape(self.dim, self.dim)

    def cycle_budget(self, memory, host):
        """Far more cycles than any job needs; more means the pipeline is stuck."""
        accesses = 2 * self.dim ** 3 + self.dim ** 2     # the naive variant's, the most
        element_bytes = _element_bytes(self.element_bits)
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
        """Every parameter (dim is built into the loops); lanes only where requests carry
        several."""
        return self.parameters()

    def describe(self):
        kind = f"Q{self.element_bits - self.frac_bits}.{self.frac_bits}" if self.frac_bits else "int"
        return (f"gemm {self.variant}: DIM {self.dim}, {self.threads} threads, "
                f"{kind}{self.element_bits if not self.frac_bits else ''}")

    def label(self):
        lanes = f" L{self.lanes}" if self.variant in ("vector", "blocked") else ""
        return f"{self.variant}{lanes}, {self.threads} thread" + "s" * (self.threads > 1)

    @classmethod
    def explore_values(cls, name, given):
        """Lanes: the powers of two up to 16 that divide dim."""
        if name != "lanes":
            return None
        dims = given.get("dim", [cls.option("dim").default])
        return [1 << i for i in range(5) if all(d % (1 << i) == 0 for d in dims)]

    def shape(self):
        """Trip counts of the variant's loops, per thread."""
        return {"naive": self._naive_shape, "nocritical": lambda: self._rows_shape(False),
                "vector": lambda: self._rows_shape(True),
                "blocked": self._blocked_shape}[self.variant]()

    def _naive_shape(self):
        # for each output: for k in this thread's share: 2 loads, a MAC; then a critical section.
        d, threads, eb = self.dim, self.threads, _element_bytes(self.element_bits)
        section = {"load": 1, "compute": 1, "store": 1, "release": 1}
        paths = []
        for t in range(threads):
            k = share(d, t, threads)
            per_output = add_counts((1, {"join": 1, "compute": 3, "acquire": 1}), (1, section),
                                    (k, {"load": 2, "compute": 1}))
            paths.append(add_counts((d * d, per_output)))
        reads = 2 * d ** 3 + threads * d * d
        return ProgramShape("gemm_naive", tuple(paths), reads, threads * d * d, reads * eb,
                            threads * d * d * eb, 2 * d ** 3 + threads * d * d,
                            sections=threads * d * d, section=section)

    def _rows_shape(self, vector):
        # for each of this thread's rows: for each column: for each (vector of) k: loads, MAC.
        d, threads, eb = self.dim, self.threads, _element_bytes(self.element_bits)
        lanes = self.lanes if vector else 1
        inner = d // lanes
        step = {"load": 1 + lanes if vector else 2, "compute": 1}
        paths = []
        for t in range(threads):
            rows = share(d, t, threads)
            per_row = add_counts((d * inner, step), (d, {"store": 1, "compute": 1}),
                                 (1, {"compute": 1}))
            paths.append(add_counts((1, {"compute": 1}), (rows, per_row)))
        beats = d ** 3 // lanes + d ** 3 if vector else 2 * d ** 3
        return ProgramShape(f"gemm_{'vector' if vector else 'nocritical'}", tuple(paths), beats,
                            d * d, 2 * d ** 3 * eb, d * d * eb, 2 * d ** 3)

    def _blocked_shape(self):
        d, threads, lanes = self.dim, self.threads, self.lanes
        eb = _element_bytes(self.element_bits)
        rows = default_block_rows(d, threads, lanes)
        per_row = d // lanes
        per_block = rows * per_row
        blocks = d // rows
        workers = threads - 1
        preload = add_counts((per_block, {"load": 1, "local_write": 1, "compute": 1}),
                             (1, {"wait": 1, "compute": 1}))
        # A segment's loop starts with a compute (a join heads it), and the carry loop, which may
        # run zero times, merges into a join before the next static stage.
        segment = add_counts((1, {"compute": 3, "join": 2}), (per_row, {"local_read": 1}),
                             (d, {"load": 1, "compute": 1}), (1, {"store": 1}))
        most = -(-per_block // workers)
        work = add_counts((1, {"wait": 1, "compute": 2, "join": 1}), (most, segment))
        paths = [add_counts((blocks, preload))] + [add_counts((blocks, work))] * workers
        read_beats = d * d // lanes + d ** 3 // lanes
        return ProgramShape("gemm_blocked", tuple(paths), read_beats, d * d // lanes,
                            (d * d + d ** 3) * eb, d * d * eb, 2 * d ** 3,
                            blocks=(blocks, preload, work, per_block + per_block * d))
