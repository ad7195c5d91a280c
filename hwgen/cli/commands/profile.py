"""``hwgen profile``: where the cycles of a kernel or a pipeline program go, per line of its
Python source (and per program step)."""

import json
import time
from pathlib import Path

import numpy as np

from ... import __file__ as _hwgen_init
from ...catalog import KERNELS, design_title
from ...instrument import attach, line_probes, pe_probes, pipeline_probes
from ...kernels.pipeline import Pipeline
from ...programs import PROGRAMS
from ...sim import (HostModel, LineProfile, LineProfiler, StepProfiler, run_threads,
                    run_window_filter)
from ...sim.engine import EngineUnavailable, engine_named

from ...errors import HwgenError, SuspectMeasurement
from ..figures import figure
from ..options import (add_deprecated_alias, add_json_option, add_kernel_options, add_memory_options, add_option,
                       add_output_option, add_quiet_option, engine_line, memory_from_args,
                       simulation_seconds, window_filter_from_args)
from ..outputs import check_file_option, write_files
from ..report import check_report_option, report_file
from ...versions import tool_versions
from ..programs import add_program_options, job_from_args
from .sim import model_check

__all__ = ["add_options", "run"]

DESCRIPTION = ("Simulate a window-filter kernel or a multithreaded-pipeline program and "
               "attribute every clock cycle of its job to the source lines active in it (a line "
               "is active when the If/Elif/Else arms, Switch cases and FSM state that control "
               "its statements hold): sampled in Amaranth's simulator without adding hardware, "
               "or counted by line counters in the HMM, as on a board (--hmm, --engine "
               "compiled); for programs, each step's executions, running and stalled cycles, "
               "occupancy, bytes and ops too. `docs/profile.md` explains the figures.")

#: Width of the HMM's counters, the line counters' included.
COUNTER_BITS = 32

#: Where the files of the project are, for paths in the outputs.
PROJECT_ROOT = Path(_hwgen_init).resolve().parent.parent


def add_options(parser):
    add_kernel_options(parser, programs=tuple(PROGRAMS))
    add_program_options(parser)
    group = parser.add_argument_group("profile")
    add_option(group, "--top", type=int, default=20, metavar="N",
               help="source lines printed, the busiest first (0: all)")
    add_option(group, "--cycles", default=None, metavar="A:B",
               help="also print, for each cycle A to B - 1 of the simulation, the lines active "
                    "in it (needs --engine pysim)", shown="none")
    add_option(group, "--hmm", action="store_true",
               help="also count every line's active cycles in hardware, with counters in the "
                    "HMM, and check both profiles agree", shown="off")
    add_option(group, "--engine", default="pysim", choices=("pysim", "compiled"),
               help="pysim: sample Amaranth's simulator, no hardware added; compiled: run the "
                    "design compiled to C++ with the HMM's line counters (implies --hmm; no "
                    "--cycles, no program steps)")
    add_json_option(parser, "the profile")
    add_output_option(parser, "--report", "FILE.html",
                      "an annotated source view: lines shaded by their share, figures on hover",
                      ".html")
    add_deprecated_alias(parser, "--html", "--report")
    add_memory_options(parser, seeded="a kernel's random pixels or gemm's random matrices")
    add_quiet_option(parser, "print nothing on success")


def parse_window(text):
    """``(first, stop)`` of ``--cycles A:B``."""
    if text is None:
        return None
    first, sep, stop = text.partition(":")
    try:
        window = (int(first), int(stop))
    except ValueError:
        window = None
    if not sep or window is None or not 0 <= window[0] < window[1]:
        raise HwgenError(f"--cycles must be A:B with integers 0 <= A < B, not {text!r}")
    return window


