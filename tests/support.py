"""Helpers of the pytest modules of tests/: running a program in a controlled environment, comparing with a readable
difference, and checking several expectations of one case so that a failed one hides none of the others."""
import array
import contextlib
import difflib
import fcntl
import json
import os
import pprint
import re
import select
import signal
import subprocess
import termios
import time
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parent.parent
TESTS = SOURCE_ROOT / "tests"
DATA = TESTS / "data"

# The variables that turn on hookscope's environment features: a program is run with none of them set but those a
# test sets itself.
HOOKSCOPE_VARIABLES = ("HOOKSCOPE_TRACE", "HOOKSCOPE_RECORD", "HOOKSCOPE_STATS", "HOOKSCOPE_TIMELINE")


def environment(settings=None):
    """os.environ without hookscope's variables, plus `settings` ({name: value})."""
    env = {k: v for k, v in os.environ.items() if k not in HOOKSCOPE_VARIABLES}
    env.update(settings or {})
    return env


def run(argv, settings=None, timeout=60, **kw):
    """Runs argv with only the hookscope variables of `settings` set; returns the CompletedProcess (text)."""
    return subprocess.run([str(a) for a in argv], env=environment(settings), capture_output=True, text=True,
                          timeout=timeout, **kw)


# Sanitizers slow a program down several times, ThreadSanitizer most: a test's bound on how long something may take
# (a wait that must end) is multiplied by this, so that it still catches a wait that does not end, not their pace.
SLOWDOWN = {"none": 1.0, "address": 2.0, "address,undefined": 2.0, "undefined": 1.5, "thread": 5.0}.get(
    os.environ.get("HOOKSCOPE_TEST_SANITIZE", "none"), 3.0)


def within(seconds):
    """`seconds` as a test's time bound in this build (SLOWDOWN)."""
    return seconds * SLOWDOWN


# AddressSanitizer notes once per process that it follows swapcontext only in part: the sanitizer's line, not the
# program's, and it differs between two runs by the process id it names.
SANITIZER_NOTE = re.compile(r"==\d+==WARNING: ASan doesn't fully support makecontext/swapcontext")


def program_stderr(stderr):
    """A program's standard error as lines, a sanitizer's own notes left out."""
    return [line for line in stderr.splitlines() if not SANITIZER_NOTE.match(line)]


def shown(value, limit=3000):
    r = repr(value)
    return r if len(r) <= limit else r[:limit] + f"... ({len(r)} characters)"


def difference(what, got, want):
    """A readable account of got != want: both values, and a diff of their lines."""
    if isinstance(got, str) and isinstance(want, str):
        a, b = want.splitlines(keepends=True), got.splitlines(keepends=True)
    else:
        a, b = pprint.pformat(want, width=110).splitlines(True), pprint.pformat(got, width=110).splitlines(True)
    a, b = ([line if line.endswith("\n") else line + "\n" for line in lines] for lines in (a, b))
    diff = "".join(difflib.unified_diff(a, b, "expected", "got"))
    if len(diff) > 6000:
        diff = diff[:6000] + f"... ({len(diff)} characters)"
    return f"{what}:\n  expected {shown(want)}\n  got      {shown(got)}\n{diff}"


def expect(what, got, want):
    """Asserts got == want, saying what was checked and how they differ."""
    assert got == want, difference(what, got, want)


class Checks:
    """Several expectations of one case, each checked; the case fails at the end with every one that failed.

        with Checks() as check:
            check.expect("the exit code", done.returncode, 0)
            check.expect("stdout", done.stdout, "3\\n")
    """

    def __init__(self):
        self.failures = []

    def expect(self, what, got, want):
        if got != want:
            self.failures.append(difference(what, got, want))
        return got == want

    def require(self, ok, what):
        if not ok:
            self.failures.append(what)
        return bool(ok)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None and self.failures:
            raise AssertionError(f"{len(self.failures)} expectation(s) failed:\n\n" + "\n\n".join(self.failures))
        if kind is not None and self.failures:  # an exception in the middle: report what failed before it as well
            print("expectations that failed before the exception:\n\n" + "\n\n".join(self.failures))
        return False


STATS = "hookscope: stats: "


def stats_tables(lines):
    """[{function: calls}] for each table in the log lines (a forked child prints its own)."""
    tables = []
    for line in lines:
        if not line.startswith(STATS):
            continue
        row = line[len(STATS):].split()
        if row[0] == "function":
            tables.append({})
        else:
            tables[-1][row[0]] = int(row[1])
    return tables


# === pipes and FIFOs that HOOKSCOPE_RECORD writes into (docs/environment.md, "A reader that stops reading") ===

UNWRITTEN = re.compile(r"^hookscope: HOOKSCOPE_RECORD: (.*): ([0-9]+) calls not written: its reader did not read")


def read_what_is_there(fd):
    """What the non-blocking `fd` holds now (until it would block, or its end)."""
    received = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return bytes(received)
        if not chunk:
            return bytes(received)
        received.extend(chunk)


def read_until_exit(fd, child):
    """Everything the non-blocking `fd` gets until the process `child` (a Popen) has ended and the pipe is empty."""
    received = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            if child.poll() is not None:
                return bytes(received)
            time.sleep(0.001)
            continue
        if not chunk:
            return bytes(received)
        received.extend(chunk)


def pipe_tally(received, stderr_lines, path):
    """(records by function as [ints of their first argument], noted count, logged unwritten count, lines that do
    not parse) of what a pipe's reader received and the program logged about `path`."""
    records, noted, broken = {}, 0, []
    for line in received.split(b"\n")[:-1]:
        try:
            record = json.loads(line)
        except ValueError:
            broken.append(line)
            continue
        if "dropped" in record:
            noted += record["dropped"]["count"]
        else:
            records.setdefault(record["function"], []).append(record["kwargs"][0][1]["int"])
    unwritten = sum(int(m.group(2)) for m in map(UNWRITTEN.match, stderr_lines) if m and m.group(1) == str(path))
    return records, noted, unwritten, broken


@contextlib.contextmanager
def fifo_with_idle_reader(directory):
    """A FIFO in `directory` and a non-blocking reader of it, open (so that a program's open finds a reader) and read
    only when the test reads it; yields (path, reader's fd)."""
    fifo = directory / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        yield fifo, reader
    finally:
        os.close(reader)


def wait_until_full(reader, child, seconds=30):
    """Waits until the pipe read by the fd `reader` takes no more from `child`, which writes without pause: it holds
    all it can take but less than one atomic piece (PIPE_BUF), or it has stopped growing for half a second (pieces
    of whole lines leave the pipe's pages partly filled). True if it did, false if `child` ended or `seconds` passed
    first. A loaded machine may start a program late: a test that needs the writer to have met a full pipe waits
    for it rather than for a fixed time."""
    capacity = fcntl.fcntl(reader, fcntl.F_GETPIPE_SZ)
    deadline = time.monotonic() + seconds
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline and child.poll() is None:
        held = array.array("i", [0])
        fcntl.ioctl(reader, termios.FIONREAD, held)
        now = time.monotonic()
        if held[0] > capacity - select.PIPE_BUF or (held[0] > 0 and held[0] == last and now - since >= 0.5):
            return True
        if held[0] != last:
            last, since = held[0], now
        time.sleep(0.005)
    return False


def terminate_after(child, seconds):
    """Sends SIGTERM to the Popen `child` `seconds` from now; (its remaining stderr, seconds from the signal to its
    end)."""
    time.sleep(seconds)
    start = time.monotonic()
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    return err, time.monotonic() - start
