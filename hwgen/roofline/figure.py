"""The extended roofline as a figure (log-log CI against GBops/s), as in seed 000's figures.

- a diagonal I/O roof for every board link: dashed for one device, solid for two or more,
  dash-dotted for a link whose bandwidth does not depend on the device count;
- a horizontal compute roof per design point and device count, dashed for one device and solid
  for more, each named in a column right of the plot with its value;
- a vertical dotted line at every point's CI, up to what it attains;
- the attainable performance of every point, hollow on one device and filled on more; the
  marker's shape says the buffer (crossed out when not pipelined), its colour U on a sequential
  palette (darker for larger U), and a direct label, placed clear of every line, names it;
- under the best point's compute roof, its ceilings (pipelining, lower clocks) as dotted lines
  in warm colours, from where they meet the point's I/O roof, named in the same column.

The legend sits under the plot, the title over it.
"""

import math

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from .labels import place_labels, segment_crosses_box, spread

__all__ = ["plot_roofline"]

_IO_GREYS = ("#000000", "#666666", "#999999", "#bbbbbb")
_MARKERS = {"smart": "o", "line": "^", "none": "s", "own": "D"}
_PALETTE = "viridis"
# The palette's range: its lightest end (yellow) is too faint on white.
_DARKEST, _LIGHTEST = 0.0, 0.82
_FONT = 7.5
# Points whose marks are this close (in points, 1/72 inch) share one label.
_SAME_PLACE = 4
# When every point fits in this share of the plot's width and height, an inset of this size
# (axes fractions) magnifies them.
_CROWDED = 0.12
_INSET = (0.42, 0.45)
# Tick labels of an inset, which spans less than a decade: 2, 3, 4 rather than 2 x 10^0.
_PLAIN = FuncFormatter(lambda value, _: f"{value:g}")


def _style(counts):
    """Line style of a line drawn for these device counts."""
    if len(counts) > 1:
        return "-."
    return "--" if counts[0] == 1 else "-"


def _devices(counts):
    if len(counts) > 1:
        return "any count"
    return f"{counts[0]} FPGA" + ("s" if counts[0] > 1 else "")


def _key(design):
    """What colours a design point: its outputs per cycle U, or a program's threads."""
    return getattr(design, "threads", design.unroll)


def _key_text(design, key):
    """``U4``, or ``4 threads`` for a program's point."""
    if hasattr(design, "threads"):
        return f"{key} thread" + "s" * (key != 1)
    return f"U{key}"


