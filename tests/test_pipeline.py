# amaranth: UnusedElaboratable=no
"""The pipeline generator, exercised with small programs written for these tests."""

import gc

import numpy as np
import pytest
from amaranth.hdl import Fragment, Module, Signal, unsigned
from amaranth.lib import data
from amaranth.sim import Simulator

from hwgen.kernels.pipeline import (Acquire, Barrier, Compute, If, Join, Load, LocalMemory, LocalRead,
                              LocalWrite, Lock, Loop, Pipeline, Program, Release, Store,
                              ThreadState, Wait, While)
from hwgen.kernels.pipeline.schedule import Schedule
from hwgen.kernels.programs import GEMM_VARIANTS, gemm, pi_series
from hwgen.sim import HostModel, MemoryModel, MemoryServer, run_threads

ADDR = 10
PARAMS = {"src": unsigned(ADDR), "dst": unsigned(ADDR)}

IDLE, RUNNING, CRITICAL, SPINNING = (s.value for s in ThreadState)


def program(body, *, threads, context, params=PARAMS):
    return Program("test", threads=threads, context=context, body=body, params=params,
                   element_bits=16, addr_width=ADDR)


def slice_sums(threads, chunk):
    """Thread t sums src[t*chunk : (t+1)*chunk] and stores it at dst + t."""
    return program([
        Loop([
            Load(lambda c, p: p.src + c.tid * chunk + c.n, into="x"),
            Compute(lambda c, p: {"acc": c.acc + c.x, "n": c.n + 1}, ops=1),
        ], repeat=lambda c, p: c.n != chunk),
        Store(lambda c, p: p.dst + c.tid, lambda c, p: c.acc),
    ], threads=threads, context={"n": 8, "x": 16, "acc": 16})


MEMORIES = [
    MemoryModel(),
    MemoryModel(latency_cycles=6, jitter_cycles=4, backpressure=0.3, seed=2),
    MemoryModel(bandwidth_bytes_per_cycle=0.75, latency_cycles=3),
]


@pytest.mark.parametrize("memory", MEMORIES, ids=["ideal", "slow-jittery", "narrow"])
@pytest.mark.parametrize("threads", [1, 3, 4])
def test_threads_sum_their_slices(threads, memory):
    chunk = 5
    rng = np.random.default_rng(threads)
    src = rng.integers(0, 1 << 12, size=threads * chunk)
    storage = src.tolist() + [0] * threads
    run = run_threads(Pipeline(slice_sums(threads, chunk)), storage,
                      params={"src": 0, "dst": len(src)}, memory=memory, max_cycles=5000)
    assert storage[len(src):] == (src.reshape(threads, chunk).sum(axis=1) % (1 << 16)).tolist()
    assert run.ops == threads * chunk
    assert run.bytes_read == 2 * threads * chunk and run.bytes_written == 2 * threads


@pytest.mark.parametrize("latency", [1, 4, 9])
def test_a_lone_thread_stalls_only_for_latency_beyond_the_minimum(latency):
    chunk = 6
    storage = list(range(chunk)) + [0]
    run = run_threads(Pipeline(slice_sums(1, chunk)), storage, params={"src": 0, "dst": chunk},
                      memory=MemoryModel(latency_cycles=latency))
    assert run.stall_cycles == (chunk * (latency - 1),)


def counter_program(threads, rounds, locked):
    """Every thread adds 1 to the element at dst, rounds times, read-modify-write."""
    lock = Lock("counter")
    update = [
        Load(lambda c, p: p.dst, into="x"),
        Compute(lambda c, p: {"x": c.x + 1}),
        Store(lambda c, p: p.dst, lambda c, p: c.x),
    ]
    body = [Acquire(lock), *update, Release(lock)] if locked else update
    return program([Loop([*body, Compute(lambda c, p: {"n": c.n + 1})],
                         repeat=lambda c, p: c.n != rounds)],
                   threads=threads, context={"n": 8, "x": 16})


def test_lock_makes_read_modify_write_atomic():
    threads, rounds = 4, 6
    storage = [0]
    run = run_threads(Pipeline(counter_program(threads, rounds, locked=True)), storage,
                      params={"src": 0, "dst": 0}, host=HostModel(0),
                      memory=MemoryModel(latency_cycles=3))
    assert storage == [threads * rounds]
    spans = run.timeline.spans()
    assert all(states.count(CRITICAL) <= 1 for _, _, states in spans)
    assert sum(end - begin for begin, end, states in spans if SPINNING in states) > 0
    critical = [counts[CRITICAL] for counts in run.timeline.state_cycles()]
    assert all(cycles > 0 for cycles in critical)


