"""``hwgen board run``: run the job of a deployment on a board (or on its simulation) and read its
HMM as a host does."""

import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from amaranth.sim import Simulator

from ...board.cosim import simulated_board
from ...board.host import BoardError, BoardHost, open_port, run_job
from ...board.manifest import Deployment, ManifestError
from ...errors import HwgenError, SuspectMeasurement
from ...records import RunResult, SimResult
from ...sim.compiled import EngineUnavailable, check_available
from ...progress import note
from ...sim import STATE_NAMES, CompiledSimulator, CycleData, HostModel, MemoryModel, ThreadRun, check_image
from ..figures import figure
from ..imageio import IMAGE_SUFFIXES, encode_image, read_image
from ..options import add_json_option, add_option, add_output_option, add_quiet_option
from ..outputs import check_file_option, write_files
from ..report import add_report_option, check_report_option, report_file
from .sim import hmm_summary, model_check

__all__ = ["add_options", "job_report", "program_report", "run"]

DESCRIPTION = ("Work with what `hwgen deploy` wrote. `board run DIR` loads the input over the "
               "board's UART, runs the job, reads the output and every value of the HMM, checks "
               "the output against the numpy model and writes the JSON and report `sim` writes, "
               "with measured_on.")

#: Cycles per UART bit of the simulated board: the deployed top with a shorter bit period.
SIMULATED_DIVISOR = 2


def add_options(parser):
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    parser_class=type(parser), title="actions")
    sub = actions.add_parser("run", help="run the deployment's job and read its HMM",
                             description="Run the job of the deployment in DIR on a board "
                                         "through --serial PORT, or on the deployed top in "
                                         "simulation behind a pseudo-terminal (--simulate).")
    sub.add_argument("dir", metavar="DIR", help="a folder `hwgen deploy` wrote")
    where = sub.add_mutually_exclusive_group(required=True)
    add_option(where, "--serial", metavar="PORT", default=None,
               help="the board's serial port (/dev/ttyUSB0, /dev/ttyACM0...)",
               shown="none: give it or --simulate")
    add_option(where, "--simulate", action="store_true", shown=None,
               help=f"simulate the deployed top instead, UART bits included "
                    f"({SIMULATED_DIVISOR} cycles per bit), with this very host talking to it "
                    f"through a pseudo-terminal")
    add_option(sub, "--input", metavar="IMG", default=None,
               help="a window filter's input image: a .npy 2-D integer array, or an 8- or "
                    "16-bit greyscale PNG or PGM (a program's data are its job's, seeded)",
               shown="a seeded random image of the deployed size")
    add_option(sub, "--seed", type=int, default=0, metavar="S", help="seed of the random image")
    add_output_option(sub, "--output", "IMG", "the output image (.npy, .png or .pgm)")
    add_json_option(sub, "the run's figures")
    add_report_option(sub)
    add_option(sub, "--timeout", type=float, default=None, metavar="SECONDS",
               help="how long the host waits for each answer of the board",
               shown="5 on a board, 600 simulated")
    add_quiet_option(sub)


def _deployment(folder):
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        raise HwgenError(f"DIR: no manifest.json in {str(folder)!r}: give a folder `hwgen "
                         f"deploy` wrote")
    try:
        return Deployment(json.loads(path.read_text()))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HwgenError(f"DIR: {path} is not JSON ({error})") from None
    except ManifestError as error:
        raise HwgenError(f"DIR: {path} is not a deployment's manifest: {error}") from None


def job_report(deployment, *, image_source, figures, mismatch, measured_on, engine, seconds):
    """The JSON of a board run: ``sim``'s record (:class:`~hwgen.records.SimResult`) measured
    on the board or its simulation."""
    pe = deployment.pe
    model = pe.traffic()
    matches = figures.traffic_matches(model.bytes_read, model.bytes_written)
    suspect = [] if matches is not False else [
        "the traffic measured does not match the fetch model"]
    if mismatch is not None:
        suspect.append(mismatch)
    if figures.saturated:
        suspect.append(f"HMM values saturated, their figures are lower bounds: "
                       f"{', '.join(figures.saturated)}")
    return SimResult(
        kernel=deployment.kernel, parameters=pe.parameters(), memory=MemoryModel(), link=None,
        input=image_source, figures=figures, fetch_model=model, fetch_model_matches=matches,
        result_matches_numpy_model=mismatch is None, engine=engine, suspect=tuple(suspect),
        simulation_seconds=seconds, measured_on=measured_on, board=deployment.board).to_json()


