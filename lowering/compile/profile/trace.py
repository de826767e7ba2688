"""Profiled runs as a Chrome trace: JSON in the Trace Event Format that Perfetto
(ui.perfetto.dev) and ``chrome://tracing`` open.

Each profiled function is one *process* (named after the function) with one thread; every call
of the function is a complete event (``"ph": "X"``, category ``call``) and every node run inside
it another one (category ``node``, named after the op, with the node's position and Apply text in
``args``). Times are microseconds from the first profiled event.

>>> trace = chrome_trace([])
>>> trace["traceEvents"], trace["displayTimeUnit"]
([], 'ms')
"""
from __future__ import annotations

import json
import os


def chrome_trace(profiles) -> dict:
    """The trace of every event recorded by ``profiles`` (``ProfileStats`` objects)."""
    records = [(p, r) for p in profiles for r in p.events]
    origin = min((r[2] for _, r in records), default=0.0)
    events: list[dict] = []
    pids: dict[tuple[int, int], int] = {}
    for profile in profiles:
        for local_pid, name in profile.processes.items():
            pid = pids[(id(profile), local_pid)] = len(pids) + 1
            events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 1,
                           "args": {"name": f"Function {name}"}})
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": 1,
                           "args": {"name": "Function.__call__"}})
    for profile, (kind, local_pid, start, seconds, what) in records:
        event = {"ph": "X", "cat": kind, "pid": pids[(id(profile), local_pid)], "tid": 1,
                 "ts": round((start - origin) * 1e6, 3), "dur": round(seconds * 1e6, 3)}
        if kind == "node":
            event["name"] = what.op
            event["args"] = {"id": what.index, "apply": what.apply, "class": what.class_name,
                             "type": what.impl}
        else:
            event["name"] = f"{what}.__call__"
        events.append(event)
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(path: str, profiles) -> None:
    """Write ``chrome_trace(profiles)`` to ``path`` (atomically: a reader never sees half)."""
    trace = chrome_trace(profiles)
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(trace, out)
    os.replace(temporary, path)
