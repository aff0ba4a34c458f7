#!/usr/bin/env python3
"""Prints the hookscope benchmarks as Markdown tables and checks them against the performance targets.

    python3 tools/bench_table.py BUILD/bench/observer_bench [--repetitions 5]   # runs the benchmark
    python3 tools/bench_table.py BUILD/bench/observer_bench BUILD/bench/observable_bench \
        BUILD/bench/observable_bench_disabled                                 # several, one table each
    python3 tools/bench_table.py --json observer.json [--json more.json]      # reads saved output

Saved output comes from `observer_bench --benchmark_format=json --benchmark_repetitions=N
--benchmark_report_aggregates_only=true` (without aggregates, the median of the runs is taken). A file may
hold several such outputs one after the other (what --save-json writes for several binaries, or
meson-logs/testlog.txt of `meson test --benchmark`): each gets its table.

Observers (bench/observer.bench.cpp): every benchmark makes the same non-inlined call as `plain_call` and
then emits once, so "over plain_call" is the cost of the emission alone. "hookscope is X× faster" compares
those emission costs, measured in the same run: (peer − plain_call) / (hookscope − plain_call).

Observable functions (bench/observable.bench.cpp, benchmarks named observable_*): every benchmark calls the
same non-inlined function, directly in `observable_plain_call` and through the annotation in the others, so
"over observable_plain_call" is the cost of the observation alone. Built with hooks disabled, the annotated
call must cost what the plain one does: their ratio is checked against 1.00 within ±3% (run-to-run noise).

Record reading and streaming inference (bench/shapes.bench.cpp, benchmarks named shapes_*): records/s and the
peak RSS before and after 100 k and 1 M records, checked against ">= 200 k records/s, memory flat".

Reading a file against the parsing floor (bench/read.bench.cpp, benchmarks named read_*; tools/read_table.py):
records/s and MB/s of hookscope, simdjson on demand and Boost.JSON's basic_parser, ratios to the floor.

Standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import read_table

BASELINE = "plain_call"
SIGC = "libsigc++"
SIGNALS2 = "Boost.Signals2"
ENTT = "EnTT sigh"

# hookscope benchmark -> {peer library: the peer's benchmark of the same shape}
PEERS_OF = {
    "observer_one_context_callback": {SIGC: "sigc_one_slot", SIGNALS2: "signals2_one_slot",
                                      ENTT: "entt_sigh_one_callback"},
    "observer_one_global_callback": {SIGC: "sigc_one_slot", SIGNALS2: "signals2_one_slot",
                                     ENTT: "entt_sigh_one_callback"},
    "observer_8_callbacks": {SIGC: "sigc_8_slots", SIGNALS2: "signals2_8_slots", ENTT: "entt_sigh_8_callbacks"},
    "observer_churn_context_callback": {SIGC: "sigc_churn", SIGNALS2: "signals2_churn", ENTT: "entt_sigh_churn"},
    "observer_churn_after_300_threads": {SIGC: "sigc_churn", SIGNALS2: "signals2_churn", ENTT: "entt_sigh_churn"},
}
# EnTT's sigh in the same binary (configured with -Dentt_include): one context callback, per iteration (the plain
# call included, as the issue measures it), at most this many times EnTT's.
ENTT_ROW = "entt_sigh_one_callback"
ENTT_MAX_RATIO = 1.5

# Observers at server scale: churn, other threads' callbacks, the EnTT-style baseline, two threads.
CHURN_MAX_NS = 100.0
CHURN_ROWS = ("observer_churn_context_callback", "observer_churn_after_300_threads")
CHURN_BASELINE = "churn_plain_call"
OTHERS_ROW = "observer_one_callback_others/{}"
OTHERS_MAX_RATIO = 1.25
DELEGATE_ROW = "delegate_one_callback"
DELEGATE_MAX_RATIO = 1.5
THREADS_ROW = "observer_emit_threads/real_time/threads:{}"
DELEGATE_THREADS_ROW = "delegate_emit_threads/real_time/threads:{}"
MIN_TWO_THREAD_SCALING = 1.8

# The performance targets (docs/architecture.md) that these benchmarks measure.
NO_CALLBACK_MAX_NS = 0.5
ONE_CALLBACK_MAX_NS = 3.0
MIN_SPEEDUP = {SIGC: 15.0, SIGNALS2: 30.0}

# bench/observable.bench.cpp: its benchmarks share this prefix; each is compared to its plain-call baseline.
OBSERVABLE_PREFIX = "observable_"
OBSERVABLE_BASELINE = "observable_plain_call"
OBSERVABLE_NO_CALLBACK = "observable_no_callback"
OBSERVABLE_PRE_POST = "observable_pre_post_callbacks"
PRE_POST_MAX_NS = 5.0
ENTT_PRE_POST = "entt_sigh_pre_post"  # the peer: EnTT's sigh published before and after the same call
DISABLED_RATIO = 1.00
DISABLED_RATIO_TOLERANCE = 0.03  # run-to-run noise of two identical calls on a busy 2-core VM

NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binaries", nargs="*", metavar="binary",
                        help="benchmark executable to run (observer_bench, observable_bench, ...); "
                             "several give one table each, in order")
    parser.add_argument("--json", metavar="FILE", action="append",
                        help="read saved Google Benchmark JSON, or a log holding it ('-' for stdin); repeatable")
    parser.add_argument("--repetitions", type=int, default=5, help="repetitions when running (default 5)")
    parser.add_argument("--min-time", type=float, metavar="SECONDS",
                        help="minimum time per repetition when running (Google Benchmark's default 0.5)")
    parser.add_argument("--filter", metavar="REGEX", help="only the benchmarks matching REGEX (when running)")
    parser.add_argument("--interleave", choices=["auto", "on", "off"], default="auto",
                        help="run repetitions of different benchmarks in random order (Google Benchmark's "
                             "--benchmark_enable_random_interleaving); auto (default): for the observable "
                             "benchmarks only, which compare near-identical loops")
    parser.add_argument("--save-json", metavar="FILE",
                        help="also write the benchmark's JSON output to FILE (several runs: one after the other)")
    parser.add_argument("--time", choices=["cpu", "real"], default="cpu",
                        help="which time to report (default cpu: less hurt by preemption on a busy machine)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is not met")
    args = parser.parse_args(argv)
    if bool(args.binaries) == bool(args.json):
        parser.error("give either benchmark executables to run or --json FILE, not both" if args.binaries
                     else "give a benchmark executable to run or --json FILE")
    if args.repetitions < 1:
        parser.error("--repetitions must be at least 1")
    return args


def list_benchmarks(binary, args):
    command = [binary, "--benchmark_list_tests=true"]
    if args.filter:
        command.append(f"--benchmark_filter={args.filter}")
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False)
    except OSError as e:
        sys.exit(f"bench_table: cannot run {binary}: {e.strerror}")
    return done.stdout.split()


def interleaved(args, binary):
    """Whether to shuffle the repetitions of `binary`'s benchmarks.

    This machine has slow phases, seconds long, in which the same loop runs up to 25% slower; run one after
    the other, two benchmarks can land in different phases. The observable benchmarks compare loops that
    differ by a fraction of a nanosecond (or not at all, hooks disabled), so by default their repetitions
    are shuffled and every benchmark samples every phase alike. The observer benchmarks keep their order.
    """
    if args.interleave != "auto":
        return args.interleave == "on"
    return is_observable_run(list_benchmarks(binary, args))


def run_benchmark(args, binary):
    command = [binary, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"]
    if args.min_time is not None:
        command.append(f"--benchmark_min_time={args.min_time}")
    if args.filter:
        command.append(f"--benchmark_filter={args.filter}")
    if interleaved(args, binary):
        command.append("--benchmark_enable_random_interleaving=true")
    print(f"running: {' '.join(command)}", file=sys.stderr)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    except OSError as e:
        sys.exit(f"bench_table: cannot run {binary}: {e.strerror}")
    if done.returncode != 0:
        sys.exit(f"bench_table: {binary} exited with status {done.returncode}")
    return done.stdout


def read_json(path):
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        sys.exit(f"bench_table: cannot read {path}: {e.strerror}")


def parse_json(text, source):
    """Every benchmark JSON document in `text`: one alone, or several inside a log (meson-logs/testlog.txt of
    `meson test --benchmark`) or one after the other (--save-json of several runs)."""
    marker = '{\n  "context"'
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as e:
        start = text.find(marker)
        if start < 0:
            sys.exit(f"bench_table: {source}: not Google Benchmark JSON (line {e.lineno}: {e.msg}); "
                     "run the benchmark with --benchmark_format=json")
    documents = []
    decoder = json.JSONDecoder()
    while start >= 0:
        try:
            document, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as e:
            sys.exit(f"bench_table: {source}: the benchmark JSON in the log is cut short or broken "
                     f"(line {e.lineno}: {e.msg})")
        documents.append(document)
        start = text.find(marker, end)
    return documents


def medians(data, basis):
    """Returns ({name: median ns}, {name: error message}, names in registration order)."""
    aggregated, samples, errors, order, family = {}, {}, {}, [], {}
    for run in data.get("benchmarks", []):
        name = run.get("run_name") or run["name"]
        if name not in order:
            order.append(name)
            family[name] = (run.get("family_index", 0), run.get("per_family_instance_index", 0))
        if run.get("error_occurred"):
            errors[name] = run.get("error_message", "error")
            continue
        # A row timed by hand (UseManualTime) reports its own measure as its real time.
        time_of = "real" if "manual_time" in name else basis
        ns = run[f"{time_of}_time"] * NS_PER_UNIT[run.get("time_unit", "ns")]
        if run.get("run_type") == "aggregate":
            if run.get("aggregate_name") == "median":
                aggregated[name] = ns
        else:
            samples.setdefault(name, []).append(ns)
    result = {name: statistics.median(values) for name, values in samples.items()}
    result.update(aggregated)
    # Registration order, also when the repetitions ran shuffled (--benchmark_enable_random_interleaving).
    order.sort(key=lambda name: family[name])
    return result, errors, order


def ran_shuffled(data):
    """True when the output lists benchmarks out of registration order: run with random interleaving."""
    seen = []
    for run in data.get("benchmarks", []):
        index = run.get("family_index", 0)
        if not seen or seen[-1] != index:
            seen.append(index)
    return seen != sorted(seen)


def over_plain(times, name, baseline=BASELINE):
    if name not in times or baseline not in times:
        return None
    return times[name] - times[baseline]


def ratio_to_plain(times, name, baseline):
    if name not in times or times.get(baseline, 0) <= 0:
        return None
    return times[name] / times[baseline]


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
    lines = [f"| benchmark | median ns | ns over {BASELINE} | hookscope vs {SIGC} | hookscope vs {SIGNALS2} "
             f"| hookscope vs {ENTT} |",
             "| --- | ---: | ---: | --- | --- | --- |"]
    for name in order:
        if name in errors and name not in times:
            lines.append(f"| {name} | error: {errors[name]} | | | | |")
            continue
        delta = over_plain(times, name)
        delta_text = "—" if name == BASELINE or delta is None else f"{delta:+.2f}"
        sigc = signals2 = entt = ""
        if name in PEERS_OF:
            sigc = format_speedup(times, name, SIGC)
            signals2 = format_speedup(times, name, SIGNALS2)
            entt = format_speedup(times, name, ENTT)
        lines.append(f"| {name} | {format_ns(times[name])} | {delta_text} | {sigc} | {signals2} | {entt} |")
    return lines


def at_most(times, label, name, limit, base=BASELINE):
    """(met, text) for "`name` costs at most `limit` ns over `base`"; met is None when either is missing."""
    delta = over_plain(times, name, base)
    if delta is None:
        return (None, f"{label} ≤ {limit} ns: not measured ({name} or {base} missing)")
    return (delta <= limit, f"{label} ≤ {limit} ns: {delta:+.2f} ns ({name} − {base})")


def targets(times):
    """One (met: bool | None, text) per performance target; None means it could not be measured."""
    results = [
        at_most(times, "enabled, no callback anywhere, over the plain call", "observer_no_callback", NO_CALLBACK_MAX_NS),
        at_most(times, "one context callback, per observe", "observer_one_context_callback", ONE_CALLBACK_MAX_NS),
    ]
    for name in CHURN_ROWS:
        results.append(at_most(times, f"add + remove of a context callback ({name})", name, CHURN_MAX_NS,
                               CHURN_BASELINE))
    none, most = times.get(OTHERS_ROW.format(0)), times.get(OTHERS_ROW.format(256))
    label = f"one own callback with 256 other threads' callbacks ≤ {OTHERS_MAX_RATIO}× with none"
    if none and most:
        results.append((most <= OTHERS_MAX_RATIO * none, f"{label}: {most / none:.2f}× ({most:.2f} / {none:.2f} ns)"))
    else:
        results.append((None, f"{label}: not measured"))
    ours, delegate = times.get("observer_one_context_callback"), times.get(DELEGATE_ROW)
    label = f"one context callback ≤ {DELEGATE_MAX_RATIO}× a delegate vector (EnTT-style), per iteration"
    if ours and delegate:
        results.append((ours <= DELEGATE_MAX_RATIO * delegate,
                        f"{label}: {ours / delegate:.2f}× ({ours:.2f} / {delegate:.2f} ns)"))
    else:
        results.append((None, f"{label}: not measured"))
    ours, entt = times.get("observer_one_context_callback"), times.get(ENTT_ROW)
    label = f"one context callback ≤ {ENTT_MAX_RATIO}× EnTT's sigh in the same binary, per iteration"
    if ours and entt:
        results.append((ours <= ENTT_MAX_RATIO * entt, f"{label}: {ours / entt:.2f}× ({ours:.2f} / {entt:.2f} ns)"))
    else:
        results.append((None, f"{label}: not measured (configure with -Dentt_include, tools/bench.sh --entt DIR)"))
    for row, what in ((THREADS_ROW, "hookscope"), (DELEGATE_THREADS_ROW, "delegate vector (reported)")):
        one, two = times.get(row.format(1)), times.get(row.format(2))
        label = f"two threads emitting ≥ {MIN_TWO_THREAD_SCALING}× one thread's throughput, {what}"
        if one and two:
            scaling = 2 * one / two
            met = scaling >= MIN_TWO_THREAD_SCALING if what == "hookscope" else True
            results.append((met, f"{label}: {scaling:.2f}× (per-thread time per emission {one:.2f} -> {two:.2f} ns)"))
        else:
            results.append((None, f"{label}: not measured"))
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


def observable_table(times, errors, order, base=OBSERVABLE_BASELINE):
    lines = [f"| benchmark | median ns | ns over {base} | × {base} |",
             "| --- | ---: | ---: | ---: |"]
    for name in order:
        if name in errors and name not in times:
            lines.append(f"| {name} | error: {errors[name]} | | |")
            continue
        delta, ratio = over_plain(times, name, base), ratio_to_plain(times, name, base)
        delta_text = "—" if name == base or delta is None else f"{delta:+.2f}"
        ratio_text = "—" if name == base or ratio is None else f"{ratio:.2f}"
        lines.append(f"| {name} | {format_ns(times[name])} | {delta_text} | {ratio_text} |")
    return lines


def observable_targets(times, hooks_enabled):
    """As targets(), for the observable benchmarks of an enabled build, or of a hooks-disabled one."""
    results = []
    base = OBSERVABLE_BASELINE
    if hooks_enabled:
        for label, name, limit in (
                ("enabled, no callback anywhere, over the plain call", OBSERVABLE_NO_CALLBACK, NO_CALLBACK_MAX_NS),
                ("observable with pre + post callbacks, over the plain call", OBSERVABLE_PRE_POST, PRE_POST_MAX_NS)):
            results.append(at_most(times, label, name, limit, base))
        ours, entt = over_plain(times, OBSERVABLE_PRE_POST, base), over_plain(times, ENTT_PRE_POST, base)
        if ours is not None and entt is not None and entt > 0:
            print(f"pre + post over the plain call, hookscope / EnTT's sigh: {ours / entt:.2f}× "
                  f"({ours:+.2f} / {entt:+.2f} ns)")
        return results
    name = OBSERVABLE_NO_CALLBACK
    label = (f"disabled build, annotated vs plain, ratio {DISABLED_RATIO:.2f} "
             f"(±{DISABLED_RATIO_TOLERANCE:.0%} noise)")
    ratio = ratio_to_plain(times, name, base)
    if ratio is None:
        results.append((None, f"{label}: not measured ({name} or {base} missing)"))
    else:
        met = abs(ratio - DISABLED_RATIO) <= DISABLED_RATIO_TOLERANCE
        results.append((met, f"{label}: {ratio:.3f} ({name} {times[name]:.3f} ns / {base} {times[base]:.3f} ns)"))
    return results


def is_observable_run(order):
    return any(name.startswith(OBSERVABLE_PREFIX) for name in order)


RECORDER_BASELINE = "recorder_plain_call"
RECORD_MAX_NS = 150


def is_recorder_run(order):
    return any(name.startswith("recorder_") for name in order)


def recorder_targets(times):
    """Recording one call of 3 tensors within its budget; capture beside a hand-written copy (reported)."""
    label = "recording one call with 3 tensor arguments, over the plain call"
    results = [at_most(times, label, "recorder_record_3_tensors", RECORD_MAX_NS, RECORDER_BASELINE)]
    capture, hand = times.get("recorder_capture_3_tensors"), times.get("recorder_hand_copy_3_tensors")
    if capture and hand:
        print(f"Capture into the value tree vs a hand-written copy of the same shapes: {capture / hand:.2f}×")
    return results


# bench/environment.bench.cpp: each environment feature per traced call on the calling thread, over the plain call of
# the same function; HOOKSCOPE_RECORD also per record for the whole process (writer thread and exit included: rows
# timed by hand, `manual_time`, absolute).
ENVIRONMENT_BASELINE = "environment_plain_one/threads:1"
PLAIN_FORWARD = "environment_plain_forward/threads:{}"
PLAIN_ONE = "environment_plain_one/threads:{}"
ENVIRONMENT_TARGETS = tuple(
    (f"{label}, {threads} thread{'s' if threads > 1 else ''}, over the plain call", row.format(threads), limit,
     base.format(threads))
    for threads in (1, 2)
    for label, row, limit, base in (
        ("HOOKSCOPE_RECORD on the calling thread, forward (4 tensors + int)", "environment_record_forward/threads:{}",
         100, PLAIN_FORWARD),
        ("HOOKSCOPE_RECORD on the calling thread, one int", "environment_record_one/threads:{}", 100, PLAIN_ONE),
        ("HOOKSCOPE_STATS, one int", "environment_stats_one/threads:{}", 20, PLAIN_ONE),
        ("HOOKSCOPE_STATS, forward", "environment_stats_forward/threads:{}", 20, PLAIN_FORWARD),
        ("HOOKSCOPE_TIMELINE, one int", "environment_timeline_one/threads:{}", 50, PLAIN_ONE),
        ("HOOKSCOPE_TIMELINE, forward", "environment_timeline_forward/threads:{}", 50, PLAIN_FORWARD)))
ENVIRONMENT_PROCESS_TARGETS = tuple(
    (f"HOOKSCOPE_RECORD, whole process per record, {function}, {threads} thread{'s' if threads > 1 else ''}",
     f"environment_record_process_{function}/{threads}/iterations:1/manual_time", 250)
    for function in ("forward", "one") for threads in (1, 2))


def environment_targets(times):
    results = [at_most(times, label, name, limit, base) for label, name, limit, base in ENVIRONMENT_TARGETS]
    for label, name, limit in ENVIRONMENT_PROCESS_TARGETS:
        ns = times.get(name)
        results.append((None, f"{label} ≤ {limit} ns: not measured ({name} missing)") if ns is None else
                       (ns <= limit, f"{label} ≤ {limit} ns: {ns:.0f} ns"))
    return results


def is_environment_run(order):
    return any(name.startswith("environment_") for name in order)


# bench/shapes.bench.cpp: reading records and streaming inference, counted in records/s (counters, not times).
SHAPES_PREFIX = "shapes_"
SHAPES_TARGET = "shapes_read_infer/1000000"
MIN_RECORDS_PER_S = 200_000
FLAT_MEMORY_MIB = 1.0  # peak RSS after 1 M records vs after 100 k: allocator noise, not growth


# bench/probes.bench.cpp: USDT probes idle, raised and with callbacks, beside the plain call and peers.
PROBES_BASELINE = "probes_plain_call"
RAISED_PROBE_MAX_NS = 3.0
PROBES_TARGETS = (
    ("probes compiled in, nobody attached or listening, over the plain call", "probes_idle", NO_CALLBACK_MAX_NS,
     PROBES_BASELINE),
    ("pre + post callbacks with probes compiled in, over the plain call", "probes_pre_post", PRE_POST_MAX_NS,
     PROBES_BASELINE),
    ("a raised probe (a tool attached, no callback), over the plain call", "probes_raised", RAISED_PROBE_MAX_NS,
     PROBES_BASELINE),
)


def is_probes_run(order):
    return any(name.startswith("probes_") for name in order)


def probes_targets(times):
    """The idle and pre + post targets with probes; what the probes add beside the same annotation without them."""
    results = [at_most(times, label, name, limit, base) for label, name, limit, base in PROBES_TARGETS]
    for ours, without in (("probes_idle", "probes_without_probes_idle"),
                          ("probes_pre_post", "probes_without_probes_pre_post")):
        if ours in times and without in times:
            print(f"{ours} − {without} (what the probe check adds): {times[ours] - times[without]:+.2f} ns")
    return results


def is_shapes_run(order):
    return any(name.startswith(SHAPES_PREFIX) for name in order)


def shapes_counters(data):
    """{benchmark: counters} from the median aggregates (or the runs themselves without aggregates)."""
    counters = {}
    for run in data.get("benchmarks", []):
        name = (run.get("run_name") or run["name"]).replace("/iterations:1", "")
        if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
            continue
        if "records_per_s" in run:
            counters[name] = run
    return counters


def shapes_table(counters):
    lines = ["| benchmark | records/s | peak RSS before (MiB) | peak RSS after (MiB) |",
             "| --- | ---: | ---: | ---: |"]
    for name, run in counters.items():
        lines.append(f"| {name} | {run['records_per_s'] / 1000:.0f} k | {run.get('peak_rss_before_MiB', 0):.1f} | "
                     f"{run.get('peak_rss_after_MiB', 0):.1f} |")
    return lines


def shapes_targets(counters):
    results = []
    run = counters.get(SHAPES_TARGET)
    label = f"hookscope-shapes on 1 M records, >= {MIN_RECORDS_PER_S // 1000} k records/s"
    if run is None:
        results.append((None, f"{label}: not measured ({SHAPES_TARGET} missing)"))
    else:
        results.append((run["records_per_s"] >= MIN_RECORDS_PER_S, f"{label}: {run['records_per_s'] / 1000:.0f} k/s"))
    small = counters.get(SHAPES_TARGET.replace("1000000", "100000"))
    label = f"memory flat: peak RSS after 1 M records within {FLAT_MEMORY_MIB} MiB of that after 100 k"
    if run is None or small is None:
        results.append((None, f"{label}: not measured"))
    else:
        growth = run["peak_rss_after_MiB"] - small["peak_rss_after_MiB"]
        results.append((growth <= FLAT_MEMORY_MIB, f"{label}: {small['peak_rss_after_MiB']:.1f} -> "
                                                   f"{run['peak_rss_after_MiB']:.1f} MiB"))
    return results


def describe(context, basis, repetitions, interleaved_run=False):
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
    if interleaved_run:
        parts.append("repetitions shuffled")
    return "; ".join(parts)


def print_targets(results):
    print("performance targets:")
    for met, text_line in results:
        verdict = "not measured" if met is None else ("met" if met else "NOT met")
        print(f"- {verdict}: {text_line}")


def report(data, args):
    """Prints one benchmark run's table and targets; returns the targets checked, as targets() does."""
    times, errors, order = medians(data, args.time)
    repetitions = max((run.get("repetitions", 1) for run in data.get("benchmarks", [])), default=1)
    context = data.get("context", {})
    enabled = context.get("hookscope_hooks") != "disabled"
    shuffled = ran_shuffled(data)

    if read_table.is_read_run(order):
        return read_table.report(data, args.time, describe(context, args.time, repetitions, shuffled), print_targets)

    if is_shapes_run(order):
        print("\n".join(shapes_table(shapes_counters(data))))
        print()
        print(f"_{describe(context, args.time, repetitions, shuffled)}. Records/s per CPU second._")
        print()
        results = shapes_targets(shapes_counters(data))
        print_targets(results)
        return results

    # Families compared to a plain call of their own: (is this run one, its baseline, its targets when enabled).
    families = ((is_environment_run, ENVIRONMENT_BASELINE, lambda: environment_targets(times)),
                (is_probes_run, PROBES_BASELINE, lambda: probes_targets(times)),
                (is_recorder_run, RECORDER_BASELINE, lambda: recorder_targets(times)))
    for is_run, baseline, family_targets in families:
        if is_run(order):
            print("\n".join(observable_table(times, errors, order, baseline)))
            print()
            print(f"_{describe(context, args.time, repetitions, shuffled)}. Differences and ratios are to "
                  f"{baseline} measured in this run._")
            print()
            results = family_targets() if enabled else []
            print_targets(results)
            return results

    if is_observable_run(order):
        print("\n".join(observable_table(times, errors, order)))
        print()
        print(f"_{describe(context, args.time, repetitions, shuffled)}. Differences and ratios are to "
              f"{OBSERVABLE_BASELINE} measured in this run._")
        print()
        if not enabled:
            print(f"Hooks are disabled in this build: every observable_* row should match {OBSERVABLE_BASELINE}.")
        results = observable_targets(times, enabled)
        print_targets(results)
        return results

    print("\n".join(table(times, errors, order)))
    print()
    print(f"_{describe(context, args.time, repetitions, shuffled)}. Ratios compare emission costs "
          f"(median − {BASELINE}) measured in this run._")
    print()
    if not enabled:
        print("Hooks are disabled in this build: every observer_* row should match plain_call. "
              "The performance targets are for enabled builds; none is checked.")
        return []
    results = targets(times)
    print_targets(results)
    return results


def main(argv):
    args = parse_args(argv)
    if args.binaries:
        sources = []
        for binary in args.binaries:
            text = run_benchmark(args, binary)
            if text.strip():
                sources.append((binary, text))
            else:  # --filter matched none of its benchmarks: it printed nothing
                print(f"bench_table: {binary}: no benchmark ran", file=sys.stderr)
        if not sources:
            sys.exit("bench_table: no benchmark ran")
    else:
        sources = [(path, read_json(path)) for path in args.json]
    if args.save_json:
        with open(args.save_json, "w", encoding="utf-8") as f:
            f.write("\n".join(text.rstrip("\n") for _, text in sources) + "\n")
    runs = [(source, data) for source, text in sources for data in parse_json(text, source)]

    results, shown = [], 0
    for source, data in runs:
        if not data.get("benchmarks"):
            print(f"bench_table: {source}: a run holds no benchmark", file=sys.stderr)
            continue
        if shown:
            print()
        if len(runs) > 1:
            print(f"### {os.path.basename(data.get('context', {}).get('executable') or source)}")
            print()
        results += report(data, args)
        shown += 1
    if not shown:
        sys.exit("bench_table: the JSON holds no benchmark")
    if args.check and not all(met for met, _ in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
