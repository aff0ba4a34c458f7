"""The promises of disabled builds (HOOKSCOPE_ENABLED=0), with the compiler given (--compiler=g++ or clang++):

1. identical code: in tests/disabled/callers.cpp, each observed_X compiles (-O2) to the same instructions
   as plain_X (objdump, addresses and symbol names normalised);
2. nothing left: tests/disabled/program.cpp, linked, holds no hookscope symbol and no observable name;
3. no silent mix: an enabled and a disabled translation unit sharing hookscope types fail to link, while the
   same two built in one mode link.
"""
import os
import re
import subprocess

import pytest

from support import SOURCE_ROOT, TESTS

DISABLED = TESTS / "disabled"
INCLUDE = str(SOURCE_ROOT / "include")
# The plain_/observed_ pairs of callers.cpp, by the names its plain_ functions have in the source.
PAIRS = re.findall(r"^\S.*\bplain_(\w+)\(", (DISABLED / "callers.cpp").read_text(encoding="utf-8"), re.M)


def sh(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)


def functions(obj):
    """Normalised instructions of every function in an object file, by demangled name."""
    dump = sh(["objdump", "-d", "-C", "--no-show-raw-insn", "-r", obj])
    assert dump.returncode == 0, f"objdump: {dump.stderr}"
    result, current = {}, None
    for line in dump.stdout.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            current = header.group(1)
            current = re.sub(r"\(.*\)$", "", current)  # drop the parameter list
            result[current] = []
            continue
        if current is None or not line.strip() or re.match(r"^\s+[0-9a-f]+: R_", line):
            continue  # relocation lines name symbols; the call instruction itself is compared
        insn = re.sub(r"^\s*[0-9a-f]+:\s*", "", line)
        # A branch target "1d <plain_x+0x1d>" keeps only its offset within the function; a call to another
        # symbol (its target filled in by a relocation) keeps nothing of the name.
        insn = re.sub(r"\b[0-9a-f]+ <[^>+]*(\+0x[0-9a-f]+)?>", lambda m: f"<{m.group(1) or ''}>", insn)
        insn = re.sub(r"#.*$", "", insn).strip()
        result[current].append(insn)
    for insns in result.values():  # alignment padding after the last instruction is not part of the function
        while insns and re.search(r"\bnop|^xchg\s+%ax,%ax$|^int3$", insns[-1]):
            insns.pop()
    return result


# --- 1. identical code ---

@pytest.fixture(scope="module")
def callers(compiler, tmp_path_factory):
    obj = tmp_path_factory.mktemp("callers") / "callers.o"
    build = sh(compiler + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", "-I", INCLUDE, "-c", DISABLED / "callers.cpp",
                           "-o", obj])
    if build.returncode != 0:
        pytest.fail(f"callers.cpp does not compile:\n{build.stderr}", pytrace=False)
    return obj, functions(obj)


def test_callers_pairs(callers):
    code = callers[1]
    pairs = [name[len("plain_"):] for name in code if name.startswith("plain_")]
    assert len(pairs) >= 4, f"expected 4 plain_/observed_ pairs, found {sorted(code)}"
    missing = [f"observed_{name}" for name in pairs if f"observed_{name}" not in code]
    assert not missing, f"{missing} missing from the object"


@pytest.mark.parametrize("name", PAIRS)
def test_observed_compiles_to_plain(callers, name):
    code = callers[1]
    plain, observed = code.get("plain_" + name), code.get("observed_" + name)
    assert plain is not None, f"plain_{name} missing from the object"
    assert observed is not None, f"observed_{name} missing from the object"
    assert plain == observed, f"observed_{name} differs from plain_{name}:\n  plain:    {plain}\n  observed: {observed}"
    print(f"observed_{name} compiles to the {len(plain)} instructions of plain_{name}")


# Nothing but the plain calls is instantiated: no observer, function_info, name or hook of an annotation
# reaches the object file (names and parameter names would be strings in it).
def test_callers_defines_no_hookscope_symbol(callers):
    defined = sh(["nm", "-C", "--defined-only", callers[0]]).stdout
    leftover = [line for line in defined.splitlines() if "hookscope" in line]
    assert not leftover, "the disabled callers.cpp defines hookscope symbols:\n  " + "\n  ".join(leftover)


