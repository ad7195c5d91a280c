"""numpy evaluation of Amaranth values over many cycles against Amaranth's simulator computing
the same values cycle by cycle."""

import random

import numpy as np
import pytest
from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed
from amaranth.sim import Simulator

from hwgen.instrument._amaranth import SignalDict
from hwgen.sim.value_columns import Unsupported, evaluate, signals_of, wide

a, b = Signal(6, name="a"), Signal(signed(5), name="b")
s = Signal(3, name="s")
w = Signal(80, name="w")

EXPRESSIONS = {
    "arith": [a + b, a - b, -b, a * b, a // (s + 0), a % Const(5), b // s, b % (s + 0)],
    "bits": [~a, ~b, a & b, a | b, a ^ b, a.bool(), a.any(), a.all(), a.xor(), b.as_unsigned(),
             a.as_signed()],
    "compare": [a == b, a != b, a < b, a <= b, a > b, a >= b, b < 0],
    "shifts": [a << s, a >> s, b >> s, b << 2, a.shift_left(3), a.rotate_left(2)],
    "select": [a[1:4], b[2:], a.bit_select(s, 3), a.word_select(s[:1], 3), Cat(a, b, s),
               Mux(s[0], a, b), Array([a, b, s, Const(7)])[s[:2]], b.replicate(3)],
    "wide": [w + a, w >> s, w[70:] ^ a, (w * 3)[60:75], Cat(w, a) == 0, w.bit_select(s, 9)],
}


@pytest.mark.parametrize("group", sorted(EXPRESSIONS))
def test_evaluate_matches_amaranths_simulator(group):
    values = EXPRESSIONS[group]
    signals = [a, b, s, w]
    m = Module()
    m.d.comb += Signal().eq(Cat(*signals).any())     # the signals belong to the design
    sim = Simulator(m)
    rng = random.Random(3)
    driven, seen = [], []

    async def bench(ctx):
        for _ in range(300):
            row = [rng.randrange(1 << len(sig)) for sig in signals]
            for sig, value in zip(signals, row):
                ctx.set(sig, value)
            driven.append([ctx.get(sig) for sig in signals])
            seen.append([ctx.get(value) for value in values])
            await ctx.delay(1e-8)

    sim.add_testbench(bench)
    sim.run()
    columns = SignalDict((sig, np.array([row[i] for row in driven],
                                        dtype=object if len(sig) > 62 else np.int64))
                         for i, sig in enumerate(signals))
    for index, value in enumerate(values):
        assert {id(sig) for sig in signals_of(value)} <= {id(sig) for sig in signals}
        got = evaluate(value, columns, len(driven), object if wide(value) else np.int64)
        mask = (1 << len(value)) - 1
        want = [row[index] & mask for row in seen]
        assert [int(v) & mask for v in got] == want, repr(value)


def test_a_memory_read_is_not_evaluated():
    from amaranth.lib.memory import MemoryData
    data = MemoryData(shape=8, depth=4, init=[1, 2, 3, 4])
    with pytest.raises(Unsupported):
        signals_of(data[1] + a)
