"""What the hardware measurement module costs: one design synthesized with and without it."""

from dataclasses import dataclass

from ..sim import instrument_pe

from .estimate import count_primitives
from ..catalog import resolve_board
from .synth import synthesize
from ..versions import tool_versions

__all__ = ["Overhead", "measure_overhead", "memory_bits"]


def memory_bits(design):
    """Bits of storage in ``design``'s memories (depth x width), counted on the generic
    elaboration so that vendor primitives do not hide any."""
    _, memories, _, _ = count_primitives(design)
    return sum(depth * width for depth, width, _ in memories)


@dataclass(frozen=True)
class Overhead:
    """Resources and Fmax of a design without and with its HMM (:func:`measure_overhead`)."""
    board: str
    device_lut: int           # what one device of the board offers
    device_ff: int
    original: object          # hwgen.resources.synth.SynthResult
    instrumented: object      # hwgen.resources.synth.SynthResult
    bram_block_bits: int
    original_memory_bits: int
    instrumented_memory_bits: int

    def rows(self):
        """``(label, original, instrumented)`` for every figure compared (Fmax may be None)."""
        o, i = self.original, self.instrumented
        return [
            ("LUT", o.lut, i.lut),
            ("FF", o.ff, i.ff),
            ("block RAM (blocks)", o.bram, i.bram),
            ("block RAM bits", o.bram * self.bram_block_bits, i.bram * self.bram_block_bits),
            ("memory bits", self.original_memory_bits, self.instrumented_memory_bits),
            ("Fmax (MHz)", o.fmax_mhz, i.fmax_mhz),
        ]

    def device_share(self):
        """The HMM's LUTs and FFs as a fraction of one device: ``{"lut": f, "ff": f}``."""
        return {"lut": (self.instrumented.lut - self.original.lut) / self.device_lut,
                "ff": (self.instrumented.ff - self.original.ff) / self.device_ff}

    def to_json(self):
        figures = {}
        for label, before, after in self.rows():
            key = (label.lower().replace(" (blocks)", "_blocks").replace(" (mhz)", "_mhz")
                   .replace(" ", "_"))
            change = None if before is None or after is None else after - before
            figures[key] = {
                "original": before, "instrumented": after, "overhead": change,
                "overhead_percent": None if not before or change is None else 100 * change / before,
            }
        return {"tool_versions": tool_versions(), "board": self.board, "figures": figures,
                "device_share_percent": {k: 100 * v for k, v in self.device_share().items()},
                "original": self.original.to_json(), "instrumented": self.instrumented.to_json()}


def measure_overhead(pe, board, *, seeds=3, progress=False, **instrument_options):
    """Synthesize ``pe`` bare and with the default HMM on ``board`` (with Fmax where the family
    has place and route); ``instrument_options`` go to :func:`hwgen.instrument.attach`."""
    board = resolve_board(board)
    platform = board.elaboration_platform()
    original = synthesize(pe, board, name="original", seeds=seeds, progress=progress)
    instrumented = synthesize(instrument_pe(pe, platform=platform, **instrument_options), board,
                              name="instrumented", seeds=seeds, progress=progress)
    return Overhead(board=board.name, device_lut=board.resources.lut,
                    device_ff=board.resources.ff, original=original, instrumented=instrumented,
                    bram_block_bits=board.resources.bram_block_bits,
                    original_memory_bits=memory_bits(pe),
                    instrumented_memory_bits=memory_bits(instrument_pe(pe, **instrument_options)))
