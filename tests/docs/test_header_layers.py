"""The headers keep their layers one way (docs/architecture.md, "The layers"): an internal header of
include/hookscope/detail/ never includes a public header of include/hookscope/ (the public headers are the documented
front doors over detail/, as in Boost.PFR), and no installed header includes anything from src/, which is not
installed. One case per header, so that a failure names the file, the line and the include."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
PUBLIC_DIR = INCLUDE / "hookscope"
SRC = ROOT / "src"

# The public headers, as their users spell them. hookscope/build_config.hpp is not one: it is generated from
# build_config.hpp.in with the installed library's mode, includes nothing, and detail/config.hpp reads it.
PUBLIC = {f"hookscope/{p.name}" for p in PUBLIC_DIR.glob("*.hpp")}
DETAIL = sorted((PUBLIC_DIR / "detail").glob("*.hpp"))
HEADERS = sorted(p for pattern in ("*.hpp", "*.hpp.in", "*.h") for p in INCLUDE.rglob(pattern))

# Quote or angle form, spaces allowed after '#'; an include in a comment is no include.
INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]', re.M)


def includes(text):
    """(line number, spelling as written, path) of each #include of `text`."""
    for m in INCLUDE_LINE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        close = ">" if m.group(1) == "<" else '"'
        yield line, f"{m.group(1)}{m.group(2)}{close}", m.group(2).strip()


def public_includes(text):
    return [(line, spelled) for line, spelled, path in includes(text) if path in PUBLIC]


def source_includes(header, text):
    """The includes of `header` that name a file of src/: by a path into src/, or by one that resolves there (next to
    the header, or from src/ given as an include directory)."""
    found = []
    for line, spelled, path in includes(text):
        candidates = [(header.parent / path).resolve(), (ROOT / path).resolve(), (SRC / path).resolve()]
        if any(c.is_relative_to(SRC.resolve()) and c.exists() for c in candidates) or path.startswith("src/"):
            found.append((line, spelled))
    return found


def rel(path):
    return path.relative_to(ROOT)


def test_there_are_headers_to_check():
    assert len(PUBLIC) > 20 and len(DETAIL) > 20 and len(HEADERS) > len(PUBLIC) + len(DETAIL)


def test_the_check_sees_every_spelling():
    text = ('#include "hookscope/value.hpp"\n#  include <hookscope/tensor.hpp>\n// #include "hookscope/capture.hpp"\n'
            '#include "hookscope/detail/value.hpp"\n#include <vector>\n')
    assert public_includes(text) == [(1, '"hookscope/value.hpp"'), (2, "<hookscope/tensor.hpp>")]
    header = PUBLIC_DIR / "detail" / "x.hpp"
    some = sorted(SRC.glob("*.hpp"))[0].name  # any header of src/
    text = f'#include "../../../src/{some}"\n#include "src/{some}"\n#include "{some}"\n'
    assert [line for line, _ in source_includes(header, text)] == [1, 2, 3]
    assert source_includes(header, '#include "hookscope/detail/value.hpp"\n#include <string>\n') == []


@pytest.mark.parametrize("path", DETAIL, ids=[str(rel(p)) for p in DETAIL])
def test_detail_header_includes_no_public_header(path):
    found = public_includes(path.read_text(encoding="utf-8"))
    if found:
        lines = "\n".join(f"  {rel(path)}:{line}: #include {spelled}" for line, spelled in found)
        pytest.fail(f"{rel(path)} includes a public header; detail/ lies below the public headers, so what it needs "
                    f"moves down into detail/ (the public header then includes it) or the header moves out of "
                    f"detail/:\n{lines}")


@pytest.mark.parametrize("path", HEADERS, ids=[str(rel(p)) for p in HEADERS])
def test_header_includes_nothing_from_src(path):
    found = source_includes(path, path.read_text(encoding="utf-8"))
    if found:
        lines = "\n".join(f"  {rel(path)}:{line}: #include {spelled}" for line, spelled in found)
        pytest.fail(f"{rel(path)} includes a file of src/, which is not installed with the headers:\n{lines}")
