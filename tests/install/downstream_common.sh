# Sourced by tests/install/test_downstream.sh and tests/install/test_downstream_cmake.sh: their arguments, a temporary directory,
# step/fail/run, and the toolchain settings of the hookscope build they consume.
#
# After sourcing: source_root, build_root, mode (1|0), meson, tmp; tc_compiler (the whole compiler command, e.g.
# "ccache c++"), tc_cxx (its last word), tc_launcher (the words before it, ';'-separated), tc_cxxflags,
# tc_ldflags, tc_sanitize, tc_prefix.
# Set HOOKSCOPE_KEEP_TMP=1 to keep the temporary directory for inspection.

if [[ $# -ne 3 || ! ($3 == 0 || $3 == 1) ]]; then
  echo "usage: $0 SOURCE_ROOT BUILD_ROOT EXPECTED_MODE(1|0)" >&2
  exit 2
fi
source_root=$(cd "$1" && pwd -P)
build_root=$(cd "$2" && pwd -P)
mode=$3
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
