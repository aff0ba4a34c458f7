#!/usr/bin/env bash
# Builds the tiny project in tests/downstream against hookscope the two ways users get it, and runs it:
#   1. installed: `meson install --destdir` into a temporary stage, found with dependency('hookscope') through
#      the staged hookscope.pc (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR), subproject fallback forbidden;
#   2. as a subproject: subprojects/hookscope is a symlink to the source tree, --force-fallback-for=hookscope,
#      found through the subproject's meson.override_dependency.
# Each time the program must report the expected mode (hookscope::hooks_enabled), whether its annotation is a USDT
# probe site (hookscope::probes_enabled: hooks and USDT both on) and callback count, and `readelf -n` of it must list
# the annotation's probes (provider hookscope) exactly when probes are expected.
#
# Usage: test_downstream.sh SOURCE_ROOT BUILD_ROOT EXPECTED_MODE(1|0) EXPECTED_USDT(1|0)
# Run by `meson test` (suite 'install', test 'downstream') from BUILD_ROOT; BUILD_ROOT must be built already
# (meson test builds it first). The downstream builds use the compiler, cpp_args, cpp_link_args and
# b_sanitize BUILD_ROOT was configured with, so the library links into them. Set HOOKSCOPE_KEEP_TMP=1 to
# keep the temporary directory for inspection.
set -euo pipefail

# shellcheck source=tests/install/downstream_common.sh
source "$(dirname "$0")/downstream_common.sh"
hooks_value=$([[ $mode == 1 ]] && echo true || echo false)
usdt_value=$([[ $usdt == 1 ]] && echo enabled || echo disabled)
# The annotation of tests/downstream/main.cpp whose probes readelf must find.
annotation=downstream_scale
echo "   compiler: ${tc_compiler:-default}, cpp_args: '${tc_cxxflags}', cpp_link_args: '${tc_ldflags}'," \
  "b_sanitize: $tc_sanitize"

# Environment for every downstream `meson setup`: this toolchain, no pkg-config or flags leaking in from outside.
setup_env=(env -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_PATH
           "CXXFLAGS=$tc_cxxflags" "LDFLAGS=$tc_ldflags")
[[ -n $tc_compiler ]] && setup_env+=("CXX=$tc_compiler")
# Plain (no optimisation, no debug information): what is judged is how the library is found and consumed, and the
# subproject compiles the whole library again, in half the time of debugoptimized.
common_opts=(--buildtype=plain "-Db_sanitize=$tc_sanitize")

# check_compile BUILD_DIR: the downstream compile command defines the mode and the USDT setting of the library.
check_compile() {
  local define
  for define in "-DHOOKSCOPE_ENABLED=$mode" "-DHOOKSCOPE_USDT=$usdt"; do
    grep -q -- "$define\b" "$1/compile_commands.json" ||
      fail "the downstream compile command does not define ${define#-D}: $(cat "$1/compile_commands.json")"
  done
}

# check_run BUILD_DIR VIA: runs the downstream program and checks its line, then its probes.
check_run() {
  local exe="$1/downstream" via=$2
  local callbacks=0
  [[ $mode == 1 ]] && callbacks=1
  local want="hooks_enabled=$mode probes_enabled=$probes callbacks=$callbacks via=$via"
  step "running the downstream program (expecting '$want')"
  run "run-$via" "$exe" "$mode" "$probes"
  local got
  got=$(cat "$tmp/run-$via.log")
  echo "   output: $got"
  [[ $got == "$want" ]] || fail "downstream printed '$got', expected '$want'"
  check_probes "$exe" "$annotation"
}

# ---------------------------------------------------------------------------------------------------------
# 1. From the install, through pkg-config.
stage="$tmp/stage"
step "installing $build_root into $stage (meson install --no-rebuild --destdir)"
run install "$meson" install -C "$build_root" --no-rebuild --quiet --destdir "$stage"

pc_file=$(find "$stage" -name hookscope.pc -path '*/pkgconfig/*' -print -quit)
[[ -n $pc_file ]] || fail "no pkgconfig/hookscope.pc under $stage; installed files: $(cd "$stage" && find . -type f)"
pc_dir=$(dirname "$pc_file")
echo "   found ${pc_file#"$stage"}"
[[ -n $(find "$stage" -path '*/include/hookscope/observer.hpp' -print -quit) ]] ||
  fail "hookscope/observer.hpp is not installed under $stage"

