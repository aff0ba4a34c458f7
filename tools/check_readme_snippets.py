#!/usr/bin/env python3
"""Checks that every C++ block of the README is a snippet compiled by the tests, to the letter.

A README block is preceded by `<!-- snippet: NAME -->`; the test source holds the same text between
`// [snippet: NAME]` and `// [/snippet]` (indentation removed). Every ```cpp block must have a name.
Usage: check_readme_snippets.py README.md tests/readme.test.cpp
"""
import re
import sys
import textwrap


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


def main() -> int:
    readme_path, source_path = sys.argv[1], sys.argv[2]
    blocks, unnamed = readme_blocks(open(readme_path, encoding="utf-8").read())
    snippets = source_snippets(open(source_path, encoding="utf-8").read())
    errors = [f"{readme_path}:{line}: a ```cpp block without <!-- snippet: NAME --> is not compiled by any test"
              for line in unnamed]
    for name, body in blocks.items():
        if name not in snippets:
            errors.append(f"{readme_path}: snippet '{name}' is not in {source_path}")
        elif snippets[name].strip() != body.strip():
            errors.append(f"{readme_path}: snippet '{name}' differs from {source_path}:\n"
                          f"--- README\n{body}--- test\n{snippets[name]}")
    if not blocks:
        errors.append(f"{readme_path}: no snippet found")
    for e in errors:
        print(e, file=sys.stderr)
    if not errors:
        print(f"{len(blocks)} README snippets match {source_path}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
