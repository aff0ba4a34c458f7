"""No source file of the repository is over 700 lines: a file that long holds more than one reason to change, and is
split by concern (docs/architecture.md). One case per directory, so that a failure names every file over the limit
and its length."""
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 700
DIRECTORIES = ["include", "src", "python", "tests", "tools", "bench", "examples"]
SUFFIXES = {".cpp", ".hpp", ".h", ".py", ".pyi"}
# Generated or data files, which nobody edits by hand, as {path from the root: why}. None today.
EXCLUDED: dict[str, str] = {}


def sources(directory):
    return sorted(p for p in (ROOT / directory).rglob("*")
                  if p.suffix in SUFFIXES and p.is_file()
                  and not any(part.startswith("build") or part in ("subprojects", "__pycache__", ".git")
                              for part in p.relative_to(ROOT).parts))


def too_long(paths, root=ROOT):
    """(path from `root`, lines) of each of `paths` over LIMIT lines and not excluded."""
    found = []
    for path in paths:
        name = str(path.relative_to(root))
        if name in EXCLUDED:
            continue
        lines = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        if lines > LIMIT:
            found.append((name, lines))
    return found


def test_the_exclusions_exist():
    assert not [name for name in EXCLUDED if not (ROOT / name).is_file()], "an excluded file no longer exists"


def test_the_limit_is_checked(tmp_path):
    long_file = tmp_path / "long.py"
    long_file.write_text("x = 1\n" * (LIMIT + 1))
    short_file = tmp_path / "short.py"
    short_file.write_text("x = 1\n" * LIMIT)
    assert too_long([long_file, short_file], root=tmp_path) == [("long.py", LIMIT + 1)]


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_no_source_file_is_over_the_limit(directory):
    assert sources(directory), f"{directory}/ holds no source file: the search is wrong"
    found = too_long(sources(directory))
    assert not found, "over %d lines (split by concern, docs/architecture.md): %s" % (
        LIMIT, ", ".join(f"{name} ({lines} lines)" for name, lines in found))
