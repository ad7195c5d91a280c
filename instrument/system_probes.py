"""The measurements of a system of PEs, one HMM for all of them, at a chosen cost.

A system (a component with a PE's ``ctrl``, a ``pes`` sequence of its PEs and ``channels``, its
memory channels, such as ``hwgen.kernels.PESystem``) gets one HMM: one cycle counter, one
control and readout port, and the probes of a preset:

``minimal``
    The system's figures at its memory channels, all channels together: ``busy_cycles``,
    ``bytes_read``, ``bytes_written`` and ``ops``.
``default``
    ``minimal``, the transferring / blocking / idle cycles of every channel's three streams
    (``stream.mem<c>.rd_req``, ``stream.mem<c>.rd_rsp``, ``stream.mem<c>.wr_req``) and every
    PE's own figures, ``pe<i>.busy_cycles``, ``pe<i>.bytes_read``, ``pe<i>.bytes_written``,
    ``pe<i>.ops``, counted at the PE's ports (several PEs transfer in one cycle: their beats
    enter the interconnect's buffers side by side).
``full``
    ``default``, the read-latency histogram of every channel (``mem<c>.rd_latency``) and,
    through :func:`~hwgen.instrument.attach` (:func:`preset_attach_options`), a state profile
    of every state machine and counters for every stream inside every PE.
"""

from .pe_probes import beat_sources, ops_probe, traffic_probes
from .probe import Accumulate, Count, Latency, Stream

__all__ = ["PROBE_PRESETS", "check_preset", "system_probes", "preset_attach_options"]

#: The probe presets, cheapest first.
PROBE_PRESETS = ("minimal", "default", "full")


def check_preset(preset):
    """Refuse a preset that is not one of :data:`PROBE_PRESETS`."""
    if preset not in PROBE_PRESETS:
        raise ValueError(f"probes must be one of {', '.join(PROBE_PRESETS)}, not {preset!r}")


def system_probes(system, preset="default"):
    """The probes of ``preset`` (one of :data:`PROBE_PRESETS`) for ``system``."""
    check_preset(preset)
    sources = [beat_sources(channel) for channel in system.channels]
    probes = [Count("busy_cycles", system.ctrl.busy),
              *(Accumulate(figure, *(s[figure] for s in sources))
                for figure in ("bytes_read", "bytes_written")),
              ops_probe(system.channels, system.ops_per_element)]
    if preset == "minimal":
        return probes
    for c, channel in enumerate(system.channels):
        probes += [Stream(f"stream.mem{c}.{name}", port.valid, port.ready)
                   for name, port in (("rd_req", channel.rd_req), ("rd_rsp", channel.rd_rsp),
                                      ("wr_req", channel.wr_req))]
        if preset == "full":
            rd, rsp = channel.rd_req, channel.rd_rsp
            probes.append(Latency(f"mem{c}.rd_latency", rd.valid & rd.ready,
                                  rsp.valid & rsp.ready, depth=system.max_outstanding_reads,
                                  bins=32, bin_width=1))
    return probes + [probe for i, pe in enumerate(system.pes)
                     for probe in (*traffic_probes(pe, prefix=f"pe{i}."),
                                   ops_probe(pe, system.ops_per_element, name=f"pe{i}.ops",
                                             written=f"pe{i}.bytes_written"))]


def preset_attach_options(preset):
    """What :func:`~hwgen.instrument.attach` is given for ``preset`` besides the probes: state
    machines and streams inside the PEs are discovered only with ``full``; ``minimal``
    snapshots nothing but the traces' counts (its few values are read once the HMM is frozen)."""
    check_preset(preset)
    return {"fsms": preset == "full", "streams": preset == "full",
            **({"snapshot": "traces"} if preset == "minimal" else {})}
