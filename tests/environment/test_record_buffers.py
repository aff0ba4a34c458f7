"""HOOKSCOPE_RECORD's buffered path (the calling thread copies a call in binary form, a writer formats it): the same
text as the value tree's path, and nothing completed lost however the writer falls behind or the program ends."""
import json
import os
import random
import re
import resource
import signal
import subprocess
import threading
import time

import pytest

from support import (
    Checks, environment, fifo_with_idle_reader, pipe_tally, read_what_is_there, run, terminate_after, within,
    UNWRITTEN)

LATENCY = re.compile(rb',"latency_ns":[0-9]+}$')


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("hooks are disabled in this build: nothing is recorded")


def run_buffered(program, record, *args, timeout=120):
    done = run([program, *map(str, args)], {"HOOKSCOPE_RECORD": record}, timeout=timeout)
    return done.returncode, done.stdout, done.stderr.splitlines()


def file_lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


def lines_without_latency(path):
    """The file's lines, their latency left out (each path, the file's and the printed one, times the call itself)."""
    return [LATENCY.sub(b"}", line) for line in file_lines(path)]


def printed_lines(out):
    return out.encode().split(b"\n")[:-1]


def in_function_order(lines, functions):
    """The lines of each function in turn (names in `functions`), each function's in the file's order."""
    by_function = {}
    for line in lines:
        by_function.setdefault(line.split(b'"', 4)[3].decode(), []).append(line)
    return sum((by_function.get(f, []) for f in functions), [])


def test_buffered_lines_equal_the_value_trees(buffered_record_program, enabled, tmp_path):
    """A property: random calls whose values have a binary form (and strings past its bound, which take the value
    tree, results that throw, a void result, leading arguments that repeat the last call's, whose text the writer
    copies) give, byte for byte, the lines to_record_line writes for the same calls captured as value trees (latency
    aside: each path times the call itself)."""
    seed = random.randrange(1 << 30)
    records = tmp_path / "r.jsonl"
    code, out, err = run_buffered(buffered_record_program,
                                  f"encodable={records},echo={records},nothing_back={records},repeating={records}",
                                  "same_text", seed, 400)
    got = lines_without_latency(records)
    with Checks() as check:
        check.expect(f"seed {seed}: the program ran, nothing logged", (code, err), (0, []))
        check.expect(f"seed {seed}: every line has its latency", len([l for l in file_lines(records)
                                                                        if LATENCY.search(l)]), len(got))
        check.expect(f"seed {seed}: the same lines, in the same order",
                     in_function_order(got, ("encodable", "echo", "nothing_back", "repeating")), printed_lines(out))


EDGE_FUNCTIONS = ("edges", "tensor_first", "wide64", "wide65")
SIGNATURE = re.compile(rb'^(\{"function":"[^"]*"),"signature":.*?(,"args":\[\],"kwargs":\[)')


def unsigned(lines):
    return sorted(SIGNATURE.sub(rb"\1\2", line) for line in lines)


@pytest.mark.parametrize("threads", [1, 4])
def test_repeated_arguments_equal_the_value_trees(buffered_record_program, enabled, tmp_path, threads):
    """The writer copies the text of the leading arguments that repeat the last call's byte for byte: arguments
    that change as little as the binary form allows (a string and its prefix, the empty string, 4096 bytes and past
    them, a rank-0 tensor, a rank that grows with the same leading dimensions, rank 64 and past it, NaN payloads,
    -0.0, both booleans), calls that leave 0 to 2 arguments to their defaults, a tensor first, 64 and 65 parameters
    with lines past the writer's batch, from one thread or four at once: the lines to_record_line writes (with
    threads, in any order and each function signed once)."""
    seed = random.randrange(1 << 30)
    records = tmp_path / "r.jsonl"
    code, out, err = run_buffered(buffered_record_program, ",".join(f"{f}={records}" for f in EDGE_FUNCTIONS),
                                  "repeat_edges", seed, 400, threads)
    got = lines_without_latency(records)
    want = printed_lines(out)
    in_order = in_function_order(got, EDGE_FUNCTIONS)
    with Checks() as check:
        check.expect(f"seed {seed}: the program ran, nothing logged", (code, err), (0, []))
        check.expect(f"seed {seed}: every line has its latency", len([l for l in file_lines(records)
                                                                        if LATENCY.search(l)]), len(got))
        if threads == 1:
            check.expect(f"seed {seed}: the same lines, in the same order", in_order, want)
        else:
            check.expect(f"seed {seed}: the same lines", unsigned(in_order), unsigned(want))
            check.expect(f"seed {seed}: one signed line a function",
                         sorted(line.split(b'"', 4)[3] for line in got if SIGNATURE.match(line)),
                         sorted(f.encode() for f in EDGE_FUNCTIONS))


