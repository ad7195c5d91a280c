"""Every program's pipeline converts to Verilog (it will be synthesised with Yosys)."""

import re

import pytest

from hwgen.build import convert
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import GEMM_VARIANTS, gemm, pi_series

PROGRAMS = [gemm(variant, dim=4, threads=2, lanes=2) for variant in GEMM_VARIANTS]
PROGRAMS.append(pi_series(threads=2))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_converts_to_verilog(program):
    verilog_text, rtlil_text = convert(Pipeline(program), program.name)
    assert re.search(rf"^module {program.name}\(", verilog_text, re.MULTILINE)
    for port in ("ctrl__start", "rd_req__valid", "rd_rsp__payload", "wr_req__payload",
                 "launch__valid", "launch__payload"):
        assert re.search(rf"\b(input|output)\b[^;]*\b{port}\b", verilog_text), port
    assert "endmodule" in verilog_text and f"module \\{program.name}\n" in rtlil_text
