#!/usr/bin/env bash
# The README's demo command: installs what is missing, configures ./build, builds and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure_packages.sh
ensure_packages "${HOOKSCOPE_BUILD_PACKAGES[@]}"
[ -f build/build.ninja ] || meson setup build >/dev/null
# A build/ configured before Eigen was installed has no tiny_llm target yet: reconfigure once to find it.
meson compile -C build tiny_llm >/dev/null 2>&1 || meson setup --reconfigure build >/dev/null
meson compile -C build tiny_llm >/dev/null
exec ./build/examples/tiny_llm
