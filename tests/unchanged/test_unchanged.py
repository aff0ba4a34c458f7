"""A tracer never changes the program it traces: each row runs a real program (built by tests/meson.build) without
hookscope's variables and then under each of HOOKSCOPE_RECORD, HOOKSCOPE_TRACE, HOOKSCOPE_STATS and
HOOKSCOPE_TIMELINE (and all four at once), and requires the same exit status, the same standard output and the same
standard error but for hookscope's own lines. Then what the features wrote is checked: every record line read back
by the library's reader and by Python's strict json, the timeline strict JSON and UTF-8, and no byte of memory the
program did not hand over (a row's `secret`) in any file or message.

A row holds the program's name (the `--program NAME=PATH` options), its arguments (`{NAME}` stands for the path of
another `--program`, such as a plugin), the glob that selects its functions and what each feature must have seen
(calls per function; the parameters every timeline event names).
"""
import json
import os
import subprocess
from dataclasses import dataclass, field

import pytest

from support import Checks, program_stderr, run

FEATURES = ("RECORD", "TRACE", "STATS", "TIMELINE", "all")
MAX_RECORD_LINE_BYTES = 64 << 20  # hookscope::max_record_line_bytes


@dataclass(frozen=True)
class Row:
    name: str
    program: str
    args: tuple
    glob: str = "*"
    calls: dict = field(default_factory=dict)  # function name -> how many calls every feature must see
    params: dict = field(default_factory=dict)  # function name -> parameters each timeline event names (or counts)
    secret: bytes | None = None  # bytes next to what the program handed over: never in any output
    recorded: tuple = ()  # bytes the record file must hold (RECORD)
    traced: tuple = ()  # text the trace must hold (TRACE)
    timeout: int = 120
    xfail: str | None = None  # the finding, while it is open (strict: the row fails the day it passes)
    xfail_features: tuple = FEATURES  # the features it concerns


ROWS = [
    Row("device pointers: a kernel launcher given addresses the CPU cannot read", "unchanged", ("device_pointers",),
        calls={"kernels::launch": 2}, recorded=(b'"address":"0x',), traced=("(d_in=0x",)),
    Row("a buffer with a length that ends at an unmapped page", "unchanged", ("buffer_at_unmapped_page",),
        calls={"text::count_lines": 1}, recorded=(b'"address":"0x',)),
    Row("a buffer with a length followed by a password", "unchanged", ("buffer_before_secret",),
        calls={"text::count_lines": 1}, secret=b"hunter2"),
    Row("a one-pass range: a subrange of istreambuf_iterator", "unchanged", ("one_pass_stream",),
        calls={"text::count_chars": 1}),
    Row("a one-pass range: std::filesystem::directory_iterator", "unchanged", ("one_pass_directory",),
        calls={"files::count_entries": 1}),
    Row("a C string asked for with *path: read when it can be, unreadable when it cannot", "unchanged",
        ("opted_in_c_string",), calls={"sys::open_file": 2},
        recorded=(b'{"str":"/tmp/hookscope-opted-in"}', b'"unreadable":true'),
        traced=('path="/tmp/hookscope-opted-in"', " (unreadable)")),
    Row("a class overloading unary operator&", "unchanged", ("overloaded_address_of",),
        calls={"com_ptr::value": 1}),
    Row("a class deleting unary operator&", "methods", ("deleted_address_of",), calls={"store::sealed::scaled": 2}),
    Row("ref-qualified methods on lvalues, moved objects and temporaries", "methods", ("ref_qualified_methods",),
        calls={"store::buffer::size": 1, "store::buffer::peek": 2, "store::buffer::measure": 1,
               "store::buffer::release": 2}),
    Row("a pair of overloads by ref-qualifier", "methods", ("ref_qualified_overload",),
        calls={"store::buffer::take_copy": 2, "store::buffer::take_moved": 1}),
    Row("ref-qualified methods with arguments left to their defaults", "methods", ("ref_qualified_defaults",),
        calls={"store::buffer::take_copy": 1, "store::buffer::take_moved": 1, "store::buffer::slice": 2}),
    Row("a 100 MiB string and 2.5 M floats in one call", "unchanged", ("large_argument",),
        calls={"text::total_size": 1}, timeout=600, recorded=(b'"too_large":true',)),
    Row("24 arguments of 3 MiB in one call: 72 MiB together", "unchanged", ("many_medium_arguments",),
        calls={"text::sum_sizes": 2}, timeout=600),
    Row("long strings in arguments", "unchanged", ("long_strings",), calls={"text::greet": 2},
        params={"text::greet": ("name", "times")}),
    Row("fibers: calls suspend mid-call while other calls run on their thread, and end there", "fibers",
        ("same_thread", "3"), calls={"suspending": 6, "work": 12, "outer": 3}),
    Row("fibers: a call suspends mid-call and ends on another thread", "fibers", ("other_thread", "3"),
        calls={"suspending": 6, "work": 12, "outer": 3}),
    Row("glob brackets select ns::step", "unchanged", ("glob_brackets",), glob="ns::st[e]p", calls={"ns::step": 3}),
    Row("a dlopen()ed plugin linked with the static library, both called from two threads", "plugin",
        ("20", "{plugin_a}"), glob="*::work", calls={"host::work": 80, "plugin_a::work": 80}),
    Row("two dlopen()ed plugins, each linked with the static library", "plugin", ("20", "{plugin_a}", "{plugin_b}"),
        glob="*::work", calls={"host::work": 120, "plugin_a::work": 80, "plugin_b::work": 80}),
]


