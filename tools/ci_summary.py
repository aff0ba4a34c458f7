#!/usr/bin/env python3
"""Counts test cases over several Meson build dirs and prints `N passed, M failed[, K skipped]`.

A Catch2 executable counts its test cases (from its summary line); a pytest run (the modules of tests/, one Meson
test each, known by its command) counts its cases from pytest's summary line (`12 passed, 1 skipped in 3.10s`, the
last one of its output, colours removed): a skip counts as skipped, a failure or an error as failed, a pytest test
that failed counts at least one failure, and one without its line counts one failure; any other test counts as one.
A build whose test log is missing, empty or cut counts a failure: the callers remove the log before each run, so
that a run that did not happen is not counted from an older one. A build dir that also holds pytest.xml (tools/python_test.sh's JUnit XML)
adds its test cases in the same way.
Usage: ci_summary.py BUILD_DIR...
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

ALL_PASSED = re.compile(r"All tests passed \((\d+) assertions? in (\d+) test cases?\)")
MIXED = re.compile(r"test cases:\s*(\d+)\s*\|(?:\s*(\d+) passed)?\s*\|?(?:\s*(\d+) failed)?")
# pytest's summary line, with or without -q: "==== 12 passed, 1 skipped in 3.10s ====", "1 failed, 2 errors in 0.5s",
# "12 passed, 2 warnings in 3.1s (0:00:03)"; its counts come in any order, each at most once, and a plugin may add
# its own ("5 subtests passed"), which count no case.
PYTEST_COUNT = r"\d+ [a-z]+(?: [a-z]+)?"
PYTEST_LINE = re.compile(rf"^=*\s*((?:{PYTEST_COUNT})(?:, {PYTEST_COUNT})*) in [\d.]+s\b[^=]*=*$")
PYTEST_OUTCOMES = {"passed": 0, "xfailed": 0, "xpassed": 0, "failed": 1, "error": 1, "errors": 1, "skipped": 2}
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # pytest's colours (PY_COLORS=1)


def is_pytest(entry):
    """A Meson test that runs pytest (`python3 -m pytest <module> ...`)."""
    return any(str(part) == "pytest" or str(part).endswith("/pytest") for part in entry.get("command") or [])


def pytest_counts(out):
    """(passed, failed, skipped) of pytest's summary line, the last such line of its output (what an atexit hook or
    the interpreter prints after it is not the run's), or None when there is none (a run cut short: killed at its
    timeout, crashed)."""
    for line in reversed(ANSI_ESCAPE.sub("", out).splitlines()):
        m = PYTEST_LINE.match(line.strip())
        if not m:
            continue
        sums = [0, 0, 0]
        for n, outcome in re.findall(r"(\d+) ([a-z]+(?: [a-z]+)?)", m.group(1)):
            if outcome in PYTEST_OUTCOMES:  # deselected cases, warnings and a plugin's counts are no cases run
                sums[PYTEST_OUTCOMES[outcome]] += int(n)
        return tuple(sums)
    return None


def count(entry):
    """(passed, failed, skipped) for one Meson test result."""
    result, out = entry.get("result", ""), entry.get("stdout") or ""
    if result == "SKIP":
        return 0, 0, 1
    ok = result in ("OK", "EXPECTEDFAIL")
    if is_pytest(entry):  # counted from pytest's own line only: a Catch2 line in its output is another program's
        counts = pytest_counts(out)
        if counts is None:  # no summary: the run did not finish as pytest does
            return 0, 1, 0
        passed, failed, skipped = counts
        return passed, max(failed, 0 if ok else 1), skipped
    m = ALL_PASSED.search(out)
    if m:
        cases = int(m.group(2))
        return (cases, 0, 0) if ok else (cases, 1, 0)
    m = MIXED.search(out)
    if m:
        total, passed, failed = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
        return passed, max(failed, total - passed, 0 if ok else 1), 0
    return (1, 0, 0) if ok else (0, 1, 0)


def failure_line(build, entry):
    """One line naming a failed Meson test and, for pytest, the cases pytest names as failed: the end of CI's output
    is often all that is kept, and it must say what failed."""
    out = ANSI_ESCAPE.sub("", entry.get("stdout") or "")
    cases = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.MULTILINE)
    named = f" ({', '.join(cases)})" if cases else ""
    timed_out = " after its timeout" if entry.get("result") == "TIMEOUT" else ""
    return f"{build}: FAILED {entry.get('name', '?')}{timed_out}{named}"


def count_pytest(path):
    """(passed, failed, skipped) of a pytest JUnit XML file."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    passed = failed = skipped = 0
    for suite in suites:
        tests, fails = int(suite.get("tests", 0)), int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skips = int(suite.get("skipped", 0))
        passed += tests - fails - skips
        failed += fails
        skipped += skips
    return passed, failed, skipped


def main() -> int:
    totals = [0, 0, 0]
    for build in sys.argv[1:]:
        try:
            lines = open(f"{build}/meson-logs/testlog.json", encoding="utf-8").read().splitlines()
        except OSError as e:
            print(f"{build}: no test log ({e.strerror})", file=sys.stderr)
            totals[1] += 1
            continue
        sums = [0, 0, 0]
        entries = 0
        failing = []
        for line in lines:
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                print(f"{build}: a test log line that is not JSON (a run cut short?)", file=sys.stderr)
                sums[1] += 1
                continue
            entries += 1
            counts = count(entry)
            if counts[1]:
                failing.append(failure_line(build, entry))
            for i, n in enumerate(counts):
                sums[i] += n
        if entries == 0 and sums[1] == 0:  # a test log without a test is a run that did not happen
            print(f"{build}: the test log holds no test", file=sys.stderr)
            sums[1] += 1
        for line in failing:
            print(line, file=sys.stderr)
        print(f"{build}: {sums[0]} passed, {sums[1]} failed, {sums[2]} skipped", file=sys.stderr)
        pytest_xml = f"{build}/pytest.xml"
        if os.path.exists(pytest_xml):
            try:
                py = count_pytest(pytest_xml)
            except (OSError, ET.ParseError) as e:
                print(f"{pytest_xml}: unreadable ({e})", file=sys.stderr)
                py = (0, 1, 0)
            print(f"{build} (pytest): {py[0]} passed, {py[1]} failed, {py[2]} skipped", file=sys.stderr)
            sums = [a + b for a, b in zip(sums, py)]
        totals = [a + b for a, b in zip(totals, sums)]
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
