# Sourced by tools/bench.sh for --read: reading a file of records against the parsing floor.
# Usage: bench_read BUILD_DIR [bench_table.py options]   (run from the repository root, BUILD_DIR configured)

# The package alone in a venv of Debian's Python (no test requirements: the bench imports hookscope only), rebuilt
# from this checkout by meson-python in BUILD_DIR/python-wheel.
read_bench_venv() {
  local build=$1 venv=$1/pyenv-read
  if [[ ! -x $venv/bin/python ]]; then
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade pip
    "$venv/bin/pip" install --disable-pip-version-check --quiet 'meson-python>=0.13' 'meson>=1.0.1' ninja 'pybind11>=2.10'
  fi
  "$venv/bin/pip" install --disable-pip-version-check --quiet --no-build-isolation \
    -Cbuild-dir="$(realpath "$build")/python-wheel" . >"$build/pyenv-read.log" 2>&1 ||
    { cat "$build/pyenv-read.log" >&2; return 1; }
}

# generate OUT ARGS...: tools/generate_records.py OUT ARGS, unless OUT is there (written aside, then renamed, so that an
# interrupted run leaves no half file).
read_bench_generate() {
  local out=$1
  shift
  [[ -e $out ]] && return 0
  rm -rf "$out.part"
  python3 tools/generate_records.py "$out.part" "$@"
  mv "$out.part" "$out"
}

bench_read() {
  local build=$1
  shift
  local repetitions=5 args=("$@") i
  for ((i = 0; i < ${#args[@]}; ++i)); do
    [[ ${args[i]} == --repetitions ]] && repetitions=${args[i + 1]}
  done
  ninja -C "$build" build.ninja >/dev/null
  meson compile -C "$build" read_bench hookscope-shapes
  local data=$build/read-data
  mkdir -p "$data"
  read_bench_generate "$data/decoder.jsonl"
  read_bench_generate "$data/shards" --shards 1000
  read_bench_generate "$data/decoder-1g.jsonl" --size 1G
  local status=0
  echo "### reading records: hookscope against the parsing floor"
  echo
  # Repetitions shuffled: on a busy machine, slow phases then hurt every row alike, and the ratios hold.
  HOOKSCOPE_READ_BENCH_FILE=$data/decoder.jsonl HOOKSCOPE_READ_BENCH_SHARDS=$data/shards \
    python3 tools/bench_table.py "$build/bench/read_bench" --interleave on "$@" || status=$?
  echo
  echo "### peak RSS reading 1 GB, --store-n-calls all (target <= 20 MiB)"
  echo
  "$build/bench/read_bench" --rss "$data/decoder-1g.jsonl" --repetitions "$repetitions" || status=$?
  echo
  echo "### Python: hookscope.infer beside the command"
  echo
  read_bench_venv "$build" &&
    "$build/pyenv-read/bin/python" bench/read_python_bench.py "$data/decoder.jsonl" \
      --command "$build/hookscope-shapes" --repeat "$repetitions" || status=$?
  return $status
}
