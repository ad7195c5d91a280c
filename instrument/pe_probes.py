"""The measurements of a processing element, from its ports alone.

Any component with the PE port contract of ``kernels/pe.py`` (``ctrl.busy``, ``rd_req``,
``rd_rsp``, ``wr_req``, and the self-description ``rd_beat`` / ``wr_beat``, ``ops_per_element``,
``max_outstanding_reads``) gets the same figures:

``busy_cycles``
    Cycles ``ctrl.busy`` is high.
``bytes_read``, ``bytes_written``
    Every enabled lane of a transferred beat counts its element's bytes.
``ops``
    ``ops_per_element`` per element written.
``stream.rd_req``, ``stream.rd_rsp``, ``stream.wr_req``
    Transferring, blocking and idle cycles of each port; ``stream.rd_req.blocking`` and
    ``stream.wr_req.blocking`` are the cycles a read or write request waits for the memory.
``rd_latency``
    A histogram of read-response latency; ``rd_latency.wait_cycles`` counts the cycles the PE
    waits for read data (reads outstanding, no response).

:func:`traffic_probes` are the first three alone, for PEs that count their operations
otherwise; :func:`beat_sources` what the last three add up; :func:`job_probe` timestamps the
start and end of every job.
"""

from amaranth.hdl import Const

from .probe import Accumulate, Count, Latency, Scaled, Stream, Trace

__all__ = ["pe_probes", "traffic_probes", "ops_probe", "beat_sources", "stream_probes",
           "job_probe"]


def _lanes(mask):
    """Enabled lanes of a beat, added up as a balanced tree (a chain of U additions nests U deep,
    beyond what Amaranth's simulator compiles for hundreds of lanes)."""
    counts = list(mask)
    while len(counts) > 1:
        counts = [a + b for a, b in zip(counts[::2], counts[1::2])] + counts[len(counts) & ~1:]
    return counts[0]


def pe_probes(pe, *, ops_per_element=None, max_outstanding_reads=None, latency_bins=32,
              latency_bin_width=1):
    """Probes for the figures of a PE.

    Parameters
    ----------
    pe : PE component
    ops_per_element : int or None
        Operations each written element stands for; default ``pe.ops_per_element``.
    max_outstanding_reads : int or None
        Read beats the PE can have in flight at most (sizes the latency histogram's queue);
        default ``pe.max_outstanding_reads``.
    latency_bins, latency_bin_width : int
        Of the read-latency histogram.
    """
    if ops_per_element is None:
        ops_per_element = pe.ops_per_element
    if max_outstanding_reads is None:
        max_outstanding_reads = pe.max_outstanding_reads
    if isinstance(ops_per_element, bool) or not isinstance(ops_per_element, int) \
            or ops_per_element < 0:
        raise ValueError(f"ops_per_element must be a non-negative integer, not {ops_per_element!r}")
    rd, rsp = pe.rd_req, pe.rd_rsp
    return [
        *traffic_probes(pe),
        ops_probe(pe, ops_per_element),
        *stream_probes(pe),
        Latency("rd_latency", rd.valid & rd.ready, rsp.valid & rsp.ready,
                depth=max_outstanding_reads, bins=latency_bins, bin_width=latency_bin_width),
    ]


def _times(value, factor):
    """``value * factor`` for a constant ``factor``, as a sum of shifted copies of ``value``:
    Yosys maps a multiplication to LUTs, a sum to carry chains (13 ECP5 LUTs against 6 for a
    PE's ops of 8 lanes times 9)."""
    terms = [value << bit for bit in range(factor.bit_length()) if factor >> bit & 1]
    return sum(terms[1:], terms[0]) if terms else Const(0)


def beat_sources(pe, ops_per_element=None):
    """``{"bytes_read": (value, valid), "bytes_written": ...}``, and ``"ops"`` with
    ``ops_per_element``: what each beat ``pe`` transfers adds to its figures, and whether one
    transfers in this cycle."""
    rd, wr = pe.rd_req, pe.wr_req
    written = _lanes(wr.payload.mask)
    sources = {"bytes_read": (_times(_lanes(rd.payload.mask), pe.rd_beat.element_bytes),
                              rd.valid & rd.ready),
               "bytes_written": (_times(written, pe.wr_beat.element_bytes), wr.valid & wr.ready)}
    if ops_per_element is not None:
        sources["ops"] = (_times(written, ops_per_element), wr.valid & wr.ready)
    return sources


def traffic_probes(pe, *, prefix=""):
    """``busy_cycles``, ``bytes_read`` and ``bytes_written`` of a PE (see the module), their
    names after ``prefix``."""
    sources = beat_sources(pe)
    return [
        Count(f"{prefix}busy_cycles", pe.ctrl.busy),
        Accumulate(f"{prefix}bytes_read", sources["bytes_read"]),
        Accumulate(f"{prefix}bytes_written", sources["bytes_written"]),
    ]


def ops_probe(pe, ops_per_element, *, name="ops", written="bytes_written"):
    """``ops``: ``ops_per_element`` per element ``pe`` writes (``pe``: a PE, or the memory
    ports of a system, its channels, whose writes add up). Where an element's bytes divide
    ``ops_per_element`` it is a :class:`~hwgen.instrument.probe.Scaled` multiple of the count
    named ``written`` (the bytes written, a probe before it) and takes no hardware of its own (a
    count of the U8 line PE's operations took 26 of its `minimal` HMM's 245 LUT); else it is a
    count of its own."""
    ports = list(pe) if isinstance(pe, (list, tuple)) else [pe]
    element_bytes = ports[0].wr_beat.element_bytes
    if ops_per_element and ops_per_element % element_bytes == 0:
        return Scaled(name, written, ops_per_element // element_bytes)
    return Accumulate(name, *(beat_sources(port, ops_per_element)["ops"] for port in ports))


def stream_probes(pe):
    """Transferring, blocking and idle cycles of the three ports of ``pe``."""
    return [Stream(f"stream.{name}", port.valid, port.ready)
            for name, port in (("rd_req", pe.rd_req), ("rd_rsp", pe.rd_rsp),
                               ("wr_req", pe.wr_req))]


def job_probe(pe, *, depth=2):
    """A trace ``job`` of the cycles a PE's job starts (``start``) and ends (``done``), so a host
    can place the job on the timestamps of the HMM's other traces.

    Parameters
    ----------
    pe : PE component
    depth : int
        Records kept (two per job), a power of two.
    """
    return Trace("job", {"start": pe.ctrl.start, "done": pe.ctrl.done}, depth=depth)
