"""Blocks that several sections share: a run's place on a roofline in cycles, its memory model,
its tool versions."""

from .blocks import Facts, Figure, Group, Note, facts_of
from .figures import cycle_roofline, to_svg
from .values import Value, number, plain

__all__ = ["ci_of", "roofline_block", "memory_facts", "provenance", "suspect_notes"]


def ci_of(ops, bytes_read, bytes_written):
    """Computational intensity, ops per byte read or written; None without traffic."""
    if None in (ops, bytes_read, bytes_written) or bytes_read + bytes_written == 0:
        return None
    return ops / (bytes_read + bytes_written)


def roofline_block(points, *, bandwidth, peak, peak_note):
    """The roofline in cycles of ``points`` (``(label, ci, ops/cycle, bytes/cycle)``), or a note
    saying why a point cannot be placed."""
    placed = [p for p in points if p[1] and p[2]]
    if len(placed) < len(points):
        missing = ", ".join(p[0] for p in points if p not in placed)
        return Note(f"Roofline: {missing} cannot be placed: its computational intensity or "
                    f"performance is undefined (no traffic or no operations).")
    roofs = []
    if bandwidth:
        roofs.append(f"the memory model's bandwidth, {bandwidth:g} B/cycle, is the memory roof")
    else:
        roofs.append("the memory model's bandwidth is unlimited, so there is no memory roof")
    roofs.append(peak_note)
    title = "Roofline in clock cycles"
    return Figure(title, to_svg(cycle_roofline(title, placed, bandwidth=bandwidth, peak=peak)),
                  "Performance (ops/cycle) against computational intensity (ops per byte read "
                  "or written), both measured; " + "; ".join(roofs) + ". The dotted diagonal "
                  "through a point is the bandwidth it drew from memory (B/cycle).",
                  name="cycle-roofline")


def memory_facts(memory, link=None):
    """The memory model's settings; an unset bandwidth is unlimited, not undefined."""
    bandwidth = memory.get("bandwidth_bytes_per_cycle")
    items = {"bandwidth": (number(bandwidth, "B/cycle") if bandwidth is not None
                           else Value("unlimited", note="no bandwidth limit was set")),
             "latency": number(memory.get("latency_cycles"), "cycles"),
             "jitter": number(memory.get("jitter_cycles"), "cycles"),
             "backpressure": number(memory.get("backpressure"), "probability per cycle", digits=2),
             "seed": plain(memory.get("seed"))}
    if link is not None:
        items["link"] = Value(link)
    return Facts("Memory model", list(items.items()))


def provenance(data, *, settings=None, title="Parameters and tool versions"):
    """The run's parameters (or other ``settings`` facts) beside the versions of hwgen and of
    the tools that made the JSON."""
    if settings is None:
        settings = [facts_of("Parameters", data.get("parameters") or {})]
    versions = facts_of("Tool versions", data.get("tool_versions") or {}, unset="not installed")
    return Group(title, [*settings, versions], side_by_side=True)


def suspect_notes(data):
    """A warning for each reason the JSON's ``suspect`` gives not to trust its figures as they
    stand (a sentence, or a point with its saturated counters)."""
    notes = []
    for reason in data.get("suspect") or []:
        if isinstance(reason, dict):
            reason = (f"{reason.get('label')} on {reason.get('devices')} FPGA(s): saturated "
                      f"counters, figures are lower bounds: "
                      + ", ".join(reason.get("saturated") or []))
        notes.append(Note(f"Suspect measurement: {reason}.", "warning"))
    return notes