def _gbops(value):
    """A roof's GBops/s, with the digits a small one needs."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _colours(designs):
    """A colour per U (a program's: per thread count), on a sequential palette: darker for
    larger U."""
    unrolls = sorted({_key(d) for d in designs})
    palette = matplotlib.colormaps[_PALETTE]
    steps = max(1, len(unrolls) - 1)
    return {u: palette(_LIGHTEST - (_LIGHTEST - _DARKEST) * i / steps)
            for i, u in enumerate(unrolls)}


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


def _name(designs, buffers):
    """``U128, 256`` for the design points drawn at one place (``smart U..`` when the figure
    has several buffers; ``, no pipeline`` for unpipelined ones); a program's points by their
    labels."""
    first = designs[0]
    if hasattr(first, "threads"):
        more = len(designs) - 1
        return first.label + (f" (+{more} more)" if more else "")
    text = ("" if len(buffers) == 1 else f"{first.buffer} ") + "U" + ", ".join(
        str(u) for u in sorted({d.unroll for d in designs}))
    return text + ("" if first.pipeline else ", no pipeline")


def _groups(marks, radius):
    """Marks ``(x_px, y_px, key, item)`` drawn at one place: each group is a mark and the marks
    of its key within ``radius`` pixels of it, a list of items in the marks' order."""
    groups = []
    for x, y, key, item in marks:
        for group in groups:
            gx, gy, gkey = group[0]
            if gkey == key and math.hypot(x - gx, y - gy) <= radius:
                group[1].append(item)
                break
        else:
            groups.append(((x, y, key), [item]))
    return [items for _, items in groups]


class _Lines:
    """What a roofline draws, ready to draw on the main plot and on a magnified inset."""

    def __init__(self, roofline):
        self.roofline = roofline
        self.points = roofline.points
        # Points whose CI or perf_PE is undefined have no place on the figure; the title names
        # them.
        self.placed = [p for p in self.points if p.placed]
        self.fitting = [p for p in self.placed if p.attainable_gbops > 0]
        self.designs = list(dict.fromkeys(p.measurement.point for p in self.points))
        self.buffers = list(dict.fromkeys(d.buffer for d in self.designs))
        self.colour = _colours(self.designs)
        program = hasattr(self.designs[0], "threads")
        self.key_name = "threads" if program else "outputs per cycle U"
        self.pe_name = "pipeline" if program else "PE"
        self.best = roofline.best()
        self.ceilings = [] if self.best is None else roofline.ceilings(self.best)
        self.ceiling_colours = [matplotlib.colormaps["autumn"](i / max(1, len(self.ceilings)))
                                for i in range(len(self.ceilings))]
        self.io_roofs = roofline.io_roofs()
        links = list(dict.fromkeys(link.name for link, _, _ in self.io_roofs))
        self.io_greys = [_IO_GREYS[links.index(link.name) % len(_IO_GREYS)]
                         for link, _, _ in self.io_roofs]

    def limits(self):
        """``(xmin, xmax, ymin, ymax)``: wide enough for every ridge point, where a compute roof
        meets the I/O roof that bounds it."""
        cis = [p.ci_ops_per_byte for p in self.placed if p.ci_ops_per_byte > 0] or [1.0]
        ridges = [p.cp_gbops / p.bandwidth_gbps for p in self.fitting]
        xmin, xmax = _nice(min(cis) / 5, False), _nice(max(cis + ridges) * 2, True)
        lows = ([p.attainable_gbops for p in self.fitting]
                + [gbps * xmin for _, _, gbps in self.io_roofs])
        highs = ([p.cp_gbops for p in self.fitting] + [p.io_roof_gbops for p in self.fitting]
                 or [gbps * xmax for _, _, gbps in self.io_roofs])
        return xmin, xmax, _nice(min(lows) / 1.5, False), _nice(max(highs) * 2, True)

    def draw(self, ax, xmin, xmax, ymin, ymax):
        """Draw every line and mark within these limits; returns the lines as segments."""
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xmin, xmax)
        ax.set_ylim(ymin, ymax)
        ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
        ax.grid(True, which="minor", color="#f2f2f2", linewidth=0.4)
        segments = []
        for (_, counts, gbps), grey in zip(self.io_roofs, self.io_greys):
            ax.plot([xmin, xmax], [gbps * xmin, gbps * xmax], color=grey,
                    linestyle=_style(counts), linewidth=2.2, zorder=3)
            segments.append(((xmin, gbps * xmin), (xmax, gbps * xmax)))
        for p in self.fitting:
            design = p.measurement.point
            ax.axhline(p.cp_gbops, color=self.colour[_key(design)],
                       linestyle=_style([p.devices]), linewidth=1.2 if design.pipeline else 0.8,
                       zorder=2)
            segments.append(((xmin, p.cp_gbops), (xmax, p.cp_gbops)))
        for design in self.designs:
            own = [p for p in self.fitting if p.measurement.point == design]
            if own:
                top = max(p.attainable_gbops for p in own)
                ax.vlines(own[0].ci_ops_per_byte, ymin, top, color=self.colour[_key(design)],
                          linestyle=":", linewidth=1.0, zorder=2)
                segments.append(((own[0].ci_ops_per_byte, ymin),
                                 (own[0].ci_ops_per_byte, top)))
        for c, shade in zip(self.ceilings, self.ceiling_colours):
            start = max(xmin, c.gbops / self.best.bandwidth_gbps)
            ax.plot([start, xmax], [c.gbops, c.gbops], color=shade, linestyle=(0, (1, 1)),
                    linewidth=2.2, zorder=4)
            segments.append(((start, c.gbops), (xmax, c.gbops)))
        for p in self.fitting:
            design = p.measurement.point
            shade = self.colour[_key(design)]
            ax.plot(p.ci_ops_per_byte, p.attainable_gbops, marker=_MARKERS[design.buffer],
                    markersize=8, markeredgecolor=shade, markeredgewidth=1.6,
                    markerfacecolor="white" if p.devices == 1 else shade, linestyle="none",
                    zorder=5)
            if not design.pipeline:
                ax.plot(p.ci_ops_per_byte, p.attainable_gbops, marker="x", markersize=5,
                        color="black" if p.devices > 1 else shade, markeredgewidth=1.2,
                        linestyle="none", zorder=5.5)
        return segments

    def roofs(self):
        """``(GBops/s, name, colour)`` of every compute roof and ceiling."""
        found = [(p.cp_gbops, f"{_name([p.measurement.point], self.buffers)}, "
                              f"{_devices([p.devices])}: {_gbops(p.cp_gbops)}",
                  self.colour[_key(p.measurement.point)]) for p in self.fitting]
        found += [(c.gbops, f"ceiling {c.label}: {_gbops(c.gbops)}", shade)
                  for c, shade in zip(self.ceilings, self.ceiling_colours)]
        return found

    def marks(self, ax):
        """The labels of the design points, ``(x, y, text, colour)``: one per design point at
        its highest mark; points drawn at one place on ``ax`` share one."""
        tops = []
        for design in self.designs:
            own = [p for p in self.fitting if p.measurement.point == design]
            if own:
                top = max(own, key=lambda p: p.attainable_gbops)
                x, y = ax.transData.transform((top.ci_ops_per_byte, top.attainable_gbops))
                tops.append((x, y, (design.buffer, design.pipeline), top))
        marks = []
        for group in _groups(sorted(tops, key=lambda t: t[0]),
                             radius=_SAME_PLACE * ax.figure.dpi / 72):
            first = group[0]
            names = [p.measurement.point for p in group]
            marks.append((first.ci_ops_per_byte, first.attainable_gbops,
                          _name(names, self.buffers),
                          self.colour[max(_key(d) for d in names)]))
        return marks

    def legend(self):
        handles = [Line2D([], [], color=grey, linestyle=_style(counts), linewidth=2.2,
                          label=f"I/O roof {gbps:g} GB/s: {link.name} ({_devices(counts)})")
                   for (link, counts, gbps), grey in zip(self.io_roofs, self.io_greys)]
        handles += [Line2D([], [], color="#444444", linestyle=_style([d]), marker="o",
                           markerfacecolor="white" if d == 1 else "#444444",
                           label=f"compute roof and attainable, {_devices([d])}")
                    for d in self.roofline.device_counts]
        unpipelined = not all(d.pipeline for d in self.designs)
        if len(self.buffers) > 1 or unpipelined:
            handles += [Line2D([], [], color="#444444", linestyle="none", marker=_MARKERS[b],
                               label=f"{b} buffer") for b in self.buffers]
        if unpipelined:
            handles.append(Line2D([], [], color="#444444", linestyle="none", marker="x",
                                  label="without pipelining (crossed)"))
        handles.append(Line2D([], [], color="#444444", linestyle=":", label="CI of a point"))
        if self.ceilings:
            handles.append(Line2D([], [], color=self.ceiling_colours[0], linestyle=(0, (1, 1)),
                                  linewidth=2.2,
                                  label=f"ceilings under the best, {self.best.label} on "
                                        f"{_devices([self.best.devices])}"))
        handles += [Line2D([], [], color=shade, marker="o", linestyle="none",
                           label=_key_text(self.designs[0], u))
                    for u, shade in self.colour.items()]
        return handles

    def title(self):
        points, point = self.points, self.designs[0]
        clocks = sorted({p.clock_mhz for p in points})
        clock = (f"{clocks[0]:g} MHz" if len(clocks) == 1
                 else f"{clocks[0]:.0f}-{clocks[-1]:.0f} MHz")
        notes = [f"clock {clock} ({points[0].clock_source.split(' (')[0]})",
                 f"resources per bare {self.pe_name}: "
                 f"{points[0].measurement.resources_source}"]
        if self.roofline.scaled:
            notes.append("figures scaled from short frames")
        unfit = [p.label for p in self.placed if p.attainable_gbops == 0]
        if unfit:
            notes.append("a PE does not fit, not drawn: " + ", ".join(dict.fromkeys(unfit)))
        undefined = [p.label for p in points if not p.placed]
        if undefined:
            notes.append("CI or perf_PE undefined, not drawn: "
                         + ", ".join(dict.fromkeys(undefined)))
        suspect = [p.label for p in self.roofline.suspect]
        if suspect:
            notes.append("SUSPECT, measured with saturated HMM counters: "
                         + ", ".join(dict.fromkeys(suspect)))
        only = f", {self.buffers[0]} buffer" if len(self.buffers) == 1 else ""
        board = self.roofline.board
        kernel = (point.title if hasattr(point, "title") else
                  f"{self.roofline.kernel} {point.rows}x{point.cols} {point.mask_name}{only}")
        # A program's point solves a problem of its own, not a frame.
        frames = (point.problem if hasattr(point, "problem")
                  else f"{point.width}x{point.height} frames")
        return (f"Extended roofline: {kernel}, {frames}, on "
                f"{board.name} "
                f"({board.device_count} x {board.device})\n" + "; ".join(notes))


