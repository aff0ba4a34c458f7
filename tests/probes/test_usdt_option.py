"""The Meson feature `usdt` (docs/probes.md, "Turning them on"): which builds have probes, and a clear error where
they cannot be had. Each case configures the project afresh (nothing is built) and reads the mode the configuration
gives consumers, `HOOKSCOPE_BUILD_USDT` in build_config.hpp. A host other than x86-64 Linux is declared with a
cross file naming the same compiler: Meson then configures for that host (the compiler is only asked for headers).
"""
import re
import shutil
import subprocess

import pytest

from support import SOURCE_ROOT, expect

OFF = ["-Dtests=disabled", "-Dbench=disabled", "-Dexamples=disabled", "-Dpython=disabled", "-Dlibtorch=disabled"]


def configure(tmp_path, *options, host=None):
    """(meson setup's exit status, its output, HOOKSCOPE_BUILD_USDT or None)."""
    if shutil.which("meson") is None:
        pytest.fail("meson is not installed, yet this suite runs from a Meson build", pytrace=False)
    command = ["meson", "setup", str(tmp_path / "build"), str(SOURCE_ROOT), *OFF, *options]
    if host is not None:
        cross = tmp_path / "host.ini"
        cross.write_text("[binaries]\ncpp = 'g++'\nc = 'gcc'\n[host_machine]\n"
                         f"system = '{host[0]}'\ncpu_family = '{host[1]}'\ncpu = '{host[1]}'\nendian = 'little'\n")
        command += ["--cross-file", str(cross)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    config = tmp_path / "build" / "build_config.hpp"
    mode = None
    if config.exists():
        found = re.search(r"#define HOOKSCOPE_BUILD_USDT (\d)", config.read_text())
        mode = int(found.group(1)) if found else None
    return done.returncode, done.stdout + done.stderr, mode


def sdt_header_found():
    return subprocess.run(["g++", "-x", "c++", "-fsyntax-only", "-"], input="#include <sys/sdt.h>\n",
                          capture_output=True, text=True).returncode == 0


def test_usdt_auto_follows_the_header(tmp_path):
    code, out, mode = configure(tmp_path)
    assert code == 0, out[-3000:]
    expect("HOOKSCOPE_BUILD_USDT with -Dusdt=auto on x86-64 Linux", mode, 1 if sdt_header_found() else 0)


def test_usdt_disabled_builds_without_probes(tmp_path):
    code, out, mode = configure(tmp_path, "-Dusdt=disabled")
    assert code == 0, out[-3000:]
    expect("HOOKSCOPE_BUILD_USDT with -Dusdt=disabled", mode, 0)


# A host other than x86-64 Linux with <sys/sdt.h> (Debian's aarch64 has it) turned probes on, and the first
# annotation then stopped the build at the x86-64-only #error: -Dusdt=auto now leaves them out there.
@pytest.mark.parametrize("host", [("linux", "aarch64"), ("linux", "x86"), ("freebsd", "x86_64")])
def test_usdt_auto_leaves_probes_out_elsewhere(tmp_path, host):
    code, out, mode = configure(tmp_path, host=host)
    assert code == 0, out[-3000:]
    expect(f"HOOKSCOPE_BUILD_USDT with -Dusdt=auto on {host[0]} {host[1]}", mode, 0)


def test_usdt_enabled_elsewhere_stops_with_a_message(tmp_path):
    code, out, mode = configure(tmp_path, "-Dusdt=enabled", host=("linux", "aarch64"))
    expect("meson setup's exit status", code != 0, True)
    assert "USDT probes are implemented for x86-64 Linux only (this host: linux aarch64)" in out, out[-3000:]
    assert "-Dusdt=disabled" in out, out[-3000:]
