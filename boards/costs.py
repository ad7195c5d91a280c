"""Cost tables of the fast estimator: what each primitive kind costs per family.

``costs/<family>.json`` is written by ``tools/characterize_costs.py`` from real synthesis and read
here; ``family`` is a board's ``toolchain.cost_family`` (``ecp5``, ``ice40``, ``xilinx-xc7``...).
"""

import json
from functools import cache
from pathlib import Path

from .board import BoardError

__all__ = ["COSTS_DIR", "cost_table", "cost_families"]

COSTS_DIR = Path(__file__).parent / "costs"


def cost_families():
    """Families that have a cost table."""
    return sorted(path.stem for path in COSTS_DIR.glob("*.json"))


@cache
def cost_table(family):
    """The cost table of ``family`` as plain data (see ``tools/characterize_costs.py``)."""
    path = COSTS_DIR / f"{family}.json"
    if not path.exists():
        raise BoardError(f"no cost table for {family!r}; characterised families: "
                         f"{', '.join(cost_families()) or 'none'} (run tools/characterize_costs.py)")
    return json.loads(path.read_text())
