#!/usr/bin/env python3
"""Counts test cases over several Meson build dirs and prints `N passed, M failed[, K skipped]`.

A Catch2 executable counts its test cases (from its summary line); a pytest run (the modules of tests/, one Meson
test each) counts its cases from pytest's final summary line (`12 passed, 1 skipped in 3.10s`): a skip counts as
skipped, a failure or an error as failed, and a pytest test that failed counts at least one failure even when its line
is missing; any other test counts as one. A build dir that also holds pytest.xml (tools/python_test.sh's JUnit XML)
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
# pytest's last line, with or without -q: "==== 12 passed, 1 skipped in 3.10s ====", "1 failed, 2 errors in 0.5s",
# "12 passed, 2 warnings in 3.1s (0:00:03)"; its counts come in any order, each at most once.
PYTEST_COUNT = r"\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)"
PYTEST_LINE = re.compile(rf"^=*\s*((?:{PYTEST_COUNT})(?:, {PYTEST_COUNT})*) in [\d.]+s\b[^=]*=*$")
PYTEST_OUTCOMES = {"passed": 0, "xfailed": 0, "xpassed": 0, "failed": 1, "error": 1, "errors": 1, "skipped": 2}


def pytest_counts(out):
    """(passed, failed, skipped) of pytest's summary line, the last line of its output, or None when it is not one
    (not pytest, or a run cut short: killed at its timeout, crashed)."""
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    m = PYTEST_LINE.match(lines[-1]) if lines else None
    if not m:
        return None
    sums = [0, 0, 0]
    for n, outcome in re.findall(r"(\d+) (\w+)", m.group(1)):
        if outcome in PYTEST_OUTCOMES:  # deselected cases and warnings are no cases run
            sums[PYTEST_OUTCOMES[outcome]] += int(n)
    return tuple(sums)


def count(entry):
    """(passed, failed, skipped) for one Meson test result."""
    result, out = entry.get("result", ""), entry.get("stdout") or ""
    if result == "SKIP":
        return 0, 0, 1
    ok = result in ("OK", "EXPECTEDFAIL")
    counts = pytest_counts(out)
    if counts:
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
        for line in lines:
            if line.strip():
                for i, n in enumerate(count(json.loads(line))):
                    sums[i] += n
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
