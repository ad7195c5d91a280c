"""Profiles of a pipeline program per step, taken in Amaranth's simulator.

Each step of a program (``Load``, ``Compute``, ``Store``, ``Acquire``, ``Wait``...) is one stage
of the :class:`hwgen.kernels.pipeline.Pipeline`, made at a line of the program's source. The
profiler samples, at each clock edge, the pipeline's ``stage_enable`` probe (a thread enters the
stage) and, for every parking stage, its slots' states, its ``stall`` bits and the edges threads
arrive on, found in the simulated design by their origin; nothing is added to the design.

Per step, over the job's cycles (``ctrl.busy``): executions (threads that entered it), running and stalled thread-cycles, stalled
thread-cycles by cause — ``memory`` (an off-chip or local access not yet done), ``lock`` (an
``Acquire`` or a barrier ``Wait`` not yet granted) or ``next_stage`` (the operation is done but
the scheduler has not released the thread: the stage after it is taken) —, average occupancy
(threads in it), bytes moved and ops done. As Intel's dynamic profiler tells a stall's source
from its victims, a step whose stalls wait for its own operation and whose stall plus occupancy
percentages (of the run's cycles, see :class:`StepActivity`) reach 90% is the ``source`` of a
stall; a step that stalls mostly for the next stage is a ``victim``.
"""

from dataclasses import dataclass

import numpy as np
from amaranth.hdl import Cat

from ..instrument._amaranth import fragment_origins, simulated_fragment, subfragments
from ..kernels.pipeline import Load, LocalRead, LocalWrite, Store
from ..kernels.pipeline.parking import ParkingStage, SlotState
from ..kernels.pipeline.stage import Compute
from .line_profile import _relative, check_domain

__all__ = ["StepActivity", "StepProfile", "StepProfiler"]

#: Stall percentage plus occupancy percentage from which a step is the source of a stall.
SOURCE_PERCENT = 90.0

_MEMORY_KINDS = (Load, Store, LocalRead, LocalWrite)


@dataclass(frozen=True)
class StepActivity:
    """One step's share of a run. Thread-cycles count one per thread per cycle.

    Attributes
    ----------
    file, line : str or None, int or None
        Where the program made the step (None for the joins the schedule adds).
    stage : int
        The step's stage index in the pipeline.
    name, kind : str
    executions : int
        Threads that entered the step.
    running_cycles : int
        Thread-cycles in the step, not stalled.
    stalled_cycles : int
        Thread-cycles stalled in the step (parking steps only; static steps never stall).
    stalled_by : dict
        ``stalled_cycles`` by cause: ``memory``, ``lock``, ``next_stage``.
    occupancy_threads : float or None
        Average threads in the step per cycle; None for a run of no cycles.
    stall_percent, occupancy_percent : float or None
        Cycles in which a thread stalled in the step waiting for its own operation, and cycles
        in which the step held a thread, as percentages of the run.
    bytes_moved : int
        Bytes the step moved (loads and stores, off-chip or local).
    ops : int
        Arithmetic operations it did.
    stall_role : str or None
        ``source``, ``victim`` or None (it never stalled).
    """
    file: str | None
    line: int | None
    stage: int
    name: str
    kind: str
    executions: int
    running_cycles: int
    stalled_cycles: int
    stalled_by: dict
    occupancy_threads: float | None
    stall_percent: float | None
    occupancy_percent: float | None
    bytes_moved: int
    ops: int
    stall_role: str | None

    def to_json(self, root=None):
        """As JSON data: ``stalled_by`` as ``stalled_<cause>_cycles`` keys beside
        ``stalled_cycles``."""
        data = {}
        for key, value in self.__dict__.items():
            if key == "stalled_by":
                data.update((f"stalled_{cause}_cycles", n) for cause, n in value.items())
            else:
                data[key] = value
        data["file"] = None if self.file is None else _relative(self.file, root)
        return data


@dataclass(frozen=True)
class StepProfile:
    """What :meth:`StepProfiler.profile` returns: the job's ``cycles`` (``ctrl.busy``) and its
    ``steps``, in the order of the pipeline's stages."""
    cycles: int
    steps: tuple

    def to_json(self, root=None):
        return {"cycles": self.cycles, "steps": [step.to_json(root) for step in self.steps]}


