#!/usr/bin/env python3
"""Reading a record file from Python against the command: `hookscope.infer(FILE, store_n_calls="all")` beside
`hookscope-shapes infer --store-n-calls all FILE` on the same file, in one run (target: Python within 10 % of the
command). Part of `tools/bench.sh --read`.

Each figure is the median of --repeat runs, the two alternating (Python in this process, gc.collect() before each
run; the command as a child process, its output discarded, its start-up included), wall time and CPU time (the
child's from getrusage(RUSAGE_CHILDREN), this process's from time.process_time). Prints a Markdown table.

Run with a Python that has the package (tools/bench.sh --read makes a venv of Debian's /usr/bin/python3 holding the
package built from this checkout, BUILD/pyenv-read):
  BUILD/pyenv-read/bin/python bench/read_python_bench.py FILE --command BUILD/hookscope-shapes [--repeat 5]
"""
import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import time

import hookscope

MAX_RATIO = 1.10


def time_python(path):
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    ds = hookscope.infer(path, store_n_calls="all")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, ds.to_json()


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(command, path):
    """Wall and CPU seconds of the command (its CPU: what the finished children's CPU time grew by)."""
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run([command, "infer", "--store-n-calls", "all", path], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=False)
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    if done.returncode != 0:
        sys.exit(f"read_python_bench: {command} exited with status {done.returncode}")
    return wall, cpu, done.stdout.decode()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="the record file (tools/generate_records.py)")
    parser.add_argument("--command", required=True, help="the hookscope-shapes executable")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (default 5)")
    args = parser.parse_args(argv)

    python_wall, python_cpu, command_wall, command_cpu = [], [], [], []
    for _ in range(args.repeat):
        wall, cpu, python_out = time_python(args.file)
        python_wall.append(wall)
        python_cpu.append(cpu)
        wall, cpu, command_out = time_command(args.command, args.file)
        command_wall.append(wall)
        command_cpu.append(cpu)
        if python_out.strip() != command_out.strip():
            print("read_python_bench: hookscope.infer and the command inferred different shapes", file=sys.stderr)
    load = os.getloadavg()
    rows = (("`hookscope.infer(FILE, store_n_calls=\"all\")`", python_wall, python_cpu),
            ("`hookscope-shapes infer --store-n-calls all FILE`", command_wall, command_cpu))
    print("| reader | wall s | CPU s |")
    print("| --- | ---: | ---: |")
    for label, wall, cpu in rows:
        print(f"| {label} | {statistics.median(wall):.3f} | {statistics.median(cpu):.3f} |")
    ratio = statistics.median(python_cpu) / statistics.median(command_cpu)
    print()
    print(f"_Median of {args.repeat}, alternating; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{os.path.getsize(args.file) / 1e6:.0f} MB file; Python {sys.version.split()[0]}._")
    print()
    verdict = "met" if ratio <= MAX_RATIO else "NOT met"
    print(f"- {verdict}: Python within {MAX_RATIO - 1:.0%} of the command (CPU time): {ratio:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
