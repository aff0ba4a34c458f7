#!/usr/bin/env python3
"""Runs a program with and without HOOKSCOPE_RECORD and checks the JSON Lines it wrote and what it logged: the
records of a plain run, then that nothing completed is lost however the program ends (a crash, abort, SIGTERM,
SIGKILL while idle, quick_exit), across fork() and among 8 processes sharing one file, from static and thread-local
destructors; one file per file whatever its spelling; write errors reported; the per-target bounds.

Usage: check_record_env.py PROGRAM ENABLED(0|1)
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import env_program
from env_program import expect

EXPECTED_STDOUT = "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n"
IDS = {"shape": [1, 7], "dtype": "int64"}


def run(program, record):
    return env_program.run(program, "HOOKSCOPE_RECORD", record, EXPECTED_STDOUT)


def environment(record):
    env = {k: v for k, v in os.environ.items() if k not in env_program.HOOKSCOPE_VARIABLES}
    env["HOOKSCOPE_RECORD"] = record
    return env


def run_mode(program, record, mode, n):
    """Runs `program MODE N` under HOOKSCOPE_RECORD=record; returns (returncode, stderr lines)."""
    done = subprocess.run([program, mode, str(n)], env=environment(record), capture_output=True, text=True,
                          timeout=120)
    return done.returncode, done.stderr.splitlines()


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        sys.exit(f"{path}: the last line has no newline")
    return [json.loads(line) for line in text.splitlines()]


def step_args(records):
    return [r["kwargs"][0][1]["int"] for r in records if r["function"] == "step"]


def without_latency(records):
    for r in records:
        if not isinstance(r.pop("latency_ns", None), int):
            sys.exit(f"record without an integer latency_ns: {r}")
    return records


def check_plain_run(program, tmp):
    out = os.path.join(tmp, "forward.jsonl")
    # Three calls, in order; the first line carries the signature; the third threw (no result).
    signature = [{"name": "input_ids"}, {"name": "attention_mask"}, {"name": "use_cache"}]
    expect("nothing logged when recording capturable functions", run(program, f"forw*={out}"), [])
    expect("every call of forward, with the signature on the first line", without_latency(read_records(out)), [
        {"function": "forward", "signature": signature, "args": [],
         "kwargs": [["input_ids", IDS], ["attention_mask", IDS], ["use_cache", {"bool": True}]],
         "result": {"shape": [1, 7, 16], "dtype": "float32"}},
        {"function": "forward", "args": [],
         "kwargs": [["input_ids", {"shape": [2, 1], "dtype": "int64"}], ["attention_mask", None],
                    ["use_cache", {"bool": False}]],
         "result": {"shape": [2, 1, 8], "dtype": "float32"}},
        {"function": "forward", "args": [],
         "kwargs": [["input_ids", {"shape": [3], "dtype": "int64"}], ["attention_mask", None],
                    ["use_cache", {"bool": True}]],
         "threw": True},
    ])
    run(program, f"forw*={out}")
    expect("a second run appends (files merge by concatenation), signing its first line again",
           [(r["function"], "signature" in r) for r in read_records(out)],
           [("forward", True), ("forward", False), ("forward", False)] * 2)

    both = os.path.join(tmp, "both.jsonl")
    run(program, f" step = {both} , forward={both}")
    records = read_records(both)
    expect("two functions share a file, each signed on its first line",
           [(r["function"], "signature" in r) for r in records],
           [("forward", True), ("forward", False), ("forward", False), ("step", True), ("step", False)])
    # step(step(1)): the inner call finishes first.
    expect("nested calls pair pre and post", [(r["kwargs"], r["result"]) for r in records[3:]],
           [([["n", {"int": 1}]], {"int": 2}), ([["n", {"int": 2}]], {"int": 3})])

    os.mkdir(os.path.join(tmp, "dir"))
    spelled = os.path.join(tmp, "dir", "x.jsonl")
    run(program, f"forward={spelled},step={os.path.join(tmp, 'dir', '.', '')}/x.jsonl")
    expect("one file under two spellings is opened once: both functions' records are in it",
           [r["function"] for r in read_records(spelled)], ["forward"] * 3 + ["step"] * 2)

    missing = os.path.join(tmp, "no-such-dir", "x.jsonl")
    logged = run(program, f"forward={missing}")
    expect("an unopenable file is reported once, the program runs on", len(logged), 1)
    expect("the report names the variable, the file and the reason", logged[0],
           f"hookscope: HOOKSCOPE_RECORD: {missing}: cannot open it for writing (No such file or directory); "
           "its calls are not recorded")
    for device, reason in (("/dev/full", "No space left on device"), ("/proc/version", "Input/output error")):
        if os.access(device, os.W_OK):
            expect(f"a write error is reported once, at the final flush ({device})", run(program, f"forward={device}"),
                   [f"hookscope: HOOKSCOPE_RECORD: {device}: cannot write to it ({reason}); its calls are not "
                    "recorded"])

    handles = os.path.join(tmp, "handles.jsonl")
    expect("an uncapturable function is reported once, not recorded", run(program, f"open_handle={handles}"),
           ["hookscope: HOOKSCOPE_RECORD: cannot record 'open_handle': a parameter type cannot be captured "
            "(see hookscope::capturable)"])
    expect("its file stays empty", read_records(handles), [])

    steps = os.path.join(tmp, "steps.jsonl")
    expect("a malformed entry is reported, the others apply", run(program, f"nonsense, step={steps}"),
           ["hookscope: HOOKSCOPE_RECORD: expected <glob>=<path>[options], got 'nonsense'; ignored"])
    expect("the well-formed entry recorded", [r["function"] for r in read_records(steps)], ["step", "step"])


def check_endings(program, tmp):
    n = 2100  # more than a 4 KB buffer of lines, fewer than the 256 KB buffer
    for mode, how in (("calls", "returns"), ("segv", "crashes (SIGSEGV)"), ("abort", "aborts"),
                      ("term", "gets SIGTERM"), ("quick_exit", "calls quick_exit"), ("destructors", "returns")):
        out = os.path.join(tmp, f"{mode}.jsonl")
        code, _ = run_mode(program, f"step={out}", mode, n)
        died = {"segv": -signal.SIGSEGV, "abort": -signal.SIGABRT, "term": -signal.SIGTERM}.get(mode, 0)
        # Under a sanitizer a fault ends with its report and a non-zero exit code, after hookscope's handler ran.
        expect(f"{mode}: the program ends as asked", code == died or (mode == "segv" and code > 0), True)
        want = list(range(n)) + ([1999, 2000, 1000] if mode == "destructors" else [])
        expect(f"nothing completed is lost when the program {how}", step_args(read_records(out)), want)

    out = os.path.join(tmp, "killed.jsonl")
    child = subprocess.Popen([program, "idle", str(n)], env=environment(f"step={out}"), stdout=subprocess.PIPE,
                             text=True)
    expect("idle program started", child.stdout.readline(), "idle\n")
    time.sleep(0.4)  # flushed every 100 ms: after 0.3 s idle, everything is on disk
    child.kill()
    child.wait()
    expect("SIGKILL after 0.4 s idle loses nothing", step_args(read_records(out)), list(range(n)))

    out = os.path.join(tmp, "fork.jsonl")
    code, _ = run_mode(program, f"step={out},fork_in_flight={out}", "fork", 50)
    records = read_records(out)
    expect("fork: both processes succeed", code, 0)
    expect("fork: every call recorded exactly once across parent and child",
           sorted(step_args(records)), sorted(list(range(50)) + [100000 + i for i in range(50)] +
                                              [200000 + i for i in range(50)]))
    expect("fork: the call in flight at fork() is recorded once, by the parent",
           [(r["kwargs"], r["result"]) for r in records if r["function"] == "fork_in_flight"],
           [([["n", {"int": 7}]], {"int": 7})])
    expect("fork: each process signs its first line of step before its other lines", signed_first(records, "step"),
           True)

    out = os.path.join(tmp, "shared.jsonl")
    processes = [subprocess.Popen([program, "calls", "5000"], env=environment(f"step={out}"),
                                  stdout=subprocess.DEVNULL) for _ in range(8)]
    expect("8 processes sharing a file succeed", [p.wait(timeout=120) for p in processes], [0] * 8)
    records = read_records(out)  # exits if a line does not parse
    expect("8 processes x 5000 calls: exactly 40000 whole lines", len(records), 40000)
    expect("each process's calls, each once", sorted(step_args(records)), sorted(list(range(5000)) * 8))


def signed_first(records, function):
    return bool(records) and next(r for r in records if r["function"] == function).get("signature") is not None


def check_bounds(program, tmp):
    out = os.path.join(tmp, "bounded.jsonl")
    code, logged = run_mode(program, f"step={out}[max_calls=3]", "calls", 10)
    expect("max_calls: the first 3 calls", step_args(read_records(out)), [0, 1, 2])
    expect("max_calls: one line says the bound was reached", logged,
           [f"hookscope: HOOKSCOPE_RECORD: 'step' reached max_calls=3 in {out}; its later calls are not recorded"])
    out = os.path.join(tmp, "sampled.jsonl")
    run_mode(program, f"step={out}[every=4; max_calls=2]", "calls", 10)
    expect("every=4 with max_calls=2: calls 0 and 4", step_args(read_records(out)), [0, 4])
    code, logged = run_mode(program, f"step={out}[often=4]", "calls", 1)
    expect("an unknown option is reported and its entry ignored", logged,
           [f"hookscope: HOOKSCOPE_RECORD: unknown option 'often=4' in 'step={out}[often=4]' (expected max_calls=N "
            "or every=N, N a positive integer); the entry is ignored"])


def main() -> int:
    program, enabled = sys.argv[1], sys.argv[2] == "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "forward.jsonl")
        expect("nothing logged without HOOKSCOPE_RECORD", run(program, None), [])
        expect("no file without HOOKSCOPE_RECORD", os.path.exists(out), False)
        if not enabled:
            expect("hooks compiled out: nothing logged", run(program, f"forw*={out}"), [])
            expect("hooks compiled out: no file", os.path.exists(out), False)
            return 0
        check_plain_run(program, tmp)
        check_endings(program, tmp)
        check_bounds(program, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
