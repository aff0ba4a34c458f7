"""tools/ci_summary.py: how it counts the results of a Meson test log (Catch2 executables, pytest modules, others)."""
import importlib.util
import json
import re

import pytest

from support import SOURCE_ROOT

spec = importlib.util.spec_from_file_location("ci_summary", SOURCE_ROOT / "tools" / "ci_summary.py")
ci_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci_summary)

SKIPPED = "SKIPPED [1] tests/environment/test_record_env.py:120: /dev/full is not writable here\n"

PYTEST = ["/usr/bin/python3", "-m", "pytest", "tests/cli/test_cli.py", "-q"]
CATCH2 = ["/work/build/tests/value_test"]

# (what, the test's command, Meson's result, the test's stdout, (passed, failed, skipped))
CASES = [
    ("pytest, full form", PYTEST, "OK", "..s.\n==== 12 passed, 1 skipped in 3.10s ====\n", (12, 0, 1)),
    ("pytest -q", PYTEST, "OK", "............\n12 passed in 3.1s\n", (12, 0, 0)),
    ("pytest -q -rs: the reasons of skips come before", PYTEST, "OK",
     "..s\n=== short test summary info ===\n" + SKIPPED + "2 passed, 1 skipped in 0.20s\n", (2, 0, 1)),
    ("pytest, counts in another order, warnings and deselected are no cases", PYTEST, "OK",
     "3 skipped, 2 passed, 1 deselected, 4 warnings in 1.00s (0:00:01)\n", (2, 0, 3)),
    ("pytest, failures and errors count as failed", PYTEST, "FAIL", "F.E\n1 failed, 1 passed, 1 error in 0.50s\n",
     (1, 2, 0)),
    ("pytest, errors", PYTEST, "FAIL", "== 2 errors in 0.10s ==\n", (0, 2, 0)),
    ("pytest that failed without its line (killed at its timeout): one failure", PYTEST, "TIMEOUT", "....\n",
     (0, 1, 0)),
    ("pytest that failed though its line has no failure (a crash at exit): one failure", PYTEST, "FAIL",
     "3 passed in 0.10s\n", (3, 1, 0)),
    ("pytest that collected nothing", PYTEST, "FAIL", "no tests ran in 0.01s\n", (0, 1, 0)),
    ("pytest, what an atexit hook prints after the line is not the run's", PYTEST, "OK",
     "184 passed in 7.83s\natexit: cleaning up\n", (184, 0, 0)),
    ("pytest, a failing run with the interpreter's complaint after its line", PYTEST, "FAIL",
     "3 failed, 181 passed in 7.83s\nException ignored in: <function ...>\n", (181, 3, 0)),
    ("pytest in colour (PY_COLORS=1)", PYTEST, "FAIL",
     "\x1b[31m==== \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m5 passed\x1b[0m\x1b[31m in 0.10s\x1b[0m\x1b[31m ====\x1b[0m\n",
     (5, 1, 0)),
    ("pytest, a plugin's own counts are no cases", PYTEST, "OK", "10 passed, 5 subtests passed in 1.0s\n",
     (10, 0, 0)),
    ("pytest killed at its timeout while quoting a Catch2 program: no Catch2 cases counted", PYTEST, "TIMEOUT",
     "..\n--- program output ---\nAll tests passed (5 assertions in 40 test cases)\n", (0, 1, 0)),
    ("pytest that passed without its line: one failure", PYTEST, "OK", "ok\n", (0, 1, 0)),
    ("not pytest: a summary line in the middle of its output is not counted", CATCH2, "OK",
     "1 failed in 0.1s\nok: checked\n", (1, 0, 0)),
    ("Catch2, all passed", CATCH2, "OK", "===\nAll tests passed (154 assertions in 12 test cases)\n", (12, 0, 0)),
    ("Catch2, some failed", CATCH2, "FAIL", "test cases:  12 |  10 passed | 2 failed\nassertions: ...\n", (10, 2, 0)),
    ("another test that passed", CATCH2, "OK", "ok: something\n", (1, 0, 0)),
    ("another test that failed", CATCH2, "FAIL", "", (0, 1, 0)),
    ("a skipped Meson test (exit code 77)", CATCH2, "SKIP", "skipped: cmake is not installed\n", (0, 0, 1)),
]


