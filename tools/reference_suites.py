#!/usr/bin/env python3
"""The references' own InputObserver test suites, run as they are with hookscope's class swapped in.

Usage (from the repository root, after `bash tools/python_test.sh build` installed hookscope into the venv):

    build/pyenv/bin/python tools/reference_suites.py [--yobx DIR] [--onnx-diagnostic DIR] [--reference] [-k EXPR]

DIR are git directories (bare mirrors) of yobx (xadupre/yet-another-onnx-builder) and onnx-diagnostic
(sdpython/onnx-diagnostic); the four test files are taken from their HEAD with `git archive`:

    yobx             unittests/torch/test_input_observer.py
                     unittests/torch/in_transformers/test_input_observer_transformers.py
    onnx-diagnostic  _unittests/ut_investigate/test_input_observer.py
                     _unittests/ut_investigate/test_input_observer_transformers.py

The only change made to a test file: after each `from <reference module> import ...` statement that imports the name
InputObserver (yobx.torch.input_observer, onnx_diagnostic.investigate.input_observer), one line is inserted,

    from hookscope.torch import InputObserver  # swapped in by tools/reference_suites.py

so that every other name of that statement (InputCandidate, _infer_dynamic_dimensions, ...) stays the reference's.
`--reference` leaves the files unchanged (the references' own score here: the control). The tests import their
packages' helpers (yobx.ext_test_case, yobx.torch.to_onnx, onnx_diagnostic.export.api, ...): each repository's
package directory at HEAD is extracted beside the tests and put first on PYTHONPATH (both are pure Python), so that
the tests run against the helpers of their own commit, not an installed release. Besides the test environment's
packages they need pandas, openpyxl and optree (`build/pyenv/bin/pip install pandas openpyxl optree`). One
conftest.py is written beside the tests (CONFTEST below: an alias transformers 5.25 dropped, which onnx-diagnostic's
patches read when imported); nothing else is added.

Prints per suite and in total the tests passed, failed and skipped, and the name of each one not passed. Needs the
mirrors (GitHub is out of CI's reach): an on-demand tool, not a CI test.
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

MIRRORS = Path("/work/.mirror")
SWAP = "from hookscope.torch import InputObserver  # swapped in by tools/reference_suites.py"

# (suite name, mirror directory name, package directory, reference module, test files)
SUITES = [
    ("yobx", "xadupre+yet-another-onnx-builder/repo", "yobx", "yobx.torch.input_observer",
     ["unittests/torch/test_input_observer.py",
      "unittests/torch/in_transformers/test_input_observer_transformers.py"]),
    ("onnx-diagnostic", "sdpython+onnx-diagnostic/repo", "onnx_diagnostic",
     "onnx_diagnostic.investigate.input_observer",
     ["_unittests/ut_investigate/test_input_observer.py",
      "_unittests/ut_investigate/test_input_observer_transformers.py"]),
]


def swapped(source: str, module: str) -> tuple[str, int]:
    """The test file with SWAP inserted after each statement importing InputObserver from `module`, and how many."""
    lines = source.splitlines(keepends=True)
    found = [node for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.ImportFrom) and node.module == module
             and any(alias.name == "InputObserver" and alias.asname is None for alias in node.names)]
    for node in sorted(found, key=lambda n: n.end_lineno, reverse=True):
        indent = " " * node.col_offset  # an import inside a function is swapped there
        lines.insert(node.end_lineno, f"{indent}{SWAP}\n")
    return "".join(lines), len(found)


# transformers 5.25 renamed IdeficsEmbedding to IdeficsRotaryEmbedding; onnx-diagnostic 0.9.3's patches, which its test
# files import, read the old name when they are imported. The alias, in a conftest.py beside the tests, lets the files
# be imported; nothing of it is in the tests.
CONFTEST = """import transformers.models.idefics.modeling_idefics as idefics

if not hasattr(idefics, "IdeficsEmbedding"):
    idefics.IdeficsEmbedding = idefics.IdeficsRotaryEmbedding
"""


def extract(git_dir: Path, paths: list[str], into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(git_dir), "archive", "HEAD", *paths], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def run_suite(name: str, git_dir: Path, package: str, module: str, tests: list[str], work: Path,
              reference: bool, python: str, extra: list[str]) -> list[tuple[str, str, str]]:
    """[(test id, outcome, message)] of one suite; outcome is passed, failed, error or skipped."""
    root = work / name
    root.mkdir()
    extract(git_dir, [package, *tests], root)
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    for test in tests:
        path = root / test
        if not reference:
            text, n = swapped(path.read_text(encoding="utf-8"), module)
            if n == 0:
                raise SystemExit(f"{name}: {test} imports no InputObserver from {module}: nothing to swap")
            path.write_text(text, encoding="utf-8")
    report = work / f"{name}.xml"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    # The tests write their dump files (get_dump_file) under the working directory: the suite's own folder.
    subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                    "--rootdir", str(root), *extra, *tests], cwd=root, env=env,
                   stdout=subprocess.DEVNULL if not os.environ.get("REFERENCE_SUITES_VERBOSE") else None)
    results = []
    for case in ET.parse(report).iter("testcase"):
        test_id = f"{Path(case.get('classname', '').replace('.', '/')).name}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "failed" if tag == "failure" else tag
                message = (node.get("message") or "").splitlines()[0][:200] if node.get("message") else ""
                break
        results.append((test_id, outcome, message))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yobx", type=Path, default=MIRRORS / SUITES[0][1], help="yobx's git directory")
    parser.add_argument("--onnx-diagnostic", type=Path, default=MIRRORS / SUITES[1][1],
                        help="onnx-diagnostic's git directory")
    parser.add_argument("--reference", action="store_true", help="run the files unchanged (the references' score)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the venv holding hookscope")
    parser.add_argument("--keep", type=Path, help="extract and run in this (new) directory and keep it")
    parser.add_argument("-k", dest="keyword", help="pytest's -k expression")
    args = parser.parse_args()
    extra = ["-k", args.keyword] if args.keyword else []
    dirs = {"yobx": args.yobx, "onnx-diagnostic": args.onnx_diagnostic}
    for needed in ("pandas", "openpyxl", "optree", "hookscope.torch"):
        if subprocess.run([args.python, "-c", f"import {needed}"], capture_output=True).returncode:
            how = ("`bash tools/python_test.sh build -k nothing`" if needed.startswith("hookscope")
                   else f"`{args.python} -m pip install {needed}`")
            print(f"{args.python} cannot import {needed}: {how}", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="reference_suites.") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        total = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        lines = []
        for name, _, package, module, tests in SUITES:
            results = run_suite(name, dirs[name], package, module, tests, work, args.reference, args.python, extra)
            counts = {k: sum(1 for _, o, _ in results if o == k) for k in total}
            for k in total:
                total[k] += counts[k]
            lines.append(f"{name}: {counts['passed']} passed, {counts['failed'] + counts['error']} failed, "
                         f"{counts['skipped']} skipped of {len(results)}")
            for test_id, outcome, message in results:
                if outcome != "passed":
                    lines.append(f"  {outcome.upper():7} {test_id}: {message}")
        n = sum(total.values())
        lines.append(f"total ({'the references' if args.reference else 'hookscope'}): {total['passed']} passed, "
                     f"{total['failed'] + total['error']} failed, {total['skipped']} skipped of {n}")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