def test_repeated_arguments_at_abort(buffered_record_program, enabled, tmp_path):
    """The same calls from four threads, then abort(): the lines the writer formed from the repeated arguments' text
    and those SIGABRT's handler writes (without that memory) are together those of the calls, each once."""
    seed = random.randrange(1 << 30)
    records = tmp_path / "r.jsonl"
    code, out, err = run_buffered(buffered_record_program, ",".join(f"{f}={records}" for f in EDGE_FUNCTIONS),
                                  "repeat_abort", seed, 400, 4)
    got = lines_without_latency(records)
    want = printed_lines(out)
    with Checks() as check:
        check.expect(f"seed {seed}: the program died of SIGABRT, nothing logged", (code, err), (-signal.SIGABRT, []))
        check.expect(f"seed {seed}: the same lines", unsigned(got), unsigned(want))


def test_repeated_arguments_across_fork(buffered_record_program, enabled, tmp_path):
    """A fork() while the parent's lines of a function may still wait in its buffers: the child's writer starts from
    the memory of the parent's last line; each process's lines are those of its calls, the file holds them all."""
    seed = random.randrange(1 << 30)
    records = tmp_path / "r.jsonl"
    n = 300
    code, out, err = run_buffered(buffered_record_program, f"edges={records}", "repeat_fork", seed, n)
    child, parent = out.encode().split(b"parent\n")
    child_lines = child.split(b"\n")[1:-1]
    parent_lines = parent.split(b"\n")[:-1]
    got = lines_without_latency(records)
    with Checks() as check:
        check.expect(f"seed {seed}: the program ran, nothing logged", (code, err), (0, []))
        check.expect(f"seed {seed}: the calls before the fork, in both processes", child_lines[:n], parent_lines[:n])
        check.expect(f"seed {seed}: the same lines", unsigned(got), unsigned(parent_lines + child_lines[n:]))


def steps(path):
    """The `n` of every step line, and the dropped counts of the notes (docs/record_format.md, "Notes")."""
    calls, dropped = [], 0
    for line in file_lines(path):
        record = json.loads(line)
        if "dropped" in record:
            dropped += record["dropped"]["count"]
        else:
            calls.append(record["kwargs"][0][1]["int"])
    return calls, dropped


def test_threads_ending_with_unwritten_records(buffered_record_program, enabled, tmp_path):
    """8 threads of 5,000 calls each end at once, and the process exit()s: their buffers are written."""
    records = tmp_path / "r.jsonl"
    code, _, err = run_buffered(buffered_record_program, f"step={records}", "threads", 5000, 8)
    calls, dropped = steps(records)
    with Checks() as check:
        check.expect("the program ran, nothing logged", (code, err), (0, []))
        check.expect("every call once", (sorted(calls), dropped), (list(range(40000)), 0))


def test_exit_from_another_thread_with_a_small_buffer(buffered_record_program, enabled, tmp_path):
    """exit() from a thread while this one records without pause through a 64 KiB buffer: every line whole, no call
    lost or written twice (the calls that end while exit() runs are written as they end)."""
    records = tmp_path / "r.jsonl"
    code, _, err = run_buffered(buffered_record_program, f"step={records}[buffer=64K]", "exit_from_thread", 200)
    calls, _ = steps(records)
    with Checks() as check:
        check.expect("the program ran, nothing logged", (code, err), (0, []))
        check.expect("the calls made, each once, in order", calls, list(range(len(calls))))
        check.expect("more than a buffer's worth of calls", len(calls) > 2000, True)


