# Sourced by tests/install/test_downstream.sh and tests/install/test_downstream_cmake.sh: their arguments, a temporary directory,
# step/fail/run, and the toolchain settings of the hookscope build they consume.
#
# After sourcing: source_root, build_root, mode (1|0), usdt (1|0), probes (1 when mode and usdt are, else 0), meson,
# tmp; step/fail/run/check_probes; tc_compiler (the whole compiler command, e.g.
# "ccache c++"), tc_cxx (its last word), tc_launcher (the words before it, ';'-separated), tc_cxxflags,
# tc_ldflags, tc_sanitize, tc_prefix.
# Set HOOKSCOPE_KEEP_TMP=1 to keep the temporary directory for inspection.

if [[ $# -ne 4 || ! ($3 == 0 || $3 == 1) || ! ($4 == 0 || $4 == 1) ]]; then
  echo "usage: $0 SOURCE_ROOT BUILD_ROOT EXPECTED_MODE(1|0) EXPECTED_USDT(1|0)" >&2
  exit 2
fi
source_root=$(cd "$1" && pwd -P)
build_root=$(cd "$2" && pwd -P)
mode=$3
usdt=$4
# Annotations are probe sites only with hooks enabled (hookscope/config.hpp: HOOKSCOPE_DETAIL_PROBES).
probes=$((mode && usdt))
meson=${MESON:-meson}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hookscope-$(basename "$0" .sh).XXXXXX")
cleanup() {
  if [[ ${HOOKSCOPE_KEEP_TMP:-0} == 1 ]]; then
    echo "(kept $tmp)"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run LOGNAME CMD...: runs CMD with its output in $tmp/LOGNAME.log; prints that output and exits 1 on failure.
run() {
  local log="$tmp/$1.log"
  shift
  echo "   \$ $*"
  if ! "$@" >"$log" 2>&1; then
    echo "---- output of: $*" >&2
    cat "$log" >&2
    echo "----" >&2
    fail "command failed: $*"
  fi
}

# check_probes EXE ANNOTATION: with probes expected, `readelf -n` of EXE lists the probes ANNOTATION__entry and
# ANNOTATION__return of provider hookscope; without, no probe of provider hookscope at all.
check_probes() {
  local exe=$1 annotation=$2 notes found
  step "reading the USDT probes of ${exe#"$tmp/"} (readelf -n; probes of $annotation expected: $probes)"
  command -v readelf >/dev/null || fail "readelf is not installed (Debian package binutils)"
  notes=$(readelf -n --wide "$exe") || fail "readelf -n $exe failed"
  # Each stapsdt note: "Provider: P" (on the note's own line with --wide), then "Name: N" on the next line.
  found=$(awk 'match($0, /Provider: [^[:space:]]+/) { provider = substr($0, RSTART + 10, RLENGTH - 10) }
               $1 == "Name:" && provider == "hookscope" { print $2 }' <<<"$notes" | sort -u)
  local shown
  shown=$(paste -sd ' ' <<<"$found")
  echo "   hookscope probes: ${shown:-(none)}"
  if [[ $probes == 1 ]]; then
    local name
    for name in "${annotation}__entry" "${annotation}__return"; do
      grep -qx -- "$name" <<<"$found" ||
        fail "$exe has no USDT probe hookscope:$name (hooks=$mode usdt=$usdt); its probes: ${shown:-(none)}"
    done
  else
    [[ -z $found ]] || fail "$exe has USDT probes of provider hookscope, none expected (hooks=$mode usdt=$usdt): $shown"
  fi
}

# The toolchain settings of BUILD_ROOT, read from its introspection files (meson 1.0 has no compiler list
# there, so the compiler comes from the library target's first source).
step "reading toolchain settings of $build_root"
[[ -f $build_root/meson-info/intro-targets.json ]] || fail "$build_root is not a configured Meson build dir"
python3 - "$build_root" >"$tmp/toolchain.env" <<'PY' || fail "cannot read the introspection data of $build_root"
import json, shlex, sys
info = sys.argv[1] + '/meson-info/'
options = {o['name']: o['value'] for o in json.load(open(info + 'intro-buildoptions.json'))}
targets = [t for t in json.load(open(info + 'intro-targets.json')) if t['name'] == 'hookscope']
compiler = targets[0]['target_sources'][0]['compiler'] if targets else []
print('tc_compiler=' + shlex.quote(shlex.join(compiler)))
print('tc_cxx=' + shlex.quote(compiler[-1] if compiler else ''))
print('tc_launcher=' + shlex.quote(';'.join(compiler[:-1])))
print('tc_cxxflags=' + shlex.quote(shlex.join(options.get('cpp_args', []))))
print('tc_ldflags=' + shlex.quote(shlex.join(options.get('cpp_link_args', []))))
print('tc_sanitize=' + shlex.quote(options.get('b_sanitize', 'none')))
print('tc_prefix=' + shlex.quote(options['prefix']))
PY
tc_compiler='' tc_cxx='' tc_launcher='' tc_cxxflags='' tc_ldflags='' tc_sanitize=none tc_prefix=/usr/local
# shellcheck disable=SC1091
source "$tmp/toolchain.env"
