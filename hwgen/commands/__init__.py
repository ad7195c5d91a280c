"""One module per command; each has ``register(subparsers)``."""

from . import build, estimate, listing, run, sim, synth

COMMANDS = [listing, build, sim, run, synth, estimate]
