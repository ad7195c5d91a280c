"""The host side of the board protocol, over a serial port (pyserial).

:class:`BoardHost` speaks :mod:`hwgen.board.protocol` to a deployed top; :class:`SerialBus` makes
its HMM commands the bus of :class:`hwgen.sim.HMMHost`, so the HMM of a board is read and decoded
by the very code that reads it in simulation. :func:`run_window_job` runs one window-filter job
or of a pipeline program (:func:`run_job`) as ``hwgen board run`` does. The same code runs against a board and against the simulated top
(:mod:`hwgen.board.cosim`): only the serial port differs.
"""

import time
from dataclasses import dataclass

import serial

from ..sim.hmm_host import HMMError, HMMHost, PortBus

from .protocol import (ACK, IDENTITY_BYTES, NAK, STATUS_BUSY, STATUS_DONE, Identity,
                       command_frame)

__all__ = ["BoardError", "BoardHost", "BoardJob", "SerialBus", "open_port", "run_job"]

# Elements or words per memory or HMM command: a reply stays short enough to time out early.
_CHUNK = 1024


class BoardError(RuntimeError):
    """The board could not be reached, or answered something the host cannot accept."""


def open_port(port, *, baud, timeout_seconds):
    """The serial port ``port``, opened for this host alone; raises :class:`BoardError`."""
    try:
        return serial.Serial(port, baudrate=baud, timeout=timeout_seconds, exclusive=True)
    except serial.SerialException as error:
        reason = str(error)
        if "lock" in reason.lower() or "busy" in reason.lower():
            reason = "it is in use by another program"
        elif "No such file" in reason or "could not open" in reason.lower():
            reason = "no such port" if "No such file" in reason else reason
        raise BoardError(f"cannot open serial port {port}: {reason}") from None


def _run(coroutine):
    """The result of a coroutine that never suspends (the serial bus blocks instead)."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("a board host coroutine suspended")


class BoardHost:
    """Commands to a deployed top through an open serial port (see :mod:`hwgen.board.protocol`).

    Parameters
    ----------
    port : serial.Serial
        Open, with a read timeout.
    name : str
        How errors name the port.
    """

    def __init__(self, port, name=None):
        self._port = port
        self._name = name or port.port

    def _fail(self, what):
        raise BoardError(f"the board at {self._name} {what}")

    def _read(self, count, what):
        data = self._port.read(count)
        if len(data) != count:
            self._fail(f"did not answer {what} within {self._port.timeout:g} s "
                       f"({len(data)} of {count} bytes came): is the bitstream loaded and the "
                       f"baud rate right?")
        return data

    def _command(self, name, a=0, b=0, payload=b"", reply=0):
        """Send a command (and its ``payload``), check the ACK, return ``reply`` bytes."""
        self._port.write(command_frame(name, a, b) + payload)
        ack, = self._read(1, name.replace("_", " "))
        if ack == NAK:
            self._fail(f"refused {name.replace('_', ' ')} (a={a}, b={b})"
                       + (": the job is running" if "memory" in name else ""))
        if ack != ACK:
            self._fail(f"answers garbage ({ack:#04x} instead of {ACK:#04x}): not an hwgen "
                       f"bridge, or the wrong baud rate")
        return self._read(reply, name.replace("_", " ")) if reply else b""

    def identify(self):
        """The bridge's :class:`~hwgen.board.protocol.Identity`."""
        self._port.reset_input_buffer()
        identity = Identity.decode(self._command("identify", reply=IDENTITY_BYTES))
        if identity is None:
            self._fail("answers garbage to identify: not an hwgen bridge")
        return identity

    def write_memory(self, first, values, element_bytes):
        values = [int(v) for v in values]
        for start in range(0, len(values), _CHUNK):
            chunk = values[start:start + _CHUNK]
            payload = b"".join(v.to_bytes(element_bytes, "little") for v in chunk)
            self._command("write_memory", first + start, len(chunk), payload)

    def read_memory(self, first, count, element_bytes):
        values = []
        for start in range(0, count, _CHUNK):
            n = min(_CHUNK, count - start)
            data = self._command("read_memory", first + start, n, reply=n * element_bytes)
            values += [int.from_bytes(data[i:i + element_bytes], "little")
                       for i in range(0, len(data), element_bytes)]
        return values

    def set_parameter(self, index, value):
        self._command("set_parameter", index, value)

    def start(self):
        self._command("start")

    def status(self):
        """``{"busy": bool, "done": bool}``."""
        word, = self._command("status", reply=1)
        return {"busy": bool(word & STATUS_BUSY), "done": bool(word & STATUS_DONE)}

    def write_hmm(self, addr, value, word_bytes):
        self._command("write_hmm", addr, 1, value.to_bytes(word_bytes, "little"))

    def read_hmm(self, addrs, word_bytes):
        """Words at ``addrs``: consecutive addresses go in one command."""
        addrs = list(addrs)
        words = []
        index = 0
        while index < len(addrs):
            run = 1
            while (index + run < len(addrs) and run < _CHUNK
                   and addrs[index + run] == addrs[index] + run):
                run += 1
            data = self._command("read_hmm", addrs[index], run, reply=run * word_bytes)
            words += [int.from_bytes(data[i:i + word_bytes], "little")
                      for i in range(0, len(data), word_bytes)]
            index += run
        return words


