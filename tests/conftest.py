import os
import sys
from pathlib import Path

# The reference models live next to the tests.
sys.path.insert(0, str(Path(__file__).parent))

# The suite simulates hundreds of small designs, and compiling each for the compiled engine would
# cost seconds: it runs in Amaranth's simulator unless told otherwise. The compiled engine has its
# own tests, which check it gives the same results (tests/test_compiled_engine.py).
os.environ.setdefault("HWGEN_ENGINE", "pysim")

# Property tests draw their examples from a fixed seed, as every other test does: a run that
# passes passes again.
from hypothesis import settings  # noqa: E402

settings.register_profile("fixed", derandomize=True)
settings.load_profile("fixed")
