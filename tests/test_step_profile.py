# amaranth: UnusedElaboratable=no
"""Profiles per program step against closed-form counts of what the programs do."""

import inspect

import pytest

from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import gemm
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import MemoryModel, StepProfiler, run_threads


def profile(job, memory=MemoryModel()):
    """The steps by name; checks that the steps account for every stalled and every active
    thread-cycle the pipeline's HMM counted (its stall counters and thread-state profile)."""
    pe = Pipeline(job.program)
    storage, params = job.memory()
    profilers = []
    run = run_threads(pe, storage, params=params, memory=memory, engine="pysim",
                      on_simulator=lambda sim: profilers.append(StepProfiler(sim, pe)))
    assert job.matches(storage)
    profile_ = profilers[0].profile()
    assert profile_.cycles == run.cycles                # the job's cycles
    steps = profile_.steps
    assert sum(step.stalled_cycles for step in steps) == sum(run.stall_cycles)
    active = sum(sum(cycles) - cycles[0] for cycles in run.state_cycles)     # all but IDLE
    assert sum(step.running_cycles + step.stalled_cycles for step in steps) == active
    for step in steps:
        assert sum(step.stalled_by.values()) == step.stalled_cycles
    return {step.name: step for step in steps}


@pytest.mark.parametrize("dim, threads, latency", [(3, 2, 1), (4, 3, 1), (4, 4, 8)])
def test_gemm_naive_steps_execute_their_closed_form_counts(dim, threads, latency):
    steps = profile(GemmJob("naive", dim=dim, threads=threads),
                    MemoryModel(latency_cycles=latency))
    # Every thread adds its partial sum into every output; the k loop splits dim among them.
    assert steps["mac"].executions == dim ** 3
    assert steps["load a"].executions == steps["load b"].executions == dim ** 3
    assert steps["load c"].executions == dim ** 2 * threads
    assert steps["store c"].executions == dim ** 2 * threads
    assert steps["acquire"].executions == dim ** 2 * threads
    # Every thread enters the loop once per output, some in the same cycle as another.
    assert steps["loop"].executions == dim ** 2 * threads
    assert steps["entry"].executions == threads
    assert steps["mac"].ops == 2 * dim ** 3
    assert steps["load a"].bytes_moved == 4 * dim ** 3
    assert steps["store c"].bytes_moved == 4 * dim ** 2 * threads
    # The lock is where the threads queue, and the line is the program's.
    assert steps["acquire"].stalled_by["lock"] > 0
    assert steps["acquire"].stalled_by["memory"] == 0
    assert steps["mac"].stalled_cycles == 0 and steps["mac"].running_cycles == dim ** 3
    source = inspect.getsourcefile(gemm)
    assert steps["mac"].file == source
    lines = open(source).read().splitlines()
    assert "Compute(" in lines[steps["mac"].line - 1]
    assert 'name="mac"' in lines[steps["mac"].line]


def test_gemm_nocritical_has_no_lock_and_loads_wait_for_memory():
    dim, threads = 4, 2
    steps = profile(GemmJob("nocritical", dim=dim, threads=threads),
                    MemoryModel(latency_cycles=6))
    assert steps["mac"].executions == dim ** 3
    assert steps["store c"].executions == dim ** 2
    assert steps["load a"].stalled_by["memory"] > 0 and steps["load a"].stalled_by["lock"] == 0
    for step in steps.values():
        assert step.occupancy_threads is not None and 0 <= step.occupancy_threads <= threads
        assert step.stall_role in (None, "source", "victim")


def test_pi_steps_follow_the_series():
    n, threads = 12, 3
    steps = profile(PiJob(steps=n, threads=threads))
    computes = [s for s in steps.values() if s.kind == "compute" and s.executions]
    assert max(s.executions for s in computes) >= n
    assert steps["acquire"].executions == threads