def run(args):
    if args.kernel not in KERNELS and args.kernel not in PROGRAMS:
        raise HwgenError(f"KERNEL|PROGRAM must be one of {', '.join((*KERNELS, *PROGRAMS))}, not "
                         f"{args.kernel!r}")
    check_file_option("--json", args.json)
    check_report_option(args)
    window = parse_window(args.cycles)
    if args.top < 0:
        raise HwgenError(f"--top must be an integer >= 0, not {args.top}")
    try:
        engine = engine_named(args.engine, name="--engine")
    except EngineUnavailable as error:
        raise HwgenError(str(error)) from None
    # An engine that cannot be observed from outside counts the lines in the HMM.
    compiled = not engine.observable
    if compiled and window is not None:
        raise HwgenError("--cycles lists the lines of each cycle from a simulation profile: "
                         "use --engine pysim")
    hmm = args.hmm or compiled
    memory = memory_from_args(args)
    started = time.perf_counter()
    if args.kernel in PROGRAMS:
        args.program = args.kernel
        profiled = _profile_program(args, memory, window, hmm, engine)
    else:
        profiled = _profile_kernel(args, memory, window, hmm, engine)
    report, lines, steps, problems = profiled
    elapsed = simulation_seconds(report["engine"], time.perf_counter() - started)
    report["simulation_seconds"] = elapsed
    files = {}
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    files.update(report_file(args, report, args.json or "this hwgen profile run"))
    write_files(files)
    if not args.quiet:
        how = ("counted by the HMM in the compiled engine" if compiled else
               "sampled in Amaranth's simulator" + (", and counted by the HMM" if hmm else ""))
        print(f"{report['title']}: {report['cycles']} cycles of the job, {how}")
        print(_lines_table(lines, args.top))
        if report["hmm"] is not None:
            counters = report["hmm"]
            print(f"  HMM line counters: {counters['line_counters']} x "
                  f"{counters['counter_bits']} bits = {counters['total_counter_bits']} counter "
                  f"bits" + ("" if counters["equal_to_simulation"] is None else
                             "; counts equal the simulation's" if counters["equal_to_simulation"]
                             else "; counts DIFFER from the simulation's"))
        if steps is not None:
            print(_steps_table(steps))
        elif args.kernel in PROGRAMS:
            print("  steps: profiled in Amaranth's simulator only (--engine pysim)")
        if lines.window is not None:
            print(_window_table(lines))
        for path in files:
            print(f"  wrote {path}")
        print(f"  {engine_line(report['engine'], elapsed, report['cycles'])}, profile included")
    if problems:
        raise SuspectMeasurement("; ".join(problems))
    return 0


def _counters(readout, lines, counters):
    """The ``hmm`` entry of the report, and what is wrong with its counts, if anything; the
    counts are checked against the simulation profile ``lines`` when there is one."""
    if counters is None:
        return None, []
    counts = counters.counts(readout)
    equal = None if lines is None else counts == {
        (entry.file, entry.line): entry.active_cycles for entry in lines.lines}
    saturated = [name for name in readout.saturated if name.startswith("line.")]
    entry = {"line_counters": len(counters.lines), "counter_bits": COUNTER_BITS,
             "total_counter_bits": len(counters.lines) * COUNTER_BITS,
             "equal_to_simulation": equal, "saturated": saturated}
    problems = ["the HMM's line counts differ from the simulation's"] if equal is False else []
    if saturated:
        problems.append(f"HMM line counters saturated, their counts are lower bounds: "
                        f"{', '.join(saturated)}")
    return entry, problems


def _profile_kernel(args, memory, window, hmm, engine):
    pe = window_filter_from_args(args)
    image = np.random.default_rng(args.seed).integers(0, 1 << pe.pixel_bits,
                                                      size=(pe.height, pe.width))
    counters = line_probes(pe, enable=pe.ctrl.busy) if hmm else None
    design = pe if counters is None else attach(pe, [*pe_probes(pe), *counters.probes],
                                                counter_bits=COUNTER_BITS)
    profilers = []
    simulated = engine.observable
    result = run_window_filter(
        design, image, memory=memory, instrument=False, engine=args.engine,
        on_simulator=(lambda sim: profilers.append(LineProfiler(sim, pe, enable=pe.ctrl.busy)))
        if simulated else None)
    lines = profilers[0].profile(cycles=window) if simulated else None
    readout = None if counters is None else result.figures.hmm
    entry, problems = _counters(readout, lines, counters)
    if lines is None:
        lines = LineProfile.from_counts(counters.counts(readout), result.figures.cycles)
    mismatch = model_check(pe, [image], [result.image])
    title = design_title(args.kernel, pe)
    report = {"tool_versions": tool_versions(), "title": title, "kernel": args.kernel,
              "parameters": pe.parameters(), "memory": memory.to_json(),
              "result_matches_numpy_model": mismatch is None,
              **lines.to_json(PROJECT_ROOT), "steps": [], "hmm": entry,
              "engine": result.engine}
    return report, lines, None, problems + ([mismatch] if mismatch else [])


