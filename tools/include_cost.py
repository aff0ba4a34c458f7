#!/usr/bin/env python3
"""Prints what including hookscope's headers adds to a translation unit's compile time (the bench report).

Compiles a file holding only the include, and an empty one, best of N, with the given compiler at -O2; checks
that the core observer header pulls in no Boost.Hana, Boost.PFR or Boost.JSON header.
Usage: include_cost.py INCLUDE_DIR [--compiler c++] [--runs 3] [--check]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

UMBRELLA_MAX_S = 1.0
HEADERS = ["hookscope/observer.hpp", "hookscope/observable.hpp", "hookscope/hookscope.hpp"]


def compile_seconds(compiler, include_dir, body, runs):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "tu.cpp")
        with open(src, "w", encoding="utf-8") as f:
            f.write(body + "\nint main() {}\n")
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([compiler, "-std=c++20", "-O2", "-I", include_dir, "-c", src, "-o", os.devnull], check=True)
            best = min(best, time.perf_counter() - start)
        return best


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("include_dir")
    parser.add_argument("--compiler", default=os.environ.get("CXX", "c++"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    empty = compile_seconds(args.compiler, args.include_dir, "", args.runs)
    print(f"| header | compile time added to an empty TU (-O2, best of {args.runs}) |")
    print("| --- | ---: |")
    added = {}
    for header in HEADERS:
        added[header] = compile_seconds(args.compiler, args.include_dir, f"#include <{header}>", args.runs) - empty
        print(f"| `<{header}>` | {added[header]:.2f} s |")
    pre = subprocess.run([args.compiler, "-std=c++20", "-I", args.include_dir, "-E", "-x", "c++", "-"],
                         input="#include <hookscope/observer.hpp>\n", capture_output=True, text=True, check=True)
    heavy = [lib for lib in ("boost/hana", "boost/pfr", "boost/json") if lib in pre.stdout]
    print()
    print("performance targets (docs/architecture.md):")
    umbrella = added["hookscope/hookscope.hpp"]
    umbrella_met = umbrella <= UMBRELLA_MAX_S
    print(f"- {'met' if umbrella_met else 'NOT met'}: `#include <hookscope/hookscope.hpp>` ≤ {UMBRELLA_MAX_S:.1f} s "
          f"added: {umbrella:.2f} s")
    print(f"- {'NOT met' if heavy else 'met'}: the core observer header includes no Hana, PFR or JSON"
          + (f" (found {', '.join(heavy)})" if heavy else ""))
    return 1 if args.check and (heavy or not umbrella_met) else 0


if __name__ == "__main__":
    sys.exit(main())
