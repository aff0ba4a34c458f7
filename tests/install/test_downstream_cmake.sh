#!/usr/bin/env bash
# Builds the tiny CMake project in tests/downstream_cmake against an installed hookscope, as CMake users do:
# `meson install --destdir` into a temporary stage, then find_package(hookscope CONFIG REQUIRED) through
# CMAKE_PREFIX_PATH=<stage>/<prefix>, nothing else. The stage is the install moved elsewhere, so this also checks
# that the package is relocatable. Then:
#   - the program must report the expected mode (from the target's HOOKSCOPE_ENABLED), whether its annotation is a
#     USDT probe site (hooks and the target's HOOKSCOPE_USDT both on) and callback count, and `readelf -n` of it must
#     list the annotation's probes (provider hookscope) exactly when probes are expected;
#   - under HOOKSCOPE_TRACE it must trace when enabled (the target's link options keep the environment features);
#   - the imported executable hookscope::hookscope-shapes must run from the build (a custom target).
#
# Usage: test_downstream_cmake.sh SOURCE_ROOT BUILD_ROOT EXPECTED_MODE(1|0) EXPECTED_USDT(1|0)
# Run by `meson test` (suite 'install', test 'downstream_cmake') from BUILD_ROOT; BUILD_ROOT must be built
# already. The CMake build uses the compiler, cpp_args, cpp_link_args and b_sanitize BUILD_ROOT was configured
# with. Set HOOKSCOPE_KEEP_TMP=1 to keep the temporary directory for inspection.
set -euo pipefail

# shellcheck source=tests/install/downstream_common.sh
source "$(dirname "$0")/downstream_common.sh"
cmake=${CMAKE:-cmake}
command -v "$cmake" >/dev/null || { echo "FAIL: cmake is not installed (tools/ensure_packages.sh lists it)" >&2; exit 1; }
if [[ $tc_sanitize != none ]]; then
  tc_cxxflags+=" -fsanitize=$tc_sanitize"
  tc_ldflags+=" -fsanitize=$tc_sanitize"
fi
echo "   compiler: ${tc_cxx:-default}, CXXFLAGS: '${tc_cxxflags}', LDFLAGS: '${tc_ldflags}', prefix: $tc_prefix"

stage="$tmp/stage"
step "installing $build_root into $stage (meson install --no-rebuild --destdir)"
run install "$meson" install -C "$build_root" --no-rebuild --quiet --destdir "$stage"
prefix="$stage$tc_prefix"

config=$(find "$stage" -name hookscopeConfig.cmake -path '*/cmake/hookscope/*' -print -quit)
[[ -n $config ]] || fail "no cmake/hookscope/hookscopeConfig.cmake under $stage; installed: $(cd "$stage" && find . -type f)"
echo "   found ${config#"$stage"}"
[[ -f $(dirname "$config")/hookscopeConfigVersion.cmake ]] || fail "no hookscopeConfigVersion.cmake next to $config"
grep -q "HOOKSCOPE_ENABLED=$mode[;\"]" "$config" || fail "$config does not define HOOKSCOPE_ENABLED=$mode"
grep -q "HOOKSCOPE_USDT=$usdt[;\"]" "$config" || fail "$config does not define HOOKSCOPE_USDT=$usdt"
! grep -n -- "$tc_prefix/" "$config" | grep -v '^[0-9]*: *#' ||
  fail "$config names the install prefix $tc_prefix: not relocatable"

src="$tmp/src"
build="$tmp/build"
cp -R "$source_root/tests/downstream_cmake" "$src"
cmake_env=(env -u CMAKE_PREFIX_PATH -u hookscope_DIR "CXXFLAGS=$tc_cxxflags" "LDFLAGS=$tc_ldflags")
cmake_opts=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
            "-DCMAKE_PREFIX_PATH=$prefix")
[[ -n $tc_cxx ]] && cmake_opts+=("-DCMAKE_CXX_COMPILER=$tc_cxx")
[[ -n $tc_launcher ]] && cmake_opts+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$tc_launcher")
step "configuring the CMake project with CMAKE_PREFIX_PATH=$prefix"
run configure "${cmake_env[@]}" "$cmake" -S "$src" -B "$build" "${cmake_opts[@]}"
grep -E 'hookscope .* found in' "$tmp/configure.log" | sed 's/^/   /'
grep -q "found in $stage/" "$tmp/configure.log" || fail "find_package did not find the staged hookscope"
grep -q "(hooks enabled: $mode, USDT: $usdt)" "$tmp/configure.log" ||
  fail "the package's hookscope_ENABLED and hookscope_USDT are not $mode and $usdt: $(cat "$tmp/configure.log")"

step "building it"
run build "$cmake" --build "$build" --verbose
# It must have compiled against the staged headers in the library's mode and linked the staged library, with
# the link option that keeps the environment features.
grep -q -- "-I$stage/\|-isystem $stage/" "$build/compile_commands.json" ||
  fail "the compile command does not use the staged headers: $(cat "$build/compile_commands.json")"
grep -q -- "-DHOOKSCOPE_ENABLED=$mode" "$build/compile_commands.json" ||
  fail "the compile command does not define HOOKSCOPE_ENABLED=$mode"
grep -q -- "-DHOOKSCOPE_USDT=$usdt" "$build/compile_commands.json" ||
  fail "the compile command does not define HOOKSCOPE_USDT=$usdt"
grep -q -- "$stage/[^ ]*libhookscope" "$tmp/build.log" || fail "the link does not use the staged libhookscope"
grep -q -- "-Wl,--undefined=hookscope_environment_features" "$tmp/build.log" ||
  fail "the link does not keep the environment features (-Wl,--undefined=hookscope_environment_features)"

runs=0
[[ $mode == 1 ]] && runs=1
want="hooks_enabled=$mode probes_enabled=$probes pre_callbacks=$runs result=41 via=cmake"
step "running the program (expecting '$want')"
run run "$build/downstream" "$mode" "$probes"
got=$(cat "$tmp/run.log")
echo "   output: $got"
[[ $got == "$want" ]] || fail "the program printed '$got', expected '$want'"
# forward is the annotation of tests/downstream_cmake/main.cpp.
check_probes "$build/downstream" forward

step "running it under HOOKSCOPE_TRACE=forward (a trace expected: $([[ $mode == 1 ]] && echo yes || echo no))"
HOOKSCOPE_TRACE=forward "$build/downstream" "$mode" "$probes" >"$tmp/trace.out" 2>"$tmp/trace.err" ||
  { cat "$tmp/trace.err" >&2; fail "the program failed under HOOKSCOPE_TRACE"; }
sed 's/^/   /' "$tmp/trace.err"
if [[ $mode == 1 ]]; then
  grep -qF 'hookscope: trace: forward(input_ids=20, attention_mask=1)' "$tmp/trace.err" ||
    fail "no trace of forward: the environment features were not linked in"
else
  [[ ! -s $tmp/trace.err ]] || fail "a disabled build wrote to stderr under HOOKSCOPE_TRACE"
fi

step "running hookscope::hookscope-shapes from the CMake build (target infer_shapes)"
run infer "$cmake" --build "$build" --target infer_shapes
grep -F '"input_ids"' "$tmp/infer.log" | sed 's/^/   /'
grep -qF '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"}}' "$tmp/infer.log" ||
  fail "hookscope-shapes did not infer both dims of input_ids as dynamic: $(cat "$tmp/infer.log")"

echo "PASS: CMake project works against the installed package (find_package), hooks=$mode usdt=$usdt"
