"""The command line with and without the HMM: sim's JSON, build's manifest and ports."""

import json

from hwgen.cli.main import main
from hwgen.instrument import HMMLayout

SMALL = ["dilation", "--width", "16", "--height", "12"]


def test_sim_json_keeps_the_figures_and_adds_the_hmm_section(tmp_path):
    out = tmp_path / "run.json"
    assert main(["sim", *SMALL, "--mem-latency", "3", "--mem-backpressure", "0.2", "-q",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    model = report["fetch_model"]
    assert report["fetch_model_matches"]
    assert (report["bytes_read"], report["bytes_written"], report["ops"]) == \
        (model["bytes_read"], model["bytes_written"], model["ops"])
    assert report["outputs"] == model["outputs"]
    assert report["ci"] == report["ops"] / (report["bytes_read"] + report["bytes_written"])
    assert report["ops_per_cycle"] == report["ops"] / report["cycles"]
    hmm = report["hmm"]
    assert hmm["values"]["busy_cycles"] == report["cycles"]
    assert hmm["values"]["bytes_read"] == report["bytes_read"]
    assert set(hmm["fsms"]["fsm.ctrl"]) == {"IDLE", "RUN", "DONE"}
    assert set(hmm["streams"]) == {"stream.rd_req", "stream.rd_rsp", "stream.wr_req",
                                   "stream.out_fifo.w"}
    assert report["rd_req_wait_cycles"] == hmm["streams"]["stream.rd_req"]["blocking"] > 0
    assert set(hmm["overflow"]) >= {"cycles", "fsm.ctrl.RUN"} and not hmm["saturated"]
    assert hmm["histograms"]["rd_latency"]["min"] >= 3

    bare = tmp_path / "bare.json"
    assert main(["sim", *SMALL, "--mem-latency", "3", "--mem-backpressure", "0.2", "-q",
                 "--no-instrument", "--json", str(bare)]) == 0
    bare_report = json.loads(bare.read_text())
    assert "hmm" not in bare_report and bare_report["measured_by"] == "testbench"
    for key in ("cycles", "outputs", "bytes_read", "bytes_written", "ops"):
        assert bare_report[key] == report[key], key


def test_sim_vcd_has_the_hmm_and_no_instrument_leaves_it_out(tmp_path):
    vcd = tmp_path / "w.vcd"
    assert main(["sim", "dilation", "--width", "8", "--height", "6", "-q", "--vcd", str(vcd)]) == 0
    assert "$scope module hmm $end" in vcd.read_text()
    assert main(["sim", "dilation", "--width", "8", "--height", "6", "-q", "--no-instrument",
                 "--vcd", str(vcd)]) == 0
    assert "$scope module hmm $end" not in vcd.read_text()


def test_build_writes_the_hmm_layout_and_ports_reproducibly(tmp_path):
    args = ["build", *SMALL, "--buffer", "line", "-q"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["instrumented"]
    layout = HMMLayout.from_json(manifest["hmm"])
    assert {t.name for t in layout.tables} == {"fsm.ctrl", "rd_latency.bins"}
    ports = {p["name"]: p for p in manifest["ports"]}
    assert ports["hmm__addr"]["width"] == layout.addr_bits
    assert ports["hmm__rdata"]["direction"] == "output"
    assert "layout id" in manifest["hmm_protocol"]
    verilog = (tmp_path / "a" / manifest["files"]["verilog"]).read_text()
    assert "hmm__rdata" in verilog
    assert verilog == (tmp_path / "b" / manifest["files"]["verilog"]).read_text()

    assert main([*args, "--no-instrument", "--out", str(tmp_path / "c")]) == 0
    bare = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert not bare["instrumented"] and "hmm" not in bare
    assert "hmm__" not in (tmp_path / "c" / bare["files"]["verilog"]).read_text()
