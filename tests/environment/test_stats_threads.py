"""HOOKSCOPE_STATS counts each thread's calls in a histogram of its own (src/environment/stats.cpp): the table sums
them. tests/environment/edge_case_program.cpp `stats_threads` runs waves of threads that each make their calls and end
(the next wave takes their histograms over, counts and all), `stats_fork` forks while another thread holds its
histogram. Every call is counted once, in the process that made it; a forked child starts from zero."""
import re

import pytest

from support import Checks, run, stats_tables



@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: no statistics (test_stats_timeline.py checks that)")


def calls_printed(stdout):
    match = re.search(r"^calls (\d+)$", stdout, re.MULTILINE)
    return int(match.group(1)) if match else None


@pytest.mark.parametrize("n", [1, 1000])
def test_stats_of_threads_that_end(edge_case_program, enabled, n):
    done = run([edge_case_program, "stats_threads", n], {"HOOKSCOPE_STATS": "work"}, timeout=120)
    with Checks() as check:
        check.expect("stats of threads that end: exit 0", done.returncode, 0)
        check.expect("stats of threads that end: one table, every call of every thread counted once",
                     stats_tables(done.stderr.splitlines()), [{"work": calls_printed(done.stdout)}])


def test_stats_fork(edge_case_program, enabled):
    done = run([edge_case_program, "stats_fork", 500], {"HOOKSCOPE_STATS": "work"}, timeout=120)
    with Checks() as check:
        check.expect("stats and fork: exit 0", done.returncode, 0)
        check.expect("stats and fork: the child's table (its 10 calls, from zero), then the parent's (its own)",
                     stats_tables(done.stderr.splitlines()), [{"work": 10}, {"work": calls_printed(done.stdout)}])
