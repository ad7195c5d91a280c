"""Traces of what an HMM recorded over time: one :class:`Timeline` of rows, counters and
markers, written as Paraver (:mod:`.paraver`) or Chrome/Perfetto JSON (:mod:`.perfetto`)."""

from .paraver import paraver_files
from .perfetto import perfetto_trace
from .timeline import Timeline

__all__ = ["Timeline", "paraver_files", "perfetto_trace"]
