"""HOOKSCOPE_RECORD against outputs that fight back (docs/environment.md, "A full disk", "A reader that stops
reading", "When the writer cannot keep up"): FIFOs and pipes whose readers stall, resume or leave, a socket, a file
at its size limit, a fork after a stall, two targets of different `full=` in one FIFO, and values that trip the
writer's memory of each parameter's last text (line_memo)."""
import json
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from support import (
    Checks, environment, fifo_with_idle_reader, pipe_tally, read_until_exit, read_what_is_there, terminate_after,
    wait_until_full, within, UNWRITTEN)

LATENCY = re.compile(rb',"latency_ns":[0-9]+}$')
STALLED = "its reader did not read for a second"

# AddressSanitizer's warning in a child forked on a signal handler's stack, at its first call of a function that does
# not return (its bookkeeping of the stack, not a finding, and not hookscope's): three lines, left out of the checks.
ASAN_FORKED_STACK = re.compile(r"==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return: .*|"
                               r"False positive error reports may follow|"
                               r"For details see https://github.com/google/sanitizers/issues/189")


def without_asan_stack_warnings(lines):
    return [line for line in lines if not ASAN_FORKED_STACK.fullmatch(line)]


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("hooks are disabled in this build: nothing is recorded")




def made(stderr_lines):
    return int(next(line.split()[1] for line in stderr_lines if line.startswith("made ")))


def test_memo_follows_every_change_of_a_parameter(slow_outputs_program, enabled, tmp_path):
    """The writer's memory of each parameter's last tensor or string text: ranks 0 (ten dtypes, 3 bytes each) and 64,
    equal-size shapes and strings that differ in one place, escapes, NULs, U+2028, bytes that are not UTF-8, strings
    at and past the binary form's 4096 bytes, through arguments and results: every line is to_record_line's."""
    records = tmp_path / "r.jsonl"
    done = subprocess.run([slow_outputs_program, "memo"], capture_output=True, timeout=60,
                          env=environment({"HOOKSCOPE_RECORD": f"shaped={records},texted={records}"}))
    got = [LATENCY.sub(b"}", line) for line in records.read_bytes().split(b"\n")[:-1]]
    by_function = {}
    for line in got:
        by_function.setdefault(json.loads(line)["function"], []).append(line)
    want = done.stdout.split(b"\n")[:-1]
    with Checks() as check:
        check.expect("the program ran, nothing logged", (done.returncode, done.stderr), (0, b""))
        check.expect("the same lines as to_record_line, in order",
                     by_function.get("shaped", []) + by_function.get("texted", []), want)