def settings(feature, glob, tmp_path):
    """The variables of `feature` for functions matching `glob`, writing into tmp_path."""
    each = {
        "RECORD": {"HOOKSCOPE_RECORD": f"{glob}={tmp_path / 'records.jsonl'}"},
        "TRACE": {"HOOKSCOPE_TRACE": glob},
        "STATS": {"HOOKSCOPE_STATS": f"{glob}={tmp_path / 'stats.txt'}"},
        "TIMELINE": {"HOOKSCOPE_TIMELINE": f"{glob}={tmp_path / 'timeline.json'}"},
    }
    if feature == "all":
        return {k: v for one in each.values() for k, v in one.items()}
    return each[feature]


def own_lines(stderr):
    """The program's own standard error: hookscope's lines (and a sanitizer's notes) left out."""
    return [line for line in program_stderr(stderr) if not line.startswith("hookscope: ")]


def strict_json(data, what):
    text = data.decode("utf-8")  # strict: bytes that are not UTF-8 raise
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{what}: {c} is not JSON"))


def check_outputs(check, row, feature, tmp_path, stderr, hookscope_shapes):
    """What the features wrote: readable, complete (row.calls), holding no secret."""
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    if row.secret is not None:
        for name, data in [*written.items(), ("stderr", stderr.encode("utf-8", "surrogateescape"))]:
            check.require(row.secret not in data, f"{name} holds bytes the program never handed over: {row.secret!r}")
    if feature in ("RECORD", "all"):
        lines = written.get("records.jsonl", b"").splitlines()
        longest = max(map(len, lines), default=0)
        check.require(longest <= MAX_RECORD_LINE_BYTES, f"a record line of {longest} bytes, over the format's limit")
        records = [strict_json(line, "records.jsonl") for line in lines]
        seen = {}
        for r in records:
            seen[r["function"]] = seen.get(r["function"], 0) + 1
        check.expect("records per function", seen, row.calls)
        for part in row.recorded:
            check.require(part in written.get("records.jsonl", b""), f"records.jsonl holds no {part!r}")
        for function in row.calls:
            done = subprocess.run([hookscope_shapes, "summarize", str(tmp_path / "records.jsonl"), "--function",
                                   function, "-o", os.devnull], capture_output=True, text=True, timeout=row.timeout)
            check.expect(f"the library's reader on the records of {function}", (done.returncode, done.stderr),
                         (0, ""))
    if feature in ("TRACE", "all"):
        traced = {}
        for line in stderr.splitlines():
            if line.startswith("hookscope: trace: ") and "(" in line:
                name = line[len("hookscope: trace: "):].split("(", 1)[0]
                traced[name] = traced.get(name, 0) + 1
        check.expect("calls traced per function", traced, row.calls)
        for part in row.traced:
            check.require(part in stderr, f"the trace holds no {part!r}")
    if feature in ("STATS", "all"):
        counted = {}
        for line in written.get("stats.txt", b"").decode("utf-8").splitlines()[1:]:
            name, calls = line.split()[:2]
            counted[name] = int(calls)
        check.expect("calls counted per function", counted, row.calls)
    if feature in ("TIMELINE", "all"):
        trace = strict_json(written.get("timeline.json", b"{}"), "timeline.json")
        events = {}
        for e in trace.get("traceEvents", []):
            if e["ph"] in ("X", "b"):
                events[e["name"]] = events.get(e["name"], 0) + 1
                if e["name"] in row.params:
                    args = {k: v for k, v in e.get("args", {}).items() if k != "threw"}
                    kept = [k for k in args if k != "\u2026"]
                    counted = int(args.get("\u2026", "0 more").split()[0])
                    check.expect(f"{e['name']}: every parameter named or counted in the timeline",
                                 (kept, len(kept) + counted), (list(row.params[e["name"]][:len(kept)]),
                                                               len(row.params[e["name"]])))
        check.expect("timeline events per function", events, row.calls)


CASES = [pytest.param(row, feature, id=f"{row.name} [{feature}]") for row in ROWS for feature in FEATURES]


_baselines = {}


def baseline(argv, timeout):
    """The program's run without any hookscope variable (once per row)."""
    key = tuple(argv)
    if key not in _baselines:
        _baselines[key] = run(argv, timeout=timeout, errors="surrogateescape")
    return _baselines[key]


def run_compared(check, request, programs, hooks_enabled, row, feature, tmp_path):
    """Runs the row's program under `feature`, checks it behaves as without any variable, returns the run. A row's
    open finding is a strict xfail, with hooks enabled only: compiled out, nothing observes and every row passes."""
    if row.xfail and feature in row.xfail_features and hooks_enabled:
        request.applymarker(pytest.mark.xfail(strict=True, reason=row.xfail))
    argv = [programs[row.program], *(arg.format_map(programs) for arg in row.args)]
    alone = baseline(argv, row.timeout)
    observed = run(argv, settings(feature, row.glob, tmp_path), timeout=row.timeout, errors="surrogateescape")
    check.expect("the exit status", observed.returncode, alone.returncode)
    check.expect("standard output", observed.stdout, alone.stdout)
    check.expect("the program's own standard error", own_lines(observed.stderr), own_lines(alone.stderr))
    return observed


@pytest.mark.parametrize("row, feature", CASES)
def test_program_unchanged(request, programs, hooks_enabled, hookscope_shapes, tmp_path, row, feature):
    with Checks() as check:
        observed = run_compared(check, request, programs, hooks_enabled, row, feature, tmp_path)
        if hooks_enabled:
            check_outputs(check, row, feature, tmp_path, observed.stderr, hookscope_shapes)
