"""HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE (and with HOOKSCOPE_TRACE and HOOKSCOPE_RECORD at the same time), on
tests/record_program.cpp: the statistics table and the Chrome trace-event file it wrote."""
import glob
import json
import os
import re

import pytest

from support import Checks, expect, run

UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}
STATS = "hookscope: stats: "


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: no statistics, no timeline "
                    "(test_hooks_compiled_out checks that)")


def run_program(program, settings, *args):
    done = run([program, *args], settings, timeout=120)
    return done.returncode, done.stdout, done.stderr.splitlines()


def parse_table(lines, prefix):
    """{function: [calls, total, mean, p50, p90, p99, max]} (durations in ns) from the table's lines."""
    rows = [line[len(prefix):] for line in lines if line.startswith(prefix)]
    assert rows, f"no line starting with {prefix!r} (no table) in {lines}"
    expect("the table's header", rows[0].split(), ["function", "calls", "total", "mean", "p50", "p90", "p99", "max"])
    table = {}
    for row in rows[1:]:
        cells = re.findall(r"(\d+(?:\.\d+)?) (ns|\u00b5s|ms|s)\b", row)
        name, calls = row.split()[0], int(row.split()[1])
        table[name] = [calls] + [float(v) * UNITS[u] for v, u in cells]
    return table


def complete_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_hooks_compiled_out(record_program, hooks_enabled, tmp_path):
    if hooks_enabled:
        pytest.skip("hooks are enabled in this build: the other cases check the statistics and the timeline")
    path = tmp_path / "off.json"
    code, _, err = run_program(record_program, {"HOOKSCOPE_STATS": "step", "HOOKSCOPE_TIMELINE": f"step={path}"})
    expect("hooks compiled out: no statistics, no timeline", (code, err, path.exists()), (0, [], False))


# --- HOOKSCOPE_STATS ---

def test_stats(record_program, enabled):
    code, _, err = run_program(record_program, {"HOOKSCOPE_STATS": "step, forward"}, "calls", "1000")
    table = parse_table(err, STATS)
    with Checks() as check:
        check.expect("stats: exit 0", code, 0)
        check.expect("stats: one row per matching function that was called (forward never was)", sorted(table),
                     ["step"])
        calls, total, mean, p50, p90, p99, most = table["step"]
        check.expect("stats: the number of calls", calls, 1000)
        check.expect(f"stats: 0 < p50 <= p90 <= p99 <= max, mean <= max, total ~ calls x mean ({table['step']})",
                     (0 < p50 <= p90 <= p99 <= most, mean <= most, abs(total - calls * mean) <= 0.02 * total + 1000),
                     (True,) * 3)


def test_stats_to_a_file(record_program, enabled, tmp_path):
    path = tmp_path / "stats.txt"
    _, _, err = run_program(record_program, {"HOOKSCOPE_STATS": f"step={path}"}, "calls", "10")
    with Checks() as check:
        check.expect("stats to a file: nothing logged", err, [])
        check.expect("stats to a file: the table", parse_table(path.read_text(encoding="utf-8").splitlines(), "")["step"][0],
                     10)


def test_stats_on_sigsegv(record_program, enabled):
    _, _, err = run_program(record_program, {"HOOKSCOPE_STATS": "step"}, "segv", "50")
    expect("stats on SIGSEGV: written by the signal handler", parse_table(err, STATS)["step"][0], 50)


# --- HOOKSCOPE_TIMELINE ---

def test_timeline(record_program, enabled, tmp_path):
    path = tmp_path / "plain.json"
    run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step,forward={path}"})
    trace = load(path)
    events = complete_events(trace)
    with Checks() as check:
        check.expect("timeline: forward x3 (the third threw), then step(step(1))",
                     [(e["name"], e["args"].get("threw", False), e["args"].get("n")) for e in events],
                     [("forward", False, None), ("forward", False, None), ("forward", True, None), ("step", False, "1"),
                      ("step", False, "2")])
        check.expect("timeline: complete events with pid, tid, ts and dur (numbers, µs)",
                     all(e["pid"] == events[0]["pid"] and isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and
                         e["cat"] == "hookscope" for e in events), True)
        names = [e for e in trace["traceEvents"] if e["ph"] == "M"]
        check.expect("timeline: the thread's name as metadata", [(e["name"], e["tid"]) for e in names],
                     [("thread_name", events[0]["tid"])])


