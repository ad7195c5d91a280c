"""``hwgen run``: run a multithreaded-pipeline program in simulation, profile its threads with
the hardware measurement module, summarise them and export the traces."""

import json
import time
from pathlib import Path

from ...model import predict_program
from ...instrument import PROBE_PRESETS
from ...sim import STATE_NAMES, HostModel, instrument_pipeline, run_threads
from ...sim.recipe import pipeline_of

from ...errors import HwgenError, SuspectMeasurement
from ..figures import figure
from ..options import (add_engine_option, add_json_option, add_memory_options, add_option,
                       add_output_option, add_quiet_option, engine_from_args, engine_line,
                       memory_from_args, simulation_seconds)
from ..outputs import check_file_option, staged_file, write_files
from ..programs import add_program_options, job_from_args
from ..report import add_report_option, check_report_option, report_file
from ...progress import Progress
from ...records import RunResult
from ...programs import PROGRAMS
from ...traces.timeline import Timeline
from ..traces import add_drain_option, add_trace_options, check_trace_options, trace_files

__all__ = ["add_options", "run"]

DESCRIPTION = ("Simulate a program on the multithreaded stage-controlled pipeline against a "
               "memory model with the hardware measurement module attached, check its "
               "result against a numpy model, and report what the hardware recorded: "
               "cycles, the share of time each thread spent in each state, ops and bytes "
               "per cycle; optionally as Paraver and Perfetto traces. `hwgen list` shows "
               "the programs and their options.")


def add_options(parser):
    parser.add_argument("program", metavar="PROGRAM",
                        help=f"one of: {', '.join(PROGRAMS)}; or a job of your own as "
                             f"module:Name or file.py:Name")
    add_program_options(parser)
    profile = parser.add_argument_group("profile")
    add_option(profile, "--probes", default="default", choices=PROBE_PRESETS,
               metavar="|".join(PROBE_PRESETS),
               help="what the HMM measures: minimal (the thread-state records, cycles, ops and "
                    "bytes: the least hardware), default (also per-thread stall counters, state "
                    "profiles, samples, and every stream and state machine), full (also a "
                    "counter per source line)")
    add_option(profile, "--sample-period", type=int, default=64, metavar="P",
               help="cycles between samples of stall cycles, ops and bytes")
    add_option(profile, "--trace-depth", type=int, default=1024, metavar="RECORDS",
               help="thread-state records the HMM buffers, a power of two")
    add_drain_option(profile, default=HostModel().drain_interval_cycles,
                     what="the HMM's traces", running="the program runs")
    add_trace_options(parser)
    add_json_option(parser, "the run's figures")
    add_report_option(parser)
    add_output_option(parser, "--vcd", "FILE", "a waveform", ".vcd")
    add_memory_options(parser, seeded="the program's random data (gemm's matrices, any job's "
                                      "seed option)")
    add_engine_option(parser)
    add_quiet_option(parser, "print nothing on success, show no progress")


def _host_from_args(args):
    if args.launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {args.launch_delay}")
    if args.drain_interval < 0:
        raise HwgenError(f"--drain-interval must be an integer >= 0, not {args.drain_interval}")
    return HostModel(launch_delay_cycles=args.launch_delay,
                     drain_interval_cycles=args.drain_interval or None)


def _profiled(job, args):
    """The job's pipeline with the profiling HMM the options describe."""
    if args.sample_period < 1:
        raise HwgenError(f"--sample-period must be a positive integer, not {args.sample_period}")
    depth = args.trace_depth
    if depth < 1 or depth & (depth - 1):
        raise HwgenError(f"--trace-depth must be a power of two, not {depth}")
    return instrument_pipeline(pipeline_of(job), probes=args.probes,
                               sample_period=args.sample_period, state_depth=depth)


def _simulate(job, design, memory, host, vcd, quiet, engine):
    storage, params = job.memory()
    budget = job.cycle_budget(memory, host)
    with (Progress("simulating", unit="cycle", enabled=not quiet) as bar,
          staged_file(vcd) as staged):
        return storage, run_threads(design, storage, params=params, host=host, memory=memory,
                                    max_cycles=budget, vcd=staged, progress=bar.update_to,
                                    engine=engine,
                                    expected_cycles=(None if job.shape() is None else
                                                     predict_program(job, memory, host).cycles))


