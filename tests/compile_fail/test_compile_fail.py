"""Misuses that must not compile: each source of tests/compile_fail/ is compiled (-fsyntax-only) and must fail with
the diagnostic hookscope promises, named in the source by a comment:  // expect-error: <regular expression>
(every such line must match the compiler's output). One case per source.

The compiler command comes from Meson (--compiler=ARG, one per argument: the project's C++ compiler, -std=c++20 and
the build's mode).
"""
import re
import subprocess

import pytest

from support import SOURCE_ROOT, TESTS

SOURCES = sorted((TESTS / "compile_fail").glob("*.cpp"))


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_rejected_with_hookscope_message(compiler, source):
    expected = re.findall(r"//\s*expect-error:\s*(.+)", source.read_text(encoding="utf-8"))
    assert expected, f"{source.name}: no '// expect-error: <regex>' line"
    done = subprocess.run(compiler + ["-I", str(SOURCE_ROOT / "include"), "-fsyntax-only", str(source)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode != 0, f"{source.name}: compiled, but must not"
    missing = [p.strip() for p in expected if not re.search(p.strip(), done.stderr)]
    assert not missing, (f"{source.name}: the compiler failed, but without " +
                         ", ".join(f"/{p}/" for p in missing) + f":\n{done.stderr}")