def test_long_line_cut_by_a_stalled_reader_is_not_glued_to_the_next(slow_outputs_program, enabled,
                                                                     tmp_path):
    """full=drop, lines of ~24 KB (4000 control characters, escaped) into a FIFO whose reader reads nothing until
    the writer reports the stall, then reads everything: a line longer than PIPE_BUF may be cut (the docs allow
    it), but the lines after it must stay whole records, and calls in the FIFO + notes + the count logged at exit
    must add up to the calls made."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        received = bytearray()
        child = subprocess.Popen([slow_outputs_program, "long_then_short", "1800", "1500"],
                                 env=environment({"HOOKSCOPE_RECORD": f"tagged={fifo}[full=drop]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = child.stderr.readline()  # the writer's message that the reader stalled
        received.extend(read_until_exit(reader, child))
        out, rest = child.communicate(timeout=30)
    err = [first.rstrip("\n")] + rest.splitlines()
    records, noted, unwritten, broken = pipe_tally(bytes(received), err, fifo)
    calls = records.get("tagged", [])
    with Checks() as check:
        check.expect("the program ran and said the reader stalled", (child.returncode, STALLED in first), (0, True))
        check.expect("every line that does not parse holds one record's start, not a cut one glued to the next",
                     [line.count(b'{"function"') for line in broken], [1] * len(broken))
        check.expect("calls in the FIFO + noted + logged as not written = calls made",
                     len(calls) + noted + unwritten, int(out))


@pytest.mark.parametrize("signals", ["timer", "every_thread"])
def test_signal_handler_calling_recorded_functions_neither_hangs_nor_loses_a_call(slow_outputs_program,
                                                                                   enabled, tmp_path, signals):
    """A signal handler of the program calls two recorded functions, one of the value tree's path and one of the
    binary path, every 50 us, while the program calls them without pause: the handler lands inside the recording
    path (a lock held, a buffer half changed), on the calling thread (timer) or on any thread, the writer's included
    (every_thread). The program ends, its handler's calls return what they return without hookscope, and each call
    is a record or counted in a note with the reason "reentered" (docs/environment.md, "Signal handlers")."""
    records = tmp_path / "r.jsonl"
    # The handler's calls of the value tree's path allocate when they interrupt the program outside the recording
    # path (documented: the program's own code does not allocate there), which ThreadSanitizer reports as calls
    # unsafe in a signal handler; its other reports stay on.
    tsan = (os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0").lstrip(":")
    try:
        done = subprocess.run([slow_outputs_program, "signalled_calls", "500", signals],
                              capture_output=True, text=True, timeout=within(30),
                              env=environment({"HOOKSCOPE_RECORD": f"step={records},listed={records}",
                                               "TSAN_OPTIONS": tsan}))
    except subprocess.TimeoutExpired:
        done = None  # killed
    if done is None:
        pytest.fail(f"the program did not end within {within(30)} s: a signal handler's call deadlocked")
    made = {name: int(count) for name, count in map(str.split, done.stdout.splitlines())}
    written, noted = {}, {}
    for line in records.read_bytes().split(b"\n")[:-1]:
        record = json.loads(line)
        if "dropped" in record:
            key = (record["function"], record["dropped"]["reason"])
            noted[key] = noted.get(key, 0) + record["dropped"]["count"]
        else:
            written[record["function"]] = written.get(record["function"], 0) + 1
    with Checks() as check:
        check.expect("the program ran, its handler's calls returned right, nothing logged",
                     (done.returncode, done.stderr), (0, ""))
        check.expect("records + noted = calls made, for each function",
                     {name: written.get(name, 0) + sum(n for (f, _), n in noted.items() if f == name)
                      for name in made}, made)
        check.expect("notes of reentered calls only", sorted({reason for _, reason in noted}), ["reentered"])


def test_child_forked_inside_a_blocked_write_writes_nothing(slow_outputs_program, enabled, tmp_path):
    """A forked child records 100,000 calls into a FIFO read slowly, writing them as they come on its own thread; a
    SIGALRM handler forks once while that write is blocked, and the grandchild returns from the handler into it. The
    grandchild gives up recording, so the write it resumes must not send the batch a second time: the reader gets
    each call once."""
    if os.environ.get("HOOKSCOPE_TEST_SANITIZE") == "thread":
        pytest.skip("ThreadSanitizer delivers a signal when its interceptor of write(2) returns, never inside the "
                    "blocked write this test forks in (the grandchild then records its own calls, as it should)")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open before the program, which then does not block
    os.set_blocking(reader, True)
    tsan = (os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0").lstrip(":")
    with subprocess.Popen([slow_outputs_program, "fork_in_blocked_write", "100000"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=environment({"HOOKSCOPE_RECORD": f"step={fifo}", "TSAN_OPTIONS": tsan})) as program:
        time.sleep(1.5)  # the pipe fills, the child's write blocks, the handler forks inside it
        with os.fdopen(reader, "rb") as received:
            data = received.read()  # until every writer closed the FIFO
        out, err = program.communicate(timeout=within(60))
    calls = [json.loads(line)["result"]["int"] for line in data.split(b"\n")[:-1]]
    with Checks() as check:
        check.expect("the program ran", (program.returncode, out), (0, "made 100000\n"))
        check.expect("each call once", (len(calls), len(set(calls))), (100000, 100000))
        check.expect("stderr: the grandchild's line", [ABANDONED_CHILD.fullmatch(line) is not None
                                                       for line in without_asan_stack_warnings(err.splitlines())],
                     [True])


def test_children_forked_by_a_handler_report_nothing_of_their_parent(slow_outputs_program, enabled,
                                                                     tmp_path):
    """A FIFO with full=drop nobody reads: the parent counts the calls its pipe did not take. A SIGALRM handler then
    forks every 2 ms, and each child calls exit(): the count is the parent's, written once, by the parent, not again
    by every child that gave up recording."""
    # Each child calls exit() in the handler, whose destructors free memory: a call unsafe in a signal handler, the
    # program's own, which ThreadSanitizer would report (and symbolise) in every child.
    tsan = (os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0").lstrip(":")
    with fifo_with_idle_reader(tmp_path) as (fifo, _):
        done = subprocess.run([slow_outputs_program, "forks_exiting", "2500"], capture_output=True, text=True,
                              timeout=within(60),
                              env=environment({"HOOKSCOPE_RECORD": f"step={fifo}[full=drop]", "TSAN_OPTIONS": tsan}))
    lines = without_asan_stack_warnings(done.stderr.splitlines())
    unwritten = [line for line in lines if UNWRITTEN.search(line)]
    stalled = [line for line in lines if STALLED in line and not UNWRITTEN.search(line)]
    others = [line for line in lines if line not in unwritten + stalled and not ABANDONED_CHILD.fullmatch(line)]
    with Checks() as check:
        check.expect("the program ran and forked", (done.returncode, int(done.stdout.split()[1]) > 0), (0, True))
        check.expect("one line of calls not written, the parent's", len(unwritten), 1)
        check.expect("one line of the stall, the parent's", len(stalled), 1)
        check.expect("no other line", others, [])


@pytest.mark.parametrize("feature", ["HOOKSCOPE_STATS", "HOOKSCOPE_TIMELINE", "HOOKSCOPE_TRACE"])
def test_signal_handler_calling_counted_timed_or_traced_functions(slow_outputs_program, enabled, tmp_path,
                                                                  feature):
    """As above for the three other features: a SIGALRM handler calls step() and listed() every 50 us while the program
    calls them without pause, so that it lands inside the feature's own path (between a load and a store of a
    counter, in the middle of a ring's event, inside the logger's lock). The program neither hangs nor loses a call:
    the statistics count every call; the timeline and the trace hold every call but those the handler made inside
    their path, whose number their one line at exit gives (docs/environment.md, "Signal handlers")."""
    timeline = tmp_path / "t.json"
    setting = {"HOOKSCOPE_STATS": "step,listed", "HOOKSCOPE_TIMELINE": f"step,listed={timeline}[events=1048576]",
               "HOOKSCOPE_TRACE": "step,listed"}[feature]
    tsan = (os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0").lstrip(":")  # as above: allocations
    try:
        # Long enough that a handler lands between a counter's load and store (a few times in 500 ms here). The
        # timeline keeps the last 1,048,576 events of a thread (a flight recorder): the calls stay below that.
        ms, most = ("500", "100000000") if feature == "HOOKSCOPE_STATS" else ("100", "400000")
        done = subprocess.run([slow_outputs_program, "signalled_calls", ms, "timer", most],
                              capture_output=True, text=True, timeout=within(30),
                              env=environment({feature: setting, "TSAN_OPTIONS": tsan}))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the program did not end within {within(30)} s: a signal handler's call deadlocked")
    made = {name: int(count) for name, count in map(str.split, done.stdout.splitlines())}
    lines = done.stderr.splitlines()
    left = [int(m.group(1)) for m in map(re.compile(r"hookscope: HOOKSCOPE_(?:TIMELINE|TRACE): ([0-9]+) calls "
                                                    r"(?:left out of the timeline|not traced): ").match, lines) if m]
    with Checks() as check:
        check.expect("the program ran, its handler's calls returned right", done.returncode, 0)
        if feature == "HOOKSCOPE_STATS":
            counted = {m.group(1): int(m.group(2)) for m in
                       map(re.compile(r"hookscope: stats: (step|listed) +([0-9]+) ").match, lines) if m}
            check.expect("the table counts every call", counted, made)
        elif feature == "HOOKSCOPE_TIMELINE":
            events = json.loads(timeline.read_text(encoding="utf-8"))["traceEvents"]
            shown = sum(1 for e in events if e.get("ph") in ("X", "b"))
            not_kept = [int(m.group(1)) for m in map(re.compile(r"hookscope: HOOKSCOPE_TIMELINE: .*: ([0-9]+) earlier "
                                                                r"events not kept ").match, lines) if m]
            check.expect("events + the calls left out (+ events the ring did not keep) = the calls made",
                         shown + sum(left) + sum(not_kept), sum(made.values()))
        else:
            traced = sum(1 for line in lines if re.match(r"hookscope: trace: (step|listed)\(", line))
            check.expect("traced calls + the calls not traced = the calls made", traced + sum(left),
                         sum(made.values()))


ABANDONED_CHILD = re.compile(r"hookscope: HOOKSCOPE_RECORD: fork\(\) from a signal handler that interrupted hookscope: "
                             r"the child process [0-9]+ records no calls")


def test_fork_from_a_signal_handler_that_interrupted_recording(slow_outputs_program, enabled, tmp_path):
    """A SIGALRM handler forks every 500 us (400 times at most) while the program records without pause (and the
    writer thread runs): the handler lands inside the recording path, a lock held or awaited below it, on any thread,
    two threads forking at once. Neither the parent nor a child hangs (each child makes 10 recorded calls and
    _exit()s); a child forked from inside hookscope records nothing and says so in one line; the parent loses no call
    (docs/environment.md, "Signal handlers")."""
    records = tmp_path / "r.jsonl"
    # Each child runs on in the handler, and its calls allocate (the emission's slots of a thread new to it; documented:
    # the recording path allocates), which ThreadSanitizer reports as calls unsafe in a signal handler.
    tsan = (os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0").lstrip(":")
    try:
        done = subprocess.run([slow_outputs_program, "forking_handler", "1000"], capture_output=True,
                              text=True, timeout=within(60),
                              env=environment({"HOOKSCOPE_RECORD": f"step={records},listed={records}",
                                               "TSAN_OPTIONS": tsan}))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the program did not end within {within(60)} s: a fork() from a signal handler deadlocked")
    printed = dict(map(str.split, done.stdout.splitlines()))
    parent_steps, noted = 0, 0
    for line in records.read_bytes().split(b"\n")[:-1]:
        record = json.loads(line)
        if record["function"] != "step":
            continue
        if "dropped" in record:
            noted += record["dropped"]["count"]
        elif record["result"]["int"] < 2_000_000:  # step(n) returns n; the children's calls are 2000000 and up
            parent_steps += 1
    other_stderr = [line for line in without_asan_stack_warnings(done.stderr.splitlines())
                    if not ABANDONED_CHILD.fullmatch(line)]
    with Checks() as check:
        check.expect("the program and every child ended", done.returncode, 0)
        check.expect("stderr holds the abandoned children's lines only", other_stderr, [])
        check.expect("the parent forked", int(printed.get("forks", 0)) > 0, True)
        check.expect("the parent's calls of step: records + noted", parent_steps + noted, int(printed["step"]))


def fifo_nobody_reads(program, tmp_path, record, *args):
    """Runs `program args` recording into a FIFO `record` (FIFO stands for its path) whose reader is open and reads
    nothing while the program runs; (exit code, seconds, stdout, stderr lines, what the FIFO held, its path)."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        start = time.monotonic()
        done = subprocess.run([program, *map(str, args)], capture_output=True, text=True, timeout=60,
                              env=environment({"HOOKSCOPE_RECORD": record.replace("FIFO", str(fifo))}))
        seconds = time.monotonic() - start
        received = read_what_is_there(reader)
    return done.returncode, seconds, done.stdout, done.stderr.splitlines(), received, fifo


