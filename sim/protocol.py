"""The engine protocol: what every engine that runs hwgen's jobs does.

An engine runs one job on PEs (:meth:`Engine.run_pes`) or on a multithreaded pipeline
(:meth:`Engine.run_threads`) against the memory model, with the job host and the HMM host of
every instrumented design; the harnesses (:mod:`hwgen.sim.harness`, :mod:`hwgen.sim.host`) turn
what it returns into their results. Two engines implement it, with identical results:
:class:`hwgen.sim.pysim_engine.PysimEngine` (Amaranth's simulator) and
:class:`hwgen.sim.compiled.CompiledEngine` (CXXRTL); :func:`hwgen.sim.engine.choose_engine`
picks one.
"""

from dataclasses import dataclass

__all__ = ["Engine", "JobResult"]


@dataclass
class JobResult:
    """What :meth:`Engine.run_pes` returns for one PE: the busy cycles the job host saw, the
    memory's view of its traffic and its HMM's readout (``None`` for a bare PE)."""
    cycles: int
    traffic: object   # hwgen.sim.memory.PortTraffic
    readout: object   # hwgen.sim.readout.HMMReadout or None


class Engine:
    """An engine that runs jobs.

    Attributes
    ----------
    name : str
        ``"pysim"`` or ``"compiled"``.
    observable : bool
        Whether it runs ``monitors`` and ``on_simulator`` (observers of Amaranth's simulator).
    full_frames : bool
        Whether a whole frame is cheap to simulate once the engine is ready, so a sweep need not
        scale figures from short frames.
    """

    name = None
    observable = False
    full_frames = False

    def run_pes(self, designs, storage, *, params, memory, vcd=None, max_cycles=None,
                record_addresses=False, progress=None, drain_interval_cycles=None, monitors=(),
                on_simulator=None):
        """Run one job on each of ``designs`` at once, sharing one memory (the contract of
        :func:`hwgen.sim.harness.run_pes`).

        Returns
        -------
        (list of JobResult, dict)
            One result per design, and what the run's ``engine`` field holds.
        """
        raise NotImplementedError

    def run_threads(self, design, storage, *, params, threads, launch_delay_cycles, memory,
                    drain_interval_cycles, max_cycles=None, vcd=None, progress=None,
                    monitors=(), on_simulator=None):
        """Run one job on an instrumented pipeline (the contract of
        :func:`hwgen.sim.host.run_threads`): the host offers ``threads`` threads on ``launch``,
        one every ``launch_delay_cycles``, and drains the HMM every ``drain_interval_cycles``.

        Returns
        -------
        (HMMReadout, list of int, dict)
            The HMM's readout, the job cycles the threads were started in, and what the run's
            ``engine`` field holds.
        """
        raise NotImplementedError
