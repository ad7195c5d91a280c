"""What the hardware measurement module costs: one design synthesized with and without it."""

from dataclasses import dataclass, field

from ..kernels import PESystem
from ..kernels.pipeline import Pipeline
from ..sim import instrument_pe, instrument_pipeline, instrument_system

from .estimate import count_primitives
from ..catalog import resolve_board
from .synth import SynthResult, synthesize
from ..versions import tool_versions

__all__ = ["Overhead", "measure_overhead", "memory_bits"]


def memory_bits(design):
    """Bits of storage in ``design``'s memories (depth x width), counted on the generic
    elaboration so that vendor primitives do not hide any."""
    _, memories, _, _ = count_primitives(design)
    return sum(depth * width for depth, width, _ in memories)


@dataclass(frozen=True)
class Overhead:
    """Resources and Fmax of a design bare and with its HMM (:func:`measure_overhead`)."""
    board: str
    device_lut: int           # what one device of the board offers
    device_ff: int
    bare: object              # hwgen.resources.synth.SynthResult of the design alone
    with_hmm: object          # hwgen.resources.synth.SynthResult of the design with its HMM
    bram_block_bits: int
    bare_memory_bits: int
    with_hmm_memory_bits: int
    tool_versions: dict = field(default_factory=tool_versions)

    def rows(self):
        """``(label, bare, with HMM)`` for every figure compared (Fmax may be None)."""
        b, h = self.bare, self.with_hmm
        return [
            ("LUT", b.lut, h.lut),
            ("FF", b.ff, h.ff),
            ("block RAM (blocks)", b.bram, h.bram),
            ("block RAM bits", b.bram * self.bram_block_bits, h.bram * self.bram_block_bits),
            ("memory bits", self.bare_memory_bits, self.with_hmm_memory_bits),
            ("Fmax (MHz)", b.fmax_mhz, h.fmax_mhz),
        ]

    def device_share(self):
        """The HMM's LUTs and FFs as a fraction of one device: ``{"lut": f, "ff": f}``."""
        return {"lut": (self.with_hmm.lut - self.bare.lut) / self.device_lut,
                "ff": (self.with_hmm.ff - self.bare.ff) / self.device_ff}

    def to_json(self):
        figures = {}
        for label, before, after in self.rows():
            key = (label.lower().replace(" (blocks)", "_blocks").replace(" (mhz)", "_mhz")
                   .replace(" ", "_"))
            change = None if before is None or after is None else after - before
            figures[key] = {
                "bare": before, "with_hmm": after, "overhead": change,
                "overhead_percent": None if not before or change is None else 100 * change / before,
            }
        return {"tool_versions": self.tool_versions, "board": self.board, "figures": figures,
                "device_share_percent": {k: 100 * v for k, v in self.device_share().items()},
                "device_lut": self.device_lut, "device_ff": self.device_ff,
                "bram_block_bits": self.bram_block_bits,
                "bare": self.bare.to_json(), "with_hmm": self.with_hmm.to_json()}

    @classmethod
    def from_json(cls, obj):
        """The comparison :meth:`to_json` wrote (``figures`` and ``device_share_percent`` are
        derived, so they are not read)."""
        memory = obj["figures"]["memory_bits"]
        return cls(board=obj["board"], device_lut=obj["device_lut"], device_ff=obj["device_ff"],
                   bare=SynthResult.from_json(obj["bare"]),
                   with_hmm=SynthResult.from_json(obj["with_hmm"]),
                   bram_block_bits=obj["bram_block_bits"], bare_memory_bits=memory["bare"],
                   with_hmm_memory_bits=memory["with_hmm"], tool_versions=obj["tool_versions"])


def _instrument(pe, **options):
    if isinstance(pe, PESystem):
        return instrument_system(pe, **options)
    if isinstance(pe, Pipeline):
        return instrument_pipeline(pe, **options)
    return instrument_pe(pe, **options)


def measure_overhead(pe, board, *, seeds=3, progress=False, **instrument_options):
    """Synthesize ``pe`` (a PE, a :class:`hwgen.kernels.PESystem` or a
    :class:`hwgen.kernels.pipeline.Pipeline`) bare and with its HMM on ``board`` (with Fmax
    where the family has place and route); ``instrument_options`` go to
    :func:`hwgen.sim.instrument_pe`, :func:`hwgen.sim.instrument_system` or
    :func:`hwgen.sim.instrument_pipeline` (``probes``: the preset)."""
    board = resolve_board(board)
    platform = board.elaboration_platform()
    bare = synthesize(pe, board, name="bare", seeds=seeds, progress=progress)
    with_hmm = synthesize(_instrument(pe, platform=platform, **instrument_options), board,
                          name="with HMM", seeds=seeds, progress=progress)
    return Overhead(board=board.name, device_lut=board.resources.lut,
                    device_ff=board.resources.ff, bare=bare, with_hmm=with_hmm,
                    bram_block_bits=board.resources.bram_block_bits,
                    bare_memory_bits=memory_bits(pe),
                    with_hmm_memory_bits=memory_bits(_instrument(pe, **instrument_options)))