def test_without_the_lock_updates_are_lost():
    threads, rounds = 4, 6
    storage = [0]
    run = run_threads(Pipeline(counter_program(threads, rounds, locked=False)), storage,
                      params={"src": 0, "dst": 0}, host=HostModel(0),
                      memory=MemoryModel(latency_cycles=3))
    assert storage[0] < threads * rounds
    assert all(counts[CRITICAL] == counts[SPINNING] == 0 for counts in run.timeline.state_cycles())


def test_barrier_holds_every_thread_until_the_last_arrives():
    # Each thread writes its own element, waits, then copies its neighbour's. The last thread
    # starts long after the first, so without the barrier the first would copy a zero.
    threads = 4
    phase = Barrier("written")
    prog = program([
        Store(lambda c, p: p.src + c.tid, lambda c, p: c.tid + 100),
        Wait(phase),
        Load(lambda c, p: p.src + (c.tid + 1) % threads, into="x"),
        Store(lambda c, p: p.dst + c.tid, lambda c, p: c.x),
    ], threads=threads, context={"x": 16})
    storage = [0] * (2 * threads)
    run = run_threads(Pipeline(prog), storage, params={"src": 0, "dst": threads},
                      host=HostModel(25))
    assert storage[threads:] == [100 + (t + 1) % threads for t in range(threads)]
    spinning = [counts[SPINNING] for counts in run.timeline.state_cycles()]
    assert spinning[0] > spinning[-1] >= 0 and spinning[0] >= 25 * (threads - 1) - 10


def test_local_memory_is_shared_between_threads():
    threads = 4
    table = LocalMemory("table", shape=unsigned(16), depth=threads)
    phase = Barrier("filled")
    prog = program([
        LocalWrite(table, lambda c, p: c.tid, lambda c, p: c.tid * 3 + 1),
        Wait(phase),
        LocalRead(table, lambda c, p: (c.tid + 1) % threads, into="x"),
        Store(lambda c, p: p.dst + c.tid, lambda c, p: c.x),
    ], threads=threads, context={"x": 16})
    storage = [0] * threads
    run_threads(Pipeline(prog), storage, params={"src": 0, "dst": 0})
    assert storage == [((t + 1) % threads) * 3 + 1 for t in range(threads)]


def test_while_runs_zero_or_more_times_and_if_branches():
    # Thread t sums 1..t (none for thread 0); odd threads then negate the low byte.
    threads = 5
    prog = program([
        While(lambda c, p: c.n < c.tid, [
            Compute(lambda c, p: {"n": c.n + 1, "acc": c.acc + c.n + 1}),
        ]),
        If(lambda c, p: c.tid[0], [Compute(lambda c, p: {"acc": c.acc ^ 0xff})],
           [Join()]),
        Store(lambda c, p: p.dst + c.tid, lambda c, p: c.acc),
    ], threads=threads, context={"n": 8, "acc": 16})
    storage = [0] * threads
    run_threads(Pipeline(prog), storage, params={"src": 0, "dst": 0})
    expected = [sum(range(1, t + 1)) ^ (0xff if t % 2 else 0) for t in range(threads)]
    assert storage == expected


@pytest.mark.parametrize("delay", [0, 7, 30])
def test_host_starts_thread_t_after_t_launch_delays(delay):
    threads = 4
    storage = list(range(4 * threads)) + [0] * threads
    run = run_threads(Pipeline(slice_sums(threads, 4)), storage,
                      params={"src": 0, "dst": 4 * threads}, host=HostModel(delay))
    expected = [t * delay if delay else t for t in range(threads)]
    assert list(run.launch_cycles) == expected
    assert [run.timeline.first_cycle_not_idle(t) for t in range(threads)] == [c + 1 for c in expected]


def test_vector_loads_and_stores_move_several_elements_per_request():
    threads, lanes = 2, 4
    prog = program([
        Load(lambda c, p: p.src + c.tid * lanes, into="v", lanes=lanes),
        Compute(lambda c, p: {"v": [c.v[l] * 2 for l in range(lanes)]}, ops=lanes),
        Store(lambda c, p: p.dst + c.tid * lanes, lambda c, p: c.v, lanes=lanes),
    ], threads=threads, context={"v": data.ArrayLayout(16, lanes)})
    pe = Pipeline(prog)
    assert pe.rd_beat.lanes == pe.wr_beat.lanes == lanes
    storage = list(range(1, 9)) + [0] * 8
    run = run_threads(pe, storage, params={"src": 0, "dst": 8})
    assert storage[8:] == [2 * v for v in range(1, 9)]
    assert run.ops == 8


