"""How a system of P PEs scales behind the memory interconnect, against the roofline's model.

For P = 1, 2, 4, 8, 16, 26 line-buffered dilation PEs (U8 by default), each on its own short
frame, on two links: the ULX3S-85F's SDRAM at the board's clock (an assumption: the system's
clock is not known before it is placed and routed; ``--clock`` sets another) and an unlimited
one. Each row prints what the system simulates (ops per cycle), the model's
min(P x PE, port, link) and their ratio:

PE
    One PE's ops per cycle on the same frame with an ideal memory (simulated alone).
port
    The channels' roof: C channels each move one read beat and one write beat per cycle, so
    C x ops / max(read beats, write beats) of one frame (a step's read beats and its one
    write beat).
link
    CI x the link's bytes per cycle (the memory model's one budget for all channels).

With ``--synth``, the bare system of P PEs (512 x 512 frames) is synthesized and placed and
routed for the ULX3S-85F (``--seeds``, default one): LUT, FF, block RAM and Fmax per P, its
share of one bare PE's Fmax (synthesized the same way) and nextpnr's critical path (minutes
per P, hours at 26 PEs; cached).

    python benchmarks/system_scaling.py [--unroll 8] [--width 256] [--height 24]
                                        [--engine pysim] [--link both] [--synth] [--seeds 1]
"""

import argparse
import math
import sys

import numpy as np

from hwgen.catalog import resolve_board
from hwgen.kernels import WindowFilter, window_system
from hwgen.resources.synth import synthesize
from hwgen.roofline.model import system_bytes_per_cycle
from hwgen.sim import MemoryModel, run_window_filter, run_window_system

PES = (1, 2, 4, 8, 16, 26)
BOARD = "ulx3s-85f"


def _frames(count, width, height):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, size=(height, width)) for _ in range(count)]


def scaling_row(pes, link, args):
    """Simulated and modelled ops per cycle of ``pes`` PEs on a link of ``link`` bytes per
    cycle (``None``: unlimited)."""
    params = dict(width=args.width, height=args.height, unroll=args.unroll, buffer=args.buffer)
    system = window_system(pes, bytes_per_cycle=link, **params)
    pe = system.pes[0]
    alone = run_window_filter(WindowFilter("max", (3, 3), **params),
                              _frames(1, args.width, args.height)[0], instrument=False,
                              engine=args.engine).figures
    run = run_window_system(system, _frames(pes, args.width, args.height),
                            memory=MemoryModel(bandwidth_bytes_per_cycle=link),
                            instrument=False, engine=args.engine)
    traffic = pe.traffic()
    channels = system.interconnect.channels
    roofs = {"PE": pes * alone.ops / alone.cycles,
             "port": channels * traffic.ops / (traffic.steps * max(1, pe.beats_per_step)),
             "link": math.inf if link is None else
             traffic.ops / (traffic.bytes_read + traffic.bytes_written) * link}
    bound = min(roofs, key=roofs.get)
    return {"pes": pes, "channels": channels, "ops_per_cycle": run.ops_per_cycle,
            "model": roofs[bound], "bound": bound, "ratio": run.ops_per_cycle / roofs[bound],
            "ok": run.bytes_read == pes * traffic.bytes_read}


def synth_row(pes, link, args):
    """The bare system of ``pes`` PEs on 512 x 512 frames, synthesized and placed and routed
    (``pes=None``: one bare PE alone)."""
    params = dict(width=512, height=512, unroll=args.unroll, buffer=args.buffer)
    design = WindowFilter("max", (3, 3), **params) if pes is None else \
        window_system(pes, bytes_per_cycle=link, **params)
    found = synthesize(design, BOARD, name=f"scaling_x{pes or 'pe'}", seeds=args.seeds)
    return {**found.resources(), "fmax_mhz": found.fmax_mhz,
            "critical_path": found.critical_path[0] if found.critical_path else "n/a"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--unroll", type=int, default=8)
    parser.add_argument("--buffer", default="line", choices=("line", "smart"))
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--height", type=int, default=24)
    parser.add_argument("--clock", type=float, default=None,
                        help="MHz the ULX3S link is divided by (default: the board's clock)")
    parser.add_argument("--engine", default="pysim", choices=("pysim", "compiled"))
    parser.add_argument("--pes", default=",".join(map(str, PES)),
                        help="comma-separated system sizes")
    parser.add_argument("--link", default="both", choices=("both", "board", "unlimited"),
                        help="the links to run: the ULX3S's, the unlimited one, or both")
    parser.add_argument("--synth", action="store_true",
                        help="also synthesize and place and route each system (ULX3S-85F)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="place-and-route seeds per system with --synth (Fmax: median)")
    args = parser.parse_args(argv)
    board = resolve_board(BOARD)
    clock = args.clock or board.clock_mhz
    links = {f"{BOARD} SDRAM at {clock:g} MHz": system_bytes_per_cycle(board, clock),
             "unlimited": None}
    if args.link != "both":
        links = dict([list(links.items())[args.link == "unlimited"]])
    sizes = [int(p) for p in args.pes.split(",")]
    worst = 0.0
    pe_fmax = None
    if args.synth:
        pe_fmax = synth_row(None, None, args)["fmax_mhz"]
        shown = "n/a" if pe_fmax is None else f"{pe_fmax:.1f} MHz"
        print(f"one bare PE on {BOARD}: Fmax {shown} (median of {args.seeds} seeds)")
    for title, link in links.items():
        shown = "unlimited" if link is None else f"{link:.2f} B/cycle"
        print(f"line U{args.unroll}, {args.width} x {args.height} frames, link {title} "
              f"({shown})")
        header = (f"{'P':>3} {'channels':>8} {'ops/cycle':>10} {'model':>9} {'bound':>5} "
                  f"{'ratio':>6}")
        if args.synth:
            header += f" {'LUT':>7} {'FF':>7} {'BRAM':>5} {'Fmax MHz':>8} {'of PE':>6}"
        print(header)
        for pes in sizes:
            row = scaling_row(pes, link, args)
            worst = max(worst, abs(row["ratio"] - 1))
            line = (f"{pes:>3} {row['channels']:>8} {row['ops_per_cycle']:>10.2f} "
                    f"{row['model']:>9.2f} {row['bound']:>5} {row['ratio']:>6.3f}")
            if args.synth:
                s = synth_row(pes, link, args)
                fmax = "n/a" if s["fmax_mhz"] is None else f"{s['fmax_mhz']:.1f}"
                share = "n/a" if s["fmax_mhz"] is None or pe_fmax is None else \
                    f"{100 * s['fmax_mhz'] / pe_fmax:.1f}%"
                line += f" {s['lut']:>7} {s['ff']:>7} {s['bram']:>5} {fmax:>8} {share:>6}"
                line += f"\n    critical path: {s['critical_path']}"
            print(line, flush=True)
        print()
    print(f"largest departure from the model: {100 * worst:.1f}% (goal: within 5%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
