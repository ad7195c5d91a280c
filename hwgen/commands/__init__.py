"""One module per command; each has ``register(subparsers)``."""

from . import build, listing, sim

COMMANDS = [listing, build, sim]
