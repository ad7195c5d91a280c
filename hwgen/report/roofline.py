"""The section of ``roofline.json``, which ``hwgen roofline`` and ``hwgen explore`` write: the
extended roofline with every design point, and the points ranked."""

from ..roofline.figure import plot_roofline
from ..roofline.model import Roofline
from .blocks import Column, Facts, Figure, Group, Headline, Note, Section, Table, facts_of
from .figures import to_svg
from .performance import provenance, suspect_notes
from .sections import register
from .values import NA, Value, integer, number, percent, plain

__all__ = ["roofline_section"]

_RESOURCES = ("lut", "ff", "bram", "dsp")


def _devices(count):
    return f"{count} FPGA" + ("s" if count > 1 else "")


def _bound(point):
    if point.bound is None:
        return NA(note="undefined: the point has no CI or no performance, so it is not placed")
    if point.bound == "compute":
        return Value(f"compute: {point.limiting_resource.upper()}")
    return Value(f"I/O: {point.link}")


def _headline(best):
    m = best.measurement
    return Headline([
        ("best design point", Value(f"{best.label} on {_devices(best.devices)}")),
        ("attains", number(best.attainable_gbops, "GBops/s", digits=2)),
        ("bound by", _bound(best)),
        ("CI", number(best.ci_ops_per_byte, "ops/byte")),
        ("one PE", number(best.ops_per_cycle, "ops/cycle")),
        ("PEs per FPGA", integer(best.sc_pes_per_device, note=f"limited by "
                                 f"{best.limiting_resource.upper()}: {m.resources[best.limiting_resource]:,} "
                                 f"per PE and the interconnect of "
                                 f"{best.available_per_device[best.limiting_resource]:,}")),
        ("compute roof", number(best.cp_gbops, "GBops/s", digits=1)),
        ("I/O roof", number(best.io_roof_gbops, "GBops/s", digits=2)),
    ])


def _points_table(roofline):
    clocks = {p.clock_mhz for p in roofline.points}
    columns = [Column("#"), Column("design point", numeric=False), Column("FPGAs"),
               Column("CI", "ops/byte"), Column("perf", "ops/cycle"), Column("LUT", "per PE"),
               Column("FF", "per PE"), Column("BRAM", "blocks/PE"), Column("DSP", "per PE")]
    columns += [Column("clock", "MHz")] if len(clocks) > 1 else []
    columns += [Column("SC", "PEs/FPGA"), Column("perf_PE", "GBops/s"), Column("CP", "GBops/s"),
                Column("I/O roof", "GBops/s"), Column("attains", "GBops/s"),
                Column("bound by", numeric=False)]
    rows = []
    for rank, p in enumerate(roofline.ranked(), 1):
        r = p.measurement.resources
        rows.append([integer(rank), Value(p.label), integer(p.devices),
                     number(p.ci_ops_per_byte), number(p.ops_per_cycle)]
                    + [integer(r[name]) for name in _RESOURCES]
                    + ([number(p.clock_mhz, digits=1)] if len(clocks) > 1 else [])
                    + [integer(p.sc_pes_per_device), number(p.perf_pe_gbops, digits=2),
                       number(p.cp_gbops, digits=1), number(p.io_roof_gbops, digits=2),
                       number(p.attainable_gbops, digits=2), _bound(p)])
    first = roofline.points[0]
    clock = (f"{first.clock_mhz:g} MHz, {first.clock_source}" if len(clocks) == 1
             else "in the clock column")
    return Table("Design points, best first", columns, rows,
                 f"Resources per bare PE from {first.measurement.resources_source}; the clock is "
                 f"{clock}. SC: PEs that fit one FPGA (bound by its scarcest resource); CP = SC x "
                 f"perf_PE x FPGAs; I/O roof = CI x the link's bandwidth; attains = min(CP, I/O "
                 f"roof). Ties go to fewer LUT per PE.")


def _system_table(roofline):
    rows = []
    for p in roofline.points:
        s = p.system
        rows.append([Value(p.label), integer(p.devices), integer(s.pes),
                     number(s.bandwidth_bytes_per_cycle, digits=2), integer(s.height),
                     number(s.predicted_ops_per_cycle, digits=2),
                     number(s.simulated_ops_per_cycle, digits=2),
                     percent(None if s.error is None else 100 * s.error, digits=2)])
    return Table("Simulated systems against the model", [
        Column("design point", numeric=False), Column("FPGAs"), Column("P", "PEs"),
        Column("bandwidth", "B/cycle"), Column("rows", "per frame"),
        Column("predicted", "ops/cycle"), Column("simulated", "ops/cycle"),
        Column("error", "%")], rows,
        "P PEs sharing the bounding link's bandwidth, simulated, against min(P x perf_PE, "
        "CI x BW).")


def _board_blocks(board):
    links = Table("Links", [Column("link", numeric=False), Column("bandwidth", "GB/s"),
                            Column("per FPGA", numeric=False), Column("measured", numeric=False),
                            Column("source", numeric=False)],
                  [[Value(link.name), number(link.bandwidth_gbps, digits=2),
                    plain(link.per_device), plain(link.measured), plain(link.source)]
                   for link in board.links])
    data = board.to_json()
    return [facts_of("Board", {"name": data["name"], "description": data["description"],
                               "device": data["device"], "devices": data["device_count"],
                               "clock (MHz)": data["clock_mhz"],
                               "clock source": data["clock_source"]}),
            facts_of("Resources per FPGA", data["resources"]), links]


@register("roofline", lambda data: "board" in data and "points" in data and "options" in data)
def roofline_section(data, source):
    roofline = Roofline.from_json(data)
    best = roofline.best()
    blocks = [_headline(best) if best is not None
              else Note("No design point could be placed on the roofline: none has both a CI "
                        "and a performance.", "warning"), *suspect_notes(data)]
    title = "Extended roofline"
    blocks.append(Figure(title, to_svg(plot_roofline(roofline, [])),
                         "Attainable performance (GBops/s, 10^9 byte operations per second) "
                         "against computational intensity (ops per byte read or written), "
                         "log-log: a diagonal I/O roof per board link, a level compute roof per "
                         "design point (SC x perf_PE x FPGAs), the points at what they attain.",
                         name="roofline"))
    ceilings = roofline.ceilings(best) if best is not None else []
    if ceilings:
        blocks.append(Facts(f"Ceilings under the compute roof of {best.label}",
                            [(c.label, number(c.gbops, "GBops/s", digits=1)) for c in ceilings]))
    if roofline.scaled:
        blocks.append(Note("Figures of tall frames were scaled exactly from simulations of two "
                           "short frames."))
    blocks.append(_points_table(roofline))
    if roofline.options.get("pes") is not None:
        blocks.append(_system_table(roofline))
    blocks.append(Group("Board", _board_blocks(roofline.board), side_by_side=True))
    blocks.append(provenance(data, title="Options and tool versions", settings=[
        facts_of("Options", roofline.options, unset="default"),
        facts_of("Units", data.get("units") or {})]))
    return Section("roofline", f"roofline: {roofline.kernel} on {roofline.board.name}",
                   f"{len({p.label for p in roofline.points})} design points x "
                   f"{len(roofline.device_counts)} device count(s)", source, blocks)
