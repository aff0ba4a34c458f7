"""The type zoo (tests/type_zoo.hpp) with the compiler given (--compiler=g++ or clang++), in both modes: the program
that calls every annotated function compiles (warnings as errors) and runs; under HOOKSCOPE_RECORD, every call is
recorded with its argument captured as tests/type_zoo_expected.txt says (derived by hand), and the records read back
by Python's json and by the library's reader (hookscope::record_reader, `type_zoo_program --read`) give the same
values.
"""
import json
import re
import subprocess

import pytest

from support import SOURCE_ROOT, TESTS, Checks, run

EXPECTED = {}
for _line in (TESTS / "type_zoo_expected.txt").read_text(encoding="utf-8").splitlines():
    if _line and not _line.startswith("#"):
        _entry, _json = _line.split(" ", 1)
        EXPECTED[_entry] = json.loads(_json)


def matches(got, want):
    """{"opaque~": text, ...} stands for an opaque leaf whose type name contains text and whose other keys are those
    given, "address": "any" for any address."""
    if isinstance(want, dict) and "opaque~" in want:
        if not (isinstance(got, dict) and isinstance(got.get("opaque"), str) and want["opaque~"] in got["opaque"]):
            return False
        want_rest = {k: v for k, v in want.items() if k != "opaque~"}
        got_rest = {k: v for k, v in got.items() if k != "opaque"}
        if want_rest.get("address") == "any":
            if not re.fullmatch(r"0x[0-9a-f]+", str(got_rest.get("address", ""))):
                return False
            want_rest["address"] = got_rest["address"]
        return got_rest == want_rest
    return got == want


def has_opaque_leaf(v):
    """An opaque leaf that the type's rules make (not a run-time bound: depth, size, memory that cannot be read)."""
    if isinstance(v, dict):
        if ("opaque" in v or "opaque~" in v) and not (v.get("depth_limited") or v.get("too_large") or
                                                      v.get("unreadable")):
            return True
        return any(has_opaque_leaf(x) for x in v.values())
    if isinstance(v, list):
        return any(has_opaque_leaf(x) for x in v)
    return False


@pytest.fixture(scope="module", params=["enabled", "disabled"])
def zoo_program(request, compiler, pytestconfig, tmp_path_factory):
    mode = request.param
    exe = tmp_path_factory.mktemp("zoo") / f"type_zoo_{mode}"
    command = compiler + ["-std=c++20", "-O1", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                          f"-DHOOKSCOPE_ENABLED={1 if mode == 'enabled' else 0}",
                          f"-DHOOKSCOPE_USDT={1 if pytestconfig.getoption('usdt') == 'on' else 0}",
                          "-I", str(SOURCE_ROOT / "include"),
                          "-I", str(TESTS), str(TESTS / "type_zoo_program.cpp"), "-o", str(exe)]
    if mode == "enabled":
        if pytestconfig.getoption("hooks") != "on":
            pytest.skip("-Dhooks=false: the build's library is the disabled one, which an enabled program cannot link")
        # As the hookscope dependency links (meson.build's environment_link_args): the environment features kept.
        command += [pytestconfig.getoption("hookscope_library"), "-Wl,--undefined=hookscope_environment_features",
                    "-pthread"]
    built = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if built.returncode != 0:
        pytest.fail(f"type_zoo_program.cpp does not build ({mode}):\n{built.stderr[:6000]}", pytrace=False)
    return mode, exe


def test_every_function_called(zoo_program):
    _, exe = zoo_program
    done = run([exe])
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{len(EXPECTED)}\n", "")


def test_expectations_agree_with_structural_column():
    # The zoo's third column (asserted as hookscope::capturable at compile time) is "no opaque leaf": the expectations
    # derived by hand must say the same (read from the header's entries).
    header = (TESTS / "type_zoo.hpp").read_text(encoding="utf-8")
    columns = dict(re.findall(r"X\((?:\s|\\)*(\w+), [\w:<>*, ]*?, (true|false),", header))
    assert set(columns) == set(EXPECTED), "entries of type_zoo.hpp and lines of type_zoo_expected.txt differ"
    with Checks() as check:
        for entry, want in EXPECTED.items():
            check.expect(f"{entry}: structural", not has_opaque_leaf(want), columns[entry] == "true")


@pytest.fixture(params=["probes idle", "probes raised"])
def probes_raised(request):
    """Whether the program raises every probe's semaphore first, as a tool attached to each would."""
    return request.param == "probes raised"


def test_recorded_and_read_back(zoo_program, probes_raised, usdt_enabled, tmp_path):
    mode, exe = zoo_program
    out = tmp_path / "zoo.jsonl"
    if probes_raised and not (usdt_enabled and mode == "enabled"):
        # A program without probes (hooks disabled, or built without USDT) has no semaphore to raise.
        refused = run([exe, "--raise-probes"])
        assert refused.returncode == 2 and "usage" in refused.stderr, f"--raise-probes without probes: {refused}"
        return
    done = run([exe] + (["--raise-probes"] if probes_raised else []), {"HOOKSCOPE_RECORD": f"zoo::*={out}"})
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{len(EXPECTED)}\n", "")
    if mode == "disabled":
        assert not out.exists(), "a disabled build recorded calls"
        return
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_entry = {}
    for r in records:
        by_entry.setdefault(r["function"].removeprefix("zoo::"), []).append(r)
    with Checks() as check:
        check.expect("one record per entry", sorted((k, len(v)) for k, v in by_entry.items()),
                     sorted((k, 1) for k in EXPECTED))
        for entry, want in EXPECTED.items():
            got = [r["kwargs"] for r in by_entry.get(entry, [])]
            if check.require(len(got) == 1 and len(got[0]) == 1 and got[0][0][0] == "v",
                             f"{entry}: one keyword argument v, got {got}"):
                check.require(matches(got[0][0][1], want), f"{entry}: recorded {got[0][0][1]}, expected {want}")
            # The library's reader (hookscope::record_reader, in the same program) reads the file back.
        read = run([exe, "--read", out])
        if check.require(read.returncode == 0, f"the library's reader failed: {read.stderr}"):
            read_back = {}
            for line in read.stdout.splitlines():
                function, argument = line.split(" ", 1)
                read_back.setdefault(function.removeprefix("zoo::"), []).append(argument)
            for entry, want in EXPECTED.items():
                got = read_back.get(entry, [])
                if check.require(len(got) == 1 and got[0].startswith("v="), f"{entry}: read back {got}"):
                    value = json.loads(got[0][2:])
                    check.require(matches(value, want), f"{entry}: the library's reader read {value}, expected {want}")
