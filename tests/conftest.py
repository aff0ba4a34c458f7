"""Shared by the pytest modules of tests/: the options that name the built programs and the build's mode.

Meson passes them (tests/meson.build, examples/meson.build), e.g.
  python3 -m pytest -c tests/pytest.ini tests/environment/test_trace.py --trace-program build/tests/trace_program --hooks on
A test that needs a program nobody passed fails with a sentence saying which option is missing (never a skip).
The helpers the modules import (running a program in a controlled environment, readable differences) are in
tests/support.py.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `import support`, whatever pytest's import mode

PROGRAMS = {
    "hookscope-shapes": "the hookscope-shapes command",
    "record-program": "tests/record_program.cpp, built",
    "trace-program": "tests/trace_program.cpp, built",
    "duplicate-names-program": "tests/duplicate_names_program.cpp, built",
    "edge-case-program": "tests/environment/edge_case_program.cpp, built",
    "buffered-record-program": "tests/environment/buffered_record_program.cpp, built",
    "slow-outputs-program": "tests/environment/slow_outputs_program.cpp, built",
    "lowering-passes": "examples/lowering_passes, built",
    "tiny-llm": "examples/tiny_llm (the README's demo), built",
    "libtorch-attention": "examples/libtorch_attention, built",
    "hookscope-library": "the built libhookscope (what a program compiled by a test links with)",
    "probe-program": "tests/probes/probe_program.cpp, built",
    "plugin-program": "tests/environment/plugin_program.cpp, built",
    "plain-plugin-program": "tests/environment/plugin_program.cpp, built without hookscope",
    "plugin-a": "tests/environment/plugin_module.cpp, built as the plugin plugin_a",
    "plugin-b": "tests/environment/plugin_module.cpp, built as the plugin plugin_b",
    "other-version-module": "tests/environment/other_version_module.cpp, built",
}


def pytest_addoption(parser):
    group = parser.getgroup("hookscope")
    for name, what in PROGRAMS.items():
        group.addoption(f"--{name}", metavar="PATH", help=what)
    group.addoption("--hooks", choices=("on", "off"),
                    help="how the programs were built: -Dhooks=true (on) or -Dhooks=false (off)")
    group.addoption("--usdt", choices=("on", "off"),
                    help="whether the library was built with USDT probes (Meson option usdt, found or not)")
    group.addoption("--program", action="append", default=[], metavar="NAME=PATH",
                    help="a built program of tests/unchanged/ (the table's rows name it)")
    group.addoption("--compiler", action="append", default=[], metavar="ARG",
                    help="the compiler command, one argument per option (--compiler=g++ --compiler=-std=c++20 ...)")


def option(config, name):
    value = config.getoption(name.replace("-", "_"))
    if not value:
        pytest.fail(f"this test needs --{name}", pytrace=False)
    return value


def program_fixture(name):
    @pytest.fixture(scope="session", name=name.replace("-", "_"))
    def fixture(pytestconfig):
        return os.path.abspath(option(pytestconfig, name))
    return fixture


for _name in PROGRAMS:
    globals()[_name.replace("-", "_")] = program_fixture(_name)


@pytest.fixture(scope="session")
def programs(pytestconfig):
    """{name: absolute path} of the --program NAME=PATH options."""
    named = dict(option.split("=", 1) for option in pytestconfig.getoption("program"))
    return {name: os.path.abspath(path) for name, path in named.items()}


@pytest.fixture(scope="session")
def usdt_enabled(pytestconfig):
    """True when the library was built with USDT probes (-Dusdt found <sys/sdt.h>, or was enabled)."""
    return option(pytestconfig, "usdt") == "on"


@pytest.fixture(scope="session")
def hooks_enabled(pytestconfig):
    """True unless the programs were built with -Dhooks=false (then some expectations differ)."""
    return option(pytestconfig, "hooks") == "on"


@pytest.fixture(scope="session")
def compiler(pytestconfig):
    """The compiler command, a list of arguments."""
    return option(pytestconfig, "compiler")
