"""The tools the USDT tests attach with, each found and tried once: a tool that cannot run on this machine makes the
tests that need it skip with a sentence naming it and saying why (pytest -rs prints it); never a silent pass."""
import os
import shutil
import subprocess

import pytest

PACKAGES = {"readelf": "binutils", "gdb": "gdb", "bpftrace": "bpftrace"}


def require_tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed on this machine (Debian package {PACKAGES[name]}); "
                    "its probe tests cannot run")
    return path


@pytest.fixture(scope="session")
def readelf_tool():
    return require_tool("readelf")


@pytest.fixture(scope="session")
def gdb_tool():
    return require_tool("gdb")


@pytest.fixture(scope="session")
def bpftrace_tool():
    """bpftrace, able to run here: root, tracefs mounted (mounted here if missing), a trivial program runs."""
    path = require_tool("bpftrace")
    if os.geteuid() != 0:
        pytest.skip(f"bpftrace needs root; these tests run as uid {os.geteuid()}")
    if not os.path.isdir("/sys/kernel/tracing/events"):
        mounted = subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"], capture_output=True,
                                 text=True)
        if mounted.returncode != 0:
            pytest.skip(f"bpftrace needs tracefs, and mounting it at /sys/kernel/tracing failed: {mounted.stderr}")
    trial = subprocess.run([path, "-e", 'BEGIN { printf("bpftrace runs\\n"); exit(); }'], capture_output=True,
                           text=True, timeout=60)
    if "bpftrace runs" not in trial.stdout:
        pytest.skip(f"bpftrace cannot run on this machine: {trial.stderr.strip()[-500:]}")
    return path
