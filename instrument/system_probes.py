"""The measurements of a system of PEs, one HMM for all of them, at a chosen cost.

A system (any component with the PE contract of ``kernels/pe.py`` and a ``pes`` sequence of its
PEs, such as ``hwgen.kernels.PESystem``) gets one HMM: one cycle counter, one control and readout
port, and the probes of a preset:

``minimal``
    The system's figures at its off-chip port: ``busy_cycles``, ``bytes_read``,
    ``bytes_written`` and ``ops``.
``default``
    ``minimal``, the transferring / blocking / idle cycles of the system's three streams
    (``stream.rd_req``, ``stream.rd_rsp``, ``stream.wr_req``) and every PE's own figures,
    ``pe<i>.busy_cycles``, ``pe<i>.bytes_read``, ``pe<i>.bytes_written``, ``pe<i>.ops``.
    Several PEs are busy at once, so each has a busy-cycle counter; but the system's one port
    moves one read beat and one write beat per cycle, which its arbiters grant to one PE each,
    so in any cycle one PE's read request at most and one PE's write request at most transfer.
    The PEs' bytes and ops are therefore sums of sources that take turns: from
    :data:`TABLE_PES` PEs on they are kept in three RAM tables (``pes.bytes_read``,
    ``pes.bytes_written``, ``pes.ops``, labelled ``pe<i>``; see
    :class:`~hwgen.instrument.probe.AccumulateExclusive`) instead of 3 P counters and their
    snapshot registers, and read once the HMM is frozen; with fewer, in counters.
``full``
    ``default``, the read-latency histogram of the system's port (``rd_latency``) and, through
    :func:`~hwgen.instrument.attach` (:func:`preset_attach_options`), a state profile of every
    state machine and counters for every stream inside every PE.
"""

from .pe_probes import beat_sources, ops_probe, pe_probes, stream_probes, traffic_probes
from .probe import AccumulateExclusive, Count

__all__ = ["PROBE_PRESETS", "TABLE_PES", "check_preset", "system_probes",
           "preset_attach_options"]

#: The probe presets, cheapest first.
PROBE_PRESETS = ("minimal", "default", "full")

#: PEs from which their bytes and ops are kept in tables: a table's pipeline costs about what
#: three PEs' counters do (line U8 on the ECP5, Yosys: tables take more LUT and FF at 1 and 2
#: PEs, more LUT and fewer FF at 3, fewer of both from 4).
TABLE_PES = 4


def check_preset(preset):
    """Refuse a preset that is not one of :data:`PROBE_PRESETS`."""
    if preset not in PROBE_PRESETS:
        raise ValueError(f"probes must be one of {', '.join(PROBE_PRESETS)}, not {preset!r}")


def system_probes(system, preset="default"):
    """The probes of ``preset`` (one of :data:`PROBE_PRESETS`) for ``system``."""
    check_preset(preset)
    if preset == "full":
        probes = pe_probes(system)
    else:
        probes = [*traffic_probes(system), ops_probe(system, system.ops_per_element)]
    if preset == "default":
        probes += stream_probes(system)
    if preset != "minimal":
        probes += _pe_probes(system)
    return probes


def _pe_probes(system):
    """Every PE's busy cycles, bytes and ops (see ``default``)."""
    if len(system.pes) < TABLE_PES:
        return [probe for i, pe in enumerate(system.pes)
                for probe in (*traffic_probes(pe, prefix=f"pe{i}."),
                              ops_probe(pe, system.ops_per_element, name=f"pe{i}.ops"))]
    sources = [beat_sources(pe, system.ops_per_element) for pe in system.pes]
    labels = [f"pe{i}" for i in range(len(sources))]
    tables = [AccumulateExclusive(f"pes.{figure}", *(source[figure] for source in sources),
                                  labels=labels, values=[f"{pe}.{figure}" for pe in labels])
              for figure in ("bytes_read", "bytes_written", "ops")]
    return [*(Count(f"pe{i}.busy_cycles", pe.ctrl.busy) for i, pe in enumerate(system.pes)),
            *tables]


def preset_attach_options(preset):
    """What :func:`~hwgen.instrument.attach` is given for ``preset`` besides the probes: state
    machines and streams inside the PEs are discovered only with ``full``; ``minimal``
    snapshots nothing but the traces' counts (its few values are read once the HMM is frozen)."""
    check_preset(preset)
    return {"fsms": preset == "full", "streams": preset == "full",
            **({"snapshot": "traces"} if preset == "minimal" else {})}
