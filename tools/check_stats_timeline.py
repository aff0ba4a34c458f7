#!/usr/bin/env python3
"""Runs a program under HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE (and with HOOKSCOPE_TRACE and HOOKSCOPE_RECORD at the
same time) and checks the statistics table and the Chrome trace-event file it wrote.

Usage: check_stats_timeline.py PROGRAM ENABLED(0|1)   (PROGRAM: tests/record_program.cpp)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import env_program
from env_program import expect

UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}


def run(program, env, *args):
    environment = {k: v for k, v in os.environ.items() if k not in env_program.HOOKSCOPE_VARIABLES + (
        "HOOKSCOPE_STATS", "HOOKSCOPE_TIMELINE")}
    environment.update(env)
    done = subprocess.run([program, *args], env=environment, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr.splitlines()


def parse_table(lines, prefix):
    """{function: [calls, total, mean, p50, p90, p99, max]} (durations in ns) from the table's lines."""
    rows = [line[len(prefix):] for line in lines if line.startswith(prefix)]
    if not rows:
        return None
    expect("the table's header", rows[0].split(), ["function", "calls", "total", "mean", "p50", "p90", "p99", "max"])
    table = {}
    for row in rows[1:]:
        cells = re.findall(r"(\d+(?:\.\d+)?) (ns|\u00b5s|ms|s)\b", row)
        name, calls = row.split()[0], int(row.split()[1])
        table[name] = [calls] + [float(v) * UNITS[u] for v, u in cells]
    return table


def check_stats(program, tmp):
    code, _, err = run(program, {"HOOKSCOPE_STATS": "step, forward"}, "calls", "1000")
    table = parse_table(err, "hookscope: stats: ")
    expect("stats: exit 0", code, 0)
    expect("stats: one row per matching function that was called (forward never was)", sorted(table), ["step"])
    calls, total, mean, p50, p90, p99, most = table["step"]
    expect("stats: the number of calls", calls, 1000)
    expect("stats: 0 < p50 <= p90 <= p99 <= max, mean <= max, total ~ calls x mean",
           (0 < p50 <= p90 <= p99 <= most, mean <= most, abs(total - calls * mean) <= 0.02 * total + 1000), (True,) * 3)

    path = os.path.join(tmp, "stats.txt")
    code, _, err = run(program, {"HOOKSCOPE_STATS": f"step={path}"}, "calls", "10")
    expect("stats to a file: nothing logged", err, [])
    with open(path, encoding="utf-8") as f:
        expect("stats to a file: the table", parse_table(f.read().splitlines(), "")["step"][0], 10)

    code, _, err = run(program, {"HOOKSCOPE_STATS": "step"}, "segv", "50")
    expect("stats on SIGSEGV: written by the signal handler", parse_table(err, "hookscope: stats: ")["step"][0], 50)


