"""What ``hwgen deploy`` records of a deployment, and how ``hwgen board run`` rebuilds its job.

The manifest names the job (kernel and every parameter), the board, the UART, the memory's frame
layout, the protocol, the bridge's identity and the HMM's layout; from it a host rebuilds the
same PE and HMM (checked by the layout id) to decode what the board answers, and the same
:class:`~hwgen.board.top.BoardTop` to simulate the board.
"""

import numpy as np

from ..catalog import resolve_board
from ..errors import HwgenError, ParameterError
from ..instrument import HMMLayout
from ..kernels import WindowFilter
from ..kernels.pipeline import Pipeline
from ..programs import PROGRAMS
from ..sim import instrument_pe, instrument_pipeline
from ..versions import tool_versions

from .top import BoardTop

__all__ = ["MANIFEST_VERSION", "ManifestError", "Deployment", "deployment_top", "make_manifest"]

MANIFEST_VERSION = 1


class ManifestError(ValueError):
    """A manifest that is not one ``hwgen deploy`` wrote, or that describes another job."""


def _platform_of(board):
    """What the job was elaborated for on ``board`` (a board's name), as ``deploy`` built it: the
    family chooses parts of the HMM (counter tables where it has LUT RAM), and so its layout.
    A board hwgen does not know by name (one deployed from a board file) gives none; the
    layout id check then says whether the job rebuilt without it is the deployed one."""
    try:
        return resolve_board(board).elaboration_platform()
    except ParameterError:
        return None


def deployment_top(design, memory_elements, divisor, launch_delay_cycles=None):
    """The deployed top of ``design`` (an instrumented window filter or pipeline) with
    ``memory_elements``; a pipeline's threads start ``launch_delay_cycles`` apart."""
    if isinstance(design.design, Pipeline):
        # A pipeline has at most one read in flight per thread (its response tags' queue).
        return BoardTop(design, memory_elements, divisor=divisor,
                        max_outstanding_reads=design.design.threads,
                        launch_delay_cycles=launch_delay_cycles)
    return BoardTop(design, memory_elements, divisor=divisor)


def make_manifest(*, kernel, pe, design, top, board, probes, baud, memory_blocks, bitstream,
                  protocol, job=None, launch_delay_cycles=None):
    """The manifest of a deployment (plain data); ``bitstream`` ``None`` when only the build
    plan was written. For a program, ``job`` is its job and ``pe`` its pipeline."""
    name = None if bitstream is None else next(iter(bitstream.files))
    if job is None:
        what = {"kernel": kernel, "parameters": pe.parameters(),
                "frame": {"src_base": 0, "dst_base": pe.width * pe.height}}
    else:
        what = {"program": kernel, "parameters": job.parameters(),
                "job_arguments": job.arguments(), "launch_delay_cycles": launch_delay_cycles,
                "stages": list(pe.stage_names)}
    return {
        "manifest_version": MANIFEST_VERSION,
        "tool_versions": tool_versions(),
        **what,
        "board": board.name,
        "probes": probes,
        "clock_mhz": board.clock_mhz,
        "uart": {"baud": baud, "divisor": top.divisor, "format": "8N1"},
        "memory": {"elements": top.memory.size, "banks": top.memory.banks,
                   "block_rams": memory_blocks,
                   "timing": "as the ideal memory model: latency 1 cycle, no bandwidth limit"},
        "params": top.params,
        "identity": top.identity.to_json(),
        "protocol": protocol,
        "bitstream": None if bitstream is None else {**bitstream.to_json(), "path": name},
        "files": ({"build_plan": "build_plan.zip"} if bitstream is None else
                  {"bitstream": name, "yosys_log": "top.rpt", "nextpnr_log": "top.tim"}),
        "hmm_layout": design.layout.to_json(),
    }


class Deployment:
    """A deployment read back from its manifest: the PE (a window filter, or a program's
    pipeline and its ``job``), its HMM and the job's layout.

    Parameters
    ----------
    manifest : dict
        As :func:`make_manifest` wrote it.
    """

    def __init__(self, manifest):
        try:
            if manifest.get("manifest_version") != MANIFEST_VERSION:
                raise ManifestError(f"manifest_version {manifest.get('manifest_version')!r} is "
                                    f"not {MANIFEST_VERSION}")
            self.program = manifest.get("program")
            if self.program is None:
                p = manifest["parameters"]
                mask = np.array(p["mask_array"]) if p["mask"] == "custom" else p["mask"]
                self.job = None
                self.pe = WindowFilter(p["op"], (p["rows"], p["cols"]), mask=mask,
                                       pixel_bits=p["pixel_bits"], width=p["width"],
                                       height=p["height"], unroll=p["unroll"],
                                       buffer=p["buffer"], pipeline=p["pipeline"],
                                       tree_stages=p["tree_stages"], credits=p["credits"])
                self.design = instrument_pe(self.pe, probes=manifest["probes"],
                                            platform=_platform_of(manifest["board"]))
                self.kernel = manifest["kernel"]
                self.src_base = manifest["frame"]["src_base"]
                self.dst_base = manifest["frame"]["dst_base"]
            else:
                if self.program not in PROGRAMS:
                    raise ManifestError(f"program {self.program!r} is not one of "
                                        f"{', '.join(PROGRAMS)}")
                self.job = PROGRAMS[self.program](**manifest["job_arguments"])
                self.pe = Pipeline(self.job.program)
                self.design = instrument_pipeline(self.pe, probes=manifest["probes"],
                                                  platform=_platform_of(manifest["board"]))
                self.kernel = self.program
                self.launch_delay_cycles = manifest["launch_delay_cycles"]
            self.layout = HMMLayout.from_json(manifest["hmm_layout"])
            self.board = manifest["board"]
            self.baud = manifest["uart"]["baud"]
            self.memory_elements = manifest["memory"]["elements"]
            self.params = manifest["params"]
        except (KeyError, TypeError, AttributeError) as error:
            raise ManifestError(f"it lacks {error}") from None
        except (HwgenError, ParameterError) as error:
            raise ManifestError(str(error)) from None
        if self.design.layout.layout_id != self.layout.layout_id:
            raise ManifestError(f"its HMM layout id {self.layout.layout_id:#010x} is not the "
                                f"rebuilt job's {self.design.layout.layout_id:#010x}: written by "
                                f"another hwgen version")
        self.manifest = manifest

    def param_values(self):
        """The run-time parameters in the protocol's order."""
        if self.job is not None:
            values = self.job.memory()[1]
        else:
            values = {"src_base": self.src_base, "dst_base": self.dst_base}
        return [values[name] for name in self.params]

    def top(self, divisor):
        """The deployed top, with ``divisor`` cycles per UART bit."""
        return deployment_top(self.design, self.memory_elements, divisor,
                              getattr(self, "launch_delay_cycles", None))
