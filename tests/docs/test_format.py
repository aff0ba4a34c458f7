"""Every C++ file of the repository follows .clang-format (clang-format 14, Debian 12's): one case per file, so that a
failure names the file and shows what clang-format would change."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted(p for pattern in ("*.cpp", "*.hpp") for p in ROOT.rglob(pattern)
               if not any(part.startswith("build") or part in ("subprojects", ".git") for part in p.relative_to(ROOT).parts))
CLANG_FORMAT = shutil.which("clang-format-14") or shutil.which("clang-format")


def test_there_are_files_to_check():
    assert len(FILES) > 100


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_follows_clang_format(path):
    if CLANG_FORMAT is None:
        pytest.skip("clang-format is not installed (tools/ensure_packages.sh installs it)")
    formatted = subprocess.run([CLANG_FORMAT, f"--style=file:{ROOT / '.clang-format'}", str(path)],
                               capture_output=True, text=True, check=True).stdout
    original = path.read_text(encoding="utf-8")
    if formatted != original:
        import difflib
        diff = "".join(difflib.unified_diff(original.splitlines(True), formatted.splitlines(True), "as written",
                                            "as clang-format writes it", n=1))
        pytest.fail(f"{path.relative_to(ROOT)} does not follow .clang-format (run clang-format -i on it):\n{diff[:4000]}")
