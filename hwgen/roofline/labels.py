"""Direct labels that keep clear of a figure's lines, marks and each other.

:func:`place_labels` is a small greedy placer in the spirit of ggrepel and adjustText, made
deterministic: each label tries positions on rings around its mark, nearest first, and takes
the one whose box crosses no line, covers no mark and no label placed before it, and stays
inside the axes; a grey leader joins a label that stands off to its mark.
:func:`spread` places labels along one axis (a column beside the plot) at least a gap apart.

Everything is measured in display pixels, so call them once the figure's layout is final.
"""

import math

__all__ = ["place_labels", "spread", "segment_crosses_box"]

# Directions to try, in order of preference: beside the mark first, then above and below.
_ANGLES = (0, -30, 30, 180, 150, -150, -60, 60, -120, 120, -90, 90)
# Ring radii, in font heights.
_RADII = (0.9, 1.6, 2.5, 3.6, 5, 7, 9.5, 12.5, 16, 20)
_LEADER = {"arrowstyle": "-", "color": "#777777", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 0}


def segment_crosses_box(p, q, box):
    """Whether the segment from ``p`` to ``q`` meets the box ``(x0, y0, x1, y1)`` (Liang-Barsky)."""
    x0, y0, x1, y1 = box
    dx, dy = q[0] - p[0], q[1] - p[1]
    low, high = 0.0, 1.0
    for step, room in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if step == 0:
            if room < 0:
                return False
        else:
            t = room / step
            if step < 0:
                low = max(low, t)
            else:
                high = min(high, t)
            if low > high:
                return False
    return True


def _segments_cross(a, b, c, d):
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return (side(a, b, c) * side(a, b, d) < 0) and (side(c, d, a) * side(c, d, b) < 0)


def _boxes_overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _box_at(anchor, angle, width, height):
    """The box of a label placed at ``anchor`` in direction ``angle``, its side facing the mark,
    and the alignment that puts it there."""
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    ha = "left" if cos > 0.35 else "right" if cos < -0.35 else "center"
    va = "bottom" if sin > 0.35 else "top" if sin < -0.35 else "center"
    x0 = {"left": anchor[0], "right": anchor[0] - width, "center": anchor[0] - width / 2}[ha]
    y0 = {"bottom": anchor[1], "top": anchor[1] - height, "center": anchor[1] - height / 2}[va]
    return (x0, y0, x0 + width, y0 + height), ha, va


def _nearest_on_box(point, box):
    return (min(max(point[0], box[0]), box[2]), min(max(point[1], box[1]), box[3]))


def place_labels(ax, marks, *, segments=(), fontsize=8, mark_radius=5.0, pad=2.0):
    """Label ``marks`` on ``ax`` where no line, mark or other label is in the way.

    Parameters
    ----------
    ax : Axes
    marks : list of (x, y, text, colour)
        In data coordinates; the text is written in ``colour``.
    segments : list of ((x0, y0), (x1, y1))
        The figure's lines, in data coordinates, for labels to keep clear of.
    fontsize : float
    mark_radius : float
        Points (1/72 inch) around each mark that no label covers.
    pad : float
        Pixels of room around a label's text.

    Returns
    -------
    list of Annotation
        The labels, in the order of ``marks``.
    """
    scale = ax.figure.dpi / 72
    to_display = ax.transData.transform
    lines = [tuple(map(tuple, to_display([p, q]))) for p, q in segments]
    anchors = [tuple(to_display((x, y))) for x, y, _, _ in marks]
    radius = mark_radius * scale
    mark_boxes = [(x - radius, y - radius, x + radius, y + radius) for x, y in anchors]
    frame = ax.get_window_extent()
    inside = (frame.x0 + pad, frame.y0 + pad, frame.x1 - pad, frame.y1 - pad)
    em = fontsize * scale
    placed, leaders, labels = [], [], []
    for (x, y, text, colour), anchor in zip(marks, anchors):
        probe = ax.text(x, y, text, fontsize=fontsize)
        extent = probe.get_window_extent()
        probe.remove()
        width, height = extent.width + 2 * pad, extent.height + 2 * pad
        best = None
        for ring in _RADII:
            for angle in _ANGLES:
                cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
                at = (anchor[0] + (radius + ring * em) * cos, anchor[1] + (radius + ring * em) * sin)
                box, ha, va = _box_at(at, angle, width, height)
                if not (inside[0] <= box[0] and box[2] <= inside[2]
                        and inside[1] <= box[1] and box[3] <= inside[3]):
                    continue
                if any(_boxes_overlap(box, other) for other in [*placed, *mark_boxes]):
                    continue
                end = _nearest_on_box(anchor, box)
                start = (anchor[0] + radius * cos, anchor[1] + radius * sin)
                if any(segment_crosses_box(start, end, other) for other in placed):
                    continue
                cost = (100 * sum(segment_crosses_box(p, q, box) for p, q in lines)
                        + 10 * sum(_segments_cross(start, end, p, q) for p, q in leaders)
                        + 2 * sum(_segments_cross(start, end, p, q) for p, q in lines)
                        + ring)
                if best is None or cost < best[0]:
                    best = (cost, box, ha, va, ring > _RADII[0] or angle not in (0, 180),
                            start, end)
            if best is not None and best[0] < 100:
                break   # no line crosses it: nearer rings were tried first
        if best is None:   # nowhere to go: beside the mark, over whatever is there
            best = (0, *_box_at((anchor[0] + radius, anchor[1]), 0, width, height), False,
                    anchor, anchor)
        _, box, ha, va, leader, start, end = best
        placed.append(box)
        text_x = {"left": box[0] + pad, "right": box[2] - pad, "center": (box[0] + box[2]) / 2}[ha]
        text_y = {"bottom": box[1] + pad, "top": box[3] - pad, "center": (box[1] + box[3]) / 2}[va]
        if leader:   # a label that is not right beside its mark points at it
            leaders.append((start, end))
        labels.append(ax.annotate(
            text, (x, y), xytext=((text_x - anchor[0]) / scale, (text_y - anchor[1]) / scale),
            textcoords="offset points", ha=ha, va=va, fontsize=fontsize, color=colour, zorder=7,
            annotation_clip=False,
            arrowprops={**_LEADER, "shrinkB": mark_radius} if leader else None))
    return labels


def spread(wanted, gap, low, high):
    """Positions as near ``wanted`` as can be, in the same order, at least ``gap`` apart and
    within ``[low, high]`` (as far as they fit)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [min(max(wanted[i], low), high) for i in order]
    for k in range(1, len(placed)):
        placed[k] = max(placed[k], placed[k - 1] + gap)
    if placed and placed[-1] > high:
        placed[-1] = high
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
    result = [0.0] * len(wanted)
    for i, value in zip(order, placed):
        result[i] = value
    return result
