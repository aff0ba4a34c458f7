#!/usr/bin/env python3
"""Counts test cases over several Meson build dirs and prints `N passed, M failed[, K skipped]`.

A Catch2 executable counts its test cases (from its summary line); any other test counts as one.
Usage: ci_summary.py BUILD_DIR...
"""
import json
import re
import sys

ALL_PASSED = re.compile(r"All tests passed \((\d+) assertions? in (\d+) test cases?\)")
MIXED = re.compile(r"test cases:\s*(\d+)\s*\|(?:\s*(\d+) passed)?\s*\|?(?:\s*(\d+) failed)?")


def count(entry):
    """(passed, failed, skipped) for one Meson test result."""
    result, out = entry.get("result", ""), entry.get("stdout") or ""
    if result == "SKIP":
        return 0, 0, 1
    ok = result in ("OK", "EXPECTEDFAIL")
    m = ALL_PASSED.search(out)
    if m:
        cases = int(m.group(2))
        return (cases, 0, 0) if ok else (cases, 1, 0)
    m = MIXED.search(out)
    if m:
        total, passed, failed = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
        return passed, max(failed, total - passed, 0 if ok else 1), 0
    return (1, 0, 0) if ok else (0, 1, 0)


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
        totals = [a + b for a, b in zip(totals, sums)]
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
