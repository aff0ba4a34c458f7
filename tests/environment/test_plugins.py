"""Several copies of the library in one process: tests/environment/plugin_program.cpp dlopen()s plugins
(plugin_module.cpp built as plugin_a and plugin_b), each linked with the static library, and calls its own annotated
function (host::work) and the plugins' (plugin_a::work, plugin_b::work) from two threads, the plugins calling the
program's too. Under HOOKSCOPE_TIMELINE, HOOKSCOPE_STATS and HOOKSCOPE_RECORD (each alone and all together, with
HOOKSCOPE_TRACE): one timeline file holding every module's events exactly once (strict JSON), one statistics table
holding every module's functions, records of every module; with two plugins, a plugin opened twice, a fork after
loading, the plugins closed before exit, SIGTERM; a program without hookscope whose plugins alone hold copies; a
module that looks like another version of hookscope (docs/environment.md, "Several copies of the library")."""
import collections
import json
import os
import re
import signal

import pytest

from support import Checks, expect, run

N = 40  # rounds per thread
STATS = "hookscope: stats: "
TRACE = "hookscope: trace: "


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the environment features out (test_record_env.py checks that)")


@pytest.fixture
def plugins(plugin_a, plugin_b):
    return {"a": plugin_a, "b": plugin_b}


def expected_calls(names, rounds=N):
    """{function: calls} of one process: two threads, each `rounds` rounds of host::work, then per plugin its work()
    and its run() (the plugin's work() and host::work)."""
    out = {"host::work": 2 * rounds * (1 + len(names))}
    out.update({f"plugin_{name}::work": 2 * rounds * 2 for name in names})
    return out


def expected_sum(names, rounds=N):
    per_thread = sum(i + 1 for i in range(rounds))
    per_thread += sum(2 * (2 * i + 1) + (i + 1) for i in range(rounds)) * len(names)
    return 2 * per_thread


