"""A 3x3 Sobel gradient magnitude: an image PE written outside hwgen.

For every pixel of the valid region the PE writes ``min(|gx| + |gy|, 2**pixel_bits - 1)``, with
``gx`` and ``gy`` the horizontal and vertical Sobel gradients of the 3x3 window around it. It
fetches each window as three beats of three pixels (one per window row), computes, and writes
the result: a simple, unbuffered design. ``SobelMagnitude`` is a
:class:`hwgen.kernels.pe.ProcessingElement` with declared options, its own numpy reference and
its closed-form traffic and cycles, so hwgen's commands take it as
``examples/sobel.py:SobelMagnitude`` (docs/tutorial-pe.md).

Run ``python examples/sobel.py`` (from any folder): it simulates a frame with the hardware
measurement module attached, checks the output against an independent Sobel (scipy), sets the
cycle model against the simulation, and runs the PE through ``hwgen sim``, ``profile``,
``estimate``, ``explore --fast``, ``roofline`` and ``report``; the exit status is 0 only when
every check holds.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from amaranth.hdl import Module, Mux, Signal, signed, unsigned

from hwgen.kernels.pe import BeatFormat, ProcessingElement
from hwgen.kernels.pipeline import Option
from hwgen.kernels.window import WindowTraffic

__all__ = ["SobelMagnitude"]

#: Sobel's horizontal kernel (the vertical one is its transpose).
SOBEL_X = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])


class SobelMagnitude(ProcessingElement):
    """``min(|gx| + |gy|, max pixel)`` over the valid region of a ``height x width`` frame.

    Parameters
    ----------
    width, height : int
        Frame size, at least 3 x 3.
    pixel_bits : int
        Bits per pixel, 1 to 16.
    addr_width : int or None
        Bits of an element address (``None``: enough for one frame, its input and output); a
        system of several PEs (``--pes``) gives the width its frames side by side need.
    """
    name = "sobel"
    description = "3x3 Sobel gradient magnitude |gx| + |gy|, clipped to the pixel range"
    options = (
        Option("width", int, 64, "image width", low=3, high=4096),
        Option("height", int, 64, "image height", low=3, high=4096),
        Option("pixel_bits", int, 8, "bits per pixel", low=1, high=16),
    )
    #: Additions and subtractions per output pixel: 5 for gx, 5 for gy, 1 for the sum.
    OPS = 11

    def __init__(self, *, width=64, height=64, pixel_bits=8, addr_width=None):
        for option, value in zip(self.options, (width, height, pixel_bits)):
            option.check(value)
        self._width, self._height, self._pixel_bits = width, height, pixel_bits
        frame = max(1, (2 * width * height - 1).bit_length())
        if addr_width is None:
            addr_width = frame
        elif isinstance(addr_width, bool) or not isinstance(addr_width, int) \
                or addr_width < frame:
            raise ValueError(f"addr_width must be an integer >= {frame} (one frame), "
                             f"not {addr_width!r}")
        super().__init__(addr_width=addr_width,
                         rd_beat=BeatFormat(lanes=3, stride=1, element_bits=pixel_bits),
                         wr_beat=BeatFormat(lanes=1, stride=1, element_bits=pixel_bits),
                         params={"src_base": unsigned(addr_width),
                                 "dst_base": unsigned(addr_width)},
                         ops_per_element=self.OPS, max_outstanding_reads=3)

    width = property(lambda self: self._width)
    height = property(lambda self: self._height)
    pixel_bits = property(lambda self: self._pixel_bits)
    out_width = property(lambda self: self._width - 2)
    out_height = property(lambda self: self._height - 2)

    def parameters(self):
        return {**super().parameters(), "width": self._width, "height": self._height,
                "pixel_bits": self._pixel_bits}

    def reference(self, image):
        image = np.asarray(image, dtype=np.int64)
        h, w = self.out_height, self.out_width
        gx = sum(SOBEL_X[i, j] * image[i:i + h, j:j + w] for i in range(3) for j in range(3))
        gy = sum(SOBEL_X.T[i, j] * image[i:i + h, j:j + w] for i in range(3) for j in range(3))
        return np.minimum(np.abs(gx) + np.abs(gy), (1 << self._pixel_bits) - 1)

    def traffic(self):
        outputs = self.out_width * self.out_height
        pixel_bytes = self.rd_beat.element_bytes
        return WindowTraffic(outputs=outputs, reads=9 * outputs, writes=outputs,
                             bytes_read=9 * outputs * pixel_bytes,
                             bytes_written=outputs * pixel_bytes, ops=self.OPS * outputs,
                             ops_per_output=self.OPS, steps=outputs,
                             formula="reads = 9 x outputs (three 3-pixel beats per window)")

    def cycles(self, latency_cycles=1):
        """Busy cycles of one frame when the memory answers every read after
        ``latency_cycles`` and takes every request at once: per output, the three requests go
        out in consecutive cycles, the last response arrives ``latency_cycles`` after the last
        request, then one cycle writes and one starts the next window: ``latency_cycles + 4``."""
        return self.out_width * self.out_height * (latency_cycles + 4)

    def elaborate(self, platform):
        m = Module()
        w, bits = self._width, self._pixel_bits
        row = Signal(range(self.out_height + 1))
        col = Signal(range(self.out_width + 1))
        issued = Signal(range(4))
        received = Signal(range(4))
        window = [[Signal(bits, name=f"win_{r}_{c}") for c in range(3)] for r in range(3)]
        src_base = Signal.like(self.ctrl.src_base)
        dst_base = Signal.like(self.ctrl.dst_base)

        # The gradients, combinational over the window registers.
        gx = Signal(signed(bits + 4))
        gy = Signal(signed(bits + 4))
        m.d.comb += [
            gx.eq((window[0][2] + 2 * window[1][2] + window[2][2])
                  - (window[0][0] + 2 * window[1][0] + window[2][0])),
            gy.eq((window[2][0] + 2 * window[2][1] + window[2][2])
                  - (window[0][0] + 2 * window[0][1] + window[0][2])),
        ]
        magnitude = Signal(unsigned(bits + 4))
        m.d.comb += magnitude.eq(Mux(gx < 0, -gx, gx) + Mux(gy < 0, -gy, gy))
        limit = (1 << bits) - 1
        result = Mux(magnitude > limit, limit, magnitude)

        m.d.comb += [
            self.rd_req.payload.addr.eq(src_base + (row + issued) * w + col),
            self.rd_req.payload.mask.eq(0b111),
            self.wr_req.payload.addr.eq(dst_base + row * self.out_width + col),
            self.wr_req.payload.mask.eq(1),
            self.wr_req.payload.data[0].eq(result),
            self.rd_rsp.ready.eq(1),
        ]
        with m.If(self.rd_rsp.valid):
            with m.Switch(received):
                for r in range(3):
                    with m.Case(r):
                        m.d.sync += [window[r][c].eq(self.rd_rsp.payload[c]) for c in range(3)]
            m.d.sync += received.eq(received + 1)

        with m.FSM(name="sobel"):
            with m.State("IDLE"):
                with m.If(self.ctrl.start):
                    m.d.sync += [src_base.eq(self.ctrl.src_base),
                                 dst_base.eq(self.ctrl.dst_base),
                                 row.eq(0), col.eq(0), issued.eq(0), received.eq(0)]
                    m.next = "FETCH"
            with m.State("FETCH"):
                m.d.comb += [self.ctrl.busy.eq(1), self.rd_req.valid.eq(issued < 3)]
                with m.If(self.rd_req.valid & self.rd_req.ready):
                    m.d.sync += issued.eq(issued + 1)
                with m.If((received == 2) & self.rd_rsp.valid):
                    m.next = "WRITE"
            with m.State("WRITE"):
                m.d.comb += [self.ctrl.busy.eq(1), self.wr_req.valid.eq(1)]
                with m.If(self.wr_req.ready):
                    m.d.sync += [issued.eq(0), received.eq(0)]
                    last_col = col == self.out_width - 1
                    m.d.sync += col.eq(Mux(last_col, 0, col + 1))
                    with m.If(last_col):
                        m.d.sync += row.eq(row + 1)
                    with m.If(last_col & (row == self.out_height - 1)):
                        m.d.comb += self.ctrl.done.eq(1)
                        m.next = "IDLE"
                    with m.Else():
                        m.next = "FETCH"
        return m


def _hwgen(command, *args):
    """``python -m hwgen COMMAND <this file>:SobelMagnitude ARGS``; its output, or exit."""
    argv = [sys.executable, "-m", "hwgen", command, f"{Path(__file__).resolve()}:SobelMagnitude",
            *args]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(argv)}\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    from scipy import ndimage

    from hwgen.model import predict_window
    from hwgen.resources import estimate
    from hwgen.sim import MemoryModel, run_window_filter

    failures = []
    pe = SobelMagnitude(width=12, height=8)
    image = np.random.default_rng(0).integers(0, 256, size=(8, 12))
    memory = MemoryModel(latency_cycles=3)
    run = run_window_filter(pe, image, memory=memory)
    # An independent reference: scipy's Sobel filters (they correlate with the flipped kernel,
    # so take magnitudes), cropped to the valid region and clipped.
    image = image.astype(np.int64)
    scipy_magnitude = np.minimum(np.abs(ndimage.sobel(image, axis=1))
                                 + np.abs(ndimage.sobel(image, axis=0)), 255)[1:-1, 1:-1]
    if not (run.image == scipy_magnitude).all():
        failures.append("the PE's output differs from scipy's Sobel magnitude")
    if not (pe.reference(image) == scipy_magnitude).all():
        failures.append("the PE's reference differs from scipy's Sobel magnitude")
    predicted = predict_window(pe, memory)
    print(f"python: sobel {pe.width}x{pe.height}: {run.figures.cycles} cycles simulated, "
          f"{predicted.cycles:.0f} predicted; output matches scipy: "
          f"{(run.image == scipy_magnitude).all()}")
    if predicted.cycles != run.figures.cycles:
        failures.append(f"cycle model {predicted.cycles} != simulated {run.figures.cycles}")
    resources = estimate(pe, "ulx3s-85f", name="sobel")
    print(f"python: estimate {resources.lut} LUT, {resources.ff} FF on ulx3s-85f")

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        _hwgen("sim", "--width", "16", "--height", "10", "--json", str(out / "sim.json"), "-q")
        report = json.loads((out / "sim.json").read_text())
        print(f"hwgen sim: {report['cycles']} cycles, output matches its reference: "
              f"{report['result_matches_numpy_model']}")
        if not (report["result_matches_numpy_model"] and report["fetch_model_matches"]):
            failures.append("hwgen sim: the output differs from the PE's reference")
        _hwgen("profile", "--width", "12", "--height", "6", "--json", str(out / "profile.json"),
               "-q")
        print("hwgen profile: wrote", out / "profile.json")
        print("hwgen estimate:", _hwgen("estimate", "--width", "32", "--height", "16")
              .splitlines()[1])
        explored = _hwgen("explore", "--fast", "--image", "32x16", "--pixel-bits", "6,8",
                          "--verify", "1", "--no-verify-synth", "--out", str(out / "explore"))
        print("hwgen explore --fast:", explored.splitlines()[0])
        _hwgen("roofline", "--image", "16x10", "--out", str(out / "roofline"), "-q")
        print("hwgen roofline: wrote", ", ".join(sorted(p.name for p in
                                                         (out / "roofline").iterdir())))
        done = subprocess.run([sys.executable, "-m", "hwgen", "report", str(out / "sim.json"),
                               "--out", str(out / "sim.html"), "-q"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            failures.append(f"hwgen report failed: {done.stderr}")
        else:
            print("hwgen report: wrote a page of", (out / "sim.html").stat().st_size, "bytes")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
