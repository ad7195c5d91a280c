"""Programs for the multithreaded pipeline of :mod:`hwgen.kernels.pipeline`, written with its stages."""

from .gemm import GEMM_VARIANTS, default_block_rows, gemm
from .pi import PI_SUM_BITS, pi_series, pi_step

__all__ = ["GEMM_VARIANTS", "PI_SUM_BITS", "default_block_rows", "gemm", "pi_series", "pi_step"]
