"""One module per command; each has ``register(subparsers)``."""

from . import build, estimate, explore, listing, overhead, roofline, run, sim, synth

COMMANDS = [listing, build, sim, run, synth, estimate, overhead, roofline, explore]