def _inset_place(ax, segments, marks):
    """Where, in axes fractions, a magnified view of ``marks`` can go: the first corner of
    the plot that no line crosses and no mark is in; ``None`` when there is none."""
    to_display = ax.transData.transform
    lines = [tuple(map(tuple, to_display([p, q]))) for p, q in segments]
    spots = [tuple(to_display(m)) for m in marks]
    for x, y in ((0.55, 0.04), (0.04, 0.51), (0.55, 0.51), (0.04, 0.04)):
        box = ax.transAxes.transform([(x, y), (x + _INSET[0], y + _INSET[1])]).ravel()
        if not any(segment_crosses_box(p, q, box) for p, q in lines) and not any(
                box[0] <= sx <= box[2] and box[1] <= sy <= box[3] for sx, sy in spots):
            return (x, y, *_INSET)
    return None


def plot_roofline(roofline, paths):
    """Draw ``roofline`` (a :class:`hwgen.roofline.Roofline`) and save it to every path in
    ``paths`` (the format follows the suffix: ``.png``, ``.svg``, ``.pdf``); returns the
    :class:`matplotlib.figure.Figure`."""
    lines = _Lines(roofline)
    figure = Figure(figsize=(13, 9), dpi=150, layout="constrained")
    # An empty column right of the plot keeps room for the names of the compute roofs: their
    # leaders and the longest name (in points, at a little more than an average glyph's width).
    roofs = lines.roofs()
    room = 36 + 0.62 * _FONT * max((len(text) for _, text, _ in roofs), default=0)
    grid = figure.add_gridspec(1, 2, width_ratios=(13 * 72 - room, room), wspace=0)
    ax = figure.add_subplot(grid[0])
    figure.add_subplot(grid[1]).axis("off")
    xmin, xmax, ymin, ymax = lines.limits()
    segments = lines.draw(ax, xmin, xmax, ymin, ymax)
    figure.legend(handles=lines.legend(), loc="outside lower center", fontsize=8, ncols=4,
                  title=f"colour: {lines.key_name}, darker for more; compute roofs and "
                        f"ceilings are named right of the plot in GBops/s", title_fontsize=8)
    ax.set_title(lines.title(), fontsize=10)
    ax.set_xlabel("computational intensity CI (ops/byte)")
    ax.set_ylabel("performance (GBops/s)")

    # Labels go where the finished layout puts their marks.
    figure.draw_without_rendering()
    figure.set_layout_engine("none")
    _name_roofs(ax, roofs)
    labelled = ax
    spots = [(p.ci_ops_per_byte, p.attainable_gbops) for p in lines.fitting]
    xs, ys = ([ax.transData.transform(s)[k] for s in spots] for k in (0, 1))
    frame = ax.get_window_extent()
    place = _inset_place(ax, segments, spots)
    if (place is not None and max(xs) - min(xs) < _CROWDED * frame.width
            and max(ys) - min(ys) < _CROWDED * frame.height):
        # The points are crowded: magnify them in an inset, and label them there.
        labelled = ax.inset_axes(place, zorder=8)
        low = [min(v for v, _ in spots), min(v for _, v in spots)]
        high = [max(v for v, _ in spots), max(v for _, v in spots)]
        pads = [(h / l) ** 0.35 * 1.03 for l, h in zip(low, high)]
        segments = lines.draw(labelled, low[0] / pads[0], high[0] * pads[0],
                              low[1] / pads[1], high[1] * pads[1])
        labelled.tick_params(labelsize=7, which="both")
        for axis in (labelled.xaxis, labelled.yaxis):
            axis.set_major_formatter(_PLAIN)
            axis.set_minor_formatter(_PLAIN)
        labelled.set_facecolor("white")
        ax.indicate_inset_zoom(labelled, edgecolor="#555555")
    place_labels(labelled, lines.marks(labelled), segments=segments, fontsize=_FONT)
    for path in paths:
        figure.savefig(path)
    return figure


def _name_roofs(ax, roofs):
    """Name each horizontal line of ``roofs`` ``(GBops/s, text, colour)`` right of the plot,
    beside where it leaves it, the names spread so that none overlaps another; an elbowed
    leader joins a name to its line."""
    scale = ax.figure.dpi / 72
    frame = ax.get_window_extent()
    to_data = ax.transData.inverted()
    wanted = [ax.transData.transform((1, gbops))[1] for gbops, _, _ in roofs]
    at = spread(wanted, (_FONT + 2.5) * scale, frame.y0, frame.y1)
    # Leader elbows and the text, in axes widths right of the plot.
    step = 6 * scale / frame.width
    elbows = (1, 1 + step, 1 + 4 * step, 1 + 5 * step)
    for (gbops, text, shade), y in zip(roofs, at):
        y = to_data.transform((frame.x0, y))[1]
        ax.plot(elbows, [gbops, gbops, y, y], color=shade, linewidth=0.6,
                transform=ax.get_yaxis_transform(), clip_on=False)
        ax.text(elbows[-1] + step / 2, y, text, transform=ax.get_yaxis_transform(), ha="left",
                va="center", fontsize=_FONT, color=shade, clip_on=False)
