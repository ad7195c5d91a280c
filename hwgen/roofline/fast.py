"""A design space in seconds: every point's cycles from the cycle model (:mod:`hwgen.model`) and
its resources from the estimate, the Pareto front of performance against area, the best point
for each area budget, and the front's points re-measured by simulation.

A point is a PE configuration (a :class:`~hwgen.roofline.sweep.DesignPoint` with a register
policy) and a PE count ``P``: ``P`` PEs, each filtering its own frame, share the memory, so each
is predicted with ``1 / P`` of its bandwidth. Resources are one bare PE's estimate times ``P``;
only points whose PEs fit on one device of the board are kept.
"""

import io
import warnings
from dataclasses import dataclass, replace

import numpy as np
from amaranth.hdl import UnusedElaboratable

from ..model import predict_window
from ..resources.estimate import estimate
from ..sim import MemoryModel, run_window_system
from .model import RESOURCES, scalability

__all__ = ["FastPoint", "AREA_BUDGETS", "best_per_budget", "explore_fast", "pareto_front",
           "plot_front", "verify"]

#: Area budgets, as shares of one device's LUTs, for the best point of each.
AREA_BUDGETS = (0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


@dataclass(frozen=True)
class FastPoint:
    """One predicted design point: ``pes`` PEs of ``point``, resources in total."""
    point: object          # DesignPoint
    tree_stages: str
    pes: int
    resources: dict
    cycles: float          # per frame, every PE on its own frame at once
    ops: int               # of all PEs
    bytes_moved: int       # of all PEs
    bound: str
    clock_mhz: float

    @property
    def label(self):
        return f"{self.point.label}, {self.tree_stages}, {self.pes} PE" + ("s" * (self.pes > 1))

    @property
    def lut(self):
        return self.resources["lut"]

    @property
    def ops_per_cycle(self):
        return self.ops / self.cycles

    @property
    def gops(self):
        """Performance: Gops/s at the clock."""
        return self.ops_per_cycle * self.clock_mhz / 1e3

    def row(self):
        p = self.point
        return {"label": self.label, "buffer": p.buffer, "unroll": p.unroll,
                "pipeline": p.pipeline, "tree_stages": self.tree_stages, "pes": self.pes,
                **{r: self.resources[r] for r in RESOURCES}, "cycles": self.cycles,
                "ops_per_cycle": self.ops_per_cycle,
                "bytes_per_cycle": self.bytes_moved / self.cycles, "bound": self.bound,
                "clock_mhz": self.clock_mhz, "gops": self.gops}


def _pe_counts(limit):
    """1, 2, 3, 4, 6, 8, 12, 16... up to ``limit`` (and ``limit`` itself)."""
    counts, n = set(), 1
    while n <= limit:
        counts.update({n, n + n // 2} if n > 1 else {1})
        n *= 2
    return sorted({c for c in counts if c <= limit} | {limit})


def explore_fast(points, board, memory=MemoryModel(), *, tree_policies=("lean", "fast"),
                 max_pes=64, progress=None):
    """Every point of ``points`` with every register policy of ``tree_policies`` (pipelined
    points) and every PE count that fits on one device of ``board`` (at most ``max_pes``).

    Returns
    -------
    list of FastPoint
    """
    available = board.resources.as_counts()
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # the estimate never elaborates
        for point in points:
            for policy in tree_policies if point.pipeline else (point.tree_stages,):
                hardware = replace(point, tree_stages=policy)
                pe = hardware.build()
                per_pe = estimate(pe, board, name="pe").to_json()
                per_pe = {r: per_pe[r] for r in RESOURCES}
                fits, _ = scalability(per_pe, available)
                traffic = pe.traffic()
                for pes in _pe_counts(min(fits, max_pes)):
                    bw = memory.bandwidth_bytes_per_cycle
                    shared = memory if bw is None else replace(
                        memory, bandwidth_bytes_per_cycle=bw / pes)
                    prediction = predict_window(pe, shared)
                    found.append(FastPoint(
                        hardware, policy, pes, {r: per_pe[r] * pes for r in RESOURCES},
                        prediction.cycles, traffic.ops * pes,
                        (traffic.bytes_read + traffic.bytes_written) * pes, prediction.bound,
                        board.clock_mhz))
                if progress:
                    progress(1)
    return found


def pareto_front(points):
    """The points no other point beats in both performance (higher) and LUTs (fewer), by LUTs."""
    front = []
    for p in sorted(points, key=lambda p: (p.lut, -p.gops)):
        if not front or p.gops > front[-1].gops:
            front.append(p)
    return front


def best_per_budget(points, device_luts, budgets=AREA_BUDGETS):
    """``[(budget share, LUTs, best point or None)]``: the fastest point within each budget."""
    rows = []
    for share in budgets:
        luts = share * device_luts
        within = [p for p in points if p.lut <= luts]
        rows.append((share, luts, max(within, key=lambda p: p.gops) if within else None))
    return rows


def plot_front(points, front, *, title):
    """The performance-against-area figure, as PNG bytes: every point, the front joined."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    ax = figure.add_subplot()
    ax.scatter([p.lut for p in points], [p.gops for p in points], s=6, color="#bbbbbb",
               label=f"{len(points)} design points (model + estimate)")
    ax.plot([p.lut for p in front], [p.gops for p in front], "o-", color="#c0392b", ms=4,
            label=f"Pareto front ({len(front)} points)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("LUTs")
    ax.set_ylabel("performance (Gops/s)")
    ax.set_title(title)
    ax.legend(loc="lower right")
    data = io.BytesIO()
    figure.savefig(data, format="png", dpi=120)
    return data.getvalue()


def verify(point, memory, *, engine=None, seed=0):
    """Simulate ``point`` (its PEs sharing ``memory``) and return its cycles."""
    p = point.point
    system = p.system(point.pes, p.height)
    rng = np.random.default_rng(seed)
    images = [rng.integers(0, 256, (p.height, p.width)) for _ in range(system.count)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        run = run_window_system(system, images, memory=memory, instrument=False, engine=engine)
    return run.cycles
