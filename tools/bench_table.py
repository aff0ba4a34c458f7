#!/usr/bin/env python3
"""Prints the observer benchmarks as a Markdown table and checks them against the DESIGN.md targets.

    python3 tools/bench_table.py BUILD/bench/observer_bench [--repetitions 5]   # runs the benchmark
    python3 tools/bench_table.py --json observer.json                         # reads saved output

Saved output comes from `observer_bench --benchmark_format=json --benchmark_repetitions=N
--benchmark_report_aggregates_only=true` (without aggregates, the median of the runs is taken).

Every benchmark makes the same non-inlined call as `plain_call` and then emits once, so "over plain_call"
is the cost of the emission alone. "hookscope is X× faster" compares those emission costs, measured in
the same run: (peer − plain_call) / (hookscope − plain_call). Standard library only.
"""

import argparse
import json
import statistics
import subprocess
import sys

BASELINE = "plain_call"
SIGC = "libsigc++"
SIGNALS2 = "Boost.Signals2"

# hookscope benchmark -> {peer library: the peer's benchmark of the same shape}
PEERS_OF = {
    "observer_one_context_callback": {SIGC: "sigc_one_slot", SIGNALS2: "signals2_one_slot"},
    "observer_one_global_callback": {SIGC: "sigc_one_slot", SIGNALS2: "signals2_one_slot"},
    "observer_8_callbacks": {SIGC: "sigc_8_slots", SIGNALS2: "signals2_8_slots"},
}

# The Performance targets of DESIGN.md that these benchmarks measure.
NO_CALLBACK_MAX_NS = 0.5
ONE_CALLBACK_MAX_NS = 3.0
MIN_SPEEDUP = {SIGC: 15.0, SIGNALS2: 30.0}

NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("binary", nargs="?", help="observer_bench executable to run")
    source.add_argument("--json", metavar="FILE",
                        help="read saved Google Benchmark JSON, or a log holding it ('-' for stdin)")
    parser.add_argument("--repetitions", type=int, default=5, help="repetitions when running (default 5)")
    parser.add_argument("--min-time", type=float, metavar="SECONDS",
                        help="minimum time per repetition when running (Google Benchmark's default 0.5)")
    parser.add_argument("--filter", metavar="REGEX", help="only the benchmarks matching REGEX (when running)")
    parser.add_argument("--save-json", metavar="FILE", help="also write the benchmark's JSON output to FILE")
    parser.add_argument("--time", choices=["cpu", "real"], default="cpu",
                        help="which time to report (default cpu: less hurt by preemption on a busy machine)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is not met")
    args = parser.parse_args(argv)
    if args.repetitions < 1:
        parser.error("--repetitions must be at least 1")
    return args


