"""tests/duplicate_names_program.cpp holds two observables registered as "twin": the registry reports them at
start-up, once."""
import pytest

from support import expect, run

REPORT = ("hookscope: two observables are registered as 'twin' (an unknown place and an unknown place); "
          "find_observable, HOOKSCOPE_TRACE and HOOKSCOPE_RECORD cannot tell them apart: give one of them another "
          "name")


@pytest.fixture(scope="module")
def done(duplicate_names_program):
    return run([duplicate_names_program])


def reports(done):
    return [line for line in done.stderr.splitlines() if "registered as" in line]


def test_runs_with_both_twins_registered(done, hooks_enabled):
    # Its output: the number of observables named "twin" in the registry, then twin_a(1), twin_b(1), unique_name(2).
    expect("the program runs, both twins registered (none when disabled)", (done.returncode, done.stdout),
           (0, f"{2 if hooks_enabled else 0} 1 -1 2\n"))


def test_one_report_naming_the_duplicate(done, hooks_enabled):
    expect("one report naming the duplicate", reports(done), [REPORT] if hooks_enabled else [])


def test_nothing_else_on_stderr(done):
    expect("nothing else on stderr", [line for line in done.stderr.splitlines() if line not in reports(done)], [])
