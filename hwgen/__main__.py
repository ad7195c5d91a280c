import os
import sys

from .sim.cache import tool_environment

# Before anything imports matplotlib (or starts YoWASP): a tool whose cache cannot be written
# where it would keep it (a read-only home) keeps it in hwgen's cache instead.
os.environ.update(tool_environment())

from .cli.main import main  # noqa: E402

sys.exit(main())