def complete_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def check_timeline(program, tmp):
    path = os.path.join(tmp, "plain.json")
    code, _, err = run(program, {"HOOKSCOPE_TIMELINE": f"step,forward={path}"})
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = complete_events(trace)
    expect("timeline: forward x3 (the third threw), then step(step(1))",
           [(e["name"], e["args"].get("threw", False), e["args"].get("n")) for e in events],
           [("forward", False, None), ("forward", False, None), ("forward", True, None), ("step", False, "1"),
            ("step", False, "2")])
    expect("timeline: complete events with pid, tid, ts and dur (numbers, µs)",
           all(e["pid"] == events[0]["pid"] and isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and
               e["cat"] == "hookscope" for e in events), True)
    names = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    expect("timeline: the thread's name as metadata", [(e["name"], e["tid"]) for e in names],
           [("thread_name", events[0]["tid"])])

    path = os.path.join(tmp, "nested.json")
    run(program, {"HOOKSCOPE_TIMELINE": f"step,twice={path}"}, "nested", "0")
    with open(path, encoding="utf-8") as f:
        events = complete_events(json.load(f))
    expect("timeline: twice(0) calls step(0) then step(1)", [(e["name"], e["args"]["n"]) for e in events],
           [("step", "0"), ("step", "1"), ("twice", "0")])
    ns = lambda us: round(us * 1000)  # the file has µs with three decimals: whole nanoseconds
    outer = events[2]
    expect("timeline: nested calls nest (each step lies within twice)",
           [ns(outer["ts"]) <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= ns(outer["ts"]) + ns(outer["dur"])
            for e in events[:2]], [True, True])

    path = os.path.join(tmp, "ring.json")
    run(program, {"HOOKSCOPE_TIMELINE": f"step={path}[events=10]"}, "calls", "100")
    with open(path, encoding="utf-8") as f:
        expect("timeline: a ring of the last N events per thread",
               [e["args"]["n"] for e in complete_events(json.load(f))], [str(i) for i in range(90, 100)])

    path = os.path.join(tmp, "threads.json")
    run(program, {"HOOKSCOPE_TIMELINE": f"step={path}"}, "destructors", "2")
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    expect("timeline: events of two threads, each named", len({e["tid"] for e in trace["traceEvents"]
                                                             if e["ph"] == "M"}), 2)
    expect("timeline: calls from static and thread-local destructors are in it",
           sorted(e["args"]["n"] for e in complete_events(trace)), sorted(["0", "1", "1999", "2000", "1000"]))

    pattern = os.path.join(tmp, "fork-%p.json")
    code, _, _ = run(program, {"HOOKSCOPE_TIMELINE": f"step={pattern}"}, "fork", "3")
    files = sorted(glob.glob(os.path.join(tmp, "fork-*.json")))
    expect("timeline: %p gives each process of a fork its own file", (code, len(files)), (0, 2))
    steps = sorted(sorted(e["args"]["n"] for e in complete_events(json.load(open(f, encoding="utf-8"))))
                   for f in files)
    expect("timeline: each call in one file only (the child starts empty)", steps,
           sorted([["0", "1", "2", "200000", "200001", "200002"], ["100000", "100001", "100002"]]))


def check_bad_settings(program, tmp):
    for setting in ("step", f"step={tmp}/t.json[events=0]", f"step={tmp}/t.json[often=3]"):
        code, _, err = run(program, {"HOOKSCOPE_TIMELINE": setting}, "calls", "1")
        expect(f"timeline: a malformed setting is reported, the program runs on ({setting})", (code, err),
               (0, ["hookscope: HOOKSCOPE_TIMELINE: expected <glob>[,<glob>...]=<path>[events=N] (N a positive "
                    f"integer), got '{setting}'; ignored"]))
    missing = os.path.join(tmp, "no-such-dir", "stats.txt")
    code, _, err = run(program, {"HOOKSCOPE_STATS": f"step={missing}"}, "calls", "3")
    expect("stats: an unopenable file is reported, the table goes to the log", err[0],
           f"hookscope: HOOKSCOPE_STATS: {missing}: cannot open it for writing (No such file or directory); the "
           "table goes to the log instead")
    expect("...and the table follows", parse_table(err[1:], "hookscope: stats: ")["step"][0], 3)


def check_all_at_once(program, tmp):
    timeline, records = os.path.join(tmp, "all.json"), os.path.join(tmp, "all.jsonl")
    code, out, err = run(program, {"HOOKSCOPE_TIMELINE": f"step={timeline}", "HOOKSCOPE_STATS": "step",
                                   "HOOKSCOPE_TRACE": "step", "HOOKSCOPE_RECORD": f"step={records}"})
    expect("all four variables at once: the program's output unchanged", (code, out),
           (0, "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n"))
    expect("...the trace", [line for line in err if line.startswith("hookscope: trace: ")],
           ["hookscope: trace: step(n=1)", "hookscope: trace: step returned 2", "hookscope: trace: step(n=2)",
            "hookscope: trace: step returned 3"])
    expect("...the statistics", parse_table(err, "hookscope: stats: ")["step"][0], 2)
    with open(records, encoding="utf-8") as f:
        expect("...the records", len(f.read().splitlines()), 2)
    with open(timeline, encoding="utf-8") as f:
        expect("...the timeline", len(complete_events(json.load(f))), 2)


def main() -> int:
    program, enabled = sys.argv[1], sys.argv[2] == "1"
    with tempfile.TemporaryDirectory() as tmp:
        if not enabled:
            path = os.path.join(tmp, "off.json")
            code, _, err = run(program, {"HOOKSCOPE_STATS": "step", "HOOKSCOPE_TIMELINE": f"step={path}"})
            expect("hooks compiled out: no statistics, no timeline", (code, err, os.path.exists(path)), (0, [], False))
            return 0
        check_stats(program, tmp)
        check_timeline(program, tmp)
        check_bad_settings(program, tmp)
        check_all_at_once(program, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
