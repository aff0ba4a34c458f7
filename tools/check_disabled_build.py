#!/usr/bin/env python3
"""Checks the promises of disabled builds (HOOKSCOPE_ENABLED=0) with a given compiler.

1. identical code: in tests/disabled/callers.cpp, each observed_X compiles (-O2) to the same instructions
   as plain_X (objdump, addresses and symbol names normalised);
2. nothing left: tests/disabled/program.cpp, linked, holds no hookscope symbol and no observable name;
3. no silent mix: an enabled and a disabled translation unit sharing hookscope types fail to link, while the
   same two built in one mode link.

Usage: check_disabled_build.py SOURCE_ROOT -- COMPILER [ARGS...]
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def functions(obj):
    """Normalised instructions of every function in an object file, by demangled name."""
    dump = sh(["objdump", "-d", "-C", "--no-show-raw-insn", "-r", str(obj)])
    if dump.returncode != 0:
        fail(f"objdump: {dump.stderr}")
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


def check_identical(root, cxx, tmp):
    obj = tmp / "callers.o"
    build = sh(cxx + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", "-I", str(root / "include"), "-c",
                      str(root / "tests/disabled/callers.cpp"), "-o", str(obj)])
    if build.returncode != 0:
        fail(f"callers.cpp does not compile:\n{build.stderr}")
    code = functions(obj)
    pairs = [name[len("plain_"):] for name in code if name.startswith("plain_")]
    if len(pairs) < 4:
        fail(f"expected 4 plain_/observed_ pairs, found {sorted(code)}")
    for name in pairs:
        plain, observed = code.get("plain_" + name), code.get("observed_" + name)
        if observed is None:
            fail(f"observed_{name} missing from the object")
        if plain != observed:
            fail(f"observed_{name} differs from plain_{name}:\n  plain:    {plain}\n  observed: {observed}")
        print(f"ok: observed_{name} compiles to the {len(plain)} instructions of plain_{name}")
    # Nothing but the plain calls is instantiated: no observer, function_info, name or hook of an annotation
    # reaches the object file (names and parameter names would be strings in it).
    defined = sh(["nm", "-C", "--defined-only", str(obj)]).stdout
    leftover = [line for line in defined.splitlines() if "hookscope" in line]
    if leftover:
        fail("the disabled callers.cpp defines hookscope symbols:\n  " + "\n  ".join(leftover))
    text = sh(["strings", "-a", str(obj)]).stdout
    for marker in ("tokens", "factor", "model::run"):
        if re.search(rf"\b{re.escape(marker)}\b", text):
            fail(f"the string {marker!r} of an annotation remains in the disabled callers.o")
    print("ok: the disabled callers.o holds no hookscope symbol and no annotation's name or parameter")


def check_nothing_left(root, cxx, tmp):
    exe = tmp / "program"
    build = sh(cxx + ["-std=c++20", "-O2", "-DHOOKSCOPE_ENABLED=0", "-I", str(root / "include"),
                      str(root / "tests/disabled/program.cpp"), "-o", str(exe)])
    if build.returncode != 0:
        fail(f"program.cpp does not build without the library:\n{build.stderr}")
    if sh([str(exe)]).returncode != 0:
        fail("the disabled program did not behave as a plain program")
    symbols = sh(["nm", "-C", str(exe)]).stdout
    leftover = [s for s in symbols.splitlines() if "hookscope" in s]
    if leftover:
        fail("hookscope symbols remain:\n  " + "\n  ".join(leftover))
    text = sh(["strings", "-a", str(exe)]).stdout
    for marker in ("zero_overhead_scale_marker", "zero_overhead_event_marker", "x_marker_param"):
        if marker in text:
            fail(f"the string {marker!r} remains in the executable")
    print("ok: no hookscope symbol and no observable or observer name in the disabled executable")


def check_mixed_modes(root, cxx, tmp):
    def link(modes, out):
        objs = []
        for src, mode in modes:
            obj = tmp / f"{src}.{mode}.o"
            done = sh(cxx + ["-std=c++20", "-O2", f"-DHOOKSCOPE_ENABLED={mode}", "-I", str(root / "include"), "-c",
                             str(root / "tests/disabled" / f"{src}.cpp"), "-o", str(obj)])
            if done.returncode != 0:
                fail(f"{src}.cpp does not compile with HOOKSCOPE_ENABLED={mode}:\n{done.stderr}")
            objs.append(str(obj))
        return sh(cxx + objs + ["-o", str(tmp / out)])

    for mode in (0, 1):
        same = link([("mixed_enabled", mode), ("mixed_disabled", mode)], f"same_mode_{mode}")
        if same.returncode != 0:
            fail(f"the two translation units do not link in mode {mode}:\n{same.stderr}")
    mixed = link([("mixed_enabled", 1), ("mixed_disabled", 0)], "mixed_modes")
    if mixed.returncode == 0:
        fail("an enabled and a disabled translation unit linked into one program")
    if "v0_hooks_off" not in mixed.stderr and "v0_hooks_on" not in mixed.stderr:
        fail(f"the mixed link failed, but not over the mode namespace:\n{mixed.stderr}")
    print("ok: mixing an enabled and a disabled translation unit fails to link:")
    print("    " + next(l for l in mixed.stderr.splitlines() if "v0_hooks" in l).strip())


def main() -> int:
    root = Path(sys.argv[1])
    cxx = [a for a in sys.argv[2:] if a != "--"]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        check_identical(root, cxx, tmp)
        check_nothing_left(root, cxx, tmp)
        check_mixed_modes(root, cxx, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
