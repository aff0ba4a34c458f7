"""HOOKSCOPE_RECORD: tests/record_program.cpp run with and without it; the JSON Lines it wrote and what it logged.

The records of a plain run, then that nothing completed is lost however the program ends (a crash, abort, SIGTERM,
SIGKILL while idle, quick_exit), across fork() and among 8 processes sharing one file, from static and thread-local
destructors; one file per file whatever its spelling; write errors reported; the per-target bounds.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from support import Checks, environment, expect, run

# record_program's output without arguments (it calls forward three times, the third throws, then step(step(1))).
EXPECTED_STDOUT = "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n"
IDS = {"shape": [1, 7], "dtype": "int64"}


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: nothing is recorded "
                    "(test_hooks_compiled_out checks that)")


def run_plain(program, record):
    """Runs `program` with HOOKSCOPE_RECORD=record (unset when None); it must succeed with its usual output.
    Returns its stderr lines."""
    done = run([program], {} if record is None else {"HOOKSCOPE_RECORD": record})
    expect(f"{program} (HOOKSCOPE_RECORD={record!r}): exit code and stdout", (done.returncode, done.stdout),
           (0, EXPECTED_STDOUT))
    return done.stderr.splitlines()


def run_mode(program, record, mode, n):
    """Runs `program MODE N` under HOOKSCOPE_RECORD=record; returns (returncode, stderr lines)."""
    done = run([program, mode, str(n)], {"HOOKSCOPE_RECORD": record}, timeout=120)
    return done.returncode, done.stderr.splitlines()


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert not text or text.endswith("\n"), f"{path}: the last line has no newline"
    return [json.loads(line) for line in text.splitlines()]


def step_args(records):
    return [r["kwargs"][0][1]["int"] for r in records if r["function"] == "step"]


def without_latency(records):
    for r in records:
        assert isinstance(r.pop("latency_ns", None), int), f"record without an integer latency_ns: {r}"
    return records


def signed_first(records, function):
    return bool(records) and next(r for r in records if r["function"] == function).get("signature") is not None


# --- both modes ---

RECORD_GRAMMAR = "<glob>=<path>[max_calls=N;every=N;buffer=SIZE;full=wait|drop], N from 1 to 10^18, SIZE from 64K to 1G, options separated by ';'"


def test_nothing_without_the_variable(record_program, tmp_path):
    out = tmp_path / "forward.jsonl"
    with Checks() as check:
        check.expect("nothing logged without HOOKSCOPE_RECORD", run_plain(record_program, None), [])
        check.expect("no file without HOOKSCOPE_RECORD", out.exists(), False)


def test_hooks_compiled_out(record_program, hooks_enabled, tmp_path):
    if hooks_enabled:
        pytest.skip("hooks are enabled in this build: the other cases check what is recorded")
    out = tmp_path / "forward.jsonl"
    with Checks() as check:
        check.expect("hooks compiled out: nothing logged", run_plain(record_program, f"forw*={out}"), [])
        check.expect("hooks compiled out: no file", out.exists(), False)


# --- a plain run ---

def test_every_call_recorded(record_program, enabled, tmp_path):
    out = tmp_path / "forward.jsonl"
    # Three calls, in order; the first line carries the signature; the third threw (no result).
    signature = [{"name": "input_ids"}, {"name": "attention_mask"}, {"name": "use_cache"}]
    with Checks() as check:
        check.expect("nothing logged when recording capturable functions", run_plain(record_program, f"forw*={out}"),
                     [])
        check.expect("every call of forward, with the signature on the first line", without_latency(read_records(out)),
                     [{"function": "forward", "signature": signature, "args": [],
                       "kwargs": [["input_ids", IDS], ["attention_mask", IDS], ["use_cache", {"bool": True}]],
                       "result": {"shape": [1, 7, 16], "dtype": "float32"}},
                      {"function": "forward", "args": [],
                       "kwargs": [["input_ids", {"shape": [2, 1], "dtype": "int64"}], ["attention_mask", None],
                                  ["use_cache", {"bool": False}]],
                       "result": {"shape": [2, 1, 8], "dtype": "float32"}},
                      {"function": "forward", "args": [],
                       "kwargs": [["input_ids", {"shape": [3], "dtype": "int64"}], ["attention_mask", None],
                                  ["use_cache", {"bool": True}]],
                       "threw": True}])


def test_default_arguments_have_no_entry(record_program, enabled, tmp_path):
    out = tmp_path / "widen.jsonl"
    code, err = run_mode(record_program, f"widen={out}", "defaults", 4)
    records = without_latency(read_records(out))
    with Checks() as check:
        check.expect("defaults: exit 0, nothing logged", (code, err), (0, []))
        check.expect("defaults: an argument left to its default has no kwargs entry; one given has its own",
                     [r["kwargs"] for r in records],
                     [[["n", {"int": 0}]], [["n", {"int": 1}], ["by", {"int": 2}]], [["n", {"int": 2}]],
                      [["n", {"int": 3}], ["by", {"int": 2}]]])
        check.expect("defaults: the signature names both parameters", records[0].get("signature"),
                     [{"name": "n"}, {"name": "by"}])


def test_second_run_appends(record_program, enabled, tmp_path):
    out = tmp_path / "forward.jsonl"
    run_plain(record_program, f"forw*={out}")
    run_plain(record_program, f"forw*={out}")
    expect("a second run appends (files merge by concatenation), signing its first line again",
           [(r["function"], "signature" in r) for r in read_records(out)],
           [("forward", True), ("forward", False), ("forward", False)] * 2)


def test_two_functions_share_a_file(record_program, enabled, tmp_path):
    both = tmp_path / "both.jsonl"
    run_plain(record_program, f" step = {both} , forward={both}")
    records = read_records(both)
    with Checks() as check:
        check.expect("two functions share a file, each signed on its first line",
                     [(r["function"], "signature" in r) for r in records],
                     [("forward", True), ("forward", False), ("forward", False), ("step", True), ("step", False)])
        # step(step(1)): the inner call finishes first.
        check.expect("nested calls pair pre and post", [(r["kwargs"], r.get("result")) for r in records[3:]],
                     [([["n", {"int": 1}]], {"int": 2}), ([["n", {"int": 2}]], {"int": 3})])


def test_one_file_under_two_spellings(record_program, enabled, tmp_path):
    os.mkdir(tmp_path / "dir")
    spelled = os.path.join(tmp_path, "dir", "x.jsonl")
    run_plain(record_program, f"forward={spelled},step={os.path.join(tmp_path, 'dir', '.', '')}/x.jsonl")
    expect("one file under two spellings is opened once: both functions' records are in it",
           [r["function"] for r in read_records(spelled)], ["forward"] * 3 + ["step"] * 2)


def test_unopenable_file(record_program, enabled, tmp_path):
    missing = os.path.join(tmp_path, "no-such-dir", "x.jsonl")
    logged = run_plain(record_program, f"forward={missing}")
    expect("an unopenable file is reported once, the program runs on; the report names the variable, the file and "
           "the reason", logged,
           [f"hookscope: HOOKSCOPE_RECORD: 'forward={missing}': its directory does not exist (expected a path to a "
            "file that can be written); the entry is ignored"])


@pytest.mark.parametrize("device, reason", [("/dev/full", "No space left on device"),
                                            ("/proc/version", "Input/output error")])
def test_write_error(record_program, enabled, device, reason):
    if not os.access(device, os.W_OK):
        pytest.skip(f"{device} is not writable here (run as root to check the write error)")
    expect(f"a write error is reported once, at the final flush ({device})", run_plain(record_program, f"forward={device}"),
           [f"hookscope: HOOKSCOPE_RECORD: {device}: cannot write to it ({reason}); its calls are not recorded"])


def test_opaque_parameter(record_program, enabled, tmp_path):
    handles = tmp_path / "handles.jsonl"
    with Checks() as check:
        check.expect("a function with a parameter type that is not structural is recorded, nothing logged",
                     run_plain(record_program, f"open_handle={handles}"), [])
        check.expect("the parameter as an opaque leaf (its type name), the result as it is",
                     [(r["kwargs"], r.get("result")) for r in read_records(handles)],
                     [([["h", {"opaque": "impl::handle"}]], {"int": 3})] * 2)


def test_malformed_entry(record_program, enabled, tmp_path):
    steps = tmp_path / "steps.jsonl"
    with Checks() as check:
        check.expect("a malformed entry is reported, the others apply", run_plain(record_program, f"nonsense, step={steps}"),
                     [f"hookscope: HOOKSCOPE_RECORD: 'nonsense': no '=' (expected {RECORD_GRAMMAR}); the entry is ignored"])
        check.expect("the well-formed entry recorded", [r["function"] for r in read_records(steps)], ["step", "step"])


# --- however the program ends ---

N = 2100  # more than a 4 KB buffer of lines, fewer than the 256 KB buffer
ENDINGS = [("calls", "returns"), ("segv", "crashes (SIGSEGV)"), ("abort", "aborts"), ("term", "gets SIGTERM"),
           ("quick_exit", "calls quick_exit"), ("destructors", "returns")]


@pytest.mark.parametrize("mode, how", ENDINGS, ids=[m for m, _ in ENDINGS])
def test_nothing_lost_however_the_program_ends(record_program, enabled, tmp_path, mode, how):
    out = tmp_path / f"{mode}.jsonl"
    code, _ = run_mode(record_program, f"step={out}", mode, N)
    died = {"segv": -signal.SIGSEGV, "abort": -signal.SIGABRT, "term": -signal.SIGTERM}.get(mode, 0)
    # The destructors mode also calls step(1999), step(2000) and step(1000) from static and thread-local destructors.
    want = list(range(N)) + ([1999, 2000, 1000] if mode == "destructors" else [])
    with Checks() as check:
        # Under a sanitizer a fault ends with its report and a non-zero exit code, after hookscope's handler ran.
        check.expect(f"{mode}: the program ends as asked (exit code {code}, expected {died})",
                     code == died or (mode == "segv" and code > 0), True)
        check.expect(f"nothing completed is lost when the program {how}", step_args(read_records(out)), want)


def test_sigkill_while_idle(record_program, enabled, tmp_path):
    out = tmp_path / "killed.jsonl"
    child = subprocess.Popen([record_program, "idle", str(N)], env=environment({"HOOKSCOPE_RECORD": f"step={out}"}),
                             stdout=subprocess.PIPE, text=True)
    try:
        expect("idle program started", child.stdout.readline(), "idle\n")
        time.sleep(0.4)  # flushed every 100 ms: after 0.3 s idle, everything is on disk
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    expect("SIGKILL after 0.4 s idle loses nothing", step_args(read_records(out)), list(range(N)))


def test_fork(record_program, enabled, tmp_path):
    out = tmp_path / "fork.jsonl"
    code, _ = run_mode(record_program, f"step={out},fork_in_flight={out}", "fork", 50)
    records = read_records(out)
    with Checks() as check:
        check.expect("fork: both processes succeed", code, 0)
        # 0..49 before the fork (in the parent), then 100000 + i in the child and 200000 + i in the parent.
        check.expect("fork: every call recorded exactly once across parent and child",
                     sorted(step_args(records)), sorted(list(range(50)) + [100000 + i for i in range(50)] +
                                                        [200000 + i for i in range(50)]))
        check.expect("fork: the call in flight at fork() is recorded once, by the parent",
                     [(r["kwargs"], r.get("result")) for r in records if r["function"] == "fork_in_flight"],
                     [([["n", {"int": 7}]], {"int": 7})])
        check.expect("fork: each process signs its first line of step before its other lines",
                     signed_first(records, "step"), True)


def test_processes_sharing_a_file(record_program, enabled, tmp_path):
    out = tmp_path / "shared.jsonl"
    env = environment({"HOOKSCOPE_RECORD": f"step={out}"})
    processes = [subprocess.Popen([record_program, "calls", "5000"], env=env, stdout=subprocess.DEVNULL)
                 for _ in range(8)]
    expect("8 processes sharing a file succeed", [p.wait(timeout=120) for p in processes], [0] * 8)
    records = read_records(out)  # fails if a line does not parse
    with Checks() as check:
        check.expect("8 processes x 5000 calls: exactly 40000 whole lines", len(records), 40000)
        check.expect("each process's calls, each once", sorted(step_args(records)), sorted(list(range(5000)) * 8))


# --- the per-target bounds ---

def test_max_calls(record_program, enabled, tmp_path):
    out = tmp_path / "bounded.jsonl"
    _, logged = run_mode(record_program, f"step={out}[max_calls=3]", "calls", 10)
    with Checks() as check:
        check.expect("max_calls: the first 3 calls", step_args(read_records(out)), [0, 1, 2])
        check.expect("max_calls: one line says the bound was reached", logged,
                     [f"hookscope: HOOKSCOPE_RECORD: 'step' reached max_calls=3 in {out}; its later calls are not "
                      "recorded"])


def test_every_with_max_calls(record_program, enabled, tmp_path):
    out = tmp_path / "sampled.jsonl"
    run_mode(record_program, f"step={out}[every=4; max_calls=2]", "calls", 10)
    expect("every=4 with max_calls=2: calls 0 and 4", step_args(read_records(out)), [0, 4])


def test_unknown_option(record_program, enabled, tmp_path):
    out = tmp_path / "sampled.jsonl"
    _, logged = run_mode(record_program, f"step={out}[often=4]", "calls", 1)
    expect("an unknown option is reported and its entry ignored", logged,
           [f"hookscope: HOOKSCOPE_RECORD: 'step={out}[often=4]': unknown option 'often=4' (expected {RECORD_GRAMMAR}); "
            "the entry is ignored"])
