"""What the thread states and figures of the programs show, as the hardware recorded them.

The figures come from runs of the programs with the host's default launch delay on an ideal
memory, profiled by the HMM attached to the pipeline (thread-state records and counters drained
and read through its port, none dropped); the relations below are the ones a profile of these
programs should reveal.
"""

import pytest

from hwgen.kernels.pipeline import Pipeline, ThreadState
from hwgen.kernels.programs import GEMM_VARIANTS, gemm, pi_series, pi_step
from hwgen.sim import HostModel, run_threads

RUNNING, CRITICAL, SPINNING = (ThreadState.RUNNING.value, ThreadState.CRITICAL.value,
                               ThreadState.SPINNING.value)
THREADS = 8
DIM = 8


@pytest.fixture(scope="module")
def gemm_runs():
    runs = {}
    n = DIM * DIM
    for variant in GEMM_VARIANTS:
        storage = [(i * 7 + 3) % 101 for i in range(2 * n)] + [0] * n
        runs[variant] = run_threads(Pipeline(gemm(variant, dim=DIM, threads=THREADS)), storage,
                                    params={"a_base": 0, "b_base": n, "c_base": 2 * n})
        assert runs[variant].state_records_dropped == 0
    return runs


def state_total(run, state):
    return sum(counts[state] for counts in run.timeline.state_cycles())


def test_naive_threads_spin_for_the_lock_and_work_inside_it(gemm_runs):
    naive = gemm_runs["naive"]
    assert state_total(naive, CRITICAL) > 0
    assert state_total(naive, SPINNING) > state_total(naive, CRITICAL)


def test_nocritical_has_no_critical_section_and_is_faster(gemm_runs):
    nocritical = gemm_runs["nocritical"]
    assert state_total(nocritical, CRITICAL) == state_total(nocritical, SPINNING) == 0
    assert nocritical.cycles < gemm_runs["naive"].cycles


@pytest.mark.parametrize("variant", ["vector", "blocked"])
def test_wide_requests_move_more_bytes_per_cycle_in_fewer_cycles(gemm_runs, variant):
    run, nocritical = gemm_runs[variant], gemm_runs["nocritical"]
    assert run.bytes_per_cycle > nocritical.bytes_per_cycle
    assert run.cycles < nocritical.cycles


def test_blocked_beats_vector(gemm_runs):
    assert gemm_runs["blocked"].cycles < gemm_runs["vector"].cycles
    assert gemm_runs["blocked"].bytes_per_cycle > gemm_runs["vector"].bytes_per_cycle


def run_pi(steps):
    run = run_threads(Pipeline(pi_series(threads=THREADS)), [0],
                      params={"steps": steps, "step": pi_step(steps), "result": 0},
                      host=HostModel())
    assert run.state_records_dropped == 0
    return run


def all_running(run):
    return run.timeline.cycles_where(lambda states: all(s == RUNNING for s in states)) / run.cycles


def test_pi_with_few_iterations_starts_threads_one_after_another():
    run = run_pi(THREADS)
    delay = HostModel().launch_delay_cycles
    starts = [run.timeline.first_cycle_not_idle(t) for t in range(THREADS)]
    assert all(later - earlier >= delay for earlier, later in zip(starts, starts[1:]))
    assert all_running(run) < 0.05
    # The first thread is done before the last one starts.
    first_done = next(cycle for cycle, states in run.timeline.changes
                      if cycle > starts[0] and states[0] == ThreadState.IDLE.value)
    assert first_done < starts[-1]


def test_pi_with_many_iterations_runs_all_threads_most_of_the_time():
    run = run_pi(32 * THREADS)
    assert all_running(run) > 0.8
