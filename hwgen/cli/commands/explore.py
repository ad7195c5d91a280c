"""``hwgen explore``: sweep a grid of design points in parallel, cached and resumable, and rank
them on the extended roofline."""

import os

from ..options import add_option
from .roofline import OUTPUTS, add_sweep_options, run_sweep

__all__ = ["add_options", "run"]

NAME = "explore"
HELP = "sweep design points in parallel and rank them on the roofline"
DESCRIPTION = ("Sweep a grid of design points: simulations and resource estimates run in "
               "worker processes (or on a Dask cluster, --scheduler), every finished point is "
               "cached (a stopped sweep resumes "
               "where it was), and the sweep ends with the roofline ("
               + ", ".join(OUTPUTS) + ") and the points ranked by attainable performance.")


def add_options(parser):
    add_sweep_options(parser, jobs=os.cpu_count() or 1)
    add_option(parser, "--top", type=int, default=20, metavar="N",
               help="rows of the ranked table, 0 for all")


def run(args):
    return run_sweep(args, ranked=True)
