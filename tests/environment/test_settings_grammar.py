"""The grammar of every HOOKSCOPE_* variable against a table of hostile values (tests/record_program.cpp, `calls 3`):
each value either works or gives exactly one message naming the variable, the entry and what was expected, and the
program runs on. Paths that are directories, dangling symbolic links, FIFOs without a reader, /dev/full, and bytes
that are not UTF-8 are in the table."""
import os

import pytest

from support import Checks, expect, run

RECORD = "<glob>=<path>[max_calls=N;every=N], N from 1 to 10^18, options separated by ';'"
STATS = "<glob>[,<glob>...][=<path>]"
TIMELINE = "<glob>[,<glob>...]=<path>[events=N], N from 1 to 1048576"
TRACE = "<glob>[,<glob>...]"
FILE = "a path to a file that can be written"


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the environment features out (test_record_env.py checks that)")


def message(variable, entry, problem, expected, consequence):
    return f"hookscope: {variable}: '{entry}': {problem} (expected {expected}); {consequence}"


def run_calls(program, variable, value):
    """record_program calls 3 under `variable`; (exit code, stderr lines other than the statistics table)."""
    done = run([program, "calls", "3"], {variable: value}, timeout=60)
    return done.returncode, [line for line in done.stderr.splitlines() if not line.startswith("hookscope: stats: ")]