def test_fork_with_a_full_buffer(buffered_record_program, enabled, tmp_path):
    """The parent fills a 64 KiB buffer faster than its writer empties it and forks: the parent's file holds its calls,
    the child's (%p) its own 100, each once."""
    code, _, err = run_buffered(buffered_record_program, f"step={tmp_path}/r%p.jsonl[buffer=64K]", "fork", 200000)
    files = sorted(tmp_path.iterdir(), key=lambda p: len(steps(p)[0]))
    with Checks() as check:
        check.expect("parent and child ran, nothing logged", (code, err, len(files)), (0, [], 2))
        check.expect("the child's file: its own calls", steps(files[0]), (list(range(1000000, 1000100)), 0))
        check.expect("the parent's file: its own calls", steps(files[1]), (list(range(200000)), 0))


def test_tiny_buffer_counts_what_it_drops(buffered_record_program, hookscope_shapes, enabled, tmp_path):
    """full=drop with a 64 KiB buffer and two threads of 300,000 calls: the writer cannot keep up; the calls written
    and the counts of the notes add up to the calls made, and no call is written twice."""
    records = tmp_path / "r.jsonl"
    code, _, err = run_buffered(buffered_record_program, f"step={records}[buffer=64K;full=drop]", "threads",
                                300000, 2)
    calls, dropped = steps(records)
    with Checks() as check:
        check.expect("the program ran, nothing logged", (code, err), (0, []))
        check.expect("calls written + calls dropped = calls made", len(calls) + dropped, 600000)
        check.expect("no call written twice", len(set(calls)), len(calls))


