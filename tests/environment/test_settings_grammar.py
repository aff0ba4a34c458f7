"""The grammar of every HOOKSCOPE_* variable against a table of hostile values (tests/record_program.cpp, `calls 3`):
each value either works or gives exactly one message naming the variable, the entry and what was expected, and the
program runs on. Paths that are directories, dangling symbolic links, FIFOs without a reader, /dev/full, and bytes
that are not UTF-8 are in the table; so are globs with brackets (`st[e]p`, `[!x]`, a `]` first in a class, `=` and
`,` inside a class) and paths with brackets, in every variable: one grammar (docs/environment.md, "Grammar")."""
import json
import os

import pytest

from support import Checks, expect, run

RECORD = "<glob>=<path>[max_calls=N;every=N;buffer=SIZE;full=wait|drop], N from 1 to 10^18, SIZE from 64K to 1G, options separated by ';'"
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
                   "events=1e3"]
] + [
    ("HOOKSCOPE_TIMELINE", "step=t]", [message("HOOKSCOPE_TIMELINE", "step=t]", "a ']' without '['", TIMELINE,
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
    # brackets: in a glob they are a class, after the path they are options that close the entry
    ("HOOKSCOPE_RECORD", "st[e]p={tmp}/r[every=2]x", [message(
        "HOOKSCOPE_RECORD", "st[e]p={tmp}/r[every=2]x", "options must close the entry, in one pair of brackets",
        RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "st[e]p={tmp}/r[every=2][max_calls=3]", [message(
        "HOOKSCOPE_RECORD", "st[e]p={tmp}/r[every=2][max_calls=3]",
        "options must close the entry, in one pair of brackets", RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "[=]x={tmp}/r[often=2]",
     [message("HOOKSCOPE_RECORD", "[=]x={tmp}/r[often=2]", "unknown option 'often=2'", RECORD,
              "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "st[e]p={tmp}/r[1]", [message("HOOKSCOPE_RECORD", "st[e]p={tmp}/r[1]", "unknown option '1'",
                                                      RECORD, "the entry is ignored")]),
    ("HOOKSCOPE_RECORD", "st[e,]p", [message("HOOKSCOPE_RECORD", "st[e,]p", "no '='", RECORD,
                                             "the entry is ignored")]),
    ("HOOKSCOPE_STATS", "st[e]p={tmp}/s[every=2]",
     [message("HOOKSCOPE_STATS", "st[e]p={tmp}/s[every=2]", "options in brackets (HOOKSCOPE_STATS takes none)", STATS,
              "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "[!x]tep={tmp}/s]",
     [message("HOOKSCOPE_STATS", "[!x]tep={tmp}/s]", "a ']' without '['", STATS, "the variable is ignored")]),
    ("HOOKSCOPE_STATS", "st[=]p={tmp}/s,step", [message(
        "HOOKSCOPE_STATS", "st[=]p={tmp}/s", "'=<path>' before another entry: the path follows the last glob", STATS,
        "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "st[e]p={tmp}/t[events=2]x", [message(
        "HOOKSCOPE_TIMELINE", "st[e]p={tmp}/t[events=2]x", "options must close the entry, in one pair of brackets",
        TIMELINE, "the variable is ignored")]),
    ("HOOKSCOPE_TIMELINE", "[]s]tep={tmp}/t[events=0]", [message(
        "HOOKSCOPE_TIMELINE", "[]s]tep={tmp}/t[events=0]", "not an option [events=N] with N in bounds", TIMELINE,
        "the variable is ignored")]),
    ("HOOKSCOPE_TRACE", "st[e]p=x", [message("HOOKSCOPE_TRACE", "st[e]p=x",
                                             "a '=' (the trace goes to the log, not to a file)", TRACE,
                                             "the variable is ignored")]),
    ("HOOKSCOPE_TRACE", "st[e]p,,x", [message("HOOKSCOPE_TRACE", "st[e]p,,x", "an empty entry", TRACE,
                                              "the variable is ignored")]),
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
    ("HOOKSCOPE_TIMELINE", "st\udcffep,step={tmp}/t\udcff.json[ events=3 ]", "t\udcff.json"),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/link.jsonl", "target.jsonl"),
    ("HOOKSCOPE_TRACE", "nothing_matches_this", None),
    # brackets that are no options: `[]` (no options) lets a path end in `]`; a group without `=` is part of a path
    ("HOOKSCOPE_RECORD", "step={tmp}/r[]", "r"),
    ("HOOKSCOPE_RECORD", "step={tmp}/run[3].jsonl[]", "run[3].jsonl"),
    ("HOOKSCOPE_RECORD", "step={tmp}/d[1]/r.jsonl[every=2]", "d[1]/r.jsonl"),
    ("HOOKSCOPE_STATS", "step={tmp}/s[1][]", "s[1]"),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/t[ ]", "t"),
    ("HOOKSCOPE_TIMELINE", "step={tmp}/d[1]/t.json[events=3]", "d[1]/t.json"),
]


# (A timeline's ring holds the 3 calls: one that holds fewer says so at exit, test_stats_timeline.py.)
@pytest.mark.parametrize("variable, value, written", WORKING, ids=[f"{v}={x!r}" for v, x, _ in WORKING])
def test_hostile_value_that_works(record_program, enabled, tmp_path, variable, value, written):
    os.symlink(tmp_path / "target.jsonl", tmp_path / "link.jsonl")
    os.mkdir(tmp_path / "d[1]")
    value = value.format(tmp=tmp_path)
    code, logged = run_calls(record_program, variable, value)
    with Checks() as check:
        check.expect(f"{variable}={value!r}: nothing logged", (code, logged), (0, []))
        if written is not None:
            check.expect(f"{variable}={value!r}: the file written", os.path.getsize(tmp_path / written) > 0, True)


# Globs with brackets in every variable and every position, each matching `step` of record_program (`calls 3`: step(0)
# to step(2)) and nothing else: (variable, value). The outputs say which functions each one observed.
BRACKET_GLOBS = [
    ("HOOKSCOPE_RECORD", "st[e]p={tmp}/out"),
    ("HOOKSCOPE_RECORD", "[rs]tep={tmp}/out"),
    ("HOOKSCOPE_RECORD", "[!x]t[!x]p={tmp}/out[max_calls=5]"),
    ("HOOKSCOPE_RECORD", "st[]e]p={tmp}/out"),  # a `]` first in a class is a member
    ("HOOKSCOPE_RECORD", "st[=e]p={tmp}/out"),  # `=` inside a class
    ("HOOKSCOPE_RECORD", "st[,e]p={tmp}/out,forw[!,]rd={tmp}/other"),  # `,` inside a class
    ("HOOKSCOPE_RECORD", "st[[:lower:]]p={tmp}/out"),
    ("HOOKSCOPE_STATS", "st[e]p"),
    ("HOOKSCOPE_STATS", "[rs]tep,[!x]tep={tmp}/out"),
    ("HOOKSCOPE_STATS", "st[]e]p,st[=,e]p={tmp}/out"),
    ("HOOKSCOPE_TIMELINE", "st[e]p={tmp}/out"),
    ("HOOKSCOPE_TIMELINE", "[rs]tep,[!x]tep={tmp}/out[events=4]"),
    ("HOOKSCOPE_TIMELINE", "st[]e]p,st[=,e]p={tmp}/out"),
    ("HOOKSCOPE_TRACE", "st[e]p"),
    ("HOOKSCOPE_TRACE", "[rs]tep,[!x]tep"),
    ("HOOKSCOPE_TRACE", "st[]e]p,st[=,e]p"),
]


def observed(variable, logged, path):
    """{function: calls} that `variable` wrote into `path` or the log."""
    seen = {}
    if variable == "HOOKSCOPE_RECORD":
        for line in path.read_text(encoding="utf-8").splitlines():
            name = json.loads(line)["function"]
            seen[name] = seen.get(name, 0) + 1
    elif variable == "HOOKSCOPE_STATS":
        prefix = "" if path.exists() else "hookscope: stats: "
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else logged
        for row in [line[len(prefix):].split() for line in lines if line.startswith(prefix)][1:]:
            seen[row[0]] = int(row[1])
    elif variable == "HOOKSCOPE_TIMELINE":
        with open(path, encoding="utf-8") as f:
            for e in json.load(f)["traceEvents"]:
                if e["ph"] == "X":
                    seen[e["name"]] = seen.get(e["name"], 0) + 1
    else:
        for line in logged:
            name = line.removeprefix("hookscope: trace: ").split("(")[0]
            if "(" in line:
                seen[name] = seen.get(name, 0) + 1
    return seen


@pytest.mark.parametrize("variable, value", BRACKET_GLOBS, ids=[f"{v}={x}" for v, x in BRACKET_GLOBS])
def test_brackets_in_globs(record_program, enabled, tmp_path, variable, value):
    value = value.format(tmp=tmp_path)
    done = run([record_program, "calls", "3"], {variable: value}, timeout=60)
    logged = done.stderr.splitlines()
    with Checks() as check:
        check.expect(f"{variable}={value!r}: exit 0, no message",
                     (done.returncode, [line for line in logged
                                        if not line.startswith(("hookscope: stats: ", "hookscope: trace: "))]),
                     (0, []))
        check.expect(f"{variable}={value!r}: step's three calls observed, nothing else",
                     observed(variable, logged, tmp_path / "out"), {"step": 3})


def test_record_glob_with_brackets_in_a_namespace(edge_case_program, enabled, tmp_path):
    """HOOKSCOPE_RECORD='ns::st[e]p=FILE' records ns::step (a glob with brackets and a scope)."""
    path = tmp_path / "ns.jsonl"
    done = run([edge_case_program, "ns_step", "4"], {"HOOKSCOPE_RECORD": f"ns::st[e]p={path}"}, timeout=60)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    expect("ns::st[e]p: ns::step's four calls recorded, nothing logged",
           (done.returncode, done.stdout, done.stderr, [(r["function"], r["kwargs"]) for r in records]),
           (0, "calls 4\n", "", [("ns::step", [["n", {"int": i}]]) for i in range(4)]))


# Values made only of separators. docs/environment.md: anything that does not follow the grammar gives **one** line,
# and HOOKSCOPE_TRACE, HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE are then ignored whole: one line for the first problem,
# however many parts are empty.
ONLY_SEPARATORS = [(variable, value) for variable in ("HOOKSCOPE_TRACE", "HOOKSCOPE_STATS", "HOOKSCOPE_TIMELINE")
                   for value in (",", ",,", " , ", "=", ",=")]


@pytest.mark.parametrize("variable, value", ONLY_SEPARATORS, ids=[f"{v}={x!r}" for v, x in ONLY_SEPARATORS])
def test_value_of_separators_gives_one_message(record_program, enabled, variable, value):
    code, logged = run_calls(record_program, variable, value)
    expect(f"{variable}={value!r}: one message, the program runs on", (code, len(logged)), (0, 1))


# An empty option is refused wherever it is: `[;every=2]` and `[every=2;]` alike.
def test_trailing_empty_option_is_refused_as_a_leading_one(record_program, enabled, tmp_path):
    leading = run_calls(record_program, "HOOKSCOPE_RECORD", f"step={tmp_path}/a.jsonl[;every=2]")
    trailing = run_calls(record_program, "HOOKSCOPE_RECORD", f"step={tmp_path}/b.jsonl[every=2;]")
    expect("an empty option, first or last: refused alike, one message each",
           ([len(leading[1]), (tmp_path / "a.jsonl").exists()], [len(trailing[1]), (tmp_path / "b.jsonl").exists()]),
           ([1, False], [1, False]))
