"""The roofline figure of a long sweep reads at a glance: labels clear of every line and of each
other, a name for every compute roof, a sequential palette by U, title and legend apart."""

import itertools

import pytest
from matplotlib.colors import to_rgb
from matplotlib.text import Text

from hwgen.boards import get_board
from hwgen.roofline.figure import plot_roofline
from hwgen.roofline.frame_scaling import FrameFigures
from hwgen.roofline.labels import segment_crosses_box, spread
from hwgen.roofline.model import Roofline, RooflinePoint, bounding_link
from hwgen.roofline.sweep import DesignPoint, Measurement

EX500 = get_board("ex500")
SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 510)


def smart_sweep(unrolls=SWEEP, pipelines=(True,)):
    """The README's EX500 sweep with closed-form figures: a smart buffer's reads (DESIGN.md
    section 3) over a 512 x 512 frame, 8 ops per output, U outputs per cycle."""
    points = []
    for unroll, pipeline in itertools.product(unrolls, pipelines):
        outputs_h, width = 510, 512
        strips = [min(unroll, outputs_h - s) for s in range(0, outputs_h, unroll)]
        reads = sum(width * (3 + u - 1) for u in strips)
        outputs = 510 * 510
        cycles = -(-outputs // unroll) * (1 if pipeline else 4)
        frame = FrameFigures(width=512, height=512, cycles=cycles, outputs=outputs,
                             ops=8 * outputs, bytes_read=reads, bytes_written=outputs,
                             scaled=False, simulated_heights=(512,), simulated_cycles=(cycles,))
        design = DesignPoint("dilation", 3, 3, "rect", 512, 512, unroll, "smart", pipeline)
        measurement = Measurement(point=design, name=design.label, frame=frame,
                                  resources={"lut": 150 + 64 * unroll, "ff": 100 + 24 * unroll,
                                             "bram": 0, "dsp": 0},
                                  resources_source="given")
        for devices in (1, 2):
            link, gbps = bounding_link(EX500, devices)
            points.append(RooflinePoint(measurement, devices, EX500.resources.as_counts(), 250.0,
                                        "board default", link.name, gbps))
    return Roofline("dilation", EX500, tuple(points),
                    {"resources": "given", "clock": "board", "link": None, "devices": None,
                     "ceiling_clocks_mhz": None, "pes": None})


def _axes(figure):
    """Every axes of the figure, insets included."""
    return [a for ax in figure.axes for a in (ax, *ax.child_axes)]


def _texts(figure):
    """``(point labels, roof names)``: the texts of every axes, by what they say."""
    labels, names = [], []
    for ax in _axes(figure):
        for text in ax.texts:
            if text.get_text():
                (names if ":" in text.get_text() else labels).append((ax, text))
    return labels, names


def _lightness(rgb):
    """CIE L* of an sRGB colour."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    y = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 116 * (y ** (1 / 3) if y > 216 / 24389 else (24389 / 27 * y + 16) / 116) - 16


def _box(text):
    extent = Text.get_window_extent(text)   # the text's own box, without an annotation's leader
    return (extent.x0, extent.y0, extent.x1, extent.y1)


@pytest.fixture(scope="module", params=[(SWEEP, (True,)), ((1, 4, 16, 64), (True, False))],
                ids=["long sweep", "ceilings"])
def drawn(request, tmp_path_factory):
    roofline = smart_sweep(*request.param)
    path = tmp_path_factory.mktemp("figure") / "roofline.png"
    figure = plot_roofline(roofline, [path])
    assert path.read_bytes().startswith(b"\x89PNG")
    figure.draw_without_rendering()
    return roofline, figure


def test_point_labels_cross_no_line(drawn):
    _, figure = drawn
    labels, _ = _texts(figure)
    assert labels
    for ax, text in labels:
        box = _box(text)
        for line in ax.lines:
            xy = line.get_transform().transform(line.get_xydata())
            for p, q in zip(xy[:-1], xy[1:]):
                assert not segment_crosses_box(p, q, box), (text.get_text(), line)


def test_no_two_labels_overlap(drawn):
    _, figure = drawn
    labels, names = _texts(figure)
    boxes = [(text.get_text(), _box(text)) for _, text in labels + names]
    for (a, p), (b, q) in itertools.combinations(boxes, 2):
        assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]), (a, b)


def test_every_design_point_is_labelled_and_every_compute_roof_named(drawn):
    roofline, figure = drawn
    labels, names = _texts(figure)
    said = " ".join(text.get_text() for _, text in labels)
    unrolls = {p.measurement.point.unroll for p in roofline.points}
    for unroll in unrolls:
        assert f"U{unroll}" in said or f" {unroll}," in said + "," or f", {unroll}" in said
    named = " ".join(text.get_text() for _, text in names)
    for p in roofline.points:
        assert f"{p.cp_gbops:,.0f}" in named


def test_colours_are_a_sequential_palette_darker_for_larger_u(drawn):
    roofline, figure = drawn
    by_unroll = {}
    for line in figure.axes[0].lines:
        if line.get_marker() not in ("o", "s", "^") or line.get_markerfacecolor() == "white":
            continue
        x, y = line.get_xydata()[0]
        point = next(p for p in roofline.points if p.devices == 2
                     and abs(p.ci_ops_per_byte - x) < 1e-9 and abs(p.attainable_gbops - y) < 1e-9)
        by_unroll[point.measurement.point.unroll] = to_rgb(line.get_markeredgecolor())
    lightness = [_lightness(by_unroll[u]) for u in sorted(by_unroll)]
    assert lightness == sorted(lightness, reverse=True) and len(set(lightness)) == len(lightness)


def test_title_and_legend_do_not_touch(drawn):
    _, figure = drawn
    ax = figure.axes[0]
    title = ax.title.get_window_extent()
    (legend,) = figure.legends
    box = legend.get_window_extent()
    assert not title.overlaps(box)
    assert not ax.get_window_extent().overlaps(box)


def test_spread_keeps_order_and_gap_within_bounds():
    placed = spread([5, 5.5, 6, 30, 99], gap=4, low=0, high=100)
    assert placed == sorted(placed)
    assert all(b - a >= 4 - 1e-9 for a, b in zip(placed, placed[1:]))
    assert placed[3] == 30 and placed[4] == 99
    crowded = spread([98, 99, 100], gap=5, low=0, high=100)
    assert crowded == [90, 95, 100]
