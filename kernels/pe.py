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

:class:`PESignature` is the signature of the four members; :class:`ProcessingElement` the base of
every PE, built-in (:class:`~hwgen.kernels.WindowFilter`, the pipeline) or a user's: it holds
those descriptions, a numpy reference model of the PE's output (:meth:`~ProcessingElement.
reference`) and, if the PE has one, its closed-form traffic (:meth:`~ProcessingElement.traffic`).
:func:`check_pe` says what an object lacks to be driven as a PE.

An *image PE* is a PE that filters one frame: it also has ``width``, ``height``, ``pixel_bits``,
``out_width``, ``out_height`` and the run-time parameters ``src_base`` and ``dst_base``; its input
frame is read row-major at ``src_base`` and its output frame written row-major at ``dst_base``.
The window-filter harness and commands drive any image PE.
"""

from dataclasses import dataclass

from amaranth.hdl import unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["IMAGE_PE_MEMBERS", "PE_MEMBERS", "BeatFormat", "ControlSignature", "PESignature",
           "ProcessingElement", "check_pe", "pe_members"]

#: The members of every PE's signature, by the names the harnesses and the HMM drive.
PE_MEMBERS = ("ctrl", "rd_req", "rd_rsp", "wr_req")
#: What an image PE has besides a PE's attributes.
IMAGE_PE_MEMBERS = ("width", "height", "pixel_bits", "out_width", "out_height")
#: What a PE describes itself by, besides its ports.
_PE_ATTRIBUTES = ("rd_beat", "wr_beat", "addr_width", "ops_per_element", "max_outstanding_reads")


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


class PESignature(wiring.Signature):
    """The signature of a PE: the members ``ctrl``, ``rd_req``, ``rd_rsp`` and ``wr_req``.

    Parameters
    ----------
    addr_width : int
        Width of element addresses.
    rd_beat, wr_beat : BeatFormat
        Layout of read and write beats.
    params : dict of str to shape
        Run-time parameters in ``ctrl``.
    """
    def __init__(self, *, addr_width, rd_beat, wr_beat, params=None):
        for name, beat in (("rd_beat", rd_beat), ("wr_beat", wr_beat)):
            if not isinstance(beat, BeatFormat):
                raise TypeError(f"{name} must be a BeatFormat, not {beat!r}")
        self._addr_width = addr_width
        self._rd_beat, self._wr_beat = rd_beat, wr_beat
        super().__init__(pe_members(addr_width=addr_width, rd_beat=rd_beat, wr_beat=wr_beat,
                                    params=params))
        self._params = self.members["ctrl"].signature.params

    addr_width = property(lambda self: self._addr_width)
    rd_beat = property(lambda self: self._rd_beat)
    wr_beat = property(lambda self: self._wr_beat)
    params = property(lambda self: dict(self._params))

    def __eq__(self, other):
        return (type(other) is type(self) and other._addr_width == self._addr_width
                and other._rd_beat == self._rd_beat and other._wr_beat == self._wr_beat
                and other._params == self._params)

    def __repr__(self):
        return (f"PESignature(addr_width={self._addr_width}, rd_beat={self._rd_beat}, "
                f"wr_beat={self._wr_beat}, params={self._params!r})")


class ProcessingElement(wiring.Component):
    """The base of a PE: its :class:`PESignature` and what it says of itself.

    A subclass calls ``super().__init__`` with the beat formats, address width and run-time
    parameters of its ports, and writes ``elaborate()``; it overrides :meth:`reference` (the
    numpy model the harness checks its output against) and, where it has a closed form,
    :meth:`traffic`.

    Parameters
    ----------
    addr_width : int
    rd_beat, wr_beat : BeatFormat
    params : dict of str to shape
        See :class:`PESignature`.
    ops_per_element : int
        Operations each written element stands for (the roofline's ops), at least 0.
    max_outstanding_reads : int
        Read beats in flight at most (the memory model's credit), at least 1.
    """
    def __init__(self, *, addr_width, rd_beat, wr_beat, params=None, ops_per_element=1,
                 max_outstanding_reads=1):
        for name, value, least in (("ops_per_element", ops_per_element, 0),
                                   ("max_outstanding_reads", max_outstanding_reads, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, not {value!r}")
        self._ops_per_element = ops_per_element
        self._max_outstanding_reads = max_outstanding_reads
        super().__init__(PESignature(addr_width=addr_width, rd_beat=rd_beat, wr_beat=wr_beat,
                                     params=params))

    @property
    def rd_beat(self):
        return self.signature.rd_beat

    @property
    def wr_beat(self):
        return self.signature.wr_beat

    @property
    def addr_width(self):
        return self.signature.addr_width

    @property
    def ops_per_element(self):
        return self._ops_per_element

    @property
    def max_outstanding_reads(self):
        return self._max_outstanding_reads

    def reference(self, inputs):
        """The numpy model: what the PE must write for ``inputs`` (for an image PE, the input
        frame; the output frame, ``out_height x out_width``)."""
        raise NotImplementedError(f"{type(self).__name__} has no reference model")

    def traffic(self):
        """The closed-form traffic of one job (an object with ``reads``, ``writes``,
        ``bytes_read``, ``bytes_written``, ``ops``), or ``None`` when the PE has none."""
        return None

    def parameters(self):
        """Every parameter, as plain data (reports give them)."""
        return {"rd_beat": self.rd_beat.to_json(), "wr_beat": self.wr_beat.to_json(),
                "addr_width": self.addr_width, "ops_per_element": self.ops_per_element}


def check_pe(pe, *, image=False):
    """Raise ``TypeError`` naming what ``pe`` lacks to be driven as a PE (with ``image``, as
    an image PE); return ``pe``."""
    if not isinstance(pe, wiring.Component):
        raise TypeError(f"a PE must be an amaranth.lib.wiring.Component, not {pe!r}")
    members = pe.signature.members
    missing = [name for name in PE_MEMBERS if name not in members]
    if missing:
        raise TypeError(f"{type(pe).__name__} is not a PE: its signature lacks "
                        f"{', '.join(missing)} (see hwgen.kernels.pe.PESignature)")
    wanted = _PE_ATTRIBUTES + (IMAGE_PE_MEMBERS if image else ())
    missing = [name for name in wanted if not hasattr(pe, name)]
    if image:
        params = members["ctrl"].signature.members
        missing += [name for name in ("src_base", "dst_base") if name not in params]
    if missing:
        raise TypeError(f"{type(pe).__name__} is not {'an image PE' if image else 'a PE'}: it "
                        f"lacks {', '.join(missing)}")
    return pe
