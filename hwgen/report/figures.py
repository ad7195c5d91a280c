"""The report's figures, drawn with matplotlib and kept as SVG text.

Every figure has a title, axes labelled with their units and a legend outside the plot, so that
it hides no data. States without a colour of their own (an FSM's) take :func:`state_colours`:
twenty colours in an order where neighbours differ most (tab20's dark shades, then its light
ones), distinct for up to 16 states and more. Long names are wrapped at ``_``, ``.`` and spaces.
"""

import io
import math
import re

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator

from ..instrument import STREAM_CATEGORIES
from ..traces.paraver import STATE_COLORS

__all__ = ["to_svg", "state_colours", "wrap_name", "state_pie", "stream_bars", "histogram_bars",
           "thread_shares", "thread_timeline", "cycle_roofline", "line_bars", "paired_bars",
           "pareto_front"]

_FONT = 8.5
_TITLE = 10
_WIDTH = 7.6   # inches: 730 px on the page
# Past this many rectangles a timeline is drawn as an image (150 dpi) inside the SVG, which
# stays small.
_VECTOR_SPANS = 4000
# Log axes read 0.2, 0.5, 1, 2, 5, 10... rather than powers of ten.
_PLAIN = FuncFormatter(lambda value, _: f"{value:g}")


def to_svg(figure):
    """The figure as SVG text, from ``<svg`` on; the same figure gives the same text."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "hwgen-report", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None}, dpi=150)
    text = buffer.getvalue()
    # The RDF metadata names matplotlib's site and Dublin Core: the page needs no addresses.
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)


def state_colours(count):
    """``count`` colours as hex strings, tab20 reordered: its ten dark shades, then its ten
    light ones (repeated past twenty)."""
    palette = matplotlib.colormaps["tab20"].colors
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    return [matplotlib.colors.to_hex(palette[order[i % 20]]) for i in range(count)]


def _named(name):
    """The colour the traces give a named state, else None."""
    rgb = STATE_COLORS.get(name)
    return None if rgb is None else "#{:02x}{:02x}{:02x}".format(*rgb)


def wrap_name(name, width=26):
    """``name`` on lines of at most ``width`` characters where it can be broken: after ``_``,
    ``.``, ``-``, ``/`` or at a space (a longer run stays whole)."""
    parts = re.findall(r"[^_.\-/ ]*[_.\-/ ]?", name)
    lines, line = [], ""
    for part in filter(None, parts):
        if line and len(line) + len(part) > width:
            lines.append(line.rstrip())
            line = ""
        line += part
    lines.append(line.rstrip())
    return "\n".join(lines)


def _figure(height):
    return Figure(figsize=(_WIDTH, height), layout="constrained")


def _ink(colour):
    """Black or white, whichever reads better on ``colour``."""
    r, g, b = matplotlib.colors.to_rgb(colour)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def _percent_labels(ax, bars, shares):
    """Write each segment's share inside it where it is wide enough."""
    for bar, value in zip(bars, shares):
        if value >= 7:
            x, y = bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2
            ax.text(x, y, f"{value:.0f}%", ha="center", va="center", fontsize=_FONT - 1,
                    color=_ink(bar.get_facecolor()))


