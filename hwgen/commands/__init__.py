"""One module per command; each has ``register(subparsers)``."""

from . import build, estimate, explore, listing, roofline, run, sim, synth

COMMANDS = [listing, build, sim, run, synth, estimate, roofline, explore]
