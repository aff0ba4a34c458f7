"""The promises of disabled builds (HOOKSCOPE_ENABLED=0), with the compiler given (--compiler=g++ or clang++):

1. identical code: in tests/disabled/callers.cpp, each observed_X compiles (-O2) to the same instructions
   as plain_X (objdump, addresses and symbol names normalised), whatever HOOKSCOPE_USDT says (0 and 1), with no
   USDT probe left (no .note.stapsdt section, no semaphore);
2. nothing left: tests/disabled/program.cpp, linked, holds no hookscope symbol, no observable name and no probe,
   whatever HOOKSCOPE_USDT says;
3. no silent mix: two translation units sharing hookscope types fail to link when their modes select different ABI
   namespaces (hooks enabled and disabled; hooks enabled with HOOKSCOPE_USDT=1 and =0), while the same two built
   in modes of one namespace link.

A case compiling HOOKSCOPE_USDT=1 needs <sys/sdt.h> (Debian: systemtap-sdt-dev): where the compiler does not find
it, the case skips saying so, and fails when the build itself has probes (--usdt=on).
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


# Sections and symbols that only USDT probes put in a binary: the notes tools read (.note.stapsdt, and its
# relocations in an object file), the section <sys/sdt.h> puts its base in, and hookscope's semaphores.
PROBE_SECTION = re.compile(r"(^|\.)note\.stapsdt$|^\.stapsdt\.base$|^\.probes$")
PROBE_SYMBOL = re.compile(r"\bhookscope_\w*(?:_semaphore|__probes)\b")


def probe_traces(binary):
    """The probe sections (readelf -S) and probe symbols (nm, defined or not) in an object file or program."""
    sections = sh(["readelf", "-S", "-W", binary])
    assert sections.returncode == 0, f"readelf -S {binary}: {sections.stderr}"
    names = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", sections.stdout, re.M)
    symbols = sh(["nm", binary])
    assert symbols.returncode == 0, f"nm {binary}: {symbols.stderr}"
    return (sorted({n for n in names if PROBE_SECTION.search(n)}),
            sorted(set(PROBE_SYMBOL.findall(symbols.stdout))))


@pytest.fixture(scope="session")
def require_sdt(compiler, pytestconfig):
    """require_sdt(usdt): a case about to compile HOOKSCOPE_USDT=1 skips, naming the package, where the compiler does
    not find <sys/sdt.h>; it fails instead where the build itself has probes (--usdt=on), which needs the header."""
    found = sh(compiler + ["-x", "c++", "-fsyntax-only", "-"], input="#include <sys/sdt.h>\n")

    def require(usdt):
        if not usdt or found.returncode == 0:
            return
        why = (f"{os.path.basename(compiler[0])} does not find <sys/sdt.h> (Debian: apt install systemtap-sdt-dev), "
               f"so no HOOKSCOPE_USDT=1 translation unit compiles here: {found.stderr.strip()}")
        if pytestconfig.getoption("usdt") == "on":
            pytest.fail(f"hookscope: this build has USDT probes (--usdt=on), but {why}", pytrace=False)
        pytest.skip(why)
    return require


# --- 1. identical code ---

@pytest.fixture(scope="module", params=[0, 1], ids=lambda usdt: f"usdt{usdt}")
def callers(request, compiler, require_sdt, tmp_path_factory):
    """callers.cpp compiled with hooks disabled and HOOKSCOPE_USDT=0 or 1: (object, functions, usdt)."""
    usdt = request.param
    require_sdt(usdt)
    obj = tmp_path_factory.mktemp(f"callers_usdt{usdt}") / "callers.o"
    build = sh(compiler + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", f"-DHOOKSCOPE_USDT={usdt}", "-I", INCLUDE,
                           "-c", DISABLED / "callers.cpp", "-o", obj])
    if build.returncode != 0:
        pytest.fail(f"callers.cpp does not compile (HOOKSCOPE_ENABLED=0 HOOKSCOPE_USDT={usdt}):\n{build.stderr}",
                    pytrace=False)
    return obj, functions(obj), usdt


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


# Hooks disabled, no annotation is a probe site, whatever HOOKSCOPE_USDT says.
def test_callers_holds_no_probe(callers):
    sections, symbols = probe_traces(callers[0])
    assert not sections, f"the disabled callers.o (HOOKSCOPE_USDT={callers[2]}) has probe sections {sections}"
    assert not symbols, f"the disabled callers.o (HOOKSCOPE_USDT={callers[2]}) has probe symbols {symbols}"


# The check above can fail: the same callers.cpp with hooks enabled and HOOKSCOPE_USDT=1 has every trace it looks for.
def test_probe_traces_found_in_an_enabled_usdt_build(compiler, require_sdt, tmp_path):
    require_sdt(1)
    obj = tmp_path / "callers_enabled_usdt.o"
    build = sh(compiler + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=1", "-DHOOKSCOPE_USDT=1", "-I", INCLUDE, "-c",
                           DISABLED / "callers.cpp", "-o", obj])
    assert build.returncode == 0, f"callers.cpp does not compile with hooks enabled and USDT:\n{build.stderr}"
    sections, symbols = probe_traces(obj)
    for section in (".note.stapsdt", ".probes"):
        assert section in sections, f"no {section} section in the enabled USDT callers.o: {sections}"
    for name in ("scale", "notify", "run", "blend"):
        for symbol in (f"hookscope_{name}__probes", f"hookscope_{name}__entry_semaphore",
                       f"hookscope_{name}__return_semaphore"):
            assert symbol in symbols, f"no {symbol} in the enabled USDT callers.o: {symbols}"


# --- 2. nothing left ---

@pytest.fixture(scope="module", params=[0, 1], ids=lambda usdt: f"usdt{usdt}")
def program(request, compiler, require_sdt, tmp_path_factory):
    usdt = request.param
    require_sdt(usdt)
    exe = tmp_path_factory.mktemp(f"program_usdt{usdt}") / "program"
    build = sh(compiler + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", f"-DHOOKSCOPE_USDT={usdt}", "-I", INCLUDE,
                           DISABLED / "program.cpp", "-o", exe])
    if build.returncode != 0:
        pytest.fail(f"program.cpp does not build without the library (HOOKSCOPE_USDT={usdt}):\n{build.stderr}",
                    pytrace=False)
    return exe


def test_program_behaves_as_a_plain_program(program):
    assert sh([program]).returncode == 0, "the disabled program did not behave as a plain program"


def test_program_holds_no_hookscope_symbol(program):
    leftover = [s for s in sh(["nm", "-C", program]).stdout.splitlines() if "hookscope" in s]
    assert not leftover, "hookscope symbols remain:\n  " + "\n  ".join(leftover)


@pytest.mark.parametrize("marker", ["zero_overhead_scale_marker", "zero_overhead_event_marker", "x_marker_param"])
def test_program_holds_no_observable_name(program, marker):
    assert marker not in sh(["strings", "-a", program]).stdout, f"the string {marker!r} remains in the executable"


def test_program_holds_no_probe(program):
    sections, symbols = probe_traces(program)
    assert not sections, f"the disabled program has probe sections {sections}"
    assert not symbols, f"the disabled program has probe symbols {symbols}"


# --- 3. no silent mix ---

def namespace(enabled, usdt):
    """The ABI namespace (hookscope/config.hpp) a translation unit built in this mode selects."""
    return "v0_hooks_on_usdt" if enabled and usdt else "v0_hooks_on" if enabled else "v0_hooks_off"


def link(compiler, tmp, halves, out):
    """Compiles each (source, HOOKSCOPE_ENABLED, HOOKSCOPE_USDT) of tests/disabled and links them into `out`."""
    objs = []
    for src, enabled, usdt in halves:
        obj = tmp / f"{src}.{enabled}{usdt}.o"
        if not obj.exists():
            done = sh(compiler + ["-std=c++20", "-O2", f"-DHOOKSCOPE_ENABLED={enabled}", f"-DHOOKSCOPE_USDT={usdt}",
                                  "-I", INCLUDE, "-c", DISABLED / f"{src}.cpp", "-o", obj])
            assert done.returncode == 0, (f"{src}.cpp does not compile with HOOKSCOPE_ENABLED={enabled} "
                                          f"HOOKSCOPE_USDT={usdt}:\n{done.stderr}")
        objs.append(obj)
    return sh(compiler + objs + ["-o", tmp / out])


def mode_id(mode):
    return f"enabled{mode[0]}_usdt{mode[1]}"


# (mode of mixed_watch.cpp, mode of mixed_main.cpp), each (HOOKSCOPE_ENABLED, HOOKSCOPE_USDT), in one namespace:
# hooks disabled, HOOKSCOPE_USDT changes nothing.
SAME_NAMESPACE = [((0, 0), (0, 0)), ((1, 0), (1, 0)), ((1, 1), (1, 1)), ((0, 1), (0, 1)), ((0, 1), (0, 0)),
                  ((0, 0), (0, 1))]
# ... in two namespaces.
MIXED_NAMESPACES = [((1, 0), (0, 0)), ((0, 0), (1, 0)), ((1, 1), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)),
                    ((0, 1), (1, 1))]


@pytest.mark.parametrize("watch,main", SAME_NAMESPACE, ids=[f"{mode_id(w)}-{mode_id(m)}" for w, m in SAME_NAMESPACE])
def test_one_mode_links(compiler, require_sdt, tmp_path, watch, main):
    require_sdt(watch[1] or main[1])
    assert namespace(*watch) == namespace(*main)
    same = link(compiler, tmp_path, [("mixed_watch", *watch), ("mixed_main", *main)], "same_mode")
    assert same.returncode == 0, \
        f"the two translation units do not link in {mode_id(watch)} and {mode_id(main)}:\n{same.stderr}"


@pytest.mark.parametrize("watch,main", MIXED_NAMESPACES,
                         ids=[f"{mode_id(w)}-{mode_id(m)}" for w, m in MIXED_NAMESPACES])
def test_mixed_modes_fail_to_link(compiler, require_sdt, tmp_path, watch, main):
    require_sdt(watch[1] or main[1])
    mixed = link(compiler, tmp_path, [("mixed_watch", *watch), ("mixed_main", *main)], "mixed_modes")
    assert mixed.returncode != 0, \
        f"translation units in {namespace(*watch)} and {namespace(*main)} linked into one program"
    # The symbol missing is `watch` as main() names it: with the hookscope type of main's namespace.
    missing = set(re.findall(r"watch\(hookscope::(\w+)::observer", mixed.stderr))
    assert missing == {namespace(*main)}, \
        f"the mixed link failed, but not over the mode namespace {namespace(*main)} of main():\n{mixed.stderr}"
    print(f"mixing {namespace(*watch)} and {namespace(*main)} fails to link:\n    " +
          next(line for line in mixed.stderr.splitlines() if "v0_hooks" in line).strip())


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
