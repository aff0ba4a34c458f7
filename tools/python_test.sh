#!/usr/bin/env bash
# The Python tests (python/tests, pytest) in the venv of tools/python_env.sh; results in BUILD_DIR/pytest.xml
# (JUnit XML, counted by tools/ci_summary.py). Usage: tools/python_test.sh BUILD_DIR [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath -m "${1:-build}")
shift || true
rm -f "$build/pytest.xml"
if ! bash tools/python_env.sh "$build"; then
  # Counted as one failure by tools/ci_summary.py, so that CI's last line cannot miss it.
  echo '<testsuite name="python_env" tests="1" failures="1" errors="0" skipped="0"><testcase name="python_env"><failure message="tools/python_env.sh failed"/></testcase></testsuite>' >"$build/pytest.xml"
  exit 1
fi
HOOKSCOPE_BUILD_DIR=$build "$build/pyenv/bin/python" -m pytest python/tests -rfEs --junitxml="$build/pytest.xml" "$@"
