"""The estimate of what a system of PEs needs besides its PEs: its interconnect, its control
and its HMM, without estimating the PEs again.

A system of P identical PEs (:class:`hwgen.kernels.PESystem`) costs P PEs plus the rest, and only
the rest changes with P in a way worth estimating: estimating the whole system elaborates every
PE, so the time grows with P x the PE (tens of seconds for a hundred PEs on a large device, and
SC's search estimates several such systems). :func:`estimate_overhead` elaborates the system
with every PE replaced by a :class:`Shell` (its ports around an instance the estimate does not
price, as Yosys keeps a black box's inputs) and adds, per PE, what the PE costs more inside the
system than alone (its addresses are wider: they span P frames).
"""

from amaranth.hdl import Instance, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow

from .estimate import estimate

__all__ = ["Shell", "estimate_overhead"]

class Shell(wiring.Component):
    """A PE's ports around an instance of nothing: the PE as a black box.

    Attributes the system reads of its PEs (beats, address width, reads in flight,
    parameters...) are the PE's.

    Parameters
    ----------
    pe : wiring.Component
        The PE it stands for.
    """

    def __init__(self, pe):
        self._pe = pe
        super().__init__(pe.signature)

    def __getattr__(self, name):
        if name.startswith("_") or name in self._pe.signature.members:
            raise AttributeError(name)   # the ports are the shell's own
        return getattr(self._pe, name)

    def elaborate(self, platform):
        m = Module()
        ports = {}
        for path, member, value in self.signature.flatten(self):
            name = "__".join(str(part) for part in path)
            ports[("o_" if member.flow == Flow.Out else "i_") + name] = value
        m.submodules.pe = Instance("hwgen_pe_shell", **ports)
        return m


def estimate_overhead(system, board, *, instrument=None):
    """``{"lut", "ff", "bram", "dsp"}`` of ``system`` besides its PEs, estimated on ``board``:
    its interconnect and control, and its HMM when ``instrument`` is given (a function that
    returns a system instrumented; its probes must not look inside the PEs)."""
    shelled = type(system)([Shell(pe) for pe in system.pes],
                           channels=system.interconnect.channels)
    if instrument is not None:
        shelled = instrument(shelled)
    return estimate(shelled, board).resources()
