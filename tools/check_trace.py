#!/usr/bin/env python3
"""Runs a program with and without HOOKSCOPE_TRACE and checks what the trace wrote to stderr.

Usage: check_trace.py PROGRAM ENABLED(0|1)
"""
import sys

import env_program
from env_program import expect

EXPECTED_TRACE = [
    'hookscope: trace: lower_graph(nodes=5, name="main")',
    "hookscope: trace: lower_graph returned 4",
    "hookscope: trace: lower_fail(code=7)",
    "hookscope: trace: lower_fail threw: cannot lower",
]
EXPECTED_STDOUT = "result 4\ncaught cannot lower\n"


def run(program, trace):
    return env_program.run(program, "HOOKSCOPE_TRACE", trace, EXPECTED_STDOUT)


def main() -> int:
    program, enabled = sys.argv[1], sys.argv[2] == "1"
    expect("no trace without HOOKSCOPE_TRACE", run(program, None), [])
    expect("no trace for a glob that matches nothing", run(program, "nothing*"), [])
    traced = run(program, "lower_*, other")
    expect("the calls of matching functions, in order", traced, EXPECTED_TRACE if enabled else [])
    expect("several globs", run(program, "lower_graph,lower_fail"), EXPECTED_TRACE if enabled else [])
    fold = ["hookscope: trace: passes::fold(x=3)", "hookscope: trace: passes::fold returned"] if enabled else []
    expect("a glob with '::' matches the qualified name", run(program, "passes::f*"), fold)
    expect("a glob without '::' also matches the name's last part", run(program, "fold"), fold)
    expect("...but not a part of the scope", run(program, "passes"), [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
