"""Co-simulation of a deployed top behind a pseudo-terminal, so a host talks to it with pyserial.

:func:`simulated_board` simulates a :class:`~hwgen.board.top.BoardTop` in a thread and gives the
path of a pseudo-terminal: bytes a host writes there are shifted bit by bit onto the top's
``rx`` pin at the top's bit period, and the bits the top's UART sends on ``tx`` are sampled in
the middle of each bit and come back out of the terminal. Nothing but the two UART pins joins
the host to the design, as on a board.

The simulator is a parameter: any class with the testbench API of ``amaranth.sim.Simulator``
(``add_clock``, ``add_testbench``, ``run``).
"""

import os
import threading
import tty
from contextlib import contextmanager

from amaranth.sim import Simulator

__all__ = ["simulated_board"]

# Cycles between two looks at the terminal while the host sends nothing.
_POLL_CYCLES = 64


class _Line:
    """Both directions of a UART line, one simulated cycle at a time."""

    def __init__(self, master, divisor):
        self._master = master
        self._divisor = divisor
        self._outgoing = bytearray()  # host -> top, not on the line yet
        self._bits = []               # levels of the byte being sent, last first
        self._hold = 0                # cycles the current level still lasts
        self._level = 1
        self._receiving = None        # cycles since the start bit of a byte from the top
        self._byte = 0
        self._since_poll = 0

    def _poll(self):
        try:
            self._outgoing += os.read(self._master, 4096)
        except BlockingIOError:
            pass
        except OSError:   # the host closed its end
            pass

    def to_top(self):
        """The level of ``rx`` for the next cycle."""
        if self._hold == 0:
            if not self._bits:
                if not self._outgoing:
                    self._since_poll += 1
                    if self._since_poll >= _POLL_CYCLES:
                        self._since_poll = 0
                        self._poll()
                if not self._outgoing:
                    self._level = 1
                    return 1
                byte = self._outgoing.pop(0)
                self._bits = [1, *((byte >> bit) & 1 for bit in reversed(range(8))), 0]
            self._level = self._bits.pop()
            self._hold = self._divisor
        self._hold -= 1
        return self._level

    def from_top(self, tx):
        """Take the level of ``tx`` in this cycle."""
        d = self._divisor
        if self._receiving is None:
            if not tx:
                self._receiving, self._byte = 0, 0
            return
        self._receiving += 1
        at = self._receiving - d // 2
        if at > 0 and at % d == 0:
            bit = at // d
            if bit <= 8:
                self._byte |= tx << (bit - 1)
            else:
                self._receiving = None
                if tx:   # a byte with a broken stop bit is dropped, as a UART drops it
                    os.write(self._master, bytes([self._byte]))

    @property
    def busy(self):
        return bool(self._outgoing or self._bits or self._hold or self._receiving is not None)


@contextmanager
def simulated_board(top, *, simulator=Simulator):
    """Simulate ``top`` behind a pseudo-terminal; yields the terminal's path.

    The simulation runs until the block ends. An error of the simulation is raised when the
    block ends (the host meanwhile sees a board that stopped answering).

    Parameters
    ----------
    top : BoardTop
    simulator : class
        ``amaranth.sim.Simulator`` or a class with its testbench API.
    """
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    stop = threading.Event()
    failure = []
    line = _Line(master, top.divisor)

    async def uart(ctx):
        ctx.set(top.rx, 1)
        level = 1
        async for _, _, tx in ctx.tick().sample(top.tx):
            line.from_top(tx)
            if line.to_top() != level:
                level ^= 1
                ctx.set(top.rx, level)
            if stop.is_set() and not line.busy:
                return

    def run():
        try:
            sim = simulator(top)
            sim.add_clock(1e-8)
            sim.add_testbench(uart)
            sim.run()
        except BaseException as error:   # handed to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=run, name="simulated board", daemon=True)
    thread.start()
    try:
        yield os.ttyname(slave)
    finally:
        stop.set()
        thread.join()
        os.close(master)
        os.close(slave)
        if failure:
            raise failure[0]