def run_benchmark(args):
    command = [args.binary, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"]
    if args.min_time is not None:
        command.append(f"--benchmark_min_time={args.min_time}")
    if args.filter:
        command.append(f"--benchmark_filter={args.filter}")
    print(f"running: {' '.join(command)}", file=sys.stderr)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    except OSError as e:
        sys.exit(f"bench_table: cannot run {args.binary}: {e.strerror}")
    if done.returncode != 0:
        sys.exit(f"bench_table: {args.binary} exited with status {done.returncode}")
    return done.stdout


def read_json(args):
    try:
        if args.json == "-":
            return sys.stdin.read()
        with open(args.json, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        sys.exit(f"bench_table: cannot read {args.json}: {e.strerror}")


def parse_json(text):
    """The benchmark's JSON, alone or inside a log (meson-logs/testlog.txt of `meson test --benchmark`)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        start = text.find('{\n  "context"')
        if start < 0:
            sys.exit(f"bench_table: not Google Benchmark JSON (line {e.lineno}: {e.msg}); "
                     "run the benchmark with --benchmark_format=json")
    try:
        return json.JSONDecoder().raw_decode(text, start)[0]
    except json.JSONDecodeError as e:
        sys.exit(f"bench_table: the benchmark JSON in the log is cut short or broken (line {e.lineno}: {e.msg})")


def medians(data, basis):
    """Returns ({name: median ns}, {name: error message}, names in run order)."""
    aggregated, samples, errors, order = {}, {}, {}, []
    for run in data.get("benchmarks", []):
        name = run.get("run_name") or run["name"]
        if name not in order:
            order.append(name)
        if run.get("error_occurred"):
            errors[name] = run.get("error_message", "error")
            continue
        ns = run[f"{basis}_time"] * NS_PER_UNIT[run.get("time_unit", "ns")]
        if run.get("run_type") == "aggregate":
            if run.get("aggregate_name") == "median":
                aggregated[name] = ns
        else:
            samples.setdefault(name, []).append(ns)
    result = {name: statistics.median(values) for name, values in samples.items()}
    result.update(aggregated)
    return result, errors, order


def over_plain(times, name):
    if name not in times or BASELINE not in times:
        return None
    return times[name] - times[BASELINE]


def speedup(times, ours, theirs):
    """(peer emission cost) / (hookscope emission cost), or None when either is not measured or not positive."""
    mine, peer = over_plain(times, ours), over_plain(times, theirs)
    if mine is None or peer is None or mine <= 0 or peer <= 0:
        return None
    return peer / mine


def format_ns(ns):
    return f"{ns:.2f}" if ns < 100 else f"{ns:.1f}"


def format_speedup(times, ours, library):
    theirs = PEERS_OF[ours][library]
    if theirs not in times:
        return f"n/a ({library} not measured)"
    ratio = speedup(times, ours, theirs)
    if ratio is None:
        return "n/a (an emission cost is not above plain_call)"
    return f"{ratio:.1f}× faster" if ratio >= 1 else f"{1 / ratio:.1f}× slower"


def table(times, errors, order):
    lines = [f"| benchmark | median ns | ns over {BASELINE} | hookscope vs {SIGC} | hookscope vs {SIGNALS2} |",
             "| --- | ---: | ---: | --- | --- |"]
    for name in order:
        if name in errors and name not in times:
            lines.append(f"| {name} | error: {errors[name]} | | | |")
            continue
        delta = over_plain(times, name)
        delta_text = "—" if name == BASELINE or delta is None else f"{delta:+.2f}"
        sigc = signals2 = ""
        if name in PEERS_OF:
            sigc = format_speedup(times, name, SIGC)
            signals2 = format_speedup(times, name, SIGNALS2)
        lines.append(f"| {name} | {format_ns(times[name])} | {delta_text} | {sigc} | {signals2} |")
    return lines


def targets(times):
    """One (met: bool | None, text) per DESIGN.md target; None means it could not be measured."""
    results = []

    def at_most(label, name, limit):
        delta = over_plain(times, name)
        if delta is None:
            results.append((None, f"{label} ≤ {limit} ns: not measured ({name} or {BASELINE} missing)"))
        else:
            results.append((delta <= limit, f"{label} ≤ {limit} ns: {delta:+.2f} ns ({name} − {BASELINE})"))

    at_most("enabled, no callback anywhere, over the plain call", "observer_no_callback", NO_CALLBACK_MAX_NS)
    at_most("one context callback, per observe", "observer_one_context_callback", ONE_CALLBACK_MAX_NS)
    ours = "observer_one_context_callback"
    for library, minimum in MIN_SPEEDUP.items():
        theirs = PEERS_OF[ours][library]
        ratio = speedup(times, ours, theirs)
        label = f"one context callback, ≥ {minimum:.0f}× faster than {library}"
        if ratio is None:
            results.append((None, f"{label}: not measured ({ours} or {theirs} missing or not above {BASELINE})"))
        else:
            results.append((ratio >= minimum, f"{label}: {ratio:.1f}× ({theirs} {over_plain(times, theirs):.2f} ns"
                                              f" / {ours} {over_plain(times, ours):.2f} ns over {BASELINE})"))
    return results


def describe(context, basis, repetitions):
    parts = []
    if "hookscope_hooks" in context:
        parts.append(f"hooks {context['hookscope_hooks']}")
    if "hookscope_compiler" in context:
        parts.append(context["hookscope_compiler"].strip())
    if "host_name" in context:
        parts.append(f"{context['host_name']}, {context.get('num_cpus', '?')} CPUs")
    if "load_avg" in context:
        parts.append("load " + " ".join(f"{x:.2f}" for x in context["load_avg"]))
    if "date" in context:
        parts.append(context["date"])
    parts.append(f"{basis} time, median of {repetitions}" if repetitions else f"{basis} time")
    return "; ".join(parts)


def main(argv):
    args = parse_args(argv)
    text = run_benchmark(args) if args.binary else read_json(args)
    if args.save_json:
        with open(args.save_json, "w", encoding="utf-8") as f:
            f.write(text)
    data = parse_json(text)
    times, errors, order = medians(data, args.time)
    if not order:
        sys.exit("bench_table: the JSON holds no benchmark")
    repetitions = max((run.get("repetitions", 1) for run in data.get("benchmarks", [])), default=1)
    context = data.get("context", {})

    print("\n".join(table(times, errors, order)))
    print()
    print(f"_{describe(context, args.time, repetitions)}. Ratios compare emission costs "
          f"(median − {BASELINE}) measured in this run._")
    print()
    if context.get("hookscope_hooks") == "disabled":
        print("Hooks are disabled in this build: every observer_* row should match plain_call. "
              "The DESIGN.md targets are for enabled builds; none is checked.")
        return 0
    print("DESIGN.md targets:")
    results = targets(times)
    for met, text_line in results:
        verdict = "not measured" if met is None else ("met" if met else "NOT met")
        print(f"- {verdict}: {text_line}")
    if args.check and not all(met for met, _ in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
