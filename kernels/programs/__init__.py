"""Programs for the multithreaded pipeline of :mod:`hwgen.kernels.pipeline`, written with its
stages, and their jobs (:class:`hwgen.kernels.pipeline.Job`)."""

from .gemm import GEMM_VARIANTS, GemmJob, default_block_rows, gemm
from .pi import PI_MAX_STEPS, PI_SUM_BITS, PiJob, pi_series, pi_step

__all__ = ["GEMM_VARIANTS", "GemmJob", "PI_MAX_STEPS", "PI_SUM_BITS", "PiJob",
           "default_block_rows", "gemm", "pi_series", "pi_step"]