def strict_json(path):
    """The document at `path`: valid UTF-8, strict JSON, no lone surrogate."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    text.encode("utf-8")
    return json.loads(text)


def timeline_calls(path):
    """{function: events} of a timeline (complete events and async pairs), and the events; async ids unique."""
    document = strict_json(path)["traceEvents"]
    events = [e for e in document if e["ph"] in ("X", "b")]
    ids = [e["id"] for e in document if e["ph"] == "b"]
    assert len(ids) == len(set(ids)), f"{path}: async pair ids given twice"
    return dict(collections.Counter(e["name"] for e in events)), events


def stats_tables(lines, prefix):
    """Each table in `lines` as {function: calls}."""
    tables = []
    for line in lines:
        if not line.startswith(prefix):
            continue
        row = line[len(prefix):].split()
        if row[0] == "function":
            tables.append({})
        else:
            tables[-1][row[0]] = int(row[1])
    return tables


def record_calls(path):
    counts = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            counts[json.loads(line)["function"]] += 1
    return dict(counts)


# (flags, plugins) of plugin_program
SCENARIOS = {
    "one plugin": ([], ["a"]),
    "two plugins": ([], ["a", "b"]),
    "a plugin opened twice": (["--twice"], ["a", "b"]),
    "plugins closed before exit": (["--dlclose"], ["a", "b"]),
    "a fork after loading": (["--fork"], ["a", "b"]),
    "SIGTERM": (["--sigterm"], ["a", "b"]),
}
VARIABLES = ["HOOKSCOPE_TIMELINE", "HOOKSCOPE_STATS", "HOOKSCOPE_RECORD", "all four"]


def settings_for(variable, tmp_path):
    timeline = f"*::work={tmp_path}/t%p.json"
    record = f"*::work={tmp_path}/r.jsonl"
    stats = "*::work"
    if variable == "HOOKSCOPE_TIMELINE":
        return {variable: timeline}
    if variable == "HOOKSCOPE_STATS":
        return {variable: stats}
    if variable == "HOOKSCOPE_RECORD":
        return {variable: record}
    return {"HOOKSCOPE_TIMELINE": timeline, "HOOKSCOPE_STATS": stats, "HOOKSCOPE_RECORD": record,
            "HOOKSCOPE_TRACE": "*::work"}


@pytest.mark.parametrize("variable", VARIABLES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_module_in_every_output(plugin_program, plugins, enabled, tmp_path, scenario, variable):
    flags, names = SCENARIOS[scenario]
    settings = settings_for(variable, tmp_path)
    done = run([plugin_program, N, *flags, *(plugins[n] for n in names)], settings, timeout=120)
    plain = run([plugin_program, N, *flags, *(plugins[n] for n in names)], {}, timeout=120)
    processes = 2 if "--fork" in flags else 1
    calls = expected_calls(names)
    lines = done.stderr.splitlines()
    with Checks() as check:
        check.expect(f"{scenario}, {variable}: exit status and stdout as without the variables",
                     (done.returncode, done.stdout), (plain.returncode, plain.stdout))
        check.expect(f"{scenario}: the program's results", plain.stdout.split()[-1], str(expected_sum(names)))
        check.expect(f"{scenario}: the program ends as it should", plain.returncode,
                     -signal.SIGTERM if "--sigterm" in flags else 0)
        check.expect(f"{scenario}, {variable}: no message",
                     [line for line in lines if not line.startswith((STATS, TRACE))], [])
        if "HOOKSCOPE_TIMELINE" in settings:
            files = sorted(p for p in os.listdir(tmp_path) if p.startswith("t"))
            check.expect(f"{scenario}: one timeline file per process", len(files), processes)
            for name in files:
                counts, events = timeline_calls(tmp_path / name)
                check.expect(f"{scenario}, {name}: every module's calls, each once", counts, calls)
                check.expect(f"{scenario}, {name}: the calls of both threads, in one process",
                             (len({e["tid"] for e in events}), len({e["pid"] for e in events})), (2, 1))
        if "HOOKSCOPE_STATS" in settings:
            check.expect(f"{scenario}: one table per process, every module's functions in it",
                         stats_tables(lines, STATS), [calls] * processes)
        if "HOOKSCOPE_RECORD" in settings:
            check.expect(f"{scenario}: every module's calls recorded, each once",
                         record_calls(tmp_path / "r.jsonl"), {f: c * processes for f, c in calls.items()})
        if "HOOKSCOPE_TRACE" in settings:
            traced = collections.Counter(re.match(r"(\S+)\(", line[len(TRACE):]).group(1)
                                         for line in lines if line.startswith(TRACE) and "(" in line)
            check.expect(f"{scenario}: every module's calls traced", dict(traced),
                         {f: c * processes for f, c in calls.items()})


def test_stats_table_to_a_file(plugin_program, plugins, enabled, tmp_path):
    path = tmp_path / "s.txt"
    done = run([plugin_program, N, plugins["a"], plugins["b"]], {"HOOKSCOPE_STATS": f"*::work={path}"}, timeout=120)
    expect("stats to a file: nothing logged, one table of every module's functions",
           (done.returncode, done.stderr, stats_tables(path.read_text(encoding="utf-8").splitlines(), "")),
           (0, "", [expected_calls(["a", "b"])]))


def test_program_without_hookscope(plain_plugin_program, plugins, enabled, tmp_path):
    """The plugins alone hold copies: the first one loaded owns the files, the second joins it."""
    settings = {"HOOKSCOPE_TIMELINE": f"*::work={tmp_path}/t.json", "HOOKSCOPE_STATS": "*::work"}
    done = run([plain_plugin_program, N, plugins["a"], plugins["b"]], settings, timeout=120)
    calls = {f: c for f, c in expected_calls(["a", "b"]).items() if f != "host::work"}
    with Checks() as check:
        check.expect("no hookscope in the program: exit 0, stdout", (done.returncode, done.stdout),
                     (0, f"{expected_sum(['a', 'b'])}\n"))
        check.expect("no hookscope in the program: one timeline, both plugins' calls", timeline_calls(
            tmp_path / "t.json")[0], calls)
        check.expect("no hookscope in the program: one table, both plugins' functions",
                     stats_tables(done.stderr.splitlines(), STATS), [calls])


def test_records_of_calls_from_a_static_destructor_in_a_program_without_hookscope(plain_plugin_program, plugins,
                                                                                  enabled, tmp_path):
    """The plugins alone hold the library, loaded after the program's static objects were made: a destructor of one,
    which runs after the library's exit actions, starts a thread calling the plugins and joins it; every call is
    recorded, every line whole (docs/environment.md: calls made by static destructors are recorded)."""
    records = tmp_path / "r.jsonl"
    done = run([plain_plugin_program, N, "--at-exit", plugins["a"], plugins["b"]],
               {"HOOKSCOPE_RECORD": f"*::work={records}"}, timeout=120)
    lines = records.read_bytes().split(b"\n")
    at_exit = collections.Counter()
    for line in lines[:-1]:
        record = json.loads(line)
        n = record["kwargs"][0][1]["int"]
        if n >= 1000000:
            at_exit[record["function"]] += 1
    expect("calls from a static destructor's thread: exit 0, nothing logged, each recorded, the file whole",
           (done.returncode, done.stderr, dict(at_exit), lines[-1]),
           (0, "", {"plugin_a::work": int(N), "plugin_b::work": int(N)}, b""))


def test_another_version_loaded_first(plain_plugin_program, other_version_module, plugins, enabled, tmp_path):
    """A module with the note of another hub ABI, loaded first, writes the timeline's path (were it a real copy):
    this version's copies write a file named after the first of their modules, and say so once."""
    settings = {"HOOKSCOPE_TIMELINE": f"*::work={tmp_path}/t.json"}
    done = run([plain_plugin_program, N, other_version_module, plugins["a"], plugins["b"]], settings, timeout=120)
    module = os.path.basename(plugins["a"])
    own = tmp_path / f"t-{module}.json"
    calls = {f: c for f, c in expected_calls(["a", "b"]).items() if f != "host::work"}
    with Checks() as check:
        check.expect("another version first: exit 0, one message naming both files",
                     (done.returncode, done.stderr.splitlines()),
                     (0, [f"hookscope: HOOKSCOPE_TIMELINE: another version of hookscope in this process "
                          f"({os.path.basename(other_version_module)}) writes {tmp_path}/t.json; this one ({module}) "
                          f"writes {own}"]))
        check.expect("another version first: the path is left to it", (tmp_path / "t.json").exists(), False)
        check.expect("another version first: this version's file holds both plugins' calls",
                     timeline_calls(own)[0] if own.exists() else None, calls)


def test_relative_paths_and_a_chdir_before_loading(plugin_program, plugins, enabled, tmp_path):
    """Relative paths are resolved at the program's start-up: plugins loaded after a chdir() join the same files."""
    settings = {"HOOKSCOPE_TIMELINE": "*::work=t.json", "HOOKSCOPE_STATS": "*::work=s.txt",
                "HOOKSCOPE_RECORD": "*::work=r.jsonl"}
    done = run([plugin_program, N, "--chdir", plugins["a"], plugins["b"]], settings, timeout=120, cwd=tmp_path)
    calls = expected_calls(["a", "b"])
    with Checks() as check:
        check.expect("a chdir() before loading: exit 0, nothing logged", (done.returncode, done.stderr), (0, ""))
        check.expect("a chdir() before loading: one timeline of every module", timeline_calls(tmp_path / "t.json")[0],
                     calls)
        check.expect("a chdir() before loading: one table of every module",
                     stats_tables((tmp_path / "s.txt").read_text(encoding="utf-8").splitlines(), ""), [calls])
        check.expect("a chdir() before loading: every module's records in one file",
                     record_calls(tmp_path / "r.jsonl"), calls)