class StepProfiler:
    """Profile the steps of ``pipeline`` in ``simulator``.

    Parameters
    ----------
    simulator : amaranth.sim.Simulator
    pipeline : Pipeline
        The simulated pipeline (bare, or the ``design`` of an instrumented one).
    domain : str
        The clock domain whose edges delimit cycles.

    Raises
    ------
    ValueError
        ``pipeline`` is not part of what ``simulator`` simulates, or ``domain`` is not one of
        its clock domains.
    """

    def __init__(self, simulator, pipeline, *, domain="sync"):
        self._pipeline = pipeline
        fragment = simulated_fragment(simulator)
        check_domain(fragment, domain)
        units = _parking_units(fragment, pipeline)
        if units is None:
            raise ValueError(f"pipeline must be part of the simulated design, not {pipeline!r}")
        self._units = units           # {stage index: ParkingStage}
        self._samples = []
        values = [pipeline.stage_enable]
        for unit in units.values():
            values += [unit.stall, unit.state.as_value(), unit.arrive_valid]
        values.append(pipeline.ctrl.busy)
        samples = self._samples

        async def sample_steps(ctx):
            async for _clk, _rst, row in ctx.tick(domain).sample(Cat(*values)):
                samples.append(row)
        simulator.add_process(sample_steps)

    def profile(self):
        """The profile of the job's cycles sampled so far.

        Returns
        -------
        StepProfile
        """
        pipeline = self._pipeline
        threads = pipeline.threads
        width = self._width()
        # The job's cycles: the last bit sampled is ctrl.busy.
        rows = [row for row in self._samples if row >> width & 1]
        cycles = len(rows)
        size = width // 8 + 1
        packed = np.frombuffer(b"".join(row.to_bytes(size, "little") for row in rows),
                               dtype=np.uint8).reshape(cycles, size)
        bits = np.unpackbits(packed, axis=1, bitorder="little")[:, :width]
        nodes = pipeline.schedule.nodes
        enable = bits[:, :len(nodes)]
        offset = len(nodes)
        element_bytes = (pipeline.program.element_bits + 7) // 8
        steps = []
        for node in nodes:
            stage = node.stage
            executions = int(enable[:, node.index].sum())
            stalled_by = {"memory": 0, "lock": 0, "next_stage": 0}
            stall_cycles = occupied_cycles = 0
            if node.index in self._units:
                sources = len(self._units[node.index].arrive_valid)
                stall = bits[:, offset:offset + threads].astype(bool)
                state = bits[:, offset + threads:offset + 3 * threads]
                # Threads may arrive on several edges in one cycle (stage_enable says one did).
                executions = int(bits[:, offset + 3 * threads:
                                      offset + 3 * threads + sources].sum())
                offset += 3 * threads + sources
                code = state[:, 0::2] + 2 * state[:, 1::2]
                occupied = code != SlotState.EMPTY.value
                waiting_next = stall & (code == SlotState.READY.value)
                own = stall & ~waiting_next
                cause = "memory" if isinstance(stage, _MEMORY_KINDS) else "lock"
                stalled_by[cause] = int(own.sum())
                stalled_by["next_stage"] = int(waiting_next.sum())
                in_step = int(occupied.sum())
                stalled = int(stall.sum())
                running = in_step - stalled
                stall_cycles = int(own.any(axis=1).sum())
                occupied_cycles = int(occupied.any(axis=1).sum())
            else:
                # A static step holds a thread for one cycle and never stalls.
                in_step, stalled, running = executions, 0, executions
                occupied_cycles = executions
            lanes = getattr(stage, "lanes", 1)
            moved = executions * lanes * element_bytes if isinstance(stage, _MEMORY_KINDS) else 0
            ops = executions * stage.ops if isinstance(stage, Compute) else 0
            stall_percent = 100.0 * stall_cycles / cycles if cycles else None
            occupancy_percent = 100.0 * occupied_cycles / cycles if cycles else None
            role = None
            if stalled:
                own_stalls = stalled - stalled_by["next_stage"]
                if own_stalls >= stalled_by["next_stage"] and \
                        stall_percent + occupancy_percent >= SOURCE_PERCENT:
                    role = "source"
                elif stalled_by["next_stage"] > own_stalls:
                    role = "victim"
            file, line = stage.src_loc or (None, None)
            steps.append(StepActivity(
                file=file, line=line, stage=node.index, name=stage.name, kind=stage.kind, executions=executions,
                running_cycles=running, stalled_cycles=stalled, stalled_by=stalled_by,
                occupancy_threads=in_step / cycles if cycles else None, stall_percent=stall_percent,
                occupancy_percent=occupancy_percent, bytes_moved=moved, ops=ops, stall_role=role))
        return StepProfile(cycles, tuple(steps))

    def _width(self):
        return len(self._pipeline.schedule.nodes) + sum(
            3 * self._pipeline.threads + len(unit.arrive_valid) for unit in self._units.values())


def _parking_units(fragment, pipeline):
    """``{stage index: ParkingStage}`` of the simulated ``pipeline``; None when it is not in
    ``fragment``."""
    if pipeline in fragment_origins(fragment):
        units = {}
        for sub, name in subfragments(fragment):
            unit = next((o for o in fragment_origins(sub) if isinstance(o, ParkingStage)), None)
            if unit is not None and name and name.startswith("stage"):
                units[int(name[len("stage"):])] = unit
        return dict(sorted(units.items()))
    for sub, _name in subfragments(fragment):
        found = _parking_units(sub, pipeline)
        if found is not None:
            return found
    return None