def test_timeline_nested_calls(record_program, enabled, tmp_path):
    path = tmp_path / "nested.json"
    run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step,twice={path}"}, "nested", "0")
    events = complete_events(load(path))
    expect("timeline: twice(0) calls step(0) then step(1)", [(e["name"], e["args"]["n"]) for e in events],
           [("step", "0"), ("step", "1"), ("twice", "0")])
    ns = lambda us: round(us * 1000)  # the file has µs with three decimals: whole nanoseconds
    outer = events[2]
    expect("timeline: nested calls nest (each step lies within twice)",
           [ns(outer["ts"]) <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= ns(outer["ts"]) + ns(outer["dur"])
            for e in events[:2]], [True, True])


def test_default_arguments(record_program, enabled, tmp_path):
    path = tmp_path / "defaults.json"
    code, _, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": f"widen={path}", "HOOKSCOPE_STATS": "widen"},
                               "defaults", "6")
    with Checks() as check:
        check.expect("defaults: exit 0", code, 0)
        check.expect("defaults: stats count every call, whatever arguments it left to their defaults",
                     parse_table(err, STATS)["widen"][0], 6)
        check.expect("defaults: the timeline's args are the arguments given",
                     [{k: v for k, v in e["args"].items() if k != "threw"} for e in complete_events(load(path))],
                     [{"n": "0"}, {"n": "1", "by": "2"}, {"n": "2"}, {"n": "3", "by": "2"}, {"n": "4"},
                      {"n": "5", "by": "2"}])


def test_timeline_ring(record_program, enabled, tmp_path):
    path = tmp_path / "ring.json"
    _, _, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step={path}[events=10]"}, "calls", "100")
    with Checks() as check:
        check.expect("timeline: a ring of the last N events per thread",
                     [e["args"]["n"] for e in complete_events(load(path))], [str(i) for i in range(90, 100)])
        check.expect("timeline: one line says how many earlier events are not kept",
                     [line for line in err if "HOOKSCOPE_TIMELINE" in line],
                     [f"hookscope: HOOKSCOPE_TIMELINE: {path}: 90 earlier events not kept (each thread keeps its last "
                      "10; [events=N] keeps more)"])


def test_timeline_threads_and_destructors(record_program, enabled, tmp_path):
    path = tmp_path / "threads.json"
    run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step={path}"}, "destructors", "2")
    trace = load(path)
    with Checks() as check:
        check.expect("timeline: events of two threads, each named",
                     len({e["tid"] for e in trace["traceEvents"] if e["ph"] == "M"}), 2)
        # step(0), step(1), then step(1999) and step(2000) (a thread-local destructor), step(1000) (a static one).
        check.expect("timeline: calls from static and thread-local destructors are in it",
                     sorted(e["args"]["n"] for e in complete_events(trace)), sorted(["0", "1", "1999", "2000", "1000"]))


def test_timeline_fork(record_program, enabled, tmp_path):
    pattern = tmp_path / "fork-%p.json"
    code, _, _ = run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step={pattern}"}, "fork", "3")
    files = sorted(glob.glob(os.path.join(tmp_path, "fork-*.json")))
    expect("timeline: %p gives each process of a fork its own file", (code, len(files)), (0, 2))
    steps = sorted(sorted(e["args"]["n"] for e in complete_events(load(f))) for f in files)
    expect("timeline: each call in one file only (the child starts empty)", steps,
           sorted([["0", "1", "2", "200000", "200001", "200002"], ["100000", "100001", "100002"]]))


