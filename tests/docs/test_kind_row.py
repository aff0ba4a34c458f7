"""docs/architecture.md's "add a kind of value" row against the code: it must name every file that walks the value
tree's kinds (C++ that visits them or names value::kind, Python that writes or reads the encoding's kind keys), and
every file it names must exist. A failure names the files missing from the row, or the row's files that are gone."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# C++ that handles the kinds: a visitor's node types, or the enum itself.
CPP_KINDS = re.compile(r"\bvalue_node::|\bvalue::kind\b")
# Python that writes or reads a kind of the value encoding: the keys only value trees use (docs/record_format.md).
PYTHON_KINDS = re.compile(r"""["'](?:bytes|opaque|variant|struct)["']""")
SKIPPED_PARTS = {"subprojects", "__pycache__", ".git", "tests"}


def kind_row(text):
    rows = [line for line in text.splitlines() if line.startswith("| add a kind of value")]
    assert len(rows) == 1, f"docs/architecture.md: {len(rows)} rows 'add a kind of value', expected one"
    return rows[0]


def named_paths(row):
    """The files the row names, from the root: `src/...`, `python/...`, `tests/...`, `docs/...` as they are, a bare
    header (`value.hpp`) and `detail/...` in include/hookscope/."""
    names = set()
    for token in re.findall(r"`([^`\s]+)`", row):
        if not re.search(r"\.(?:hpp|cpp|py|md)$", token):
            continue
        if token.startswith(("src/", "python/", "tests/", "docs/", "include/", "tools/")):
            names.add(token)
        else:
            names.add("include/hookscope/" + token)
    return names


def files_under(*directories, suffixes):
    for directory in directories:
        for path in sorted((ROOT / directory).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.suffix in suffixes and path.is_file() and not any(
                    p.startswith("build") or p in SKIPPED_PARTS for p in parts):
                yield path


def walking_kinds():
    """The files that walk the kinds, from the root."""
    found = set()
    for path in files_under("include", "src", "python", suffixes={".cpp", ".hpp", ".h"}):
        if CPP_KINDS.search(path.read_text(encoding="utf-8")):
            found.add(str(path.relative_to(ROOT)))
    for path in files_under("python/hookscope", suffixes={".py"}):
        if PYTHON_KINDS.search(path.read_text(encoding="utf-8")):
            found.add(str(path.relative_to(ROOT)))
    return found


def missing_from_row(text):
    return sorted(walking_kinds() - named_paths(kind_row(text)))


def gone_from_code(text):
    return sorted(name for name in named_paths(kind_row(text)) if not list(ROOT.glob(name)))


def test_the_search_finds_the_known_walkers():
    found = walking_kinds()
    assert {"include/hookscope/value.hpp", "src/value.cpp", "python/call_templates.cpp"} <= found, sorted(found)
    assert any(name.startswith("python/hookscope/") for name in found), sorted(found)


def test_the_row_names_every_file_that_walks_the_kinds():
    missing = missing_from_row(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not missing, ("docs/architecture.md, 'add a kind of value': these files walk the value kinds and the row "
                         "does not name them: " + ", ".join(missing))


def test_every_file_the_row_names_exists():
    gone = gone_from_code(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not gone, "docs/architecture.md, 'add a kind of value' names files that do not exist: " + ", ".join(gone)


def test_a_row_without_a_walker_or_with_a_lost_file_fails():
    row = kind_row(ARCHITECTURE.read_text(encoding="utf-8"))
    assert "src/record_fit.cpp" in missing_from_row(row.replace("`src/record_fit.cpp`", "the marker's file"))
    assert gone_from_code(row + " `src/no_such_walker.cpp`") == ["src/no_such_walker.cpp"]