@pytest.mark.parametrize("marker", ["tokens", "factor", "model::run"])
def test_callers_holds_no_annotation_string(callers, marker):
    text = sh(["strings", "-a", callers[0]]).stdout
    assert not re.search(rf"\b{re.escape(marker)}\b", text), \
        f"the string {marker!r} of an annotation remains in the disabled callers.o"


# --- 2. nothing left ---

@pytest.fixture(scope="module")
def program(compiler, tmp_path_factory):
    exe = tmp_path_factory.mktemp("program") / "program"
    build = sh(compiler + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", "-I", INCLUDE, DISABLED / "program.cpp",
                           "-o", exe])
    if build.returncode != 0:
        pytest.fail(f"program.cpp does not build without the library:\n{build.stderr}", pytrace=False)
    return exe


def test_program_behaves_as_a_plain_program(program):
    assert sh([program]).returncode == 0, "the disabled program did not behave as a plain program"


def test_program_holds_no_hookscope_symbol(program):
    leftover = [s for s in sh(["nm", "-C", program]).stdout.splitlines() if "hookscope" in s]
    assert not leftover, "hookscope symbols remain:\n  " + "\n  ".join(leftover)


@pytest.mark.parametrize("marker", ["zero_overhead_scale_marker", "zero_overhead_event_marker", "x_marker_param"])
def test_program_holds_no_observable_name(program, marker):
    assert marker not in sh(["strings", "-a", program]).stdout, f"the string {marker!r} remains in the executable"


# --- 3. no silent mix ---

def link(compiler, tmp, modes, out):
    objs = []
    for src, mode in modes:
        obj = tmp / f"{src}.{mode}.o"
        if not obj.exists():
            done = sh(compiler + ["-std=c++20", "-O2", f"-DHOOKSCOPE_ENABLED={mode}", "-I", INCLUDE, "-c",
                                  DISABLED / f"{src}.cpp", "-o", obj])
            assert done.returncode == 0, f"{src}.cpp does not compile with HOOKSCOPE_ENABLED={mode}:\n{done.stderr}"
        objs.append(obj)
    return sh(compiler + objs + ["-o", tmp / out])


@pytest.mark.parametrize("mode", [0, 1])
def test_one_mode_links(compiler, tmp_path, mode):
    same = link(compiler, tmp_path, [("mixed_enabled", mode), ("mixed_disabled", mode)], f"same_mode_{mode}")
    assert same.returncode == 0, f"the two translation units do not link in mode {mode}:\n{same.stderr}"


def test_mixed_modes_fail_to_link(compiler, tmp_path):
    mixed = link(compiler, tmp_path, [("mixed_enabled", 1), ("mixed_disabled", 0)], "mixed_modes")
    assert mixed.returncode != 0, "an enabled and a disabled translation unit linked into one program"
    assert "v0_hooks_off" in mixed.stderr or "v0_hooks_on" in mixed.stderr, \
        f"the mixed link failed, but not over the mode namespace:\n{mixed.stderr}"
    print("mixing an enabled and a disabled translation unit fails to link:\n    " +
          next(l for l in mixed.stderr.splitlines() if "v0_hooks" in l).strip())


# --- 4. the same user code compiles in both modes, warnings as errors ---

SCOPED_SUBSCRIPTIONS = r"""
#include "hookscope/observable.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/registry.hpp"
inline hookscope::observer<const int&> on_x{"on_x"};
namespace impl { inline int lower(int a) { return a; } }
HOOKSCOPE_OBSERVABLE(lower, impl::lower, a);
int main() {
  {
    auto sub = on_x.add([](const int&) {});  // kept for its scope only
    auto pre = lower.observers.pre.add([](const auto&) {});
    on_x.observe(1);
  }
  if (const hookscope::function_info* info = hookscope::find_observable("lower")) {
    auto s = info->pre().add([](const hookscope::erased_call&) {});
  }
  return lower(0);
}
"""


@pytest.mark.parametrize("mode", [0, 1])
def test_subscriptions_kept_for_their_scope_compile_without_warning(compiler, tmp_path, mode):
    source = tmp_path / "scoped.cpp"
    source.write_text(SCOPED_SUBSCRIPTIONS)
    done = sh(compiler + ["-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-DHOOKSCOPE_ENABLED={mode}",
                          "-I", INCLUDE, "-fsyntax-only", source])
    assert done.returncode == 0, f"RAII subscriptions warn with HOOKSCOPE_ENABLED={mode}:\n{done.stderr}"


