"""Cycle models: a design's cycles, ops and bytes per cycle predicted without simulation.

:mod:`.window` predicts a window filter in closed form from its fetch pattern, its credits and
the memory model; :mod:`.program` a pipeline program from its structure, with factors fitted once
to short simulations (:mod:`.characterisation`); :mod:`.memory` holds the expected delays that jitter and backpressure add;
:class:`.prediction.Prediction` is what every model returns.
"""

from .prediction import Prediction
from .program import predict_program
from .window import predict_window

__all__ = ["Prediction", "predict_program", "predict_window"]
