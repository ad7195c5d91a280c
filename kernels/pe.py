"""The port contract every processing element (PE) shares.

A PE talks to the outside world through four members, so one harness, one memory model and one
measurement module serve every kernel:

``ctrl``
    ``start`` (1-cycle strobe from the host), ``busy`` and ``done`` (1-cycle strobe in the PE's last
    busy cycle), plus the run-time parameters of the kernel (for example ``src_base``).
``rd_req``
    Off-chip read requests. One beat carries an address and a lane mask; lane ``l`` reads the
    element at ``addr + l * stride`` when ``mask[l]`` is set.
``rd_rsp``
    Read responses, in request order, one beat per request, lane ``l`` holding the element that
    lane ``l`` of the request asked for (disabled lanes hold no meaningful value).
``wr_req``
    Off-chip writes: address, lane mask and one element per lane, laid out like a read beat.

Addresses count elements, not bytes. An element occupies ``ceil(element_bits / 8)`` bytes in
memory; that is what the byte counts (and the roofline's computational intensity) count.

Besides its ports, a PE describes itself to whoever measures it from outside: ``rd_beat`` and
``wr_beat`` (:class:`BeatFormat`), ``addr_width``, ``ops_per_element`` (operations each written
element stands for) and ``max_outstanding_reads`` (read beats it can have in flight at most).
"""

from dataclasses import dataclass

from amaranth.hdl import unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BeatFormat", "ControlSignature", "pe_members"]


@dataclass(frozen=True)
class BeatFormat:
    """How the elements of one memory beat are laid out.

    Parameters
    ----------
    lanes : int
        Elements per beat, at least 1.
    stride : int
        Address distance between consecutive lanes, in elements (1 for contiguous elements).
    element_bits : int
        Width of one element.
    """
    lanes: int
    stride: int
    element_bits: int

    def __post_init__(self):
        for name in ("lanes", "stride", "element_bits"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")

    @property
    def element_bytes(self):
        """Bytes one element occupies in memory."""
        return (self.element_bits + 7) // 8

    def request_layout(self, addr_width):
        """Payload layout of a read request: ``addr`` and ``mask``."""
        return data.StructLayout({
            "addr": unsigned(addr_width),
            "mask": unsigned(self.lanes),
        })

    def data_layout(self):
        """One element per lane."""
        return data.ArrayLayout(unsigned(self.element_bits), self.lanes)

    def write_layout(self, addr_width):
        """Payload layout of a write request: ``addr``, ``mask`` and ``data``."""
        return data.StructLayout({
            "addr": unsigned(addr_width),
            "mask": unsigned(self.lanes),
            "data": self.data_layout(),
        })

    def to_json(self):
        return {"lanes": self.lanes, "stride": self.stride, "element_bits": self.element_bits,
                "element_bytes": self.element_bytes}


class ControlSignature(wiring.Signature):
    """The host's side of a PE's ``ctrl`` member.

    Parameters
    ----------
    params : dict of str to shape
        Run-time parameters the host drives while ``start`` is pulsed (for example base addresses).
    """
    def __init__(self, params=None):
        params = dict(params or {})
        for name in ("start", "busy", "done"):
            if name in params:
                raise ValueError(f"run-time parameter name {name!r} is reserved")
        self._params = params
        super().__init__({
            "start": Out(1),
            "busy": In(1),
            "done": In(1),
            **{name: Out(shape) for name, shape in params.items()},
        })

    @property
    def params(self):
        return dict(self._params)

    def __eq__(self, other):
        return type(other) is type(self) and other._params == self._params

    def __repr__(self):
        return f"ControlSignature({self._params!r})"


def pe_members(*, addr_width, rd_beat, wr_beat, params=None):
    """The signature members of a PE: ``ctrl``, ``rd_req``, ``rd_rsp``, ``wr_req``.

    Parameters
    ----------
    addr_width : int
        Width of element addresses.
    rd_beat, wr_beat : BeatFormat
        Layout of read and write beats.
    params : dict of str to shape
        Run-time parameters in ``ctrl``.
    """
    if not isinstance(addr_width, int) or addr_width < 1:
        raise ValueError(f"addr_width must be a positive integer, not {addr_width!r}")
    return {
        "ctrl": In(ControlSignature(params)),
        "rd_req": Out(stream.Signature(rd_beat.request_layout(addr_width))),
        "rd_rsp": In(stream.Signature(rd_beat.data_layout())),
        "wr_req": Out(stream.Signature(wr_beat.write_layout(addr_width))),
    }