def _profile_program(args, memory, window, hmm, engine):
    job = job_from_args(args)
    if args.launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {args.launch_delay}")
    host = HostModel(launch_delay_cycles=args.launch_delay)
    pe = Pipeline(job.program)
    counters = line_probes(pe, enable=pe.ctrl.busy) if hmm else None
    design = attach(pe, [*pipeline_probes(pe), *(counters.probes if counters else [])],
                    word_bits=64, counter_bits=COUNTER_BITS)
    storage, params = job.memory()
    profilers = []
    simulated = engine.observable

    def attach_profilers(sim):
        profilers.extend([LineProfiler(sim, pe, enable=pe.ctrl.busy), StepProfiler(sim, pe)])
    try:
        result = run_threads(design, storage, params=params, host=host, memory=memory,
                             engine=args.engine, max_cycles=job.cycle_budget(memory, host),
                             on_simulator=attach_profilers if simulated else None)
    except RuntimeError as error:
        raise HwgenError(f"{job.describe()}: {error}") from None
    lines = profilers[0].profile(cycles=window) if simulated else None
    steps = profilers[1].profile() if simulated else None
    readout = None if counters is None else result.readout
    entry, problems = _counters(readout, lines, counters)
    if lines is None:
        lines = LineProfile.from_counts(counters.counts(readout), result.cycles)
    matches = job.matches(storage)
    report = {"tool_versions": tool_versions(), "title": job.describe(), "program": job.name,
              "parameters": job.parameters(), "memory": memory.to_json(),
              "host": host.to_json(), "result_matches_numpy_model": matches,
              **lines.to_json(PROJECT_ROOT),
              "steps": [] if steps is None else steps.to_json(PROJECT_ROOT)["steps"],
              "hmm": entry, "engine": result.engine}
    if not matches:
        problems.append("the result does not match the numpy model")
    return report, lines, steps, problems


def _where(file, line):
    return f"{_short(file)}:{line}"


def _short(file):
    path = Path(file)
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _lines_table(profile, top):
    shown = profile.lines if top == 0 else profile.lines[:top]
    rows = [(_where(entry.file, entry.line), entry.code[:60], str(entry.active_cycles),
             figure(entry.percent, ".1f")) for entry in shown]
    header = ("file:line", "code", "active cycles", "% of job")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    text = [("  " + "  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                              for i, (cell, w) in enumerate(zip(row, widths)))).rstrip()
            for row in [header, *rows]]
    if len(shown) < len(profile.lines):
        text.append(f"  ... {len(profile.lines) - len(shown)} more lines (--top 0 shows all)")
    return "\n".join(text)


def _steps_table(steps):
    header = ("step", "file:line", "executions", "running", "stalled", "memory", "lock",
              "next stage", "occupancy", "bytes", "ops", "stalls are")
    rows = []
    for step in steps.steps:
        rows.append((step.name, "" if step.file is None else _where(step.file, step.line),
                     str(step.executions), str(step.running_cycles), str(step.stalled_cycles),
                     str(step.stalled_by["memory"]), str(step.stalled_by["lock"]),
                     str(step.stalled_by["next_stage"]), figure(step.occupancy_threads, ".2f"),
                     str(step.bytes_moved), str(step.ops), step.stall_role or ""))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(["  steps (cycles are thread-cycles):"] + [
        ("  " + "  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                          for i, (cell, w) in enumerate(zip(row, widths)))).rstrip()
        for row in [header, *rows]])


def _window_table(profile):
    always = {(e.file, e.line) for e in profile.lines if e.active_cycles == profile.cycles}
    text = [f"  cycle  lines active (besides the {len(always)} active in every cycle)"]
    for cycle, active in profile.window:
        text.append(f"  {cycle:5}  " + (", ".join(_where(f, l) for f, l in active
                                                  if (f, l) not in always) or "-"))
    return "\n".join(text)
