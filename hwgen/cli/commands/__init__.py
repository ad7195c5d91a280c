"""One module per command; each has ``NAME``, ``HELP`` (one line for ``hwgen --help``),
``DESCRIPTION``, ``add_options(parser)`` and ``run(args)``."""

from . import board, deploy
from . import (build, estimate, explore, listing, overhead, profile, report, roofline, run, sim,
               synth)

COMMANDS = [listing, build, sim, run, profile, synth, estimate, overhead, roofline, explore, report,
            deploy, board]
