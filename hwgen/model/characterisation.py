"""The factors the cycle models fit to short simulations, read from ``characterisation.json``
(written by ``benchmarks/characterise.py``; see docs/model.md)."""

import json
from pathlib import Path

__all__ = ["CHARACTERISATION", "PATH"]

PATH = Path(__file__).with_name("characterisation.json")

#: The fitted factors and the configurations they were fitted on.
CHARACTERISATION = json.loads(PATH.read_text())
