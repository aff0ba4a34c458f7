#!/usr/bin/env bash
# The README's test command: installs what is missing, configures ./build (or $HOOKSCOPE_BUILD_DIR),
# builds everything and runs every test: Meson's, then the Python package's (pytest, in a venv under the build
# directory made with Debian's /usr/bin/python3: tools/python_test.sh). Extra arguments go to `meson setup` on the
# first run. HOOKSCOPE_PYTHON_TESTS=0 leaves the Python tests out.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure_packages.sh
ensure_packages "${HOOKSCOPE_BUILD_PACKAGES[@]}"
build=${HOOKSCOPE_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" "$@"
status=0
rm -f "$build/meson-logs/testlog.json" "$build/pytest.xml"  # tools/ci_summary.py counts only this run's results
meson test -C "$build" --print-errorlogs || status=$?
if [ "${HOOKSCOPE_PYTHON_TESTS:-1}" != 0 ]; then
  bash tools/python_test.sh "$build" || status=1
fi
exit $status
