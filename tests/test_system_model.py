"""Systems of PEs sharing a board link's bandwidth attain what the roofline predicts:
min(P x perf_PE, CI x BW), over a sweep that crosses from compute-bound to I/O-bound, and never
more than their memory channels carry: one read beat and one write beat per cycle each, as many
channels as the link carries beats per cycle (at most one per PE), so the channels never bind
before the PEs or the link do."""

import pytest

from hwgen.roofline.sweep import DesignPoint, simulate_systems, system_height

PES = 2
# The EX500's links at its 250 MHz clock: PCIe x8 for one FPGA (4.2 GB/s), the shared x16 for
# two (5.5 GB/s), in bytes per cycle.
BANDWIDTHS = (4.2e9 / 250e6, 5.5e9 / 250e6)


def test_systems_match_the_model_within_5_percent_from_compute_to_io_bound(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    points = [DesignPoint("dilation", 3, 3, "rect", 64, 512, unroll, buffer, True)
              for buffer in ("smart", "line") for unroll in (1, 2, 4, 8)]
    # Unpipelined PEs, slower than the port: the system is compute-bound.
    points.append(DesignPoint("dilation", 3, 3, "rect", 64, 512, 2, "smart", False))
    requests = [(p, PES, bw) for p in points for bw in BANDWIDTHS]
    runs = simulate_systems(requests, jobs=2)
    bounds = set()
    for (point, pes, bandwidth), run in zip(requests, runs):
        assert run["height"] == system_height(point) < point.height
        pe = run["pe"]
        compute = pes * pe.ops / pe.cycles
        io = pe.ops / (pe.bytes_read + pe.bytes_written) * bandwidth
        pe_hw = point.build(height=run["height"])
        traffic = pe_hw.traffic()
        beat = max(pe_hw.rd_beat.lanes, pe_hw.wr_beat.lanes)     # bytes: 8-bit pixels
        channels = min(pes, -(-bandwidth // beat))
        assert run["channels"] == channels
        port = channels * traffic.ops / (traffic.steps * pe_hw.beats_per_step)
        predicted = min(compute, io, port)
        simulated = run["ops"] / run["cycles"]
        # Every PE did its whole frame: P times one PE's work and traffic.
        assert (run["ops"], run["bytes_read"]) == (pes * pe.ops, pes * pe.bytes_read)
        assert simulated == pytest.approx(predicted, rel=0.05), (point.label, bandwidth)
        assert simulated <= predicted * 1.001
        bounds.add(min(("compute", compute), ("io", io), key=lambda b: b[1])[0])
        assert port >= min(compute, io) * 0.999      # the channels never bind alone
    assert bounds == {"compute", "io"}