def state_pie(title, states, *, unit="cycles"):
    """A ring of ``states`` (``{state: cycles}``) in their order, the legend right of it
    naming every state with its cycles and share (zero-cycle states included)."""
    names, counts = list(states), [max(0, v or 0) for v in states.values()]
    total = sum(counts)
    colours = [_named(name) or colour for name, colour in zip(names, state_colours(len(names)))]
    labels = [f"{wrap_name(name)}: {count:,} {unit} ({100 * count / total:.1f}%)" if total
              else wrap_name(name) for name, count in zip(names, counts)]
    widest = max(len(line) for label in labels for line in label.split("\n"))
    lines = sum(label.count("\n") + 1 for label in labels)
    figure = Figure(figsize=(min(_WIDTH, 2.9 + 0.062 * widest), max(2.6, 0.9 + 0.17 * lines)),
                    layout="constrained")
    ax = figure.add_subplot()
    figure.suptitle(title, fontsize=_TITLE, x=0.02, ha="left")
    if total == 0:
        ax.text(0.5, 0.5, f"no {unit} recorded", ha="center", va="center", transform=ax.transAxes)
        ax.axis("off")
        return figure
    wedges, _ = ax.pie(counts, colors=colours, startangle=90, counterclock=False,
                       wedgeprops={"width": 0.42, "edgecolor": "white", "linewidth": 1})
    for wedge, count in zip(wedges, counts):
        if count / total >= 0.05:
            angle = math.radians((wedge.theta1 + wedge.theta2) / 2)
            ax.text(0.79 * math.cos(angle), 0.79 * math.sin(angle), f"{100 * count / total:.0f}%",
                    ha="center", va="center", fontsize=_FONT - 1, color=_ink(wedge.get_facecolor()))
    ax.text(0, 0, f"{total:,}\n{unit}", ha="center", va="center", fontsize=_FONT)
    ax.set_aspect("equal")
    handles = [Patch(facecolor=c, edgecolor="white") for c in colours]
    figure.legend(handles, labels, loc="outside right center", fontsize=_FONT, frameon=False)
    return figure


def stream_bars(title, streams, *, observed):
    """One 100% bar per stream, its cycles split into transferring, blocking and idle;
    ``observed`` says over which cycles (axis label)."""
    names = list(streams)
    figure = _figure(1.3 + 0.34 * len(names))
    ax = figure.add_subplot()
    left = [0.0] * len(names)
    for category in STREAM_CATEGORIES:
        shares = []
        for name in names:
            counts = streams[name]
            total = sum(v or 0 for v in counts.values())
            shares.append(100 * (counts.get(category) or 0) / total if total else 0)
        bars = ax.barh(range(len(names)), shares, left=left, color=_named(category),
                       label=category, edgecolor="white", linewidth=0.5, height=0.7)
        _percent_labels(ax, bars, shares)
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(names)), [wrap_name(n) for n in names], fontsize=_FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"share of {observed} (%)", fontsize=_FONT)
    ax.tick_params(axis="x", labelsize=_FONT)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    figure.legend(loc="outside lower center", ncols=3, fontsize=_FONT, frameon=False)
    return figure


def histogram_bars(title, bins, *, xlabel):
    """The bins in order, the last (overflow) one hatched; empty bins past the last non-empty
    one are left out, and the figure says so."""
    labels, counts = list(bins), [v or 0 for v in bins.values()]
    regular, overflow = counts[:-1], counts[-1]
    used = max((i for i, c in enumerate(regular) if c), default=-1)
    shown = min(len(regular), max(used + 2, 8))
    positions = list(range(shown)) + [shown + 0.6]
    heights = regular[:shown] + [overflow]
    names = labels[:shown] + [labels[-1]]
    figure = _figure(2.9)
    ax = figure.add_subplot()
    bars = ax.bar(positions, heights, width=0.8, color="#1f77b4", edgecolor="white")
    bars[-1].set_facecolor("#aec7e8")
    bars[-1].set_hatch("//")
    step = max(1, math.ceil(shown / 16))
    ticks = [p for i, p in enumerate(positions[:-1]) if i % step == 0] + [positions[-1]]
    tick_names = [n for i, n in enumerate(names[:-1]) if i % step == 0] + [names[-1]]
    ax.set_xticks(ticks, tick_names, fontsize=_FONT)
    ax.tick_params(axis="y", labelsize=_FONT)
    for bar, count in zip(bars, heights):
        if count:
            ax.annotate(f"{count:,}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=_FONT - 1.5, xytext=(0, 1),
                        textcoords="offset points")
    ax.set_ylim(0, max(heights + [1]) * 1.15)
    omitted = len(regular) - shown
    ax.set_xlabel(xlabel + (f"; bins {labels[shown]} to {labels[len(regular) - 1]} are empty and "
                            f"not drawn" if omitted else ""), fontsize=_FONT)
    ax.set_ylabel("samples", fontsize=_FONT)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    figure.legend([bars[0], bars[-1]], ["bin", f"overflow ({names[-1]})"], loc="outside right upper",
                  fontsize=_FONT, frameon=False)
    return figure