def _figures(readout, element_bytes):
    """The figures of a PE's readout; a ``minimal`` HMM counts no waits, whose figures are then
    ``None`` (n/a)."""
    values = readout.values
    if "stream.rd_req.blocking" in values:
        return CycleData.from_readout(readout, element_bytes=element_bytes)
    return CycleData(cycles=values["busy_cycles"],
                     outputs=values["bytes_written"] // element_bytes,
                     bytes_read=values["bytes_read"], bytes_written=values["bytes_written"],
                     ops=values["ops"], measured_by="hmm", total_cycles=values["cycles"],
                     hmm=readout, saturated=tuple(readout.saturated))


def program_report(deployment, *, result, matches, measured_on, engine, seconds, values):
    """The JSON of a program's board run: ``run``'s record (:class:`~hwgen.records.RunResult`)
    measured on the board or its simulation. The board's launcher starts
    the threads; the host does not see when, so ``launch_cycle`` is ``null``."""
    job = deployment.job
    suspect = ([] if matches else ["the result does not match the numpy model"]) + (
        [f"HMM values saturated, their figures are lower bounds: {', '.join(result.saturated)}"]
        if result.saturated else [])
    return RunResult(
        program=job.name, parameters=job.parameters(), memory=MemoryModel(),
        host=HostModel(deployment.launch_delay_cycles, None),
        stages=tuple(deployment.pe.stage_names), result_matches_numpy_model=matches,
        suspect=tuple(suspect), run=replace(result, engine=engine), simulation_seconds=seconds,
        summary=job.summary(values), measured_on=measured_on, board=deployment.board).to_json()


def run(args):
    for option, path in (("--output", args.output), ("--json", args.json)):
        check_file_option(option, path)
    check_report_option(args)
    if args.output and Path(args.output).suffix.lower() not in IMAGE_SUFFIXES:
        raise HwgenError(f"--output must end in {', '.join(IMAGE_SUFFIXES)}, not "
                         f"{Path(args.output).name!r}")
    if args.timeout is not None and not args.timeout > 0:
        raise HwgenError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    deployment = _deployment(args.dir)
    pe = deployment.pe
    if deployment.job is not None:
        for option, value in (("--input", args.input), ("--output", args.output)):
            if value is not None:
                raise HwgenError(f"{option} is a window filter's image; the {deployment.program} "
                                 f"job in {args.dir} brings its own data")
        return _run_program(args, deployment)
    if args.input:
        image = read_image(args.input)
        source = args.input
    else:
        image = np.random.default_rng(args.seed).integers(0, 1 << pe.pixel_bits,
                                                          size=(pe.height, pe.width))
        source = f"random (seed {args.seed})"
    try:
        image = check_image(image, pe)
    except ValueError as error:
        raise HwgenError(f"--input: {error} (deployed in {args.dir})") from None

    out_shape = (pe.out_height, pe.out_width)
    job, measured_on, engine, seconds = _on_board(
        args, deployment, load=(deployment.src_base, image.ravel()),
        read_back=(deployment.dst_base, out_shape[0] * out_shape[1]))
    output = np.array(job.values, dtype=np.int64).reshape(out_shape)
    figures = _figures(job.readout, pe.wr_beat.element_bytes)
    mismatch = model_check(pe, [image], [output])
    report = job_report(deployment, image_source=source, figures=figures, mismatch=mismatch,
                        measured_on=measured_on, engine=engine, seconds=seconds)
    files = {}
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    files.update(report_file(args, report, args.json or "this hwgen board run"))
    if args.output:
        files[Path(args.output)] = encode_image(args.output, output, pe.pixel_bits)
    write_files(files)
    if not args.quiet:
        verdict = "matches" if mismatch is None else "DOES NOT MATCH"
        print(f"{deployment.kernel} on the {measured_on} ({deployment.board}): "
              f"{figures.cycles} cycles ({figure(figures.ops_per_cycle)} ops/cycle); "
              f"result {verdict} the numpy model")
        print(f"  read {figures.bytes_read} B, wrote {figures.bytes_written} B, ops "
              f"{figures.ops}, CI {figure(figures.ci)} ops/byte")
        if figures.rd_req_wait_cycles is not None:
            for line in hmm_summary(figures):
                print(f"  {line}")
        else:
            print(f"  HMM (minimal): {figures.total_cycles} cycles observed, the job's "
                  f"{figures.cycles} and {figures.total_cycles - figures.cycles} around it")
        for path in files:
            print(f"  wrote {path}")
        print(f"  {seconds:.1f} s on the {measured_on}")
    if report["suspect"]:
        raise SuspectMeasurement("; ".join(report["suspect"]))
    return 0


