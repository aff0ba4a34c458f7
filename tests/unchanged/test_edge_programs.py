"""Programs at the edges: tests/unchanged/edge_program.cpp run without and with each HOOKSCOPE_* variable, through
the table machinery of test_unchanged.py (same exit status, output and stderr; every output read back; the calls
each feature must see), and the findings that machinery cannot see: a timeline's complete events nest on every track
and its async pairs are whole, records pair each call with its own arguments, a call begun on a thread that has
exited and ended on another is an async pair (docs/environment.md, "Calls that interleave")."""
import json
import os
import sys
from collections import Counter, defaultdict

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_unchanged import FEATURES, Row, check_outputs, own_lines, run_compared  # noqa: E402

from support import Checks, program_stderr, run  # noqa: E402
import dataclasses  # noqa: E402

# HOOKSCOPE_TRACE logs a call when it begins: calls that never end (suspended forever, left by longjmp, cancelled) are
# traced too.
TRACED_STARTS = {"never_resumed": {"suspending": 5, "leaf": 10}, "longjmp": {"jumping": 10, "leaf": 10},
                 "cancel": {"leaf": 6, "blocking": 3}}

ROWS = [
    Row("virtual ref-qualified overloads through a base, operator, and operator& deleted, references returned, "
        "a class neither copied nor moved, class templates", "edges", ("methods",),
        calls={"shapes::base::area_lv": 2, "shapes::base::area_rv": 3, "shapes::base::combine": 1,
               "shapes::pinned::at": 2, "shapes::pinned::cat": 1, "shapes::pinned::self": 1,
               "shapes::pinned::steal": 1, "shapes::box<int>::get_lv": 2, "shapes::box<int>::get_rv": 1,
               "shapes::box<double>::get_lv": 1, "shapes::box<double>::get_rv": 1}),
    Row("fibers suspended mid-call never resumed, their stacks freed", "edges", ("never_resumed", "5"),
        calls={"leaf": 10}),
    Row("1000 fibers suspended mid-call, resumed in reverse and interleaved orders", "edges",
        ("many_fibers", "1000"), calls={"suspending": 2000, "leaf": 1000}),
    Row("two fibers recursing 40 levels, suspending at every level, interleaved", "edges",
        ("fiber_recursion", "40"), calls={"recurse": 82, "leaf": 2}),
    Row("a call suspended on a thread that exits, ended on a new thread", "edges", ("replaced_thread", "4"),
        calls={"suspending": 4, "leaf": 8}),
    Row("calls left by longjmp", "edges", ("longjmp", "10"), calls={"jumping": 5, "leaf": 10}),
    Row("calls ended by pthread_cancel", "edges", ("cancel", "3"), calls={"leaf": 6}),
    Row("calls made while a pthread_cancel is pending, writing a trace line and a 300 KiB record line", "edges",
        ("cancel_pending", "3"), calls={"leaf": 3, "measure_text": 3}),
    Row("a parameter name longer than a timeline slot; 24 empty arguments", "edges", ("names",),
        calls={"long_name": 2, "empties": 2}),
    Row("std::multimap and std::unordered_multimap of strings: captured as lists of (key, value), keys repeating",
        "edges", ("multimap",), calls={"tally": 1, "tally_unordered": 1}),
]


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: nothing observes")


def check_timeline_shape(check, path):
    """Strict JSON (check_outputs read it), complete events nested on every track, async pairs whole, ids unique."""
    if not path.exists():
        return
    events = json.loads(path.read_bytes().decode("utf-8"))["traceEvents"]
    begins = Counter(e["id"] for e in events if e["ph"] == "b")
    ends = Counter(e["id"] for e in events if e["ph"] == "e")
    check.expect("async pairs whole", begins, ends)
    check.expect("async pair ids unique", [i for i, n in begins.items() if n > 1], [])
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    overlapping = []
    for track, spans in tracks.items():
        stack = []
        for start, end, name in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1] + 1e-3:
                overlapping.append((track, stack[-1], (start, end, name)))
            stack.append((start, end, name))
    check.expect("complete events that overlap without nesting", overlapping, [])


