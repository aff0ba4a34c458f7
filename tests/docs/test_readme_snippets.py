"""Every C++ block of the README is a snippet compiled and run by tests/readme.test.cpp, to the letter.

A README block is preceded by `<!-- snippet: NAME -->`; the test source holds the same text between
`// [snippet: NAME]` and `// [/snippet]` (indentation removed). Every ```cpp block must have a name.
One case per README snippet, and one for the blocks without a name.
"""
import re
import textwrap

import pytest

from support import SOURCE_ROOT, TESTS, difference

README = SOURCE_ROOT / "README.md"
SOURCE = TESTS / "readme.test.cpp"


def readme_blocks(text):
    blocks, unnamed = {}, []
    for m in re.finditer(r"(?:<!--\s*snippet:\s*(\S+)\s*-->\s*\n)?```cpp\n(.*?)```", text, re.S):
        name, body = m.group(1), m.group(2)
        if name is None:
            unnamed.append(text[: m.start()].count("\n") + 1)
        else:
            blocks[name] = body
    return blocks, unnamed


def source_snippets(text):
    found = {}
    for m in re.finditer(r"^[ \t]*// \[snippet: (\S+)\][ \t]*\n(.*?)^[ \t]*// \[/snippet\]", text, re.S | re.M):
        found[m.group(1)] = textwrap.dedent(m.group(2))
    return found


BLOCKS, UNNAMED = readme_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_snippets():
    assert BLOCKS, f"{README}: no snippet found"


def test_every_cpp_block_is_named():
    assert not UNNAMED, "\n".join(f"{README}:{line}: a ```cpp block without <!-- snippet: NAME --> is not compiled by "
                                  "any test" for line in UNNAMED)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_snippet_is_compiled_by_the_tests(name):
    snippets = source_snippets(SOURCE.read_text(encoding="utf-8"))
    assert name in snippets, f"{README}: snippet '{name}' is not in {SOURCE}"
    assert snippets[name].strip() == BLOCKS[name].strip(), difference(
        f"{README}: snippet '{name}' differs from {SOURCE} (expected: the README's block, got: the test's)",
        snippets[name].strip() + "\n", BLOCKS[name].strip() + "\n")