step "checking the Cflags of the staged hookscope.pc for -DHOOKSCOPE_ENABLED=$mode and -DHOOKSCOPE_USDT=$usdt"
cflags_line=$(grep -E '^Cflags:' "$pc_file" || true)
echo "   $cflags_line"
grep -Eq -- "(^|[[:space:]])-DHOOKSCOPE_ENABLED=$mode([[:space:]]|\$)" <<<"$cflags_line" ||
  { cat "$pc_file" >&2; fail "the Cflags of $pc_file do not contain -DHOOKSCOPE_ENABLED=$mode"; }
grep -Eq -- "(^|[[:space:]])-DHOOKSCOPE_USDT=$usdt([[:space:]]|\$)" <<<"$cflags_line" ||
  { cat "$pc_file" >&2; fail "the Cflags of $pc_file do not contain -DHOOKSCOPE_USDT=$usdt"; }

# A relocatable .pc (prefix from ${pcfiledir}) already points into the stage; the sysroot would double it.
pc_env=("PKG_CONFIG_PATH=$pc_dir")
if grep -q 'pcfiledir' "$pc_file"; then
  echo "   (relocatable .pc: PKG_CONFIG_SYSROOT_DIR not set)"
else
  pc_env+=("PKG_CONFIG_SYSROOT_DIR=$stage")
fi
step "asking pkg-config for hookscope with ${pc_env[*]}"
pkg_config=${PKG_CONFIG:-pkg-config}
run pkg-config "${setup_env[@]}" "${pc_env[@]}" "$pkg_config" --cflags --libs hookscope
echo "   $(cat "$tmp/pkg-config.log")"
grep -q -- "-I$stage/" "$tmp/pkg-config.log" ||
  fail "pkg-config's include path does not point into the stage: $(cat "$tmp/pkg-config.log")"

inst_src="$tmp/installed"
inst_build="$tmp/installed-build"
cp -R "$source_root/tests/downstream" "$inst_src"
rm -rf "$inst_src/subprojects"
step "configuring the downstream project against the staged install (subproject fallback forbidden)"
run setup-installed "${setup_env[@]}" "${pc_env[@]}" "$meson" setup "$inst_build" "$inst_src" \
  "${common_opts[@]}" --wrap-mode=nofallback "-Dpkg_config_path=$pc_dir"
grep -E 'Run-time dependency hookscope found' "$tmp/setup-installed.log" | sed 's/^/   /' || true
step "building it"
run build-installed "$meson" compile -C "$inst_build"
# It must have compiled against the staged headers and linked the staged library, nothing else.
grep -q -- "-I$stage/" "$inst_build/compile_commands.json" ||
  fail "the downstream compile command does not use the staged headers: $(cat "$inst_build/compile_commands.json")"
grep -q -- "$stage/[^ ]*libhookscope" "$inst_build/build.ninja" ||
  fail "the downstream link does not use the staged libhookscope"
check_compile "$inst_build"
check_run "$inst_build" pkgconfig

# ---------------------------------------------------------------------------------------------------------
# 2. As a subproject, straight from the source tree.
sub_src="$tmp/sub"
sub_build="$tmp/sub-build"
cp -R "$source_root/tests/downstream" "$sub_src"
rm -rf "$sub_src/subprojects"
mkdir "$sub_src/subprojects"
ln -s "$source_root" "$sub_src/subprojects/hookscope"
step "configuring the downstream project with hookscope as a subproject (-Dhookscope:hooks=$hooks_value" \
  "-Dhookscope:usdt=$usdt_value)"
run setup-sub "${setup_env[@]}" "$meson" setup "$sub_build" "$sub_src" "${common_opts[@]}" \
  --force-fallback-for=hookscope "-Dhookscope:hooks=$hooks_value" "-Dhookscope:usdt=$usdt_value" \
  -Dhookscope:tests=disabled -Dhookscope:bench=disabled -Dhookscope:examples=disabled
grep -E 'Dependency hookscope .*found' "$tmp/setup-sub.log" | sed 's/^/   /' || true
step "building it"
# The downstream program only: the subproject's command (hookscope-shapes) is no part of what it links.
run build-sub "$meson" compile -C "$sub_build" downstream
check_compile "$sub_build"
check_run "$sub_build" internal

echo "PASS: downstream project works against the install (pkg-config) and as a subproject, hooks=$hooks_value" \
  "usdt=$usdt_value"
