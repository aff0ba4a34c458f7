# Sourced by the quick-start scripts: installs the Debian packages that are missing, and only those.
# Usage: ensure_packages PKG...
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "hookscope: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# What building and testing hookscope needs (benchmark peers included, so `meson test` builds everything;
# cmake for the CMake package and its downstream test; python3-pytest for the pytest modules of tests/;
# systemtap-sdt-dev for the USDT probes (<sys/sdt.h>), gdb and bpftrace for their tests; libsimdjson-dev for the
# parsing floor of bench/read.bench.cpp, the benchmarks' only: the library never uses it).
HOOKSCOPE_BUILD_PACKAGES=(meson ninja-build g++ pkg-config python3 python3-pytest catch2 libboost1.81-dev
                          libbenchmark-dev libsigc++-3.0-dev libeigen3-dev cmake clang-format
                          systemtap-sdt-dev gdb bpftrace libsimdjson-dev)