def check_record_pairs(check, path):
    """Each record's result is the one its own arguments give (leaf n+1, suspending 10 n, jumping n)."""
    if not path.exists():
        return
    rule = {"leaf": lambda n: n + 1, "suspending": lambda n: 10 * n, "jumping": lambda n: n}
    mispaired = []
    for line in path.read_bytes().splitlines():
        r = json.loads(line)
        if r["function"] in rule:
            n = dict(r["kwargs"])["n"]["int"]
            if r["result"]["int"] != rule[r["function"]](n):
                mispaired.append(r)
    check.expect("records paired with their own arguments", mispaired, [])


@pytest.mark.parametrize("row, feature", [pytest.param(r, f, id=f"{r.name} [{f}]") for r in ROWS for f in FEATURES])
def test_edge_program_unchanged(request, programs, hooks_enabled, hookscope_shapes, tmp_path, row, feature):
    with Checks() as check:
        observed = run_compared(check, request, programs, hooks_enabled, row, feature, tmp_path)
        if hooks_enabled:
            for one in (("RECORD", "TRACE", "STATS", "TIMELINE") if feature == "all" else (feature,)):
                seen = row
                if one == "TRACE" and row.args[0] in TRACED_STARTS:
                    seen = dataclasses.replace(row, calls=TRACED_STARTS[row.args[0]])
                check_outputs(check, seen, one, tmp_path, observed.stderr, hookscope_shapes)
            check_timeline_shape(check, tmp_path / "timeline.json")
            check_record_pairs(check, tmp_path / "records.jsonl")


def test_call_begun_on_an_exited_thread_is_an_async_pair(programs, enabled, tmp_path):
    """docs/environment.md: "A call that began on another thread than the one that ended it (a fiber resumed
    elsewhere) is always an async pair, on the thread that ended it." Here suspending(r) begins on a thread that then
    exits (joined), and a second thread resumes the fiber and ends it: the X event starts before its thread existed."""
    trace = tmp_path / "timeline.json"
    done = run([programs["edges"], "replaced_thread", "4"], {"HOOKSCOPE_TIMELINE": f"*={trace}"}, timeout=60)
    events = json.loads(trace.read_bytes().decode("utf-8"))["traceEvents"]
    with Checks() as check:
        check.expect("the program", (done.returncode, program_stderr(done.stderr)), (0, []))
        check.expect("suspending: only async pairs, no complete event",
                     Counter(e["ph"] for e in events if e["name"] == "suspending"), Counter({"b": 4, "e": 4}))


def test_fork_while_a_fiber_is_suspended_mid_call(programs, enabled, tmp_path):
    """fork() while a fiber is suspended in suspending(7); the child resumes it and ends the call, then the parent
    does: the records read back, each paired with its own argument; the parent's call is recorded."""
    records = tmp_path / "records.jsonl"
    argv = [programs["edges"], "fork_suspended"]
    alone = run(argv, timeout=60)
    done = run(argv, {"HOOKSCOPE_RECORD": f"*={records}", "HOOKSCOPE_TIMELINE": f"*={tmp_path / 't-%p.json'}",
                      "HOOKSCOPE_STATS": f"*={tmp_path / 'stats.txt'}"}, timeout=60)
    with Checks() as check:
        check.expect("the program unchanged", (done.returncode, done.stdout, own_lines(done.stderr)),
                     (alone.returncode, alone.stdout, own_lines(alone.stderr)))
        check_record_pairs(check, records)
        lines = [json.loads(line) for line in records.read_bytes().splitlines()]
        check.require(1 <= sum(r["function"] == "suspending" for r in lines) <= 2, f"suspending recorded: {lines}")
        for t in tmp_path.glob("t-*.json"):
            check_timeline_shape(check, t)
