"""`hwgen sim` checks its output against a numpy model, reports every PE of a system, and says
what a trace changes in the HMM's figures."""

import json

import numpy as np
import pytest
from scipy import ndimage

from hwgen.cli.main import main
from hwgen.sim import window_filter_model

SMALL = ["--width", "20", "--height", "7"]


@pytest.mark.parametrize("shape, seed", [((3, 3), 0), ((1, 4), 1), ((5, 2), 2), ((4, 4), 3)])
@pytest.mark.parametrize("op", ["max", "min"])
def test_the_library_model_is_scipy_on_the_valid_region(shape, seed, op):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 1 << 12, (9, 13))
    mask = rng.integers(0, 2, shape).astype(bool)
    mask[0, 0] = True
    # scipy centres the footprint and mirrors it for dilation: the valid region starts where
    # the first whole window's centre is.
    n, m = shape
    if op == "max":
        full = ndimage.grey_dilation(image, footprint=mask[::-1, ::-1], mode="nearest")
        top, left = (n - 1) - n // 2, (m - 1) - m // 2
    else:
        full = ndimage.grey_erosion(image, footprint=mask, mode="nearest")
        top, left = n // 2, m // 2
    valid = full[top:top + image.shape[0] - n + 1, left:left + image.shape[1] - m + 1]
    np.testing.assert_array_equal(window_filter_model(image, mask, op), valid)


def test_sim_says_its_result_matches_the_numpy_model(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["sim", "erosion", "--mask", "cross", *SMALL, "--json", str(report)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("; result matches the numpy model")
    assert json.loads(report.read_text())["result_matches_numpy_model"] is True


def test_a_result_that_differs_from_the_model_is_suspect_in_one_line(tmp_path, capsys,
                                                                     monkeypatch):
    from hwgen.kernels import WindowFilter

    def off_by_one_at(pe, image):
        expected = window_filter_model(image, pe.mask, pe.op.name)
        expected[2, 3] += 1
        return expected
    monkeypatch.setattr(WindowFilter, "reference", off_by_one_at)
    report = tmp_path / "r.json"
    # The figures are written, then the command exits with the status of a suspect measurement.
    assert main(["sim", "dilation", *SMALL, "--json", str(report)]) == 3
    captured = capsys.readouterr()
    assert "result DOES NOT MATCH the numpy model" in captured.out
    assert captured.err.count("\n") == 1
    assert "1 of 90 output pixels differ from the numpy model, the first at row 2, column 3" \
        in captured.err
    assert json.loads(report.read_text())["result_matches_numpy_model"] is False


def test_pes_print_every_pe(capsys):
    assert main(["sim", "dilation", *SMALL, "--pes", "3", "--mem-bandwidth", "2"]) == 0
    out = capsys.readouterr().out
    assert "every result matches the numpy model" in out
    for index in range(3):
        assert f"\n  PE {index}: " in out


def test_a_trace_adds_host_cycles_around_the_job_and_says_so(tmp_path, capsys):
    plain, traced = tmp_path / "plain.json", tmp_path / "traced.json"
    frame = ["--width", "32", "--height", "8"]
    assert main(["sim", "dilation", *frame, "--json", str(plain), "-q"]) == 0
    assert main(["sim", "dilation", *frame, "--json", str(traced), "--paraver",
                 str(tmp_path / "trace")]) == 0
    out = capsys.readouterr().out
    plain, traced = (json.loads(path.read_text()) for path in (plain, traced))
    # The job's own figures are the same ...
    for key in ("cycles", "bytes_read", "bytes_written", "ops", "rd_req_wait_cycles",
                "rd_data_wait_cycles", "wr_req_wait_cycles"):
        assert plain[key] == traced[key], key
    assert plain["hmm"]["values"]["fsm.ctrl.RUN"] == traced["hmm"]["values"]["fsm.ctrl.RUN"]
    # ... the cycles around it are not, and every figure says which are which.
    for data in (plain, traced):
        assert data["cycles_outside_job"] == data["total_cycles"] - data["cycles"]
        assert data["hmm"]["values"]["fsm.ctrl.IDLE"] == data["cycles_outside_job"]
    assert traced["cycles_outside_job"] != plain["cycles_outside_job"]
    assert (f"the job's {traced['cycles']} + {traced['cycles_outside_job']} around it"
            in out)
    assert "the host reads the HMM out after its drain and 64-cycle wait" in out