def run(args):
    check_file_option("--json", args.json)
    check_file_option("--vcd", args.vcd)
    check_report_option(args)
    tracing = check_trace_options(args)
    host = _host_from_args(args)
    job = job_from_args(args)
    memory = memory_from_args(args)
    engine = engine_from_args(args, quiet=args.quiet)
    design = _profiled(job, args)

    started = time.perf_counter()
    try:
        storage, result = _simulate(job, design, memory, host, args.vcd, args.quiet, engine)
    except RuntimeError as error:
        raise HwgenError(f"{job.describe()}: {error}") from None
    elapsed = simulation_seconds(result.engine, time.perf_counter() - started)
    matches = job.matches(storage)
    suspect = ([] if matches else ["the result does not match the numpy model"]) + (
        [f"HMM values saturated, their figures are lower bounds: {', '.join(result.saturated)}"]
        if result.saturated else []) + _dropped(result)

    stem = f"{job.name}-{job.parameters().get('variant', 'default')}"
    files = {}
    if tracing:
        timeline = Timeline.from_readout(job.describe(), result.readout, result.layout)
        files.update(trace_files(args, timeline, stem))
    record = RunResult(program=job.name, parameters=job.parameters(), memory=memory, host=host,
                       stages=tuple(design.design.stage_names),
                       result_matches_numpy_model=matches, suspect=tuple(suspect), run=result,
                       simulation_seconds=elapsed, trace_files=tuple(sorted(map(str, files))),
                       summary=job.summary(storage))
    if args.json or args.report is not None:
        # A long run's record holds every change of the thread states: made only when asked for.
        report = record.to_json()
        if args.json:
            files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
        files.update(report_file(args, report, args.json or "this hwgen run"))
    write_files(files)
    if not args.quiet:
        print(summary(job, result, memory, matches, storage, elapsed))
        for path in [*files, *([args.vcd] if args.vcd else [])]:
            print(f"  wrote {path}")
    if suspect:
        raise SuspectMeasurement(f"{job.describe()}: {'; '.join(suspect)}")
    return 0


def _dropped(result):
    """Why the traces cannot be trusted when the HMM dropped records (the host drained too
    slowly): the timeline misses those changes."""
    if not (result.state_records_dropped or result.samples_dropped):
        return []
    return [f"the HMM dropped {result.state_records_dropped} thread-state records and "
            f"{figure(result.samples_dropped, 'd')} samples (drain more often with "
            f"--drain-interval, or deepen --trace-depth)"]


def summary(job, result, memory, matches, storage, elapsed):
    """The summary figures: cycles, ops and bytes per cycle, time per state per thread."""
    verdict = "matches" if matches else "DOES NOT MATCH"
    value = "".join(f" ({key} ~ {figure(v, '.6f') if isinstance(v, float) else v})"
                    for key, v in job.summary(storage).items())
    lines = [
        f"{job.describe()}, memory latency {memory.latency_cycles}: {result.cycles} cycles; "
        f"result {verdict} the numpy model{value}",
        "  ops and bytes: not counted by this HMM (--probes minimal)" if result.ops is None else
        f"  ops {result.ops} ({figure(result.ops_per_cycle)} ops/cycle); read "
        f"{result.bytes_read} B, wrote {result.bytes_written} B ({figure(result.bytes_per_cycle)} "
        f"B/cycle)",
        "  thread  launch  " + "  ".join(f"{name + ' %':>10}" for name in STATE_NAMES)
        + "  stall cycles",
    ]
    for thread, percent in enumerate(result.state_percent()):
        lines.append(f"  {thread:6}  {result.launch_cycles[thread]:6}  "
                     + "  ".join(f"{figure(percent[name], '.1f'):>10}" for name in STATE_NAMES)
                     + f"  {figure(result.stall_cycles[thread], 'd'):>12}")
    readout = result.readout
    samples = ("no samples" if result.sample_period_cycles is None else
               f"{len(readout.traces['samples'])} samples every {result.sample_period_cycles} "
               f"cycles")
    lines.append(
        f"  measured by the HMM: {len(readout.traces['thread_states'])} thread-state records, "
        f"{samples}; traces count clock cycles from the HMM's start, the job ran in cycles "
        f"{result.job_start_cycle}..{result.job_start_cycle + result.cycles - 1}")
    if result.state_records_dropped or result.samples_dropped:
        profiled = "thread_state.thread0" in readout.tables
        lines.append(f"  DROPPED by the HMM (the host drained too slowly): "
                     f"{result.state_records_dropped} thread-state records, "
                     f"{figure(result.samples_dropped, 'd')} samples; the timeline misses those "
                     f"changes" + ("" if profiled else " and the state percentages are n/a "
                                   "(--probes minimal has no state profiles)"))
    if result.saturated:
        lines.append(f"  SATURATED (lower bounds): {', '.join(result.saturated)}")
    lines.append(f"  {engine_line(result.engine, elapsed, result.cycles)}")
    return "\n".join(lines)