class SerialBus(PortBus):
    """An HMM's port reached through a bridge: the bus of :class:`hwgen.sim.HMMHost`.

    A serial round trip takes far longer than the few cycles a host waits after a command,
    so waits cost nothing here. ``read_latency`` is the HMM port's (its layout's
    ``read_latency_cycles``): the bridge waits for ``rvalid`` itself, and a host that waits for
    a command counts that many cycles per status read.
    """

    def __init__(self, host, word_bytes, read_latency):
        self._host = host
        self._word_bytes = word_bytes
        self.read_latency = read_latency

    async def write(self, addr, value):
        self._host.write_hmm(addr, value, self._word_bytes)

    async def read(self, addrs):
        return self._host.read_hmm(addrs, self._word_bytes)

    async def wait(self, cycles):
        pass


@dataclass(frozen=True)
class BoardJob:
    """What one job on a board gave: the memory read back after it, the HMM's readout, the
    bridge's identity and the seconds it all took."""
    values: list
    readout: object    # hwgen.sim.HMMReadout
    identity: Identity
    seconds: float


def run_job(host, layout, *, load, params, read_back, element_bytes, timeout_seconds,
            progress=None):
    """Run one job on a board and read everything back.

    Writes ``load`` into the memory, clears the HMM and sets it running, sets the parameters,
    starts the job, polls until it is done, reads every HMM value (frozen, with a snapshot, by
    :meth:`hwgen.sim.HMMHost.read_all`) and the memory ``read_back`` names.

    Parameters
    ----------
    host : BoardHost
    layout : HMMLayout
        The HMM's layout (the bridge's identity must carry its id).
    load : (int, sequence of int)
        First element and the elements to write there.
    params : list of int
        The run-time parameters, in the protocol's order.
    read_back : (int, int)
        First element and count of the memory to read after the job.
    element_bytes : int
    timeout_seconds : float
        How long the job may take before the host gives up.
    progress : callable or None
        Called with a short description of each step.

    Returns
    -------
    BoardJob
    """
    started = time.perf_counter()
    step = progress or (lambda what: None)
    step("identify")
    identity = host.identify()
    if identity.layout_id != layout.layout_id:
        raise BoardError(f"the board's HMM layout id is {identity.layout_id:#010x}, the "
                         f"manifest's {layout.layout_id:#010x}: the board holds another "
                         f"bitstream")
    if identity.element_bytes != element_bytes:
        raise BoardError(f"the board's elements are {identity.element_bytes} bytes, the "
                         f"manifest's {element_bytes}: the board holds another bitstream")
    first, values = load
    needed = max(first + len(values), sum(read_back))
    if needed > identity.memory_elements:
        raise BoardError(f"the job needs {needed} elements of memory, the board has "
                         f"{identity.memory_elements}: the board holds another bitstream")
    step("load the input")
    host.write_memory(first, values, element_bytes)
    hmm = HMMHost(SerialBus(host, identity.word_bytes, layout.read_latency_cycles), None, layout)
    try:
        _run(hmm.check_layout())
        _run(hmm.command("clear", "run"))
        for index, value in enumerate(params):
            host.set_parameter(index, value)
        step("run")
        host.start()
        deadline = time.monotonic() + timeout_seconds
        while not host.status()["done"]:
            if time.monotonic() > deadline:
                raise BoardError(f"the job was not done {timeout_seconds:g} s after start")
        step("read the HMM")
        readout = _run(hmm.read_all())
    except HMMError as error:
        raise BoardError(f"the board's HMM: {error}") from None
    step("read the output")
    values = host.read_memory(*read_back, element_bytes)
    return BoardJob(values, readout, identity, time.perf_counter() - started)