@pytest.mark.parametrize("what, command, result, stdout, counts", CASES, ids=[c[0] for c in CASES])
def test_count(what, command, result, stdout, counts):
    assert ci_summary.count({"command": command, "result": result, "stdout": stdout}) == counts


@pytest.mark.parametrize("log", ["", "\n", '{"name": "cli", "result": "OK", "stdout": "1 pas'],
                         ids=["empty", "blank", "cut"])
def test_a_log_without_a_whole_test_is_a_failure(tmp_path, capsys, monkeypatch, log):
    (tmp_path / "meson-logs").mkdir()
    (tmp_path / "meson-logs" / "testlog.json").write_text(log)
    monkeypatch.setattr("sys.argv", ["ci_summary.py", str(tmp_path)])
    assert ci_summary.main() == 1
    assert capsys.readouterr().out == "0 passed, 1 failed, 0 skipped\n"


def test_main_sums_build_dirs(tmp_path, capsys, monkeypatch):
    build = tmp_path / "build"
    (build / "meson-logs").mkdir(parents=True)
    log = [{"name": "cli", "command": PYTEST, "result": "OK", "stdout": "110 passed, 1 skipped in 30.00s\n"},
           {"name": "unit", "result": "OK", "stdout": "All tests passed (5 assertions in 3 test cases)\n"},
           {"name": "trace", "command": PYTEST, "result": "FAIL", "stdout": "1 failed, 6 passed in 1.00s\n"}]
    (build / "meson-logs" / "testlog.json").write_text("".join(json.dumps(e) + "\n" for e in log))
    monkeypatch.setattr("sys.argv", ["ci_summary.py", str(build), str(tmp_path / "missing")])
    assert ci_summary.main() == 1
    out, err = capsys.readouterr()
    assert out == "119 passed, 2 failed, 1 skipped\n"  # the missing build dir counts as one failure
    assert f"{build}: 119 passed, 1 failed, 1 skipped" in err


def test_main_names_each_failed_test_and_its_failed_cases(tmp_path, capsys, monkeypatch):
    (tmp_path / "meson-logs").mkdir()
    log = [{"name": "ok", "command": PYTEST, "result": "OK", "stdout": "3 passed in 1.00s\n"},
           {"name": "pipes", "command": PYTEST, "result": "FAIL",
            "stdout": "FAILED t.py::test_a - AssertionError\nERROR t.py::test_b\n1 failed, 1 error in 2.00s\n"},
           {"name": "unit", "result": "FAIL", "stdout": "crashed\n"},
           {"name": "slow", "command": PYTEST, "result": "TIMEOUT", "stdout": "..."}]
    (tmp_path / "meson-logs" / "testlog.json").write_text("".join(json.dumps(e) + "\n" for e in log))
    monkeypatch.setattr("sys.argv", ["ci_summary.py", str(tmp_path)])
    assert ci_summary.main() == 1
    err = capsys.readouterr().err.splitlines()
    assert f"{tmp_path}: FAILED pipes (t.py::test_a, t.py::test_b)" in err
    assert f"{tmp_path}: FAILED unit" in err
    assert f"{tmp_path}: FAILED slow after its timeout" in err
    assert not any(" FAILED ok" in line for line in err)


def test_pytest_runs_name_their_failed_cases():
    """ci_summary names failed cases from pytest's short summary, which lists them only when `-r` asks for f and E."""
    texts = [(SOURCE_ROOT / "tests" / "pytest.ini").read_text(), (SOURCE_ROOT / "tests" / "meson.build").read_text(),
             (SOURCE_ROOT / "tools" / "python_test.sh").read_text()]
    for text in texts:
        flags = re.findall(r"(?<=[\s'])-r([a-zA-Z]+)(?=[\s'])", text)
        assert flags and all("f" in f and "E" in f for f in flags), text[:200]
