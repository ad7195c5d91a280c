"""What a design costs on a device: synthesis with Yosys and Fmax from nextpnr
(:mod:`.synth`), fast estimates by counting primitives (:mod:`.estimate`, over the bit-level
netlist of :mod:`.netlist`), and the overhead of the HMM (:mod:`.overhead`)."""

from .estimate import Estimate, estimate
from .overhead import Overhead, measure_overhead
from .synth import SynthResult, synthesize

__all__ = ["Estimate", "Overhead", "SynthResult", "estimate", "measure_overhead", "synthesize"]
