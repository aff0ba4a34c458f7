"""bench/read.bench.cpp's table, printed by tools/bench_table.py: records/s and MB/s of hookscope (load + inference,
--store-n-calls all), of the parsing floor (simdjson on demand) and of Boost.JSON's basic_parser on one file, each
against the floor measured in the same run; the merge of the shards' summaries in seconds; and the targets of
reading at the parsing floor. Standard library only.
"""

HOOKSCOPE = "read_hookscope"
FLOOR = "read_floor_simdjson"
BOOST = "read_boost_basic_parser"
MERGE = "read_merge_summaries"
LABELS = {
    HOOKSCOPE: "hookscope: load_engine + infer_dynamic_shapes, --store-n-calls all",
    FLOOR: "the floor: simdjson on demand, every shape number",
    BOOST: "Boost.JSON basic_parser, every shape number",
    MERGE: "merge the shards' summaries + infer",
}

MIN_RECORDS_PER_S = 1_000_000
MIN_FLOOR_RATIO = 0.75
MERGE_MAX_S = 1.0
SECONDS_PER_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def is_read_run(order):
    return any(name.startswith("read_") for name in order)


def short(name):
    return name.replace("/iterations:1", "")


def rows_of(data, basis):
    """{benchmark: (median run, its seconds)} and {benchmark: error message}."""
    rows, errors = {}, {}
    for run in data.get("benchmarks", []):
        name = short(run.get("run_name") or run["name"])
        if run.get("error_occurred"):
            errors[name] = run.get("error_message", "error")
            continue
        if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
            continue
        seconds = run[f"{basis}_time"] * SECONDS_PER_UNIT[run.get("time_unit", "ns")]
        rows[name] = (run, seconds)
    return rows, errors


def rate(x):
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def table(rows, errors):
    floor = rows.get(FLOOR, (None, None))[0]
    lines = ["| row | records/s | MB/s | seconds | records/s vs the floor |", "| --- | ---: | ---: | ---: | ---: |"]
    for name in (HOOKSCOPE, FLOOR, BOOST, MERGE):
        label = LABELS[name]
        if name in errors:
            lines.append(f"| {label} | {errors[name]} | | | |")
        elif name in rows:
            run, seconds = rows[name]
            ratio = f"{run['records_per_s'] / floor['records_per_s']:.2f}×" if floor and name != MERGE else ""
            if name == MERGE:
                label += f" ({run.get('summaries', 0):.0f} shards)"
            lines.append(f"| {label} | {rate(run['records_per_s'])} | {run['bytes_per_s'] / 1e6:.0f} | "
                         f"{seconds:.3f} | {ratio} |")
    return lines


def targets(rows):
    results = []
    ours = rows.get(HOOKSCOPE, (None, None))[0]
    floor = rows.get(FLOOR, (None, None))[0]
    label = f"hookscope reads >= {MIN_RECORDS_PER_S / 1e6:.0f} M records/s (--store-n-calls all)"
    results.append((None, f"{label}: not measured") if ours is None else
                   (ours["records_per_s"] >= MIN_RECORDS_PER_S, f"{label}: {rate(ours['records_per_s'])}/s"))
    label = f"hookscope >= {MIN_FLOOR_RATIO} of the parsing floor (simdjson on demand, same run)"
    results.append((None, f"{label}: not measured") if ours is None or floor is None else
                   (ours["records_per_s"] >= MIN_FLOOR_RATIO * floor["records_per_s"],
                    f"{label}: {ours['records_per_s'] / floor['records_per_s']:.2f}"))
    merge = rows.get(MERGE)
    label = f"merging the shards' summaries < {MERGE_MAX_S:.0f} s"
    results.append((None, f"{label}: not measured") if merge is None else
                   (merge[1] < MERGE_MAX_S, f"{label}: {merge[1]:.2f} s ({merge[0].get('summaries', 0):.0f} shards)"))
    return results


def report(data, basis, description, print_targets):
    rows, errors = rows_of(data, basis)
    print("\n".join(table(rows, errors)))
    print()
    sums = {rows[n][0].get("shape_sum") for n in (FLOOR, BOOST) if n in rows}
    agree = "" if len(sums) < 2 else " The floor and basic_parser summed different shape numbers!"
    print(f"_{description}. Rates per {basis} second; ratios to the floor measured in this run.{agree}_")
    print()
    results = targets(rows)
    print_targets(results)
    return results
