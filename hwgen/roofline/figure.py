"""The extended roofline as a figure (log-log CI against GBops/s), drawn as in da Silva et al.,
"Performance Modeling for FPGAs: Extending the Roofline Model with High-Level Synthesis Tools".

- a diagonal I/O roof for every board link: dashed for one device, solid for two or more,
  dash-dotted for a link whose bandwidth does not depend on the device count;
- a horizontal compute roof per design point and device count, in the point's colour (one hue
  per buffer, darker for larger U), dashed for one device and solid for more;
- a vertical dotted line at every point's CI, up to what it attains;
- the attainable performance of every point: a circle when pipelined, a square when not, hollow
  on one device and filled on more, labelled with its U;
- under the best point's compute roof, its ceilings (pipelining, lower clocks) as dotted lines
  in warm colours, from where they meet the point's I/O roof.
"""

import math
from collections import defaultdict

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["plot_roofline"]

_IO_GREYS = ("#000000", "#666666", "#999999", "#bbbbbb")
_HUES = {"smart": "Blues", "line": "Oranges", "none": "Greens"}


def _style(counts):
    """Line style of a line drawn for these device counts."""
    if len(counts) > 1:
        return "-."
    return "--" if counts[0] == 1 else "-"


def _devices(counts):
    if len(counts) > 1:
        return "any count"
    return f"{counts[0]} FPGA" + ("s" if counts[0] > 1 else "")


def _colours(designs):
    """A colour per design point: a hue per buffer, darker for larger U."""
    colours = {}
    for buffer, hue in _HUES.items():
        unrolls = sorted({d.unroll for d in designs if d.buffer == buffer})
        for d in designs:
            if d.buffer == buffer:
                shade = 0.45 + 0.5 * unrolls.index(d.unroll) / max(1, len(unrolls) - 1)
                colours[d] = matplotlib.colormaps[hue](shade)
    return colours


def _nice(value, up):
    """The nearest of 1, 2, 5 x 10**k below (or above, ``up``) ``value``."""
    exponent = math.floor(math.log10(value))
    steps = [1, 2, 5, 10]
    mantissa = value / 10 ** exponent
    if up:
        chosen = min(s for s in steps if s >= mantissa)
    else:
        chosen = max(s for s in steps if s <= mantissa)
    return chosen * 10.0 ** exponent


def _place_labels(ax, marks, fontsize):
    """Write each label left of its mark (right of it near the left edge), moving labels up so
    that none overlaps another (in points, after the layout is done)."""
    scale = 72 / ax.figure.dpi
    height = fontsize * 1.25
    axes_left = ax.get_window_extent().x0 * scale
    placed = []
    for (x, y), text in sorted(marks.items(), key=lambda item: item[0][1]):
        px, py = (v * scale for v in ax.transData.transform((x, y)))
        width = len(text) * fontsize * 0.55
        left, bottom = px - 8 - width, py + 2
        if left < axes_left:
            left = px + 8
        for other_left, other_bottom, other_width in sorted(placed, key=lambda b: b[1]):
            if left < other_left + other_width and other_left < left + width \
                    and bottom < other_bottom + height and other_bottom < bottom + height:
                bottom = other_bottom + height
        placed.append((left, bottom, width))
        ax.annotate(text, (x, y), xytext=(left + width - px, bottom - py),
                    textcoords="offset points", ha="right", va="bottom", fontsize=fontsize,
                    zorder=6, arrowprops={"arrowstyle": "-", "color": "#999999", "linewidth": 0.5,
                                          "shrinkA": 0, "shrinkB": 4})


def _group_label(designs):
    """``smart U1, 2, 8`` for the design points drawn at one place."""
    return (f"{designs[0].buffer} U"
            + ", ".join(str(u) for u in sorted({d.unroll for d in designs})))


