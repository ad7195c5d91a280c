"""One module per command; each has ``register(subparsers)``."""

from . import build, listing, run, sim

COMMANDS = [listing, build, sim, run]
