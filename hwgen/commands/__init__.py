"""One module per command; each has ``register(subparsers)``."""

from . import build, estimate, listing, sim, synth

COMMANDS = [listing, build, sim, synth, estimate]
