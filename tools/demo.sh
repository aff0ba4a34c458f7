#!/usr/bin/env bash
# The README's demo command: installs what is missing, configures ./build, builds and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure_packages.sh
ensure_packages "${HOOKSCOPE_BUILD_PACKAGES[@]}"
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build subgraph_conversion >/dev/null
exec ./build/examples/subgraph_conversion
