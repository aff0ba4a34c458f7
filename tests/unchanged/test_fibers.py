"""Calls that suspend in fibers (fiber_program.cpp, the program of the table's fiber rows: ucontext fibers, as
Boost.Context and Asio's spawn make them): a call suspends in the middle, another fiber makes calls on the same thread meanwhile (one nested in
another, one overlapping the suspended call), and the first call ends later, on the same thread or on another one.
Under HOOKSCOPE_RECORD, HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE, alone and all at once, the program prints what it
prints without them, and every call is recorded, counted and traced exactly once, paired with its own start: the
suspended calls span their suspension (the program sleeps SLEEP_MS meanwhile), the others do not. The timeline is
strict JSON whose complete events nest on every track (Perfetto refuses overlapping ones); the others are async pairs.
The records read back (hookscope-shapes)."""
import json
import subprocess
from collections import Counter, defaultdict

import pytest

from support import Checks, program_stderr, run

ROUNDS = 3
SLEEP_MS = 50  # the program sleeps this long while both suspending() calls are suspended
MODES = ["same_thread", "other_thread"]
# Every round's calls, as (function, n); each returns 10 n (outer(3): 31).
ROUND_CALLS = [("suspending", 1), ("suspending", 4), ("outer", 3), ("work", 3), ("work", 6), ("work", 2), ("work", 5)]
STATS = "hookscope: stats: "
UNITS = {"ns": 1, "\u00b5s": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: nothing is recorded, counted or traced "
                    "(test_record_env.py and test_stats_timeline.py check that)")


def run_fibers(program, settings, mode):
    done = run([program, mode, ROUNDS], settings, timeout=60)
    return done.returncode, done.stdout, program_stderr(done.stderr)


def expected_calls():
    return Counter(call for _ in range(ROUNDS) for call in ROUND_CALLS)


def check_unchanged(check, program, mode, got):
    """The program behaves as without the variables: exit status, stdout, and no stderr line but hookscope's."""
    code, out, err = run_fibers(program, {}, mode)
    check.expect(f"{mode}: the program alone exits 0 with nothing on stderr", (code, err), (0, []))
    check.expect(f"{mode}: the same exit status and stdout as without the variables", got[:2], (code, out))
    check.expect(f"{mode}: no stderr line but hookscope's", [line for line in got[2]
                                                             if not line.startswith("hookscope: ")], [])


# --- the checks of each output ---

def check_records(check, hookscope_shapes, mode, path):
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    calls = Counter((r["function"], r["kwargs"][0][1]["int"]) for r in records)
    check.expect(f"{mode}: one record per call", calls, expected_calls())
    check.expect(f"{mode}: each record with its own result",
                 [r for r in records if r["result"]["int"] != 10 * r["kwargs"][0][1]["int"] + (r["function"] == "outer")],
                 [])
    slow = {r["function"] for r in records if r["latency_ns"] >= SLEEP_MS * 1_000_000}
    check.expect(f"{mode}: the suspended calls' latencies span the suspension, the others' do not "
                 f"(functions with a latency over {SLEEP_MS} ms)", (slow, min(r["latency_ns"] for r in records
                                                                           if r["function"] == "suspending")
                                                                     >= SLEEP_MS * 1_000_000), ({"suspending"}, True))
    for function in ("suspending", "work", "outer"):
        done = subprocess.run([hookscope_shapes, "summarize", str(path), "--function", function], capture_output=True,
                              text=True, timeout=60)
        check.expect(f"{mode}: hookscope-shapes reads the records of {function}", (done.returncode, done.stderr),
                     (0, ""))


def stats_rows(lines):
    """{function: (calls, [total, mean, p50, p90, p99, max] in ns)} of the table in the log lines."""
    rows = {}
    for line in lines:
        if not line.startswith(STATS) or line[len(STATS):].startswith("function"):
            continue
        name, calls, *rest = line[len(STATS):].split()
        rows[name] = (int(calls), [float(rest[i]) * UNITS[rest[i + 1]] for i in range(0, len(rest), 2)])
    return rows


def check_stats(check, mode, lines):
    rows = stats_rows(lines)
    check.expect(f"{mode}: statistics count every call once",
                 {name: calls for name, (calls, _) in rows.items()},
                 {name: n for name, n in Counter(f for f, _ in expected_calls().elements()).items()})
    if "suspending" in rows and "work" in rows:
        sleep = SLEEP_MS * 1_000_000
        check.expect(f"{mode}: the suspended calls span the suspension (their p50 and max over {SLEEP_MS} ms), "
                     "the calls of the other fibers do not (max under it)",
                     (rows["suspending"][1][2] >= sleep, rows["suspending"][1][5] >= sleep,
                      rows["work"][1][5] < sleep, rows["outer"][1][5] < sleep), (True, True, True, True))


def timeline_calls(document):
    """One entry per call of the timeline: complete events, and async pairs matched by id. Also the problems of the
    async pairs (a begin without its end, an end without its begin, a pair whose halves disagree)."""
    calls, begins, problems = [], {}, []
    for e in document["traceEvents"]:
        if e["ph"] == "X":
            calls.append({"name": e["name"], "n": int(e["args"]["n"]), "tid": e["tid"], "ts": e["ts"],
                          "dur": e["dur"], "async": False})
        elif e["ph"] == "b":
            if e["id"] in begins:
                problems.append(("id used twice", e))
            begins[e["id"]] = e
        elif e["ph"] == "e":
            b = begins.pop(e["id"], None)
            if b is None or (b["name"], b["cat"], b["pid"], b["tid"]) != (e["name"], e["cat"], e["pid"], e["tid"]) \
                    or e["ts"] < b["ts"] or b["cat"] != "hookscope" or "args" in e:
                problems.append(("end without its begin, or not matching it", b, e))
                continue
            calls.append({"name": b["name"], "n": int(b["args"]["n"]), "tid": b["tid"], "ts": b["ts"],
                          "dur": round(e["ts"] - b["ts"], 3), "async": True})
        elif e["ph"] != "M":
            problems.append(("an event of another kind", e))
    problems += [("begin without its end", b) for b in begins.values()]
    return calls, problems