def thread_shares(title, threads, state_names):
    """One 100% bar per thread (``threads``: ``[{state: percent}]``), split by state."""
    figure = _figure(1.3 + 0.26 * len(threads))
    ax = figure.add_subplot()
    left = [0.0] * len(threads)
    for state, colour in zip(state_names, state_colours(len(state_names))):
        shares = [t.get(state) or 0 for t in threads]
        bars = ax.barh(range(len(threads)), shares, left=left, color=_named(state) or colour,
                       label=state, edgecolor="white", linewidth=0.5, height=0.75)
        _percent_labels(ax, bars, shares)
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(threads)), [f"thread {i}" for i in range(len(threads))],
                  fontsize=_FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the job's cycles (%)", fontsize=_FONT)
    ax.tick_params(axis="x", labelsize=_FONT)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    figure.legend(loc="outside lower center", ncols=len(state_names), fontsize=_FONT,
                  frameon=False)
    return figure


def _spans(changes, threads, cycles):
    """Per thread and state, the ``(begin, length)`` runs of ``changes`` (``[cycle, states]``)."""
    runs = [{} for _ in range(threads)]
    current = [None] * threads
    for cycle, states in [*changes, [cycles, [None] * threads]]:
        for thread, state in enumerate(states):
            if current[thread] is not None and current[thread][1] != state:
                begin, previous = current[thread]
                runs[thread].setdefault(previous, []).append((begin, cycle - begin))
                current[thread] = None
            if current[thread] is None and state is not None:
                current[thread] = (cycle, state)
    return runs


def thread_timeline(title, timeline):
    """Each thread's state over the job, from the ``timeline`` of ``hwgen run``'s JSON
    (``threads``, ``cycles``, ``state_names``, ``changes``)."""
    threads, cycles, names = timeline["threads"], timeline["cycles"], timeline["state_names"]
    runs = _spans(timeline["changes"], threads, cycles)
    raster = sum(len(r) for per in runs for r in per.values()) > _VECTOR_SPANS
    colours = [_named(n) or c for n, c in zip(names, state_colours(len(names)))]
    figure = _figure(1.4 + 0.28 * threads)
    ax = figure.add_subplot()
    for thread, per_state in enumerate(runs):
        for state, spans in per_state.items():
            ax.broken_barh(spans, (thread - 0.4, 0.8), facecolors=colours[state],
                           rasterized=raster)
    ax.set_yticks(range(threads), [f"thread {i}" for i in range(threads)], fontsize=_FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, cycles)
    ax.set_xlabel("clock cycles from the job's start", fontsize=_FONT)
    ax.tick_params(axis="x", labelsize=_FONT)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    handles = [Patch(facecolor=c) for c in colours]
    figure.legend(handles, names, loc="outside lower center", ncols=len(names), fontsize=_FONT,
                  frameon=False)
    return figure


def cycle_roofline(title, points, *, bandwidth=None, peak=None):
    """A roofline in cycles: log-log CI (ops/byte) against ops/cycle, with the memory's roof
    (``bandwidth`` B/cycle, a diagonal), the datapath's roof (``peak`` ops/cycle, level) and
    every point of ``points`` (``(label, ci, ops_per_cycle, bytes_per_cycle)``) with a dotted
    diagonal at the bandwidth it drew."""
    cis = [p[1] for p in points]
    perfs = [p[2] for p in points]
    xmin, xmax = min(cis) / 8, max(cis) * 8
    tops = perfs + ([peak] if peak else []) + ([bandwidth * xmax] if bandwidth else [])
    ymin, ymax = min(perfs) / 20, max(tops) * 3
    figure = _figure(4.2)
    ax = figure.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = [xmin * (xmax / xmin) ** (i / 64) for i in range(65)]
    if bandwidth:
        ys = [min(bandwidth * x, peak) if peak else bandwidth * x for x in xs]
        ax.plot(xs, ys, color="black", linewidth=1.6,
                label=f"memory roof: {bandwidth:.3g} B/cycle" + (" under the datapath's peak"
                                                                 if peak else ""))
    if peak:
        ax.axhline(peak, color="#555555", linewidth=1, linestyle="--",
                   label=f"datapath peak: {peak:.3g} ops/cycle")
    colours = state_colours(len(points))
    for (label, ci, perf, drawn), colour in zip(points, colours):
        if drawn:
            ax.plot(xs, [drawn * x for x in xs], color=colour, linewidth=0.8, linestyle=":",
                    label=f"{label}: {drawn:.3g} B/cycle drawn from memory")
        ax.plot([ci], [perf], marker="o", markersize=7, color=colour, linestyle="none",
                label=f"{label}: CI {ci:.3g} ops/byte, {perf:.3g} ops/cycle")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_PLAIN)
        axis.set_minor_locator(LogLocator(subs=(2, 5)))
        axis.set_minor_formatter(_PLAIN)
    ax.set_xlabel("computational intensity CI (ops/byte)", fontsize=_FONT)
    ax.set_ylabel("performance (ops/cycle)", fontsize=_FONT)
    ax.tick_params(labelsize=_FONT, which="both")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    figure.legend(loc="outside right upper", fontsize=_FONT, frameon=False)
    return figure


