#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""trace_event.py - reads a Chrome trace as the Trace Event Format defines it, and checks it.

Usage: trace_event.py FILE [PROCESS:OUTER>...>INNER=COUNT]...

The JSON Object Format: an object whose "traceEvents" is an array of events, with an
optional "displayTimeUnit" of "ms" or "ns". Each event has a "ph"; duration events "B"
(begin: "name", "ts", "pid", "tid") and "E" (end: "ts", "pid", "tid") nest on the track of
their (pid, tid) as a stack, an E ending the innermost open B; metadata events "M" named
"process_name" or "thread_name" carry args.name. Checked here: the file is JSON (Python's
json, strict: no NaN), every event has what its phase needs with the right types, ts is a
number of microseconds that never goes back on a track, no E comes without an open B, no B
is left open, and each track is named before its first slice. Each PROCESS:STACK=COUNT
given must be the number of slices with that process name and that stack of names. Prints
the number of slices and exits 0, or says what is wrong and exits 1.
"""
import json
import sys


def fail(msg):
    sys.exit(f"{sys.argv[1]}: {msg}")


def reject_constant(name):
    fail(f"{name} is not JSON")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def main():
    with open(sys.argv[1], "rb") as f:
        doc = json.loads(f.read().decode("utf-8"), parse_constant=reject_constant)
    want = {}
    for a in sys.argv[2:]:
        k, v = a.rsplit("=", 1)
        want[k] = int(v)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents array")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        fail("displayTimeUnit is neither ms nor ns")
    processes, threads, stacks, last_ts = {}, {}, {}, {}
    seen = {}
    slices = 0
    for i, ev in enumerate(doc["traceEvents"]):
        where = f"event {i}"
        if not isinstance(ev, dict) or not isinstance(ev.get("ph"), str):
            fail(f"{where}: no phase")
        ph = ev["ph"]
        if not is_int(ev.get("pid")) or not is_int(ev.get("tid")):
            fail(f"{where}: pid and tid must be integers")
        trk = (ev["pid"], ev["tid"])
        if ph == "M":
            args = ev.get("args")
            if not isinstance(args, dict) or not isinstance(args.get("name"), str):
                fail(f"{where}: metadata without args.name")
            if ev.get("name") == "process_name":
                processes[ev["pid"]] = args["name"]
            elif ev.get("name") == "thread_name":
                threads[trk] = args["name"]
            else:
                fail(f"{where}: unknown metadata {ev.get('name')!r}")
            continue
        if ph not in ("B", "E"):
            fail(f"{where}: phase {ph!r} (only B, E and M are written)")
        ts = ev.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0:
            fail(f"{where}: ts must be a number of microseconds")
        if ts < last_ts.get(trk, 0):
            fail(f"{where}: ts {ts} before the track's last {last_ts[trk]}")
        last_ts[trk] = ts
        stack = stacks.setdefault(trk, [])
        if ph == "B":
            if not isinstance(ev.get("name"), str):
                fail(f"{where}: B without a name")
            if ev["pid"] not in processes or trk not in threads:
                fail(f"{where}: track {trk} not named before its first slice")
            stack.append(ev["name"])
            key = processes[ev["pid"]] + ":" + ">".join(stack)
            seen[key] = seen.get(key, 0) + 1
            slices += 1
        else:
            if not stack:
                fail(f"{where}: E without an open B on track {trk}")
            if "name" in ev and ev["name"] != stack[-1]:
                fail(f"{where}: E of {ev['name']!r} ends {stack[-1]!r}")
            stack.pop()
    for trk, stack in stacks.items():
        if stack:
            fail(f"track {trk}: {stack} left open")
    for k, n in want.items():
        if seen.get(k, 0) != n:
            fail(f"{k}: {seen.get(k, 0)} slices, {n} expected (have {sorted(seen)})")
    print(slices, "slices")


if __name__ == "__main__":
    main()
