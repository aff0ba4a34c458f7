"""tools/ci_summary.py: how it counts the results of a Meson test log (Catch2 executables, pytest modules, others)."""
import importlib.util
import json

import pytest

from support import SOURCE_ROOT

spec = importlib.util.spec_from_file_location("ci_summary", SOURCE_ROOT / "tools" / "ci_summary.py")
ci_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci_summary)

SKIPPED = "SKIPPED [1] tests/environment/test_record_env.py:120: /dev/full is not writable here\n"

# (what, Meson's result, the test's stdout, (passed, failed, skipped))
CASES = [
    ("pytest, full form", "OK", "..s.\n==== 12 passed, 1 skipped in 3.10s ====\n", (12, 0, 1)),
    ("pytest -q", "OK", "............\n12 passed in 3.1s\n", (12, 0, 0)),
    ("pytest -q -rs: the reasons of skips come before", "OK",
     "..s\n=== short test summary info ===\n" + SKIPPED + "2 passed, 1 skipped in 0.20s\n", (2, 0, 1)),
    ("pytest, counts in another order, warnings and deselected are no cases", "OK",
     "3 skipped, 2 passed, 1 deselected, 4 warnings in 1.00s (0:00:01)\n", (2, 0, 3)),
    ("pytest, failures and errors count as failed", "FAIL", "F.E\n1 failed, 1 passed, 1 error in 0.50s\n", (1, 2, 0)),
    ("pytest, errors", "FAIL", "== 2 errors in 0.10s ==\n", (0, 2, 0)),
    ("pytest that failed without its line (killed at its timeout): one failure", "TIMEOUT", "....\n", (0, 1, 0)),
    ("pytest that failed though its line has no failure (a crash at exit): one failure", "FAIL",
     "3 passed in 0.10s\n", (3, 1, 0)),
    ("pytest that collected nothing", "FAIL", "no tests ran in 0.01s\n", (0, 1, 0)),
    ("a summary line quoted in the middle of the output is not the run's", "OK",
     "1 failed in 0.1s\nok: checked\n", (1, 0, 0)),
    ("Catch2, all passed", "OK", "===\nAll tests passed (154 assertions in 12 test cases)\n", (12, 0, 0)),
    ("Catch2, some failed", "FAIL", "test cases:  12 |  10 passed | 2 failed\nassertions: ...\n", (10, 2, 0)),
    ("another test that passed", "OK", "ok: something\n", (1, 0, 0)),
    ("another test that failed", "FAIL", "", (0, 1, 0)),
    ("a skipped Meson test (exit code 77)", "SKIP", "skipped: cmake is not installed\n", (0, 0, 1)),
]


@pytest.mark.parametrize("what, result, stdout, counts", CASES, ids=[c[0] for c in CASES])
def test_count(what, result, stdout, counts):
    assert ci_summary.count({"result": result, "stdout": stdout}) == counts


def test_main_sums_build_dirs(tmp_path, capsys, monkeypatch):
    build = tmp_path / "build"
    (build / "meson-logs").mkdir(parents=True)
    log = [{"name": "cli", "result": "OK", "stdout": "110 passed, 1 skipped in 30.00s\n"},
           {"name": "unit", "result": "OK", "stdout": "All tests passed (5 assertions in 3 test cases)\n"},
           {"name": "trace", "result": "FAIL", "stdout": "1 failed, 6 passed in 1.00s\n"}]
    (build / "meson-logs" / "testlog.json").write_text("".join(json.dumps(e) + "\n" for e in log))
    monkeypatch.setattr("sys.argv", ["ci_summary.py", str(build), str(tmp_path / "missing")])
    assert ci_summary.main() == 1
    out, err = capsys.readouterr()
    assert out == "119 passed, 2 failed, 1 skipped\n"  # the missing build dir counts as one failure
    assert f"{build}: 119 passed, 1 failed, 1 skipped" in err