def line_bars(title, lines, *, xlabel):
    """Horizontal bars of ``lines`` (``(label, value)``, largest first)."""
    figure = _figure(1.0 + 0.27 * len(lines))
    ax = figure.add_subplot()
    ax.barh(range(len(lines)), [v for _, v in lines], color="#d62728", height=0.7)
    ax.set_yticks(range(len(lines)), [label for label, _ in lines], fontsize=_FONT,
                  family="monospace")
    ax.invert_yaxis()
    ax.set_xlabel(xlabel, fontsize=_FONT)
    ax.tick_params(axis="x", labelsize=_FONT)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    return figure


def paired_bars(title, rows, names=("bare", "with HMM")):
    """A small plot per row ``(label with unit, first, second)``: its two values side by side,
    each plot on its own scale; an undefined value is written n/a."""
    figure = _figure(2.5)
    axes = figure.subplots(1, len(rows), squeeze=False)[0]
    colours = ("#7f7f7f", "#1f77b4")
    for ax, (label, *values) in zip(axes, rows):
        for x, (value, colour) in enumerate(zip(values, colours)):
            if value is None:
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=_FONT - 1)
                continue
            ax.bar(x, value, color=colour, width=0.7)
            ax.annotate(f"{value:,.1f}" if isinstance(value, float) else f"{value:,}",
                        (x, value), ha="center", va="bottom", fontsize=_FONT - 2,
                        xytext=(0, 1), textcoords="offset points")
        top = max([v for v in values if v is not None] + [1])
        ax.set_ylim(0, top * 1.2)
        ax.set_xticks([0, 1], ["", ""])
        ax.set_title(wrap_name(label, 14), fontsize=_FONT)
        ax.tick_params(axis="y", labelsize=_FONT - 1.5)
    figure.suptitle(title, fontsize=_TITLE, x=0.01, ha="left")
    figure.legend([Patch(facecolor=c) for c in colours], names, loc="outside lower center",
                  ncols=2, fontsize=_FONT, frameon=False)
    return figure


def pareto_front(title, points, front):
    """Performance against LUTs, log-log: every point of ``points`` (``(lut, gops)``) in grey,
    the front's (``(lut, gops)``, by LUTs) joined in red."""
    figure = _figure(3.8)
    ax = figure.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.scatter([p[0] for p in points], [p[1] for p in points], s=6, color="#bbbbbb",
               label=f"{len(points)} design points (model + estimate)")
    ax.plot([p[0] for p in front], [p[1] for p in front], "o-", color="#c0392b", ms=4,
            label=f"Pareto front ({len(front)} points)")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_PLAIN)
        axis.set_minor_locator(LogLocator(subs=(2, 5)))
        axis.set_minor_formatter(_PLAIN)
    ax.set_xlabel("LUTs", fontsize=_FONT)
    ax.set_ylabel("performance (Gops/s)", fontsize=_FONT)
    ax.tick_params(labelsize=_FONT, which="both")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.set_title(title, fontsize=_TITLE, loc="left")
    figure.legend(loc="outside right upper", fontsize=_FONT, frameon=False)
    return figure
