#!/usr/bin/env python3
"""Runs a program with and without HOOKSCOPE_RECORD and checks the JSON Lines it wrote and what it logged.

Usage: check_record_env.py PROGRAM ENABLED(0|1)
"""
import json
import os
import sys
import tempfile

import env_program
from env_program import expect

EXPECTED_STDOUT = "3\n3\ncaught input_ids must have rank 2\n3\n3 3\n"
IDS = {"shape": [1, 7], "dtype": "int64"}


def run(program, record):
    return env_program.run(program, "HOOKSCOPE_RECORD", record, EXPECTED_STDOUT)


def read_records(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        sys.exit(f"{path}: the last line has no newline")
    return [json.loads(line) for line in text.splitlines()]


def without_latency(records):
    for r in records:
        if not isinstance(r.pop("latency_ns", None), int):
            sys.exit(f"record without an integer latency_ns: {r}")
    return records


def main() -> int:
    program, enabled = sys.argv[1], sys.argv[2] == "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "forward.jsonl")
        expect("nothing logged without HOOKSCOPE_RECORD", run(program, None), [])
        expect("no file without HOOKSCOPE_RECORD", os.path.exists(out), False)

        expect("nothing logged when recording capturable functions", run(program, f"forw*={out}"), [])
        if not enabled:
            expect("hooks compiled out: no file", os.path.exists(out), False)
            return 0
        # Three calls, in order; the first line carries the signature; the third threw (no result).
        signature = [{"name": "input_ids"}, {"name": "attention_mask"}, {"name": "use_cache"}]
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

        both = os.path.join(tmp, "both.jsonl")
        run(program, f" step = {both} , forward={both}")
        records = read_records(both)
        expect("two functions share a file, each signed on its first line",
               [(r["function"], "signature" in r) for r in records],
               [("forward", True), ("forward", False), ("forward", False), ("step", True), ("step", False)])
        # step(step(1)): the inner call finishes first.
        expect("nested calls pair pre and post", [(r["kwargs"], r["result"]) for r in records[3:]],
               [([["n", {"int": 1}]], {"int": 2}), ([["n", {"int": 2}]], {"int": 3})])

        missing = os.path.join(tmp, "no-such-dir", "x.jsonl")
        logged = run(program, f"forward={missing}")
        expect("an unwritable file is reported once, the program runs on", len(logged), 1)
        expect("the report names the variable and the file",
               logged[0].startswith(f"hookscope: HOOKSCOPE_RECORD: {missing}: cannot open it for writing ("), True)

        handles = os.path.join(tmp, "handles.jsonl")
        expect("an uncapturable function is reported once, not recorded", run(program, f"open_handle={handles}"),
               ["hookscope: HOOKSCOPE_RECORD: cannot record 'open_handle': a parameter type cannot be captured "
                "(see hookscope::capturable)"])
        expect("its file stays empty", read_records(handles), [])

        expect("a malformed entry is reported, the others apply", run(program, f"nonsense, step={out}"),
               ["hookscope: HOOKSCOPE_RECORD: expected <glob>=<path>, got 'nonsense'; ignored"])
        expect("the well-formed entry recorded", [r["function"] for r in read_records(out)], ["step", "step"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