def plot_roofline(roofline, paths):
    """Draw ``roofline`` (a :class:`hwgen.roofline.Roofline`) and save it to every path in
    ``paths`` (the format follows the suffix: ``.png``, ``.svg``, ``.pdf``)."""
    points = roofline.points
    # Points whose CI or perf_PE is undefined have no place on the figure; the title names them.
    placed = [p for p in points if p.placed]
    fitting = [p for p in placed if p.attainable_gbops > 0]
    designs = list(dict.fromkeys(p.measurement.point for p in points))
    colour = _colours(designs)
    best = roofline.best()
    ceilings = [] if best is None else roofline.ceilings(best)

    # Wide enough for every ridge point, where a compute roof meets the I/O roof that bounds it.
    cis = [p.ci_ops_per_byte for p in placed if p.ci_ops_per_byte > 0] or [1.0]
    ridges = [p.cp_gbops / p.bandwidth_gbps for p in fitting]
    xmin, xmax = _nice(min(cis) / 5, False), _nice(max(cis + ridges) * 2, True)
    io_roofs = roofline.io_roofs()
    lows = [p.attainable_gbops for p in fitting] + [gbps * xmin for _, _, gbps in io_roofs]
    highs = ([p.cp_gbops for p in fitting] + [p.io_roof_gbops for p in fitting]
             or [gbps * xmax for _, _, gbps in io_roofs])
    ymin, ymax = _nice(min(lows) / 1.5, False), _nice(max(highs) * 2, True)

    figure = Figure(figsize=(13, 7.5), dpi=150, layout="constrained")
    ax = figure.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.grid(True, which="minor", color="#f2f2f2", linewidth=0.4)

    handles = []
    links = list(dict.fromkeys(link.name for link, _, _ in io_roofs))
    for link, counts, gbps in io_roofs:
        grey = _IO_GREYS[links.index(link.name) % len(_IO_GREYS)]
        ax.plot([xmin, xmax], [gbps * xmin, gbps * xmax], color=grey, linestyle=_style(counts),
                linewidth=2.2, zorder=3)
        handles.append(Line2D([], [], color=grey, linestyle=_style(counts), linewidth=2.2,
                              label=f"I/O roof {gbps:g} GB/s: {link.name} ({_devices(counts)})"))

    for p in fitting:
        design = p.measurement.point
        ax.axhline(p.cp_gbops, color=colour[design], linestyle=_style([p.devices]),
                   linewidth=1.2 if design.pipeline else 0.8, zorder=2)
    for design in designs:
        own = [p for p in fitting if p.measurement.point == design]
        if own:
            ax.vlines(own[0].ci_ops_per_byte, ymin, max(p.attainable_gbops for p in own),
                      color=colour[design], linestyle=":", linewidth=1.0, zorder=2)

    ceiling_colours = [matplotlib.colormaps["autumn"](i / max(1, len(ceilings)))
                       for i in range(len(ceilings))]
    for c, shade in zip(ceilings, ceiling_colours):
        start = max(xmin, c.gbops / best.bandwidth_gbps)
        ax.plot([start, xmax], [c.gbops, c.gbops], color=shade, linestyle=(0, (1, 1)),
                linewidth=2.2, zorder=4)

    for p in fitting:
        design = p.measurement.point
        ax.plot(p.ci_ops_per_byte, p.attainable_gbops, marker="o" if design.pipeline else "s",
                markersize=8 if design.pipeline else 5, markeredgecolor=colour[design],
                markeredgewidth=1.6,
                markerfacecolor="white" if p.devices == 1 else colour[design], linestyle="none",
                zorder=5)
    # One label per design point, at its highest mark; points drawn at one place share it.
    groups = defaultdict(list)
    for design in designs:
        own = [p for p in fitting if p.measurement.point == design]
        if own:
            top = max(own, key=lambda p: p.attainable_gbops)
            key = (round(math.log10(top.ci_ops_per_byte) * 40),
                   round(math.log10(top.attainable_gbops) * 40), design.buffer)
            groups[key].append(top)

    for d in roofline.device_counts:
        handles.append(Line2D([], [], color="#444444", linestyle=_style([d]), marker="o",
                              markerfacecolor="white" if d == 1 else "#444444",
                              label=f"compute roof and attainable, {_devices([d])}"))
    if not all(d.pipeline for d in designs):
        handles.append(Line2D([], [], color="#444444", linestyle="none", marker="s",
                              label="without pipelining (square)"))
    handles.append(Line2D([], [], color="#444444", linestyle=":", label="CI of a point"))
    if ceilings:
        handles.append(Line2D([], [], linestyle="none", label=f"ceilings of the best, "
                              f"{best.label} on {_devices([best.devices])}:"))
        handles += [Line2D([], [], color=shade, linestyle=(0, (1, 1)), linewidth=2.2,
                           label=f"  {c.label}: {c.gbops:,.0f} GBops/s")
                    for c, shade in zip(ceilings, ceiling_colours)]
    handles.append(Line2D([], [], linestyle="none", label=""))
    handles += [Line2D([], [], color=colour[d], marker="o" if d.pipeline else "s", linewidth=1.2,
                       label=d.label) for d in designs]
    figure.legend(handles=handles, loc="outside right upper", fontsize=8,
                  ncols=1 if len(handles) <= 30 else 2)

    point = designs[0]
    clocks = sorted({p.clock_mhz for p in points})
    clock = f"{clocks[0]:g} MHz" if len(clocks) == 1 else f"{clocks[0]:.0f}-{clocks[-1]:.0f} MHz"
    notes = [f"clock {clock} ({points[0].clock_source.split(' (')[0]})",
             f"resources per PE: {points[0].measurement.resources_source}"]
    if roofline.scaled:
        notes.append("figures scaled from short frames")
    unfit = [p.label for p in placed if p.attainable_gbops == 0]
    if unfit:
        notes.append("a PE does not fit, not drawn: " + ", ".join(dict.fromkeys(unfit)))
    undefined = [p.label for p in points if not p.placed]
    if undefined:
        notes.append("CI or perf_PE undefined, not drawn: " + ", ".join(dict.fromkeys(undefined)))
    suspect = [p.label for p in roofline.suspect]
    if suspect:
        notes.append("SUSPECT, measured with saturated HMM counters: "
                     + ", ".join(dict.fromkeys(suspect)))
    ax.set_title(f"Extended roofline: {roofline.kernel} {point.rows}x{point.cols} {point.mask}, "
                 f"{point.width}x{point.height} frames, on {roofline.board.name} "
                 f"({roofline.board.device_count} x {roofline.board.device})\n"
                 + "; ".join(notes), fontsize=10)
    ax.set_xlabel("computational intensity CI (ops/byte)")
    ax.set_ylabel("performance (GBops/s)")

    # Labels go where the finished layout puts their marks.
    figure.draw_without_rendering()
    figure.set_layout_engine("none")
    marks = {(same[0].ci_ops_per_byte, same[0].attainable_gbops):
             _group_label([p.measurement.point for p in same]) for same in groups.values()}
    _place_labels(ax, marks, fontsize=7.5)
    for path in paths:
        figure.savefig(path)