# --- 5. calls leaving arguments to their defaults, in both modes ---
# (Meson also builds defaults_program.cpp in the build's mode, linked with the library, and runs it.)

def test_default_arguments_program_runs_disabled(compiler, tmp_path):
    exe = tmp_path / "defaults_program"
    done = sh(compiler + ["-std=c++20", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-DHOOKSCOPE_ENABLED=0",
                          "-I", INCLUDE, DISABLED / "defaults_program.cpp", "-o", exe])
    assert done.returncode == 0, f"defaults_program.cpp does not build with hooks disabled:\n{done.stderr}"
    assert sh([exe]).returncode == 0, "calls leaving arguments to their defaults went wrong with hooks disabled"
    leftover = [s for s in sh(["nm", "-C", exe]).stdout.splitlines() if "hookscope" in s]
    assert not leftover, "hookscope symbols remain:\n  " + "\n  ".join(leftover)


def test_default_arguments_program_compiles_enabled(compiler):
    done = sh(compiler + ["-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-DHOOKSCOPE_ENABLED=1",
                          "-I", INCLUDE, "-fsyntax-only", DISABLED / "defaults_program.cpp"])
    assert done.returncode == 0, f"defaults_program.cpp does not compile with hooks enabled:\n{done.stderr}"


# Shorter calls the plain call by name allows and a call through the annotation cannot make (docs/observable.md):
# each is refused with the one hookscope message, never a template error far away. (source, modes, compilers)
REFUSED_SHORTER_CALLS = [("defaults_prvalue", (0,), ("g++", "clang++")),
                         ("defaults_inherited_protected", (0, 1), ("g++", "clang++")),
                         ("defaults_later_declaration", (0, 1), ("clang++",))]


@pytest.mark.parametrize("source,modes,compilers", REFUSED_SHORTER_CALLS)
def test_default_arguments_shorter_call_refused_with_the_hookscope_message(compiler, source, modes, compilers):
    if os.path.basename(compiler[0]) not in compilers:
        pytest.skip(f"{os.path.basename(compiler[0])} builds {source}.cpp: "
                    "test_default_arguments_shorter_call_builds_as_plain_call checks it")
    for enabled in modes:
        done = sh(compiler + ["-std=c++20", "-fsyntax-only", f"-DHOOKSCOPE_ENABLED={enabled}", "-I", INCLUDE,
                              DISABLED / f"{source}.cpp"])
        assert done.returncode != 0, f"{source}.cpp builds now (HOOKSCOPE_ENABLED={enabled}): move it to SHORTER_CALLS"
        assert "hookscope: HOOKSCOPE_OBSERVABLE: this call omits arguments" in done.stderr, done.stderr


# Shorter calls that must build wherever the plain call by name builds, and the modes checked: each source says its
# case.
SHORTER_CALLS = [(source, enabled) for source, modes in [("defaults_later_declaration", (0, 1)),
                                                        ("defaults_constexpr", (0,))] for enabled in modes]


@pytest.mark.parametrize("source,enabled", SHORTER_CALLS)
def test_default_arguments_shorter_call_builds_as_plain_call(compiler, tmp_path, source, enabled):
    if any(source == r and os.path.basename(compiler[0]) in c for r, _, c in REFUSED_SHORTER_CALLS):
        pytest.skip(f"{os.path.basename(compiler[0])} refuses {source}.cpp (docs/observable.md): "
                    "test_default_arguments_shorter_call_refused_with_the_hookscope_message checks it")
    exe = tmp_path / source
    flags = ["-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-DHOOKSCOPE_ENABLED={enabled}", "-I", INCLUDE]
    if not enabled:
        done = sh(compiler + flags + ["-O2", DISABLED / f"{source}.cpp", "-o", exe])
    else:  # an enabled program needs the library: only compiled
        done = sh(compiler + flags + ["-fsyntax-only", DISABLED / f"{source}.cpp"])
    assert done.returncode == 0, (f"{source}.cpp: a shorter call does not build where the plain call by name does "
                                  f"(HOOKSCOPE_ENABLED={enabled}):\n{done.stderr}")
    if not enabled:
        assert sh([exe]).returncode == 0, f"{source}.cpp: the shorter call returned other than the plain call"
