"""The estimate of a system's memory interconnect against Yosys, and its calibration.

The interconnect (:class:`hwgen.kernels.Interconnect`) is two-entry FIFOs, round-robin
arbiters, AND-OR multiplexers of whole beats and a queue of read indices per channel: logic the
family cost tables' calibration (made on window filters and pipeline programs) prices badly (on
the ECP5 at about half what Yosys makes of it, on the XC7 at 1.5x). Its LUTs get factors of
their own per family, fitted here by non-negative least squares of Yosys's LUT count over the
estimate's LUT groups (:func:`hwgen.resources.estimate.lut_groups`) of interconnects of line
filters' beats (U = 1, 2, 4, 8 on 512 x 512 frames), P PEs on C channels; ``--fit`` writes them to
``hwgen/resources/interconnect_costs.json``, which
:func:`hwgen.resources.estimate_system.estimate_interconnect` reads. Without ``--fit`` it prints,
per board and interconnect, the estimate (calibrated), Yosys, and the error, then the mean and
the largest absolute error. Synthesis results are cached (``hwgen.resources.synth``).

    python benchmarks/interconnect_estimate.py [--boards icebreaker ulx3s-85f arty-a7-100t]
        [--fit] [-q]
"""

import argparse
import json
import statistics
import warnings

import numpy as np
from amaranth.hdl import UnusedElaboratable
from scipy.optimize import nnls

from hwgen.boards import cost_table
from hwgen.catalog import make_window_filter, resolve_board
from hwgen.kernels import Interconnect
from hwgen.resources.estimate import count_primitives, lut_groups, rom_luts, uncalibrated_luts
from hwgen.resources.estimate_system import FACTORS_PATH, OWN_GROUPS, estimate_interconnect
from hwgen.resources.synth import synthesize
from hwgen.versions import tool_versions

BOARDS = ("icebreaker", "ulx3s-85f", "arty-a7-100t")
#: (unroll, PEs, channels) of the interconnects measured.
CONFIGS = ((1, 2, 1), (1, 4, 1), (1, 4, 2), (1, 8, 2), (1, 9, 3), (1, 16, 4), (2, 8, 2), (4, 4, 1),
           (8, 2, 1), (8, 4, 1), (8, 8, 2), (8, 16, 4))


def interconnect(unroll, pes, channels, size=512):
    """The interconnect of ``pes`` line filters of U = ``unroll`` on ``channels`` channels, with
    addresses for ``pes`` frames as a system has them (the filter is built for its beats)."""
    pe = make_window_filter("dilation", width=size, height=size, unroll=unroll, buffer="line")
    return Interconnect(pes=pes, channels=channels,
                        addr_width=pe.addr_width + max(1, (pes - 1).bit_length()),
                        rd_beat=pe.rd_beat, wr_beat=pe.wr_beat,
                        reads_in_flight=pe.max_outstanding_reads)


def measure(board, config):
    """``(LUT groups, LUTs priced outside them, Yosys's resources)`` of one interconnect on
    ``board``, as :func:`hwgen.resources.estimate_system.estimate_interconnect` prices it."""
    table = cost_table(board.toolchain.cost_family)
    kinds, memories, _, _ = count_primitives(interconnect(*config),
                                             platform=board.elaboration_platform())
    synthesized = synthesize(interconnect(*config), board, name="interconnect", fmax=False,
                             require_fit=False).resources()
    fixed = uncalibrated_luts(table, kinds, own=OWN_GROUPS) + rom_luts(table, kinds)
    return lut_groups(table, kinds, memories, own=OWN_GROUPS), fixed, synthesized


def fit(rows):
    """Non-negative factors per LUT group that fit Yosys's LUT counts less the LUTs priced
    outside the groups."""
    groups = sorted({g for row, _, _ in rows for g, v in row.items() if v})
    a = np.array([[row.get(g, 0.0) for g in groups] for row, _, _ in rows])
    b = np.array([synthesized["lut"] - fixed for _, fixed, synthesized in rows], dtype=float)
    factors, _ = nnls(a, b)
    return {g: round(float(f), 4) for g, f in zip(groups, factors)}


def main():
    warnings.simplefilter("ignore", UnusedElaboratable)   # PEs built for their beats only
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="+", default=list(BOARDS),
                        help="boards, one per cost family (default: %(default)s)")
    parser.add_argument("--fit", action="store_true",
                        help="fit the LUT factors and write them (default: check only)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args()
    factors = json.loads(FACTORS_PATH.read_text()) if FACTORS_PATH.exists() else {}
    for name in args.boards:
        board = resolve_board(name)
        family = board.toolchain.cost_family
        rows = [measure(board, config) for config in CONFIGS]
        if args.fit:
            factors[family] = {"lut_factors": fit(rows), "configs": [list(c) for c in CONFIGS],
                               "yosys_lut": [s["lut"] for _, _, s in rows],
                               "tool_versions": tool_versions()}
            FACTORS_PATH.write_text(json.dumps(factors, indent=1, sort_keys=True) + "\n")
        errors = {"lut": [], "ff": []}
        for config, (_, _, synthesized) in zip(CONFIGS, rows):
            estimated = estimate_interconnect(interconnect(*config), board)
            line = []
            for r in errors:
                error = estimated[r] / synthesized[r] - 1 if synthesized[r] else 0.0
                errors[r].append(abs(error))
                line.append(f"{r} {estimated[r]:>6,} vs {synthesized[r]:>6,} ({error:+6.1%})")
            if not args.quiet:
                print(f"{name:<14} U{config[0]} P{config[1]:<3} C{config[2]:<2} " + "  ".join(line))
        print(f"{name:<14} mean |error| LUT {statistics.mean(errors['lut']):.1%} (largest "
              f"{max(errors['lut']):.1%}), FF {statistics.mean(errors['ff']):.1%} (largest "
              f"{max(errors['ff']):.1%})")


if __name__ == "__main__":
    main()
