#!/usr/bin/env python3
"""Compiles one source that must NOT compile, and checks that the compiler said what hookscope promises.

The source names the expected diagnostic in a comment:  // expect-error: <regular expression>
Usage: expect_compile_error.py --source F.cpp --include DIR -- <compiler> <flags...>
"""
import argparse
import re
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("compiler", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [c for c in args.compiler if c != "--"]
    with open(args.source, encoding="utf-8") as f:
        expected = re.findall(r"//\s*expect-error:\s*(.+)", f.read())
    if not expected:
        print(f"{args.source}: no '// expect-error: <regex>' line", file=sys.stderr)
        return 2
    run = subprocess.run(command + ["-I", args.include, "-fsyntax-only", args.source],
                         capture_output=True, text=True)
    if run.returncode == 0:
        print(f"{args.source}: compiled, but must not", file=sys.stderr)
        return 1
    for pattern in expected:
        if not re.search(pattern.strip(), run.stderr):
            print(f"{args.source}: the compiler failed, but without /{pattern.strip()}/:\n{run.stderr}",
                  file=sys.stderr)
            return 1
    print(f"{args.source}: rejected as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