def test_timeline_never_replaces_a_record_file_named_with_pid(record_program, enabled, tmp_path):
    """A HOOKSCOPE_TIMELINE path that is also the HOOKSCOPE_RECORD file (both with %p) is not written: the records
    stay, and the one message names the file as this process opened it (the process id in place of %p)."""
    pattern = tmp_path / "both-%p.out"
    code, _, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step={pattern}",
                                                "HOOKSCOPE_RECORD": f"step={pattern}"})
    files = glob.glob(os.path.join(tmp_path, "both-*.out"))
    named = [re.fullmatch(r"hookscope: HOOKSCOPE_TIMELINE: '?(.*?)'? is also a HOOKSCOPE_RECORD file: the timeline is "
                          r"not written over its records \(give it a path of its own\)", line) for line in err]
    with Checks() as check:
        check.expect("one file, the program ran", (code, len(files)), (0, 1))
        check.expect("one message, naming the file with the process id",
                     [m.group(1) for m in named if m], files)
        check.expect("...the records stay: every line a record", files and
                     all(json.loads(line)["function"] == "step" for line in open(files[0], encoding="utf-8")), True)


def test_timeline_and_records_both_into_a_device(record_program, enabled):
    """/dev/null named by both variables (as a benchmark discards both): a device is written, never replaced, so the
    timeline is written there too, without the message of a record file's path."""
    code, out, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": "step=/dev/null",
                                                  "HOOKSCOPE_RECORD": "step=/dev/null"})
    expect("both into /dev/null: the program's output unchanged, nothing logged", (code, out, err),
           (0, "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n", []))


# --- bad settings ---

TIMELINE_GRAMMAR = "<glob>[,<glob>...]=<path>[events=N], N from 1 to 1048576"


@pytest.mark.parametrize("setting, problem", [("step", "no path"),
                                              ("step={tmp}/t.json[events=0]", "not an option [events=N] with N in bounds"),
                                              ("step={tmp}/t.json[often=3]", "not an option [events=N] with N in bounds")])
def test_timeline_malformed_setting(record_program, enabled, tmp_path, setting, problem):
    setting = setting.format(tmp=tmp_path)
    code, _, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": setting}, "calls", "1")
    expect(f"timeline: a malformed setting is reported, the program runs on ({setting})", (code, err),
           (0, [f"hookscope: HOOKSCOPE_TIMELINE: '{setting}': {problem} (expected {TIMELINE_GRAMMAR}); the variable is "
                "ignored"]))


def test_stats_unopenable_file(record_program, enabled, tmp_path):
    missing = os.path.join(tmp_path, "no-such-dir", "stats.txt")
    _, _, err = run_program(record_program, {"HOOKSCOPE_STATS": f"step={missing}"}, "calls", "3")
    expect("stats: an unopenable file is reported, the table goes to the log", err[:1],
           [f"hookscope: HOOKSCOPE_STATS: '{missing}': its directory does not exist (expected a path to a file that "
            "can be written); the table goes to the log instead"])
    expect("...and the table follows", parse_table(err[1:], STATS)["step"][0], 3)


def test_all_four_variables_at_once(record_program, enabled, tmp_path):
    timeline, records = tmp_path / "all.json", tmp_path / "all.jsonl"
    code, out, err = run_program(record_program, {"HOOKSCOPE_TIMELINE": f"step={timeline}", "HOOKSCOPE_STATS": "step",
                                                  "HOOKSCOPE_TRACE": "step", "HOOKSCOPE_RECORD": f"step={records}"})
    with Checks() as check:
        check.expect("all four variables at once: the program's output unchanged", (code, out),
                     (0, "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n"))
        check.expect("...the trace", [line for line in err if line.startswith("hookscope: trace: ")],
                     ["hookscope: trace: step(n=1)", "hookscope: trace: step returned 2", "hookscope: trace: step(n=2)",
                      "hookscope: trace: step returned 3"])
        check.expect("...the statistics", parse_table(err, STATS)["step"][0], 2)
        check.expect("...the records", len(records.read_text(encoding="utf-8").splitlines()), 2)
        check.expect("...the timeline", len(complete_events(load(timeline))), 2)
