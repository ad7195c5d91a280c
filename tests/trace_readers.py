"""Strict readers of Paraver (.prv, .pcf, .row) and Chrome/Perfetto JSON traces, written from
the formats' descriptions (BSC's Paraver trace format and paraver-kernel's parsers; the Trace
Event Format), for the tests. They share nothing with hwgen's writers and reject anything the
formats do not allow."""

import json
import math
import re
from dataclasses import dataclass, field


class FormatError(ValueError):
    pass


def _int(text, what, low=0):
    if not re.fullmatch(r"\d+", text):
        raise FormatError(f"{what} must be a non-negative integer, not {text!r}")
    value = int(text)
    if value < low:
        raise FormatError(f"{what} must be at least {low}, not {value}")
    return value


@dataclass
class Prv:
    end_time: int
    time_unit: str
    nodes: list                       # CPUs per node
    applications: list                # per application, per task: (threads, node)
    states: list = field(default_factory=list)   # (cpu, appl, task, thread, begin, end, state)
    events: list = field(default_factory=list)   # (cpu, appl, task, thread, time, [(type, value)])


_HEADER = re.compile(r"#Paraver \((\d\d)/(\d\d)/(\d\d) at (\d\d):(\d\d)\):(\d+)(_ns)?:"
                     r"(\d+)\(([\d,]+)\):(\d+):(.*)")


def read_prv(text):
    """A .prv trace: header, then state (1) and event (2) records sorted by time."""
    if not text.endswith("\n"):
        raise FormatError("a .prv file ends with a newline")
    lines = text[:-1].split("\n")
    match = _HEADER.fullmatch(lines[0])
    if not match:
        raise FormatError(f"not a Paraver header: {lines[0]!r}")
    day, month, _, hour, minute = (int(g) for g in match.groups()[:5])
    if not (1 <= day <= 31 and 1 <= month <= 12 and hour < 24 and minute < 60):
        raise FormatError(f"bad date in the header: {lines[0]!r}")
    nodes = [_int(n, "CPUs of a node", 1) for n in match[9].split(",")]
    if len(nodes) != int(match[8]):
        raise FormatError(f"{match[8]} nodes declared, {len(nodes)} CPU counts given")
    applications, rest = [], match[11]
    for index in range(int(match[10])):
        app = re.match(r"(\d+)\(([^)]*)\)", rest)
        if not app:
            raise FormatError(f"application {index + 1} not readable in {match[11]!r}")
        tasks = [tuple(_int(x, "thread count or node", 1) for x in t.split(":"))
                 for t in app[2].split(",")]
        if len(tasks) != int(app[1]) or any(len(t) != 2 for t in tasks):
            raise FormatError(f"application {index + 1}: {app[1]} tasks declared as {app[2]!r}")
        if any(node > len(nodes) for _, node in tasks):
            raise FormatError(f"application {index + 1} names a node that does not exist")
        applications.append(tasks)
        rest = rest[app.end():]
        if index + 1 < int(match[10]):
            if not rest.startswith(":"):
                raise FormatError("applications are separated by ':'")
            rest = rest[1:]
    if rest:
        raise FormatError(f"unexpected text after the application list: {rest!r}")
    prv = Prv(int(match[6]), "ns" if match[7] else "us", nodes, applications)

    last_time = 0
    for number, line in enumerate(lines[1:], 2):
        fields = line.split(":")
        kind = fields[0]
        if kind not in ("1", "2"):
            raise FormatError(f"line {number}: only state (1) and event (2) records expected, "
                              f"not {line!r}")
        numbers = [_int(f, f"line {number} field") for f in fields[1:]]
        if len(numbers) < 6:
            raise FormatError(f"line {number}: too few fields")
        cpu, appl, task, thread, time = numbers[:5]
        if cpu > sum(nodes):
            raise FormatError(f"line {number}: CPU {cpu} does not exist")
        if not 1 <= appl <= len(applications):
            raise FormatError(f"line {number}: application {appl} does not exist")
        if not 1 <= task <= len(applications[appl - 1]):
            raise FormatError(f"line {number}: task {task} does not exist")
        if not 1 <= thread <= applications[appl - 1][task - 1][0]:
            raise FormatError(f"line {number}: thread {thread} does not exist")
        if time < last_time:
            raise FormatError(f"line {number}: records are not sorted by time")
        last_time = time
        if kind == "1":
            if len(numbers) != 7:
                raise FormatError(f"line {number}: a state record has 8 fields")
            begin, end, state = numbers[4:]
            if not begin < end <= prv.end_time:
                raise FormatError(f"line {number}: state from {begin} to {end} is outside "
                                  f"0..{prv.end_time} or empty")
            prv.states.append((cpu, appl, task, thread, begin, end, state))
        else:
            pairs = numbers[5:]
            if not pairs or len(pairs) % 2:
                raise FormatError(f"line {number}: an event record has type:value pairs")
            if time > prv.end_time:
                raise FormatError(f"line {number}: event after the end of the trace")
            prv.events.append((cpu, appl, task, thread, time,
                               list(zip(pairs[0::2], pairs[1::2]))))
    return prv


@dataclass
class Pcf:
    options: dict
    semantic: dict
    states: dict                      # id -> name
    colors: dict                      # id -> (r, g, b)
    event_types: dict                 # type -> (gradient, label, {value: name})


_SECTIONS = ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR", "EVENT_TYPE")