def overlapping_complete_events(document):
    """The complete events of each track that overlap one another without nesting: Perfetto refuses them."""
    tracks = defaultdict(list)
    for e in document["traceEvents"]:
        if e["ph"] == "X":
            start = round(e["ts"] * 1000)  # integer nanoseconds: ts and dur are µs with three decimals
            tracks[(e["pid"], e["tid"])].append((start, start + round(e["dur"] * 1000), e["name"], e["args"]))
    bad = []
    for events in tracks.values():
        events.sort(key=lambda x: (x[0], -x[1]))
        open_events = []
        for event in events:
            while open_events and open_events[-1][1] <= event[0]:
                open_events.pop()
            if open_events and event[1] > open_events[-1][1]:
                bad.append((open_events[-1], event))
            open_events.append(event)
    return bad


def check_timeline(check, mode, path, main_tid):
    with open(path, "rb") as f:
        document = json.loads(f.read().decode("utf-8"))  # strict: UTF-8, JSON
    calls, problems = timeline_calls(document)
    check.expect(f"{mode}: the timeline's async pairs are whole", problems, [])
    check.expect(f"{mode}: one timeline event (complete or async pair) per call",
                 Counter((c["name"], c["n"]) for c in calls), expected_calls())
    check.expect(f"{mode}: the complete events of every track nest", overlapping_complete_events(document), [])
    sleep = SLEEP_MS * 1000
    check.expect(f"{mode}: the suspended calls span the suspension, the others do not",
                 sorted({(c["name"], c["dur"] >= sleep) for c in calls}),
                 [("outer", False), ("suspending", True), ("work", False)])
    resumed_elsewhere = [c for c in calls if c["name"] == "suspending" and c["n"] == 1]
    if mode == "same_thread":
        check.expect(f"{mode}: every call on the main thread's track", {c["tid"] for c in calls}, {main_tid})
        check.expect(f"{mode}: in each round one of the two overlapping suspended calls is an async pair",
                     len([c for c in calls if c["async"]]), ROUNDS)
    else:
        check.expect(f"{mode}: suspending(1), ended on another thread, is an async pair on that thread's row, next "
                     "to the work(2) it called there",
                     [(c["async"], c["tid"] != main_tid) for c in resumed_elsewhere], [(True, True)] * ROUNDS)
        check.expect(f"{mode}: work(2) is a complete event on each second thread's track",
                     sorted((c["async"], c["tid"]) for c in calls if c["name"] == "work" and c["n"] == 2),
                     sorted((False, c["tid"]) for c in resumed_elsewhere))
        check.expect(f"{mode}: the calls that did not migrate, on the main thread's track, complete",
                     [c for c in calls if c["tid"] != main_tid and not (c["name"], c["n"]) in {("suspending", 1),
                                                                                            ("work", 2)}], [])


def main_tid_of(document_path):
    with open(document_path, encoding="utf-8") as f:
        document = json.load(f)
    return next(e["tid"] for e in document["traceEvents"] if e["ph"] == "M" and e["pid"] == e["tid"])


# --- one named test per output, and all three at once ---

@pytest.mark.parametrize("mode", MODES)
def test_fiber_calls_recorded_once_each_with_their_own_arguments(programs, hookscope_shapes, enabled, tmp_path, mode):
    records = tmp_path / "fibers.jsonl"
    got = run_fibers(programs["fibers"], {"HOOKSCOPE_RECORD": f"*={records}"}, mode)
    with Checks() as check:
        check_unchanged(check, programs["fibers"], mode, got)
        check_records(check, hookscope_shapes, mode, records)


@pytest.mark.parametrize("mode", MODES)
def test_fiber_calls_counted_once_each_with_their_own_durations(programs, enabled, mode):
    got = run_fibers(programs["fibers"], {"HOOKSCOPE_STATS": "*"}, mode)
    with Checks() as check:
        check_unchanged(check, programs["fibers"], mode, got)
        check_stats(check, mode, got[2])


@pytest.mark.parametrize("mode", MODES)
def test_fiber_calls_traced_once_each_and_complete_events_nest(programs, enabled, tmp_path, mode):
    trace = tmp_path / "fibers.json"
    got = run_fibers(programs["fibers"], {"HOOKSCOPE_TIMELINE": f"*={trace}"}, mode)
    with Checks() as check:
        check_unchanged(check, programs["fibers"], mode, got)
        check_timeline(check, mode, trace, main_tid_of(trace))


@pytest.mark.parametrize("mode", MODES)
def test_fiber_calls_under_record_stats_and_timeline_at_once(programs, hookscope_shapes, enabled, tmp_path, mode):
    records, trace = tmp_path / "fibers.jsonl", tmp_path / "fibers.json"
    got = run_fibers(programs["fibers"], {"HOOKSCOPE_RECORD": f"*={records}", "HOOKSCOPE_STATS": "*",
                                          "HOOKSCOPE_TIMELINE": f"*={trace}"}, mode)
    with Checks() as check:
        check_unchanged(check, programs["fibers"], mode, got)
        check_records(check, hookscope_shapes, mode, records)
        check_stats(check, mode, got[2])
        check_timeline(check, mode, trace, main_tid_of(trace))
