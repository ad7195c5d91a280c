"""A program for the multithreaded pipeline: thread context, run-time parameters, stages."""

from amaranth.hdl import Shape, ShapeCastable, unsigned
from amaranth.lib import data

from .control import check_body

__all__ = ["Program"]


def _positive(name, value, limit=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < 1 or (limit is not None and value > limit):
        allowed = f"between 1 and {limit}" if limit is not None else "a positive integer"
        raise ValueError(f"{name} must be {allowed}, not {value!r}")
    return value


class Program:
    """What every thread runs, as an OpenMP ``parallel`` region: the same stages, its own context.

    Parameters
    ----------
    name : str
    threads : int
        Hardware threads, 1 to 64.
    context : dict of str to shape, or StructLayout
        The per-thread context (loop counters, registers, accumulators). The pipeline adds a
        read-only field ``tid``, the thread id; every other field starts at zero.
    body : list
        Stages (:mod:`hwgen.kernels.pipeline.stage`, :mod:`~hwgen.kernels.pipeline.offchip`,
        :mod:`~hwgen.kernels.pipeline.local`, :mod:`~hwgen.kernels.pipeline.sync`) and control flow
        (:mod:`~hwgen.kernels.pipeline.control`), in order.
    params : dict of str to shape
        Run-time parameters, driven on ``ctrl`` by the host and latched at ``start``.
    element_bits : int
        Width of an off-chip memory element, 1 to 64.
    addr_width : int
        Width of off-chip element addresses, 1 to 64.
    """

    def __init__(self, name, *, threads, context, body, params=None, element_bits=32, addr_width=32):
        if not isinstance(name, str) or not name:
            raise ValueError(f"program name must be a non-empty string, not {name!r}")
        self._name = name
        self._threads = _positive("threads", threads, 64)
        if isinstance(context, data.StructLayout):
            fields = {key: field.shape for key, field in context}
        elif isinstance(context, dict):
            fields = dict(context)
        else:
            raise TypeError(f"context must be a dict of field shapes or a StructLayout, not {context!r}")
        if "tid" in fields:
            raise ValueError("context field 'tid' is reserved for the thread id")
        for key, shape in fields.items():
            if not isinstance(shape, ShapeCastable):
                Shape.cast(shape)   # raises TypeError naming the bad shape
        tid_width = max(1, (self._threads - 1).bit_length())
        self._context = data.StructLayout({"tid": unsigned(tid_width), **fields})
        self._params = dict(params or {})
        for key, shape in self._params.items():
            if not isinstance(shape, ShapeCastable):
                Shape.cast(shape)
        self._body = check_body(body)
        self._element_bits = _positive("element_bits", element_bits, 64)
        self._addr_width = _positive("addr_width", addr_width, 64)

    name = property(lambda self: self._name)
    threads = property(lambda self: self._threads)
    context = property(lambda self: self._context)
    params = property(lambda self: dict(self._params))
    body = property(lambda self: self._body)
    element_bits = property(lambda self: self._element_bits)
    addr_width = property(lambda self: self._addr_width)

    @property
    def params_layout(self):
        return data.StructLayout(self._params)

    def __repr__(self):
        return f"Program({self._name!r}, threads={self._threads})"
