#!/usr/bin/env bash
# The README's test command: installs what is missing, configures ./build (or $HOOKSCOPE_BUILD_DIR),
# builds everything and runs every test. Extra arguments go to `meson setup` on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure_packages.sh
ensure_packages "${HOOKSCOPE_BUILD_PACKAGES[@]}"
build=${HOOKSCOPE_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" "$@"
meson test -C "$build" --print-errorlogs
