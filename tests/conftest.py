import sys
from pathlib import Path

# The reference models live next to the tests.
sys.path.insert(0, str(Path(__file__).parent))
