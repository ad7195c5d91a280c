"""What each probe of the default HMM costs a PE: counter bits, LUT and FF from synthesis.

For ``dilation --buffer line --unroll 8`` (512x512) on a board (default ulx3s-85f), synthesizes
the PE with an HMM of no probe (its cycle counter, control and readout alone), then with each
probe of the default set alone, and prints the difference as a Markdown table: the probe's
counter bits (with their overflow flags and table entries), LUT and FF. Results are cached as
every synthesis is (``HWGEN_CACHE_DIR``).

    python benchmarks/probe_costs.py [--board ulx3s-85f]
"""

import argparse

from hwgen.instrument import attach, pe_probes
from hwgen.instrument.probe import Profile, Stream
from hwgen.kernels import WindowFilter
from hwgen.resources.synth import synthesize


def _bits(layout):
    fields = sum(f.total_bits for f in layout.fields)
    tables = sum(len(t.labels) * (t.bits + 1) for t in layout.tables)
    return fields + tables


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--board", default="ulx3s-85f")
    args = parser.parse_args()
    pe = WindowFilter("max", (3, 3), width=512, height=512, unroll=8, buffer="line")
    bare_hmm = attach(pe, [], fsms=False, streams=False)
    view = bare_hmm.view
    probes = [*pe_probes(pe),
              *(Profile(f"fsm.{f.name}", f.signal, f.states) for f in view.fsms),
              *(Stream(f"stream.{s.name}", s.valid, s.ready) for s in view.streams
                if s.name not in ("rd_req", "rd_rsp", "wr_req"))]
    base = synthesize(bare_hmm, args.board, name="hmm without probes", fmax=False)
    base_bits = _bits(bare_hmm.layout)
    print(f"HMM without probes (cycle counter, control, readout): {base_bits} counter bits, "
          f"LUT {base.lut}, FF {base.ff} with the PE")
    print("| probe | counter bits | LUT | FF |\n|---|---|---|---|")
    for probe in probes:
        design = attach(pe, [probe], fsms=False, streams=False)
        found = synthesize(design, args.board, name=probe.name, fmax=False)
        print(f"| `{probe.name}` | {_bits(design.layout) - base_bits} | {found.lut - base.lut:+} "
              f"| {found.ff - base.ff:+} |", flush=True)


if __name__ == "__main__":
    main()