def test_messages_of_a_fifo_path_with_pid_name_the_fifo_as_opened(slow_outputs_program, enabled, tmp_path):
    """`%p` in the path of a FIFO nobody reads under full=drop (made by a shell that then becomes the program, so
    that its name holds the program's process id; the shell opens it for reading and writing, a reader that never
    reads): the message that the reader stalled and the count of calls not written at exit name the FIFO as the
    program opened it, `%p` expanded, not the path as given."""
    child = subprocess.Popen(["sh", "-c", 'mkfifo "$0-$$" && exec 3<>"$0-$$" && exec "$@"', tmp_path / "fifo",
                              slow_outputs_program, "steps_for", "1500"],
                             env=environment({"HOOKSCOPE_RECORD": f"step={tmp_path}/fifo-%p[buffer=64K;full=drop]"}),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = child.communicate(timeout=within(30))
    opened = f"{tmp_path}/fifo-{child.pid}"
    messages = [line for line in err.splitlines() if line.startswith("hookscope:")]
    with Checks() as check:
        check.expect("the program ran, recording into a FIFO",
                     (child.returncode, stat.S_ISFIFO(os.stat(opened).st_mode)), (0, True))
        check.expect("one count of calls not written, naming the FIFO as opened",
                     [m.group(1) for m in map(UNWRITTEN.match, messages) if m], [opened])
        check.expect("every message names the FIFO as opened",
                     [line for line in messages if not line.startswith(f"hookscope: HOOKSCOPE_RECORD: {opened}: ")], [])
        check.expect("one message that the reader stalled", [STALLED in line for line in messages], [True, True])


def test_fork_after_a_stall_counts_each_unwritten_call_once(slow_outputs_program, enabled, tmp_path):
    """full=drop into a FIFO nobody reads; the parent stalls on it, then forks, and the child (no %p: the same FIFO)
    makes 100 calls and exits: the counts logged at the two exits, the FIFO's calls and notes add up to the calls
    both made, each call counted once."""
    code, seconds, out, err, received, fifo = fifo_nobody_reads(
        slow_outputs_program, tmp_path, "step=FIFO[buffer=64K;full=drop]", "fork_after", 1500)
    records, noted, unwritten, broken = pipe_tally(received, err, fifo)
    calls = records.get("step", [])
    with Checks() as check:
        check.expect("parent and child ran", code, 0)
        check.expect("whole lines", broken, [])
        check.expect("calls in the FIFO + noted + logged as not written = calls made (parent's and child's)",
                     len(calls) + noted + unwritten, int(out))
        check.expect("held up a second at most, once", seconds < within(1.5 + 1.8), True)


def test_full_wait_target_sharing_a_fifo_with_a_full_drop_target_loses_nothing(slow_outputs_program,
                                                                                 enabled, tmp_path):
    """Two targets, one FIFO: other() under full=wait (the default), step() under full=drop. The reader reads
    nothing for 1.5 s, then everything: "Under full=wait the program waits for the reader", so every other() call
    is in the FIFO; step()'s may be left out, counted."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        received = bytearray()
        n = 40000
        child = subprocess.Popen([slow_outputs_program, "step_and_other", str(n)],
                                 env=environment({"HOOKSCOPE_RECORD":
                                                  f"other={fifo}[buffer=64K],step={fifo}[buffer=64K;full=drop]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        received.extend(read_until_exit(reader, child))
        out, err = child.communicate(timeout=30)
    records, noted, unwritten, broken = pipe_tally(bytes(received), err.splitlines(), fifo)
    with Checks() as check:
        check.expect("the program ran", child.returncode, 0)
        others = records.get("other", [])
        check.expect("every other() call (full=wait) in the FIFO, in order: how many", len(others), n)
        check.expect("every other() call (full=wait) in the FIFO, in order", others == list(range(n)), True)
        check.expect("nothing said of calls not written", [line for line in err.splitlines()
                                                           if UNWRITTEN.match(line)], [])


def test_unix_socket_path_is_refused_with_a_message(slow_outputs_program, enabled):
    """A listening UNIX socket at the path cannot be opened as a file (open(2) gives ENXIO): one message names the
    path and the reason, and the program runs on (docs/environment.md: a FIFO or a pipe, not a socket)."""
    directory = tempfile.mkdtemp(dir="/tmp")  # short: a socket's path is at most 107 bytes
    path = os.path.join(directory, "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    try:
        done = subprocess.run([slow_outputs_program, "steps_for", "200"], capture_output=True, text=True,
                              timeout=30, env=environment({"HOOKSCOPE_RECORD": f"step={path}[full=drop]"}))
    finally:
        server.close()
        shutil.rmtree(directory)
    err = [line for line in done.stderr.splitlines() if not line.startswith("made ")]
    with Checks() as check:
        check.expect("the program ran", done.returncode, 0)
        check.expect("one message naming the path and why",
                     err, [f"hookscope: HOOKSCOPE_RECORD: {path}: cannot open it for writing (No such device or "
                           "address); its calls are not recorded"])


@pytest.mark.parametrize("full", ["wait", "drop"])
def test_fifo_reader_that_closes_does_not_kill_the_program(slow_outputs_program, enabled, tmp_path, full):
    """A FIFO whose reader reads for 0.3 s, then closes it, under either policy: no SIGPIPE, the program runs on
    ("Errors ... the program runs on, unaffected"), with one message naming the FIFO."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([slow_outputs_program, "steps_for", "1000"],
                                 env=environment({"HOOKSCOPE_RECORD": f"step={fifo}[full={full}]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            read_what_is_there(reader)
            time.sleep(0.01)
    _, err = child.communicate(timeout=30)
    with Checks() as check:
        check.expect("the program ran to its end (not killed by SIGPIPE)", child.returncode, 0)
        check.expect("one message naming the FIFO", [str(fifo) in line for line in err.splitlines()
                                                     if not line.startswith("made ")], [True])


def test_stdout_pipe_nobody_reads(slow_outputs_program, enabled):
    """/dev/stdout as the path, the program's stdout a pipe nobody reads while it runs: held up a second at most,
    whole lines in the pipe, and its calls + notes + the count logged add up to the calls made."""
    start = time.monotonic()
    child = subprocess.Popen([slow_outputs_program, "steps_for", "1500"],
                             env=environment({"HOOKSCOPE_RECORD": "step=/dev/stdout[buffer=64K;full=drop]"}),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    code = child.wait(timeout=30)
    seconds = time.monotonic() - start
    received = child.stdout.read()
    err = child.stderr.read().decode().splitlines()
    records, noted, unwritten, broken = pipe_tally(received, err, "/dev/stdout")
    with Checks() as check:
        check.expect("the program ran", code, 0)
        check.expect("held up a second at most", seconds < within(1.5 + 1.8), True)
        check.expect("whole lines", (broken, received[-1:]), ([], b"\n"))
        check.expect("calls in the pipe + noted + logged = calls made",
                     len(records.get("step", [])) + noted + unwritten, made(err))


def test_reader_reading_in_bursts_holds_the_program_up_once(slow_outputs_program, enabled, tmp_path):
    """full=drop, a call every 20 ms whose line the calling thread appends (a 5000-byte string: the value tree's
    path) into a FIFO whose reader empties it once every 1.3 s: "holds a full=drop program up a second at most,
    once": at most one call is held 500 ms or more, and one message says the reader stalled."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([slow_outputs_program, "tree_calls", "4000", "20"],
                                 env=environment({"HOOKSCOPE_RECORD": f"texted={fifo}[full=drop]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while child.poll() is None:
            time.sleep(1.3)
            read_what_is_there(reader)
        out, err = child.communicate(timeout=30)
    _, held = map(int, out.split())
    with Checks() as check:
        check.expect("the program ran", child.returncode, 0)
        check.expect("calls held up 500 ms or more: at most one", min(held, 2), min(held, 1))
        check.expect("messages that the reader stalled: one", [line for line in err.splitlines()
                                                               if STALLED in line and "not written" not in line][1:],
                     [])


def test_file_size_limit_at_the_files_end(slow_outputs_program, enabled, tmp_path):
    """A file whose size is already its limit (RLIMIT_FSIZE, SIGXFSZ ignored), ending in a whole line: the first
    write fails with nothing written; one message, the file unchanged, the program unaffected."""
    records = tmp_path / "r.jsonl"
    before = b'{"function":"step","args":[],"kwargs":[["n",{"int":7}]],"result":{"int":7},"latency_ns":1}\n'
    records.write_bytes(before)

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before), len(before)))

    done = subprocess.run([slow_outputs_program, "steps_for", "300"], capture_output=True, text=True,
                          timeout=30, preexec_fn=limit, env=environment({"HOOKSCOPE_RECORD": f"step={records}"}))
    err = [line for line in done.stderr.splitlines() if not line.startswith("made ")]
    with Checks() as check:
        check.expect("the program ran", done.returncode, 0)
        check.expect("one message naming the file and the error",
                     [str(records) in line and "File too large" in line for line in err], [True])
        check.expect("the file unchanged", records.read_bytes(), before)


def test_sigterm_during_the_writers_first_wait_holds_the_program_up_a_second_at_most(
        slow_outputs_program, enabled, tmp_path):
    """full=drop into a FIFO nobody reads; SIGTERM once the pipe is full, while the writer waits its second for it: the
    handler must not wait a second of its own on top of the writer's ("a second at most, once ... exit and fatal
    signals included"): the program dies within 1.1 s of the signal."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([slow_outputs_program, "steps_for", "10000"],
                                 env=environment({"HOOKSCOPE_RECORD": f"step={fifo}[buffer=64K;full=drop]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        full = wait_until_full(reader, child)
        # The writer's next flush (100 ms at most) finds the pipe full and begins its wait: 0.2 s later it is in it.
        err, seconds = terminate_after(child, 0.2)
    with Checks() as check:
        check.expect("the pipe filled", full, True)
        check.expect("the program died of SIGTERM", child.returncode, -signal.SIGTERM)
        check.expect("within 1.1 s of the signal", (seconds < within(1.1), round(seconds, 1)),
                     (True, round(seconds, 1)))
        check.expect("the count logged", any(UNWRITTEN.match(line) for line in err.splitlines()), True)
        check.expect("each message a whole line, not cut by another thread's (the writer's report of the stall)",
                     [line for line in err.splitlines() if not line.startswith("hookscope: HOOKSCOPE_RECORD: /")], [])


def test_fatal_signal_with_a_stalled_reader_under_full_wait_ends_the_program(slow_outputs_program, enabled,
                                                                              tmp_path):
    """full=wait into a FIFO nobody reads: the program waits for the reader, as documented; SIGTERM then ends it
    within about a second (its handler waits for the pipe one second at most: a crash never becomes a hang), with
    the count of what it could not write."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([slow_outputs_program, "steps_for", "100000"],
                                 env=environment({"HOOKSCOPE_RECORD": f"step={fifo}[buffer=64K]"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        full = wait_until_full(reader, child)
        err, seconds = terminate_after(child, 0.2)  # the writer and the calling thread wait for the reader
        received = read_what_is_there(reader)
    with Checks() as check:
        check.expect("the pipe filled", full, True)
        check.expect("the program died of SIGTERM", child.returncode, -signal.SIGTERM)
        check.expect("within 1.5 s of the signal", (seconds < within(1.5), round(seconds, 1)),
                     (True, round(seconds, 1)))
        check.expect("whole lines in the FIFO", received[-1:], b"\n")
        check.expect("the count logged", any(UNWRITTEN.match(line) for line in err.splitlines()), True)


def test_statistics_table_into_a_fifo_whose_reader_left(slow_outputs_program, enabled, tmp_path):
    """HOOKSCOPE_STATS opens its FIFO at start; the reader leaves before the table is written at exit (a pager quit
    early): no SIGPIPE ends the program, its exit code is its own, and one message names the FIFO and EPIPE."""
    with fifo_with_idle_reader(tmp_path) as (fifo, reader):
        child = subprocess.Popen([slow_outputs_program, "steps_for", "600"],
                                 env=environment({"HOOKSCOPE_STATS": f"step={fifo}"}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)  # the program has opened the FIFO
    _, err = child.communicate(timeout=30)
    with Checks() as check:
        check.expect("the program ran to its end (not killed by SIGPIPE)", child.returncode, 0)
        check.expect("one message naming the FIFO and the broken pipe",
                     [str(fifo) in line and "Broken pipe" in line for line in err.splitlines()
                      if not line.startswith("made ")], [True])
