"""``hwgen explore``: sweep a grid of design points in parallel, cached and resumable, and rank
them on the extended roofline."""

import os

from .roofline import OUTPUTS, add_sweep_options, run_sweep

__all__ = ["register"]


def register(subparsers):
    parser = subparsers.add_parser(
        "explore", help="sweep design points in parallel and rank them on the roofline",
        description="Sweep a grid of design points: simulations and resource estimates run in "
                    "worker processes, every finished point is cached (a stopped sweep resumes "
                    "where it was), and the sweep ends with the roofline ("
                    + ", ".join(OUTPUTS) + ") and the points ranked by attainable performance.")
    add_sweep_options(parser, jobs=os.cpu_count() or 1)
    parser.add_argument("--top", type=int, default=20, metavar="N",
                        help="rows of the ranked table, 0 for all (default: %(default)s)")
    parser.set_defaults(func=lambda args: run_sweep(args, ranked=True))
