"""The hardware measurement module (HMM): counters, state profiles, histograms, trace buffers,
control and readout, and automatic attachment to any Amaranth design.

Parts (each a ``wiring.Component``): :class:`CycleCounter`, :class:`EventCounter`,
:class:`StreamMonitor`, :class:`StateProfiler`, :class:`AccumulatorTable`, :class:`CarryBank`, :class:`CounterBank`,
:class:`Histogram`,
:class:`LatencyHistogram`, :class:`TraceBuffer`, :class:`PeriodicSampler`,
:class:`ChangeRecorder`. Probes (:mod:`hwgen.instrument.probe`) describe measurements;
:class:`HMM` builds them behind one port (:mod:`hwgen.instrument.port`, which also gives the
timing of commands) and describes them in an :class:`HMMLayout`; :func:`attach` puts an HMM on
any design, finding its state machines and streams by itself (and, on request, recording their
states over time). :func:`pe_probes` and :func:`pipeline_probes` are the measurements of a PE and
the profile of a multithreaded pipeline;
:func:`line_probes` count the cycles each source line of a design is active in.
"""

from . import probe
from .accumulator_table import AccumulatorTable
from .attach import Instrumented, attach
from .change_recorder import ChangeRecorder
from .carry_bank import CarryBank
from .counter_bank import CounterBank
from .cycle_counter import CycleCounter
from .discover import DesignView, FSMInfo, StreamInfo
from .event_counter import EventCounter
from .histogram import Histogram
from .hmm import HMM, SNAPSHOT_CHOICES
from .latency_histogram import LatencyHistogram
from .line_probes import LineProbes, line_probes
from .layout import COMMANDS, READ_LATENCY_CYCLES, REGISTERS, STATUS_BITS, HMMLayout
from .pe_probes import job_probe, ops_probe, pe_probes, stream_probes, traffic_probes
from .periodic_sampler import PeriodicSampler
from .pipeline_probes import pipeline_attach_options, pipeline_probes
from .port import PROTOCOL, PortSignature
from .probe import THREAD_STATES
from .saturating import Counters, build_count, count_lag, count_layout, saturating_sum
from .state_profiler import StateProfiler
from .system_probes import PROBE_PRESETS, preset_attach_options, system_probes
from .stream_monitor import STREAM_CATEGORIES, StreamMonitor, stream_category
from .trace_buffer import TRACE_MODES, TraceBuffer

__all__ = [
    "AccumulatorTable", "COMMANDS", "CarryBank", "ChangeRecorder", "CounterBank", "Counters", "CycleCounter", "DesignView",
    "EventCounter",
    "FSMInfo", "HMM", "HMMLayout", "Histogram", "Instrumented", "LatencyHistogram", "LineProbes",
    "PROBE_PRESETS", "PROTOCOL", "PeriodicSampler", "PortSignature", "READ_LATENCY_CYCLES",
    "REGISTERS", "SNAPSHOT_CHOICES", "STATUS_BITS", "STREAM_CATEGORIES", "StateProfiler", "StreamInfo",
    "StreamMonitor", "THREAD_STATES", "TRACE_MODES", "TraceBuffer", "attach", "build_count",
    "count_lag", "count_layout", "job_probe", "line_probes", "ops_probe", "pe_probes",
    "pipeline_attach_options", "pipeline_probes",
    "preset_attach_options", "probe", "saturating_sum", "stream_category", "stream_probes",
    "system_probes", "traffic_probes",
]
