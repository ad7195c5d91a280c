"""The system's control at any P: its start broadcast goes through a register tree and its done
through a registered AND tree; the PEs still filter their own frames exactly, and the cycles it
adds are the closed form docs/systems.md states."""

import math

import numpy as np
import pytest

import reference as ref
from hwgen.kernels import WindowFilter, beat_bytes, window_system
from hwgen.sim import MemoryModel, run_window_filter, run_window_system

WIDTH, HEIGHT = 12, 6
MEMORY = MemoryModel(latency_cycles=3)


def _images(count, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (HEIGHT, WIDTH)) for _ in range(count)]


def _added_cycles(pes, write_buffers):
    """The closed form: PE i starts i + 1 cycles after ``start`` behind ceil(log8 P) - 1 levels
    of registers, and done comes ceil(log8(P + write buffers)) cycles after the last PE's done
    and write."""
    start = max(0, math.ceil(math.log(pes, 8)) - 1)
    done = math.ceil(math.log(pes + write_buffers, 8) - 1e-12) if pes + write_buffers > 1 else 0
    return start + pes + done


@pytest.mark.parametrize("pes", [1, 4, 9, 17])
def test_the_control_adds_its_closed_form_cycles_to_one_pe(pes):
    """A channel per PE and a memory without jitter: every PE runs as one PE alone, so the
    system takes one PE's cycles plus what the control adds."""
    images = _images(pes, seed=pes)
    system = window_system(pes, width=WIDTH, height=HEIGHT, unroll=2, buffer="line")
    assert system.interconnect.write_buffers == 0
    run = run_window_system(system, images, memory=MEMORY, instrument=False, engine="pysim")
    alone = run_window_filter(WindowFilter("max", (3, 3), width=WIDTH, height=HEIGHT, unroll=2,
                                           buffer="line"), images[0], memory=MEMORY,
                              instrument=False, engine="pysim")
    assert run.cycles == alone.figures.cycles + _added_cycles(pes, 0) == \
        alone.figures.cycles + system.launch_cycles
    for image, out in zip(images, run.images):
        np.testing.assert_array_equal(out, ref.window_filter(image, np.ones((3, 3), bool), "max"))


@pytest.mark.parametrize("pes,beats", [(10, 3), (12, 1)])
def test_deep_control_trees_keep_every_frame_exact_under_backpressure(pes, beats):
    """More PEs than one register drives: a level of parameter registers, a two-level done
    tree over the PEs and the write buffers of shared channels, jittered memory."""
    images = _images(pes, seed=20 + pes)
    first = window_system(1, width=WIDTH, height=HEIGHT, unroll=2, buffer="line").pes[0]
    system = window_system(pes, width=WIDTH, height=HEIGHT, unroll=2, buffer="line",
                           bytes_per_cycle=beats * beat_bytes(first))
    assert system.start_latency == 1 and system.done_latency == 2
    memory = MemoryModel(bandwidth_bytes_per_cycle=1.5 * beats, latency_cycles=3,
                         jitter_cycles=3, backpressure=0.2, seed=pes)
    run = run_window_system(system, images, memory=memory, engine="pysim")
    for image, out in zip(images, run.images):
        np.testing.assert_array_equal(out, ref.window_filter(image, np.ones((3, 3), bool), "max"))
    outputs = (WIDTH - 2) * (HEIGHT - 2)
    assert [f.bytes_read for f in run.per_pe] == [WIDTH * HEIGHT] * pes
    assert [f.bytes_written for f in run.per_pe] == [outputs] * pes
    assert run.ops == pes * 8 * outputs
