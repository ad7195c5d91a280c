"""Local block-RAM memories of a program, and the stages that read and write them.

Each :class:`LocalRead` and :class:`LocalWrite` stage has a port of its own on its memory (a
synchronous read port, so the memory maps to block RAM). Per stage, a round-robin arbiter issues
one waiting thread per cycle: a write is done at the clock edge that issues it, a read's data
arrives one cycle later. Read ports are transparent to every write port of their memory, so a
read issued in the same cycle as a write to the same row sees the new data.
"""

from amaranth.hdl import Shape, ShapeCastable, Signal, Value
from amaranth.lib import memory

from .arbiter import RoundRobin, select
from .stage import Stage, check_function, field_path

__all__ = ["LocalMemory", "LocalRead", "LocalWrite", "build_local"]


class LocalMemory:
    """A memory local to the pipeline, shared by every thread.

    Parameters
    ----------
    name : str
    shape : shape
        Shape of one row (for example ``signed(32)`` or ``data.ArrayLayout(signed(32), 4)``).
    depth : int
        Rows, at least 1.
    """
    def __init__(self, name, *, shape, depth):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"local memory name must be an identifier, not {name!r}")
        if not isinstance(shape, ShapeCastable):
            shape = Shape.cast(shape)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth of local memory {name!r} must be a positive integer, "
                             f"not {depth!r}")
        self._name = name
        self._shape = shape
        self._depth = depth

    @property
    def name(self):
        return self._name

    @property
    def shape(self):
        return self._shape

    @property
    def depth(self):
        return self._depth

    @property
    def width(self):
        return Shape.cast(self._shape).width

    def __repr__(self):
        return f"LocalMemory({self._name!r}, shape={self._shape!r}, depth={self._depth})"


def _check_memory(mem):
    if not isinstance(mem, LocalMemory):
        raise TypeError(f"memory must be a LocalMemory, not {mem!r}")
    return mem


class LocalRead(Stage):
    """Read one row of a local memory into a context field.

    Parameters
    ----------
    memory : LocalMemory
    addr : function of (c, p)
        Row address.
    into : str or tuple
        Context field that receives the row.
    name : str or None
    """
    parking = True
    kind = "local read"

    def __init__(self, memory, addr, into, *, name=None):
        super().__init__(name)
        self._memory = _check_memory(memory)
        self._addr = check_function("addr", addr)
        self.result_path = field_path(into)

    @property
    def memory(self):
        return self._memory

    def result_width(self, element_bits):
        return self._memory.width

    def address(self, c, p):
        return self._addr(c, p)


class LocalWrite(Stage):
    """Write one row of a local memory.

    Parameters
    ----------
    memory : LocalMemory
    addr : function of (c, p)
        Row address.
    data : function of (c, p)
        The row's new value.
    name : str or None
    """
    parking = True
    kind = "local write"

    def __init__(self, memory, addr, data, *, name=None):
        super().__init__(name)
        self._memory = _check_memory(memory)
        self._addr = check_function("addr", addr)
        self._data = check_function("data", data)

    @property
    def memory(self):
        return self._memory

    def address(self, c, p):
        return self._addr(c, p)

    def row(self, c, p):
        return self._data(c, p)


def build_local(m, *, reads, writes, params, view, threads):
    """Build the local memories and serve the LocalRead and LocalWrite parking stages.

    Parameters
    ----------
    m : Module
    reads, writes : list of (LocalRead or LocalWrite, ParkingStage)
    params : View of the run-time parameters
    view : function
        Turns a context value into a context view.
    threads : int
    """
    memories = {}
    for op, _ in writes + reads:
        if op.memory not in memories:
            memories[op.memory] = memory.Memory(shape=op.memory.shape, depth=op.memory.depth,
                                                init=[])
    for mem, instance in memories.items():
        m.submodules[f"local_{mem.name}"] = instance

    # Write ports first: read ports name them as the writes they see in the same cycle.
    write_ports = {mem: [] for mem in memories}
    for index, (op, stage) in enumerate(writes):
        port = memories[op.memory].write_port()
        write_ports[op.memory].append(port)
        m.submodules[f"local_write{index}_arbiter"] = arbiter = RoundRobin(threads)
        c = view(select(arbiter.grant, [stage.slots[t] for t in range(threads)]))
        row = Signal(op.memory.shape, name=f"local_write{index}_row")
        m.d.comb += [
            arbiter.requests.eq(stage.wait),
            arbiter.accept.eq(1),
            port.en.eq(arbiter.valid),
            port.addr.eq(op.address(c, params)),
            row.eq(op.row(c, params)),
            port.data.eq(row),
            stage.issue.eq(arbiter.grant),
            stage.complete.eq(arbiter.grant),
        ]

    for index, (op, stage) in enumerate(reads):
        port = memories[op.memory].read_port(transparent_for=write_ports[op.memory])
        m.submodules[f"local_read{index}_arbiter"] = arbiter = RoundRobin(threads)
        c = view(select(arbiter.grant, [stage.slots[t] for t in range(threads)]))
        reading = Signal(threads, name=f"local_read{index}_reading")
        m.d.comb += [
            arbiter.requests.eq(stage.wait),
            arbiter.accept.eq(1),
            port.en.eq(arbiter.valid),
            port.addr.eq(op.address(c, params)),
            stage.issue.eq(arbiter.grant),
            stage.complete.eq(reading),
            stage.result.eq(Value.cast(port.data)),
        ]
        m.d.sync += reading.eq(arbiter.grant)
    return memories
