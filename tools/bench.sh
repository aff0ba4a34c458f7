#!/usr/bin/env bash
# Prints the benchmark tables on a Debian 12 machine, from any directory:
#
#   tools/bench.sh [--entt DIR] [bench_table.py options, e.g. --repetitions 10 or --check]
#   tools/bench.sh --read [--repetitions N] [--check]
#
# --entt DIR: the src/ directory of an EnTT checkout (EnTT is in no Debian package), whose sigh the observer
# benchmarks then time in the same binary (meson option entt_include).
#
# Installs the missing build packages (as root, or through sudo), configures the release build directory
# build-bench at the repository root if needed (HOOKSCOPE_BENCH_BUILD_DIR=DIR picks another one, absolute or
# relative to the repository root), compiles the benchmarks and runs tools/bench_table.py on them: the
# observer table, then the observable functions' table (hooks enabled), then the same observable benchmarks
# built with hooks compiled out, the recorder's table, and the record reader + shape engine's records/s.
#
# --read: reading a file of records against the parsing floor, alone (docs/benchmarks.md, "Reading records"). Makes
# the files once in BUILD/read-data with tools/generate_records.py (200,000 decoder records, ~100 MB; the same
# records in 1,000 shards; a 1 GB file), then prints bench/read.bench.cpp's table (hookscope, simdjson on demand,
# Boost.JSON's basic_parser, the merge of the shards' summaries), the peak RSS of one pass over the 1 GB file, and
# hookscope.infer beside the command (bench/read_python_bench.py, in a venv of the package alone, BUILD/pyenv-read).
set -euo pipefail

repo_root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$repo_root"
build_dir="${HOOKSCOPE_BENCH_BUILD_DIR:-build-bench}"
entt_include=""
read_only=false
if [[ ${1:-} == --read ]]; then
  read_only=true
  shift
fi
if [[ ${1:-} == --entt ]]; then
  entt_include="$(readlink -f "${2:?tools/bench.sh: --entt needs the src/ directory of an EnTT checkout}")"
  shift 2
fi

source tools/ensure_packages.sh
ensure_packages "${HOOKSCOPE_BUILD_PACKAGES[@]}"

if [[ ! -f $build_dir/build.ninja ]]; then
  meson setup "$build_dir" --buildtype=release -Dbench=enabled -Dentt_include="$entt_include"
else
  # An existing directory may have been configured otherwise: the table is meant for release, hooks on.
  options="$(meson introspect "$build_dir" --buildoptions)"
  if ! python3 -c '
import json, sys
want = {"buildtype": "release", "bench": "enabled", "hooks": True}
have = {o["name"]: o["value"] for o in json.loads(sys.argv[1])}
sys.exit(0 if all(have.get(k) == v for k, v in want.items()) else 1)' "$options"; then
    meson configure "$build_dir" -Dbuildtype=release -Dbench=enabled -Dhooks=true
  fi
  meson configure "$build_dir" -Dentt_include="$entt_include"
fi

if $read_only; then
  source tools/bench_read.sh
  bench_read "$build_dir" "$@"
  exit
fi

benches=(observer_bench observable_bench observable_bench_disabled probes_bench recorder_bench environment_bench shapes_bench)
ninja -C "$build_dir" build.ninja >/dev/null  # regenerate first: targets added since setup are then known
meson compile -C "$build_dir" "${benches[@]}"
python3 tools/bench_table.py "${benches[@]/#/$build_dir/bench/}" "$@"
echo
echo "### include cost"
echo
python3 tools/include_cost.py include
echo
echo "### annotation cost"
echo
python3 tools/annotation_cost.py include
