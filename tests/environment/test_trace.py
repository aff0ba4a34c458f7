"""HOOKSCOPE_TRACE: tests/trace_program.cpp run with and without it; what the trace wrote to stderr.

Every run must succeed with the program's own output, unchanged by the trace; one case per setting of the variable.
"""
import pytest

from support import expect, run

EXPECTED_TRACE = [
    'hookscope: trace: lower_graph(nodes=5, name="main")',
    "hookscope: trace: lower_graph returned 4",
    "hookscope: trace: lower_fail(code=7)",
    "hookscope: trace: lower_fail threw: cannot lower",
]
EXPECTED_STDOUT = "result 4\ncaught cannot lower\n"
FOLD = ["hookscope: trace: passes::fold(x=3)", "hookscope: trace: passes::fold returned"]

# (what is checked, HOOKSCOPE_TRACE or None for unset, the trace expected when hooks are enabled; none when disabled)
CASES = [
    ("no trace without HOOKSCOPE_TRACE", None, []),
    ("no trace for a glob that matches nothing", "nothing*", []),
    ("the calls of matching functions, in order", "lower_*, other", EXPECTED_TRACE),
    ("several globs", "lower_graph,lower_fail", EXPECTED_TRACE),
    ("a glob with '::' matches the qualified name", "passes::f*", FOLD),
    ("a glob without '::' also matches the name's last part", "fold", FOLD),
    ("...but not a part of the scope", "passes", []),
    ("an argument left to its default is absent from the call's line", "pad_to",
     ["hookscope: trace: pad_to(width=8)", "hookscope: trace: pad_to returned 8"]),
]


@pytest.mark.parametrize("what, setting, enabled_trace", CASES, ids=[c[0] for c in CASES])
def test_trace(trace_program, hooks_enabled, what, setting, enabled_trace):
    done = run([trace_program], {} if setting is None else {"HOOKSCOPE_TRACE": setting})
    expect(f"{trace_program} (HOOKSCOPE_TRACE={setting!r}): exit code and stdout", (done.returncode, done.stdout),
           (0, EXPECTED_STDOUT))
    expect(what, done.stderr.splitlines(), enabled_trace if hooks_enabled else [])