# (variable, value, the messages: value and messages with {tmp} for the test's directory)
MALFORMED = [
    # HOOKSCOPE_RECORD
    ("HOOKSCOPE_RECORD", "step", [message("HOOKSCOPE_RECORD", "step", "no '='", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "=x.jsonl", [message("HOOKSCOPE_RECORD", "=x.jsonl", "no glob", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step=", [message("HOOKSCOPE_RECORD", "step=", "no path", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3,every=2]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3,every=2]",
              "a ',' between options (they are separated by ';')", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r[]", "empty brackets", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3;;every=2]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3;;every=2]", "an empty option", RECORD,
              "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[often=4]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r[often=4]", "unknown option 'often=4'", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[every=2;every=3]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r[every=2;every=3]", "option 'every' given twice", RECORD,
              "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3", [message(
        "HOOKSCOPE_RECORD", "step={tmp}/r[max_calls=3", "options must close the entry, in one pair of brackets",
        RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r[every=2]x", [message(
        "HOOKSCOPE_RECORD", "step={tmp}/r[every=2]x", "options must close the entry, in one pair of brackets",
        RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r]",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r]", "a ']' without '['", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}",
     [message("HOOKSCOPE_RECORD", "step={tmp}", "it is a directory", FILE, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "step={tmp}/fifo",
     ["hookscope: HOOKSCOPE_RECORD: {tmp}/fifo: cannot open it for writing (No such device or address); its calls "
      "are not recorded"]),
    ("HOOKSCOPE_RECORD", "step={tmp}/fifo\udcff",  # a path that is not UTF-8, shown with \xNN
     ["hookscope: HOOKSCOPE_RECORD: {tmp}/fifo\\xff: cannot open it for writing (No such device or address); its "
      "calls are not recorded"]),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/fifo\udcff",
     ["hookscope: HOOKSCOPE_TIMELINE: {tmp}/fifo\\xff: cannot open it for writing (No such device or address)"]),
    ("HOOKSCOPE_RECORD", "step={tmp}/r,,forward={tmp}/f",
     [message("HOOKSCOPE_RECORD", "step={tmp}/r,,forward={tmp}/f", "an empty entry", RECORD,
              "the empty entry is ignored")]),
    # HOOKSCOPE_STATS
    ("HOOKSCOPE_STATS", "step={tmp}/s,other", [message(
        "HOOKSCOPE_STATS", "step={tmp}/s", "'=<path>' before another entry: the path follows the last glob", STATS,
        "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "step,,other",
     [message("HOOKSCOPE_STATS", "step,,other", "an empty entry", STATS, "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "={tmp}/s",
     [message("HOOKSCOPE_STATS", "={tmp}/s", "no glob before '='", STATS, "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "step=", [message("HOOKSCOPE_STATS", "step=", "nothing after '='", STATS,
                                          "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "step={tmp}",
     [message("HOOKSCOPE_STATS", "{tmp}", "it is a directory", FILE, "the table goes to the log instead")]),
    ("HOOKSCOPE_STATS", "step={tmp}/fifo",
     [message("HOOKSCOPE_STATS", "{tmp}/fifo", "cannot open it for writing: No such device or address", FILE,
              "the table goes to the log instead")]),
    ("HOOKSCOPE_STATS", "step=/dev/full",
     ["hookscope: HOOKSCOPE_STATS: /dev/full: cannot write to it (No space left on device)"]),
    # HOOKSCOPE_TIMELINE
    ("HOOKSCOPE_TIMELINE", "step", [message("HOOKSCOPE_TIMELINE", "step", "no path", TIMELINE,
                                            "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "step=", [message("HOOKSCOPE_TIMELINE", "step=", "nothing after '='", TIMELINE,
                                             "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "={tmp}/t", [message("HOOKSCOPE_TIMELINE", "={tmp}/t", "no glob before '='", TIMELINE,
                                                "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/t,other", [message(
        "HOOKSCOPE_TIMELINE", "step={tmp}/t", "'=<path>' before another entry: the path follows the last glob",
        TIMELINE, "the variable is ignored")]),
] + [
    ("HOOKSCOPE_TIMELINE", f"step={{tmp}}/t[{option}]", [message(
        "HOOKSCOPE_TIMELINE", f"step={{tmp}}/t[{option}]", "not an option [events=N] with N in bounds", TIMELINE,
        "the variable is ignored")])
    for option in ["events=0", "events=-1", "events=1048577", "events=99999999999999999999", "events=", "often=3",
                   "events=1e3", " "]
] + [
    ("HOOKSCOPE_TIMELINE", "step=t]", [message("HOOKSCOPE_TIMELINE", "step=t]",
                                               "not an option [events=N] with N in bounds", TIMELINE,
                                               "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "step={tmp}",
     [message("HOOKSCOPE_TIMELINE", "{tmp}", "it is a directory", FILE, "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/missing/t",
     [message("HOOKSCOPE_TIMELINE", "{tmp}/missing/t", "its directory does not exist", FILE,
              "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/fifo",
     ["hookscope: HOOKSCOPE_TIMELINE: {tmp}/fifo: cannot open it for writing (No such device or address)"]),
    ("HOOKSCOPE_TIMELINE", "step=/dev/full",
     ["hookscope: HOOKSCOPE_TIMELINE: /dev/full: cannot write to it (No space left on device)"]),
    # HOOKSCOPE_TRACE
    ("HOOKSCOPE_TRACE", "step={tmp}/t", [message("HOOKSCOPE_TRACE", "step={tmp}/t",
                                                 "a '=' (the trace goes to the log, not to a file)", TRACE,
                                                 "the variable is ignored")]),
    ("HOOKSCOPE_TRACE", "step,,forward",
     [message("HOOKSCOPE_TRACE", "step,,forward", "an empty entry", TRACE, "the variable is ignored")]),
    # bytes that are not UTF-8, and control characters, are shown as \xNN in the message
    ("HOOKSCOPE_RECORD", "st\udcffep\x01", [message("HOOKSCOPE_RECORD", "st\\xffep\\x01", "no '='", RECORD,
                                                    "the entry is ignored")]),
]


@pytest.mark.parametrize("variable, value, messages", MALFORMED, ids=[f"{v}={x}" for v, x, _ in MALFORMED])
def test_malformed_value_gives_one_message(record_program, enabled, tmp_path, variable, value, messages):
    os.mkfifo(tmp_path / "fifo")  # nobody reads it: opening it for writing must not wait for a reader
    os.mkfifo(os.fsencode(tmp_path) + b"/fifo\xff")
    value = value.format(tmp=tmp_path)
    code, logged = run_calls(record_program, variable, value)
    expect(f"{variable}={value!r}: one message, the program runs on", (code, logged),
           (0, [m.format(tmp=tmp_path) for m in messages]))


# Values that work: (variable, value, the file it writes, relative to the test's directory, or None)
WORKING = [
    ("HOOKSCOPE_RECORD", "", None),
    ("HOOKSCOPE_STATS", "  ", None),
    ("HOOKSCOPE_RECORD", "step={tmp}/r.jsonl[max_calls=1000000000000000000;every=1]", "r.jsonl"),
    ("HOOKSCOPE_RECORD", "step={tmp}/link.jsonl", "target.jsonl"),  # a dangling symbolic link: its target is made
    ("HOOKSCOPE_RECORD", "st\udcffep={tmp}/x,step={tmp}/r.jsonl", "r.jsonl"),  # a glob not UTF-8 matches nothing
    ("HOOKSCOPE_RECORD", "step={tmp}/r\udcff.jsonl", "r\udcff.jsonl"),
    ("HOOKSCOPE_STATS", "step,step={tmp}/s.txt", "s.txt"),
    ("HOOKSCOPE_STATS", "step={tmp}/link.jsonl", "target.jsonl"),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/t.json[events=1048576]", "t.json"),
    ("HOOKSCOPE_TIMELINE", "st\udcffep,step={tmp}/t\udcff.json[ events=1 ]", "t\udcff.json"),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/link.jsonl", "target.jsonl"),
    ("HOOKSCOPE_TRACE", "nothing_matches_this", None),
]


@pytest.mark.parametrize("variable, value, written", WORKING, ids=[f"{v}={x!r}" for v, x, _ in WORKING])
def test_hostile_value_that_works(record_program, enabled, tmp_path, variable, value, written):
    os.symlink(tmp_path / "target.jsonl", tmp_path / "link.jsonl")
    value = value.format(tmp=tmp_path)
    code, logged = run_calls(record_program, variable, value)
    with Checks() as check:
        check.expect(f"{variable}={value!r}: nothing logged", (code, logged), (0, []))
        if written is not None:
            check.expect(f"{variable}={value!r}: the file written", os.path.getsize(tmp_path / written) > 0, True)
