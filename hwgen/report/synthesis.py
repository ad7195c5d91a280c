"""The sections of real synthesis: ``hwgen overhead``'s JSON (a PE bare and with its HMM) and
``hwgen synth``'s (one design)."""

from .blocks import Column, Facts, Figure, Group, Headline, Note, Section, Table
from .figures import paired_bars, to_svg
from .performance import provenance
from .sections import register
from .values import NA, Value, integer, number, percent, plain

__all__ = ["overhead_section", "synth_section"]

# The figures `overhead` compares: JSON key -> (name, unit, label of its plot).
_COMPARED = {
    "lut": ("LUT", "LUT", "LUT"), "ff": ("FF", "FF", "FF"),
    "block_ram_blocks": ("block RAM", "blocks", "block RAM (blocks)"),
    "block_ram_bits": ("block RAM bits", "bits", "block RAM (bits)"),
    "memory_bits": ("memory bits", "bits", "memory (bits)"),
    "fmax_mhz": ("Fmax", "MHz", "Fmax (MHz)"),
}
_NO_PNR = "no place and route for this family"


def _amount(value, unit):
    return number(value, unit, digits=1) if isinstance(value, float) else integer(value, unit)


def _signed(value, unit):
    shown = _amount(value, unit)
    if value is None or value < 0:
        return shown
    return Value("+" + shown.text, shown.unit, shown.state, shown.note)


def _fmax(result, key):
    value = result.get(key)
    return number(value, digits=1) if value is not None else NA("MHz", _NO_PNR)


# What a synthesis result holds: (name, unit, its figure from the result's JSON).
_SYNTHESIS_ROWS = (
    ("LUT (logic + LUT RAM + carry)", "LUT", lambda r: integer(r.get("lut"))),
    ("LUT of logic", "LUT", lambda r: integer(r.get("lut_logic"))),
    ("LUT used as RAM", "LUT", lambda r: integer(r.get("lutram_luts"))),
    ("carry cells", "cells", lambda r: integer(r.get("carry"))),
    ("FF", "FF", lambda r: integer(r.get("ff"))),
    ("block RAM", "blocks", lambda r: integer(r.get("bram"))),
    ("DSP", "blocks", lambda r: integer(r.get("dsp"))),
    ("Fmax, median of the seeds", "MHz", lambda r: _fmax(r, "fmax_mhz")),
    ("Fmax, lowest seed", "MHz", lambda r: _fmax(r, "fmax_min_mhz")),
    ("Fmax, highest seed", "MHz", lambda r: _fmax(r, "fmax_max_mhz")),
    ("place-and-route seeds", "", lambda r: integer(r.get("seeds"))),
    ("target clock", "MHz", lambda r: number(r.get("target_mhz"), digits=1)),
    ("synthesis time", "s", lambda r: number(r.get("synth_seconds"), digits=1)),
    ("place-and-route time", "s", lambda r: number(r.get("pnr_seconds"), digits=1)),
    ("from the cache", "", lambda r: plain(r.get("cached"))),
)


def _synthesis_blocks(results):
    """What synthesis found for each design of ``results`` (``{name: SynthResult JSON}``): a
    column each, then their cells and critical paths."""
    names = list(results)
    first = results[names[0]]
    title = (f"Synthesis ({first.get('family')}: {first.get('command')})"
             + ("; workarounds: " + ", ".join(first["workarounds"])
                if first.get("workarounds") else ""))
    figures = Table(title, [Column("figure", numeric=False), Column("unit", numeric=False)]
                    + [Column(name) for name in names],
                    [[Value(label), Value(unit)] + [get(results[n]) for n in names]
                     for label, unit, get in _SYNTHESIS_ROWS])
    cells = sorted({cell for r in results.values() for cell in (r.get("cells") or {})})
    cell_table = Table("Cells", [Column("cell", numeric=False)] + [Column(n) for n in names],
                       [[Value(cell)] + [integer((results[n].get("cells") or {}).get(cell, 0))
                                         for n in names] for cell in cells])
    blocks = [figures, cell_table]
    for name in names:
        path = results[name].get("critical_path") or []
        if path:
            blocks.append(Facts(f"Critical path, {name}", [("path", Value(path[0]))]
                                + [(f"net {i}", Value(net)) for i, net in enumerate(path[1:], 1)]))
    return blocks


@register("overhead", lambda data: "figures" in data and "bare" in data and "with_hmm" in data)
def overhead_section(data, source):
    figures = data["figures"]
    share = data.get("device_share_percent") or {}
    headline = []
    for key in ("lut", "ff", "block_ram_blocks", "fmax_mhz"):
        if key in figures:
            name, unit, _ = _COMPARED[key]
            f = figures[key]
            headline.append((f"{name} overhead", _signed(f.get("overhead"), unit)))
    headline += [("LUT of the device", percent(share.get("lut"), digits=2)),
                 ("FF of the device", percent(share.get("ff"), digits=2))]
    rows, bars = [], []
    for key, f in figures.items():
        name, unit, label = _COMPARED.get(key, (key, "", key))
        rows.append([Value(name), Value(unit), _amount(f.get("bare"), unit),
                     _amount(f.get("with_hmm"), unit), _signed(f.get("overhead"), unit),
                     percent(f.get("overhead_percent"))])
        bars.append((label, f.get("bare"), f.get("with_hmm")))
    table = Table("Bare and with the HMM", [
        Column("figure", numeric=False), Column("unit", numeric=False), Column("bare"),
        Column("with HMM"), Column("overhead"), Column("overhead", "%")], rows,
        "From YoWASP Yosys (resources) and nextpnr out of context (Fmax, the median over the "
        "seeds); n/a: the family has no place and route, or the bare figure is 0.")
    title = "Bare and with the HMM"
    figure = Figure(title, to_svg(paired_bars(title, bars)),
                    "Each figure of the PE bare and with its HMM, in its own unit.",
                    name="overhead")
    blocks = [Headline(headline), Group("Overhead", [figure, table], side_by_side=True)]
    if not share:
        blocks.append(Note("The device share is not in the JSON."))
    blocks.append(Group("Synthesis", _synthesis_blocks({"bare": data["bare"],
                                                        "with HMM": data["with_hmm"]}),
                        side_by_side=True))
    blocks.append(provenance(data))
    return Section("overhead", f"overhead: {data.get('design', data.get('kernel'))} on "
                               f"{data.get('board')}",
                   "what the hardware measurement module costs, from real synthesis", source,
                   blocks)


@register("synth", lambda data: ("kernel" in data or "program" in data) and "command" in data
          and "lut" in data)
def synth_section(data, source):
    fmax = data.get("fmax_mhz")
    blocks = [Headline([
        ("LUT", integer(data.get("lut"), "LUT")), ("FF", integer(data.get("ff"), "FF")),
        ("block RAM", integer(data.get("bram"), "blocks")), ("DSP", integer(data.get("dsp"))),
        ("Fmax", number(fmax, "MHz", digits=1) if fmax is not None else NA("MHz", _NO_PNR))])]
    blocks.append(Group("Synthesis", _synthesis_blocks({data.get("measured", "design"): data}),
                        side_by_side=True))
    blocks.append(provenance(data))
    return Section("synth", f"synth: {data.get('kernel', data.get('program'))} on "
                            f"{data.get('board')}, "
                            f"{data.get('measured', '')}",
                   "resources and Fmax from real synthesis", source, blocks)
