"""Off-chip loads and stores through the PE memory ports of :mod:`hwgen.kernels.pe`.

Every :class:`Load` stage of a program shares ``rd_req``/``rd_rsp`` and every :class:`Store`
stage shares ``wr_req``. A round-robin arbiter picks one waiting (stage, thread) pair per port and
cycle, and holds its pick until the port takes it, so the request stays stable while the memory
is not ready. Waiting for the arbiter is a stall like waiting for the memory.

A load is scheduled at the memory's minimum latency: issued in the cycle after the thread
arrives, answered in the cycle after it is accepted, released by the scheduler in the cycle after
that. Responses come back in request order, so a queue of (stage, thread) tags, one entry per
outstanding read, routes each one to its slot; a thread has at most one read outstanding, so the
queue holds as many entries as there are threads. A store completes when ``wr_req`` accepts it.
"""

from amaranth.hdl import Cat, Const, Signal, Value, ValueCastable
from amaranth.lib.fifo import SyncFIFO

from .arbiter import RoundRobin, select
from .stage import Stage, check_function, field_path

__all__ = ["Load", "Store", "build_offchip"]


def _check_lanes(lanes):
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ValueError(f"lanes must be a positive integer, not {lanes!r}")
    return lanes


class Load(Stage):
    """Read ``lanes`` consecutive elements from off-chip memory into a context field.

    Parameters
    ----------
    addr : function of (c, p)
        Element address of the first lane.
    into : str or tuple
        Context field that receives the data: an element-wide field for one lane, an array of
        ``lanes`` elements otherwise (``("b", 2)`` names element 2 of array field ``b``).
    lanes : int
        Elements per request (at most the pipeline's read beat lanes, which is the largest
        ``lanes`` of any load).
    name : str or None
    """
    parking = True
    kind = "load"

    def __init__(self, addr, into, *, lanes=1, name=None):
        super().__init__(name)
        self._addr = check_function("addr", addr)
        self.result_path = field_path(into)
        self._lanes = _check_lanes(lanes)

    @property
    def lanes(self):
        return self._lanes

    def result_width(self, element_bits):
        return self._lanes * element_bits

    def address(self, c, p):
        return self._addr(c, p)


class Store(Stage):
    """Write ``lanes`` consecutive elements to off-chip memory.

    Parameters
    ----------
    addr : function of (c, p)
        Element address of the first lane.
    data : function of (c, p)
        The element to write, or a list of ``lanes`` elements.
    lanes : int
    name : str or None
    """
    parking = True
    kind = "store"

    def __init__(self, addr, data, *, lanes=1, name=None):
        super().__init__(name)
        self._addr = check_function("addr", addr)
        self._data = check_function("data", data)
        self._lanes = _check_lanes(lanes)

    @property
    def lanes(self):
        return self._lanes

    def address(self, c, p):
        return self._addr(c, p)

    def elements(self, c, p):
        """The values to write, one per lane."""
        value = self._data(c, p)
        if isinstance(value, (list, tuple)):
            values = list(value)
        elif self._lanes == 1:
            values = [value]
        else:
            values = [value[lane] for lane in range(self._lanes)]
        if len(values) != self._lanes:
            raise ValueError(f"stage {self.name!r}: data gives {len(values)} elements for "
                             f"{self._lanes} lanes")
        return values


def _value(v):
    return Value.cast(v.as_value() if isinstance(v, ValueCastable) else v)


def _lane_mask(lanes):
    return Const((1 << lanes) - 1, lanes)


def build_offchip(m, *, ports, loads, stores, params, view, threads):
    """Serve the Load and Store parking stages through the PE's memory ports.

    Parameters
    ----------
    m : Module
    ports : the Pipeline component (``rd_req``, ``rd_rsp``, ``wr_req``, ``rd_beat``)
    loads, stores : list of (Load or Store, ParkingStage)
    params : View of the run-time parameters
    view : function
        Turns a context value into a context view.
    threads : int
    """
    rd_req, rd_rsp, wr_req = ports.rd_req, ports.rd_rsp, ports.wr_req
    element_bits = ports.rd_beat.element_bits

    # Reads.
    m.d.comb += rd_rsp.ready.eq(1)
    if loads:
        arbiter, grants, _, _ = _arbitrate(m, "rd_arbiter", rd_req, loads, params, view,
                                                threads)
        # Tags of outstanding reads, in request order.
        m.submodules.rd_tags = tags = SyncFIFO(width=len(loads) * threads, depth=threads)
        accepted = rd_req.valid & rd_req.ready
        m.d.comb += [
            tags.w_en.eq(accepted),
            tags.w_data.eq(arbiter.grant),
            tags.r_en.eq(rd_rsp.valid),
        ]
        responded = tags.r_data & rd_rsp.valid.replicate(len(tags.r_data))
        for i, ((op, stage), grant) in enumerate(zip(loads, grants)):
            m.d.comb += [
                stage.issue.eq(grant & accepted.replicate(threads)),
                stage.complete.eq(responded[i * threads:(i + 1) * threads]),
                stage.result.eq(rd_rsp.payload.as_value()[:op.lanes * element_bits]),
            ]
    else:
        m.d.comb += rd_req.valid.eq(0)

    # Writes.
    if stores:
        _, grants, contexts, chosen = _arbitrate(m, "wr_arbiter", wr_req, stores, params, view,
                                                 threads)
        datas = []
        lanes = ports.wr_beat.lanes
        for index, ((op, _), c) in enumerate(zip(stores, contexts)):
            # Each lane is cut or extended to the element width before it is packed.
            elements = [Signal(element_bits, name=f"store{index}_lane{lane}")
                        for lane in range(lanes)]
            for element, value in zip(elements, op.elements(c, params)):
                m.d.comb += element.eq(value)
            datas.append(Cat(elements))
        accepted = wr_req.valid & wr_req.ready
        m.d.comb += wr_req.payload.data.eq(select(chosen, datas))
        for (op, stage), grant in zip(stores, grants):
            done = grant & accepted.replicate(threads)
            m.d.comb += [stage.issue.eq(done), stage.complete.eq(done)]
    else:
        m.d.comb += wr_req.valid.eq(0)


def _arbitrate(m, name, req, ops, params, view, threads):
    """Round-robin the requests of ``ops`` (every thread of every op) onto the request stream
    ``req`` and drive its address and mask from the granted thread's context.

    Returns the arbiter, each op's grant (one bit per thread), each op's granted context, and
    the one-hot choice of op.
    """
    m.submodules[name] = arbiter = RoundRobin(len(ops) * threads, hold=True)
    m.d.comb += [
        arbiter.requests.eq(Cat(stage.wait for _, stage in ops)),
        arbiter.accept.eq(req.ready),
        req.valid.eq(arbiter.valid),
    ]
    grants = [arbiter.grant[i * threads:(i + 1) * threads] for i in range(len(ops))]
    contexts = [view(select(grant, [stage.slots[t] for t in range(threads)]))
                for (_, stage), grant in zip(ops, grants)]
    chosen = Cat(grant.any() for grant in grants)
    m.d.comb += [
        req.payload.addr.eq(select(chosen, [_value(op.address(c, params))
                                            for (op, _), c in zip(ops, contexts)])),
        req.payload.mask.eq(select(chosen, [_lane_mask(op.lanes) for op, _ in ops])),
    ]
    return arbiter, grants, contexts, chosen
