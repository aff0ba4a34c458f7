#!/usr/bin/env bash
# The Python test environment: a venv under the build directory, made with Debian's /usr/bin/python3 (not the
# python3 first on PATH, which may be a pyenv build), holding python/requirements-test.txt and hookscope itself
# (`pip install .`, built by meson-python in <build>/python-wheel). Nothing is installed system-wide.
# Usage: tools/python_env.sh BUILD_DIR   (prints nothing on success but the timings; writes BUILD_DIR/pip-times.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath -m "${1:-build}")
venv=$build/pyenv
mkdir -p "$build"
if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
  source tools/ensure_packages.sh
  ensure_packages python3-venv
fi
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
  # Debian 12's venv brings pip 23.0, which lacks -C (--config-settings, pip >= 23.1) used below.
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade pip
fi
timed() {  # timed LABEL COMMAND...: runs it quietly, logs its wall time
  local label=$1 start end
  shift
  start=$(date +%s.%N)
  if ! "$@" >"$build/pip-$label.log" 2>&1; then
    cat "$build/pip-$label.log" >&2
    return 1
  fi
  end=$(date +%s.%N)
  printf '%s: %.1f s\n' "$label" "$(echo "$end - $start" | bc)" | tee -a "$build/pip-times.txt"
}
stamp=$venv/.requirements-installed
if [ ! -f "$stamp" ] || [ python/requirements-test.txt -nt "$stamp" ]; then
  timed requirements "$venv/bin/pip" install --disable-pip-version-check -r python/requirements-test.txt
  touch "$stamp"
fi
# Rebuilt incrementally from the same meson.build (only the python-runtime and runtime install tags go in the wheel).
timed hookscope "$venv/bin/pip" install --disable-pip-version-check --no-build-isolation \
  -Cbuild-dir="$build/python-wheel" .