def _run_program(args, deployment):
    storage = deployment.job.memory()[0]
    job, measured_on, engine, seconds = _on_board(args, deployment, load=(0, storage),
                                                  read_back=(0, len(storage)))
    threads = deployment.pe.threads
    result = ThreadRun.from_readout(job.readout, deployment.layout,
                                    launch_cycles=[None] * threads)
    matches = deployment.job.matches(job.values)
    report = program_report(deployment, result=result, matches=matches, measured_on=measured_on,
                            engine=engine, seconds=seconds, values=job.values)
    files = {}
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    files.update(report_file(args, report, args.json or "this hwgen board run"))
    write_files(files)
    if not args.quiet:
        verdict = "matches" if matches else "DOES NOT MATCH"
        print(f"{deployment.job.describe()} on the {measured_on} ({deployment.board}): "
              f"{result.cycles} cycles; result {verdict} the numpy model")
        if result.ops is not None:
            print(f"  ops {result.ops} ({figure(result.ops_per_cycle)} ops/cycle); read "
                  f"{result.bytes_read} B, wrote {result.bytes_written} B")
        for thread, counts in enumerate(result.state_cycles):
            print(f"  thread {thread}: " + (", ".join(
                f"{name} {n}" for name, n in zip(STATE_NAMES, counts)) if counts is not None else "n/a"))
        for path in files:
            print(f"  wrote {path}")
        print(f"  {seconds:.1f} s on the {measured_on}")
    if report["suspect"]:
        raise SuspectMeasurement("; ".join(report["suspect"]))
    return 0


def _on_board(args, deployment, *, load, read_back):
    """Run the job on the board or its simulation: ``(BoardJob, measured_on, engine,
    seconds)``."""
    timeout = args.timeout or (600.0 if args.simulate else 5.0)
    progress = None if args.quiet else (lambda step: print(f"  {step}...", flush=True))
    started = time.perf_counter()
    try:
        if args.simulate:
            simulator, engine = _simulator()
            with simulated_board(deployment.top(SIMULATED_DIVISOR), simulator=simulator) as path:
                job = _job(deployment, path, load, read_back, timeout, progress)
            measured_on = "simulated board"
        else:
            job = _job(deployment, args.serial, load, read_back, timeout, progress)
            measured_on, engine = "board", None
    except BoardError as error:
        raise HwgenError(str(error)) from None
    return job, measured_on, engine, time.perf_counter() - started


def _simulator():
    """The simulator of a simulated board and the engine it is: the compiled engine
    (:class:`~hwgen.sim.CompiledSimulator`, six times faster on a deployed top) where it can
    run, else Amaranth's, said in a line."""
    try:
        check_available()
    except EngineUnavailable as error:
        note(f"the compiled engine cannot run here ({error}): simulating the board with "
             f"Amaranth's simulator")
        return Simulator, {"name": "pysim"}
    return CompiledSimulator, {"name": "compiled"}


def _job(deployment, port_name, load, read_back, timeout, progress):
    port = open_port(port_name, baud=deployment.baud, timeout_seconds=timeout)
    try:
        return run_job(BoardHost(port, port_name), deployment.layout, load=load,
                       params=deployment.param_values(), read_back=read_back,
                       element_bytes=deployment.pe.rd_beat.element_bytes,
                       timeout_seconds=timeout, progress=progress)
    finally:
        port.close()