def test_probes_can_be_watched_from_a_design_that_embeds_the_pipeline():
    # A profiler elaborates the PE once, embeds the fragment and counts its probe signals.
    threads, chunk = 3, 4
    pe = Pipeline(slice_sums(threads, chunk))
    top = Module()
    top.submodules.pe = Fragment.get(pe, None)
    ops_seen = Signal(16)
    critical_free = Signal(init=1)
    enters = Signal(16)
    top.d.sync += ops_seen.eq(ops_seen + pe.ops_performed)
    top.d.sync += enters.eq(enters + pe.stage_enable[0])
    for t in range(threads):
        with top.If(pe.thread_state[t] == ThreadState.CRITICAL):
            top.d.sync += critical_free.eq(0)

    storage = list(range(threads * chunk)) + [0] * threads
    server = MemoryServer(MemoryModel(), storage, [pe])
    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_process(server.process())
    seen = {}

    async def host(ctx):
        ctx.set(pe.ctrl.src, 0)
        ctx.set(pe.ctrl.dst, threads * chunk)
        ctx.set(pe.ctrl.start, 1)
        await ctx.tick()
        ctx.set(pe.ctrl.start, 0)
        for t in range(threads):
            ctx.set(pe.launch.valid, 1)
            ctx.set(pe.launch.payload, t)
            await ctx.tick()
        ctx.set(pe.launch.valid, 0)
        await ctx.tick().until(pe.ctrl.done)
        await ctx.tick()
        seen.update(ops=ctx.get(ops_seen), enters=ctx.get(enters), free=ctx.get(critical_free))

    sim.add_testbench(host)
    sim.run()
    assert seen == {"ops": threads * chunk, "enters": threads, "free": 1}


def all_programs():
    return [gemm(variant, dim=4, threads=3) for variant in GEMM_VARIANTS] + [pi_series(threads=3)]


@pytest.mark.parametrize("prog", all_programs(), ids=lambda p: p.name)
def test_static_stages_have_one_way_in(prog):
    for node in Schedule(prog.body).nodes:
        if not node.stage.parking:
            assert len(node.sources) == 1, node


def test_merging_paths_meet_in_a_join_before_a_static_stage():
    nodes = Schedule((If(lambda c, p: c.tid == 0, [Compute(lambda c, p: {})]),
                      Compute(lambda c, p: {}, name="after"))).nodes
    after = nodes[-1]
    assert after.stage.name == "after"
    (edge,) = after.sources
    assert edge.source.stage.kind == "join" and len(edge.source.sources) == 2


def test_a_loop_starting_with_a_parking_stage_loops_back_to_it():
    load = Load(lambda c, p: 0, into="x")
    nodes = Schedule((Loop([load, Compute(lambda c, p: {})], repeat=lambda c, p: 1),)).nodes
    head = next(node for node in nodes if node.stage is load)
    assert {edge.source.stage.kind for edge in head.sources} == {"join", "compute"}


@pytest.mark.parametrize("kwargs, error, match", [
    ({"threads": 0}, ValueError, "threads must be between 1 and 64"),
    ({"threads": 65}, ValueError, "threads must be between 1 and 64"),
    ({"context": {"tid": 4}}, ValueError, "'tid' is reserved"),
    ({"context": [("x", 4)]}, TypeError, "context must be"),
    ({"body": []}, ValueError, "body must be a non-empty list"),
    ({"body": [lambda c, p: {}]}, TypeError, "allowed are stages"),
    ({"element_bits": 65}, ValueError, "element_bits must be between 1 and 64"),
])
def test_program_rejects_bad_parameters(kwargs, error, match):
    args = {"threads": 2, "context": {"x": 4}, "body": [Compute(lambda c, p: {"x": 1})]}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        Program("bad", **args)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_compute_naming_an_unknown_field_fails_at_elaboration():
    prog = program([Compute(lambda c, p: {"y": 1}, name="typo")], threads=2, context={"x": 4})
    with pytest.raises(ValueError, match="stage 'typo': update sets unknown field 'y'"):
        Fragment.get(Pipeline(prog), None)
    gc.collect()   # the half-built design warns that it is unused; let it do so here


@pytest.mark.parametrize("make, match", [
    (lambda: Loop([], repeat=lambda c, p: 1), "loop body must be a non-empty list"),
    (lambda: Loop([Join()], repeat=1), "repeat must be a function"),
    (lambda: If("x", [Join()]), "cond must be a function"),
    (lambda: Load(lambda c, p: 0, into="x", lanes=0), "lanes must be a positive integer"),
    (lambda: Load(lambda c, p: 0, into=3), "into must be a context field name"),
    (lambda: Acquire(Barrier("b")), "expected a Lock"),
    (lambda: LocalMemory("m", shape=8, depth=0), "depth of local memory 'm'"),
    (lambda: Compute(lambda c, p: {}, ops=-1), "ops must be a non-negative integer"),
])
def test_stages_reject_bad_arguments(make, match):
    with pytest.raises((TypeError, ValueError), match=match):
        make()


def test_resources_with_the_same_name_must_be_the_same_object():
    prog = program([Acquire(Lock("l")), Release(Lock("l"))], threads=2, context={"x": 4})
    with pytest.raises(ValueError, match="two different locks are named 'l'"):
        Pipeline(prog)