def read_pcf(text):
    pcf = Pcf({}, {}, {}, {}, {})
    section, current, in_values = None, [], False
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip().replace("\t", " ")
        if not line:
            continue
        if line.startswith("#"):
            raise FormatError(f"line {number}: the .pcf grammar has no comments, not {line!r}")
        if line in _SECTIONS:
            section, current, in_values = line, [], False
            continue
        if section is None:
            raise FormatError(f"line {number}: {line!r} outside any section")
        if section in ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC"):
            key, _, value = line.partition(" ")
            if not value.strip():
                raise FormatError(f"line {number}: option {key} has no value")
            (pcf.options if section == "DEFAULT_OPTIONS" else pcf.semantic)[key] = value.strip()
        elif section == "STATES":
            match = re.fullmatch(r"(\d+) +(\S.*)", line)
            if not match:
                raise FormatError(f"line {number}: a state is '<id> <name>', not {line!r}")
            pcf.states[int(match[1])] = match[2]
        elif section == "STATES_COLOR":
            match = re.fullmatch(r"(\d+) +\{(\d+),(\d+),(\d+)\}", line)
            if not match or any(int(c) > 255 for c in match.groups()[1:]):
                raise FormatError(f"line {number}: a colour is '<id> {{r,g,b}}', not {line!r}")
            pcf.colors[int(match[1])] = tuple(int(c) for c in match.groups()[1:])
        elif line == "VALUES":
            if not current or in_values:
                raise FormatError(f"line {number}: VALUES must follow event types")
            in_values = True
        elif in_values:
            match = re.fullmatch(r"(\d+) +(\S.*)", line)
            if not match:
                raise FormatError(f"line {number}: a value is '<value> <name>', not {line!r}")
            for kind in current:
                pcf.event_types[kind][2][int(match[1])] = match[2]
        else:
            match = re.fullmatch(r"(\d+) +(\d+) +(\S.*)", line)
            if not match:
                raise FormatError(f"line {number}: an event type is '<gradient> <type> <label>'"
                                  f", not {line!r}")
            kind = int(match[2])
            if kind in pcf.event_types:
                raise FormatError(f"line {number}: event type {kind} defined twice")
            pcf.event_types[kind] = (int(match[1]), match[3], {})
            current.append(kind)
    return pcf


_LEVELS = ("WORKLOAD", "APPL", "TASK", "THREAD", "SYSTEM", "NODE", "CPU")


def read_row(text):
    """``{level: [names]}``."""
    levels = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        match = re.fullmatch(r"LEVEL (\w+) SIZE (\d+)", line)
        if not match or match[1] not in _LEVELS:
            raise FormatError(f"expected 'LEVEL <level> SIZE <n>', not {line!r}")
        names = [next(lines, None) for _ in range(int(match[2]))]
        if None in names or "" in names:
            raise FormatError(f"level {match[1]} declares {match[2]} names")
        levels[match[1]] = names
    return levels


@dataclass
class Chrome:
    display_time_unit: str
    other: dict
    process_names: dict               # pid -> name
    thread_names: dict                # (pid, tid) -> name
    slices: list                      # (pid, tid, name, ts, dur, args)
    counters: list                    # (pid, name, ts, args)
    instants: list                    # (pid, tid, scope, name, ts, args)


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FormatError(f"{what} must be a number, not {value!r}")
    return value


def read_chrome(text):
    """The JSON object form of the Trace Event Format, with the events hwgen may write."""
    obj = json.loads(text)
    if not isinstance(obj, dict) or not isinstance(obj.get("traceEvents"), list):
        raise FormatError("a JSON object with a traceEvents list expected")
    unit = obj.get("displayTimeUnit", "ms")
    if unit not in ("ms", "ns"):
        raise FormatError(f"displayTimeUnit is ms or ns, not {unit!r}")
    other = obj.get("otherData", {})
    if not isinstance(other, dict):
        raise FormatError("otherData must be an object")
    trace = Chrome(unit, other, {}, {}, [], [], [])
    for event in obj["traceEvents"]:
        ph = event.get("ph")
        if not isinstance(event.get("name"), str) or not isinstance(event.get("pid"), int):
            raise FormatError(f"every event has a name and a pid: {event!r}")
        args = event.get("args", {})
        if not isinstance(args, dict):
            raise FormatError(f"args must be an object: {event!r}")
        if ph == "M":
            if event["name"] == "process_name":
                trace.process_names[event["pid"]] = args["name"]
            elif event["name"] == "thread_name":
                trace.thread_names[event["pid"], event["tid"]] = args["name"]
            elif event["name"] not in ("thread_sort_index", "process_sort_index"):
                raise FormatError(f"unknown metadata event {event['name']!r}")
            continue
        ts = _number(event.get("ts"), "ts")
        if ph == "X":
            dur = _number(event.get("dur"), "dur")
            if ts < 0 or dur < 0 or not isinstance(event.get("tid"), int):
                raise FormatError(f"a complete event needs tid, ts >= 0 and dur >= 0: {event!r}")
            trace.slices.append((event["pid"], event["tid"], event["name"], ts, dur, args))
        elif ph == "C":
            if not args or not all(isinstance(v, (int, float)) for v in args.values()):
                raise FormatError(f"a counter event's args are its numeric series: {event!r}")
            trace.counters.append((event["pid"], event["name"], ts, args))
        elif ph == "i":
            scope = event.get("s", "t")
            if scope not in ("g", "p", "t"):
                raise FormatError(f"instant scope is g, p or t, not {scope!r}")
            trace.instants.append((event["pid"], event.get("tid"), scope, event["name"], ts,
                                   args))
        else:
            raise FormatError(f"unexpected phase {ph!r}")
    return trace