def test_sigterm_while_threads_record(buffered_record_program, enabled, tmp_path):
    """SIGTERM while two threads record without pause (the writer busy): every line whole, no call twice, and each
    thread's calls from its first on, without a gap."""
    records = tmp_path / "r.jsonl"
    child = subprocess.Popen([buffered_record_program, "forever", "2"], env=environment({"HOOKSCOPE_RECORD":
                             f"step={records}"}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "recording\n"
    time.sleep(0.3)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    calls, _ = steps(records)
    by_thread = {}
    for c in calls:
        by_thread.setdefault(c // 1_000_000_000, []).append(c % 1_000_000_000)
    with Checks() as check:
        check.expect("the program died of SIGTERM, nothing logged", (child.returncode, err), (-signal.SIGTERM, ""))
        check.expect("no call twice", len(set(calls)), len(calls))
        check.expect("each thread's calls without a gap", {t: sorted(c) == list(range(len(c)))
                                                          for t, c in by_thread.items()}, {0: True, 1: True})


def test_fifo_read_slowly(buffered_record_program, enabled, tmp_path):
    """full=wait into a FIFO whose reader takes 4 KiB every 10 ms: the program slows down, nothing is lost."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = bytearray()

    def read_slowly():
        fd = os.open(fifo, os.O_RDONLY)
        while chunk := os.read(fd, 4096):
            received.extend(chunk)
            time.sleep(0.01)
        os.close(fd)

    reader = threading.Thread(target=read_slowly)
    reader.start()
    time.sleep(0.1)  # the reader opened it: the program's open does not fail for want of a reader
    code, _, err = run_buffered(buffered_record_program, f"step={fifo}[buffer=64K]", "calls", 5000)
    reader.join(timeout=120)
    lines = bytes(received).split(b"\n")[:-1]
    calls = [json.loads(line)["kwargs"][0][1]["int"] for line in lines]
    with Checks() as check:
        check.expect("the program ran, nothing logged", (code, err), (0, []))
        check.expect("every call, in order", calls, list(range(5000)))


def fifo_nobody_reads(program, tmp_path, *args):
    """Runs `program args` recording step() into a FIFO under full=drop, its reader open and never read while the
    program runs; (exit code, seconds, stderr lines, the calls in the FIFO, their notes' count, the count logged)."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        start = time.monotonic()
        code, _, err = run_buffered(program, f"step={fifo}[buffer=64K;full=drop]", *args)
        seconds = time.monotonic() - start
        received = read_what_is_there(reader)
    records, noted, unwritten, broken = pipe_tally(received, err, fifo)
    assert broken == [], f"lines in the FIFO that are not JSON: {broken[:3]}"
    return code, seconds, err, received.split(b"\n")[-1], records.get("step", []), noted, unwritten


def test_fifo_nobody_reads(buffered_record_program, enabled, tmp_path):
    """full=drop into a FIFO whose reader never reads: the program is held up a second at most, once, not forever
    (at exit too); the FIFO holds whole lines; every call is in it, in a note of dropped calls, or in the count logged
    at exit."""
    code, seconds, err, tail, calls, noted, unwritten = fifo_nobody_reads(buffered_record_program, tmp_path,
                                                                          "calls", 200000)
    with Checks() as check:
        check.expect("the program ran", code, 0)
        check.expect("it was held up a second, not more (under 5 s in all)", seconds < within(5), True)
        check.expect("the FIFO ends with a whole line", tail, b"")
        check.expect("some calls reached the FIFO, in order", calls == list(range(len(calls))) and calls != [], True)
        check.expect("calls in the FIFO + noted + logged as not written = calls made", len(calls) + noted + unwritten,
                     200000)
        check.expect("two messages: the reader's stall, then the count at exit",
                     ["its reader did not read for a second" in line for line in err[:1]] +
                     [bool(UNWRITTEN.match(line)) for line in err[1:]], [True, True])


def test_fifo_nobody_reads_then_sigterm(buffered_record_program, enabled, tmp_path):
    """The same FIFO, the program ended by SIGTERM while its threads record: the signal handler waits for the reader
    no more than the program did, and counts what it could not write."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([buffered_record_program, "forever", "2"],
                                 env=environment({"HOOKSCOPE_RECORD": f"step={fifo}[buffer=64K;full=drop]"}),
                                 stderr=subprocess.PIPE, text=True)
        err, seconds = terminate_after(child, 2.5)  # the writer has met the stalled reader
        received = read_what_is_there(reader)
    with Checks() as check:
        check.expect("the program died of SIGTERM", child.returncode, -signal.SIGTERM)
        check.expect("at once: the reader had stalled already (under 1 s)", seconds < within(1), True)
        check.expect("the FIFO ends with a whole line", received.split(b"\n")[-1], b"")
        check.expect("what the handler could not write is counted",
                     any(UNWRITTEN.match(line) for line in err.splitlines()), True)


def whole_lines_then_message(records, done, error, named=None):
    """`records` holds the calls from the first, whole, then stops; one message names `named` (the file the program
    wrote, default `records`) and the error."""
    calls, _ = steps(records)
    with Checks() as check:
        check.expect("the program ran", done.returncode, 0)
        check.expect("one message, naming the file and the error",
                     [str(named or records) in line and error in line for line in done.stderr.splitlines()], [True])
        check.expect("the calls written, from the first, whole", calls, list(range(len(calls))))
        check.expect("the file ends with a whole line (the cut one removed)", records.read_bytes()[-1:], b"\n")
        check.expect("the file stopped at the disk's end", 0 < len(calls) < 100000, True)


def test_full_disk_file_size_limit(buffered_record_program, enabled, tmp_path):
    """A file that cannot grow past 1 MiB (RLIMIT_FSIZE, SIGXFSZ ignored): one message naming the file, the program
    unaffected, every line written whole, the one the limit cut removed."""
    records = tmp_path / "r.jsonl"

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    done = subprocess.run([buffered_record_program, "calls", "100000"],
                          env=environment({"HOOKSCOPE_RECORD": f"step={records}"}), capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)
    whole_lines_then_message(records, done, "File too large")


def test_full_disk_tmpfs(buffered_record_program, enabled, tmp_path):
    """A real 1 MiB tmpfs that fills up (ENOSPC), mounted in a private mount namespace: as with the size limit."""
    disk = tmp_path / "disk"
    disk.mkdir()
    records = disk / "r.jsonl"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0 or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and unshare(1): "
                    f"{probe.stderr.decode().strip() or 'not root'} (the RLIMIT_FSIZE case covers a full file)")
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           'mount -t tmpfs -o size=1m hookscope_full "$1" && "$2" calls 100000 && '
                           'cp "$1/r.jsonl" "$3"', "sh", str(disk), buffered_record_program, str(tmp_path / "r.jsonl")],
                          env=environment({"HOOKSCOPE_RECORD": f"step={records}"}), capture_output=True, text=True,
                          timeout=120)
    whole_lines_then_message(tmp_path / "r.jsonl", done, "No space left on device", named=records)
