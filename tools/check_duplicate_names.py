#!/usr/bin/env python3
"""Runs a program holding two observables registered as "twin" and checks the registry reported them, once.

Usage: check_duplicate_names.py PROGRAM ENABLED(0|1)
"""
import subprocess
import sys

from env_program import expect


def main() -> int:
    program, enabled = sys.argv[1], sys.argv[2] == "1"
    done = subprocess.run([program], capture_output=True, text=True, timeout=60)
    expect("the program runs, both twins registered (none when disabled)", (done.returncode, done.stdout),
           (0, f"{2 if enabled else 0} 1 -1 2\n"))
    reports = [line for line in done.stderr.splitlines() if "registered as" in line]
    want = ["hookscope: two observables are registered as 'twin' (an unknown place and an unknown place); "
            "find_observable, HOOKSCOPE_TRACE and HOOKSCOPE_RECORD cannot tell them apart: give one of them another "
            "name"] if enabled else []
    expect("one report naming the duplicate", reports, want)
    expect("nothing else on stderr", [line for line in done.stderr.splitlines() if line not in reports], [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
