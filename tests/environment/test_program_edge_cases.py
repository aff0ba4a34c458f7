"""The environment features against hostile programs (tests/environment/edge_case_program.cpp, and record_program's
fork): calls that end without their post callback (a forced unwind, a refusal in rethrow mode), recursion deeper
than any fixed stack, bytes that are not UTF-8 in arguments and thread names, a tensor the capture refuses, threads
still tracing while the program exits, chdir(), fork(). Each case runs the real program and reads what it wrote:
the records (Python's json, then the library's reader through hookscope-shapes), the statistics table and the
timeline (Python's strict json, no lone surrogate, valid UTF-8)."""
import base64
import json
import math
import os
import random
import re
import struct
from pathlib import Path
import subprocess

import pytest

from support import Checks, expect, run, stats_tables



@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: nothing is recorded, counted or traced "
                    "(test_record_env.py and test_stats_timeline.py check that)")


def run_edge_case(program, settings, *args, cwd=None):
    done = run([program, *map(str, args)], settings, timeout=120, cwd=cwd)
    return done.returncode, done.stdout, done.stderr.splitlines()


def no_lone_surrogate(value, where):
    """Every string of a parsed JSON document encodes to UTF-8 (json.loads accepts "\\ud800"; this refuses it)."""
    if isinstance(value, str):
        value.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
    elif isinstance(value, list):
        for item in value:
            no_lone_surrogate(item, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            no_lone_surrogate(key, where)
            no_lone_surrogate(item, where)


def strict_json(path):
    """The document at `path`: valid UTF-8, strict JSON, no lone surrogate escaped."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")  # strict: raises on bytes that are not UTF-8
    document = json.loads(text)
    no_lone_surrogate(document, path)
    return document


def read_records(path, cut_last_line_allowed=False):
    """The records of a file. `cut_last_line_allowed`: a last line without its newline that is not JSON is left out,
    as the library's reader does (docs/record_format.md), for a process ended by _exit() or SIGKILL mid-write."""
    with open(path, "rb") as f:
        lines = f.readlines()
    if cut_last_line_allowed and lines and not lines[-1].endswith(b"\n"):
        try:
            json.loads(lines[-1].decode("utf-8"))
        except ValueError:
            lines.pop()
    records = [json.loads(line.decode("utf-8")) for line in lines]
    for r in records:
        no_lone_surrogate(r, path)
    return records


def library_reads(hookscope_shapes, path, function):
    """Whether the library's record reader accepts every line of the file (hookscope-shapes summarize)."""
    done = subprocess.run([hookscope_shapes, "summarize", str(path), "--function", function],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stderr


def events(trace, name=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and (name is None or e["name"] == name)]


# --- a record belongs to its call, whatever ends the call; statistics and the timeline keep counting ---

# unwind: three threads end by pthread_exit inside work(-1), each followed by a thread (on the reused stack) making
# N calls, then N calls on the main thread. refused: in rethrow mode a pre callback refuses work(n) for n % 3 == 0.
N = 200
PAIRING = {
    "unwind": [r * 1000 + i for r in range(3) for i in range(N)] + [5000 + i for i in range(N)],
    "refused": [i for i in range(N) if i % 3 != 0],
}


@pytest.mark.parametrize("mode", sorted(PAIRING))
def test_calls_ended_without_post(edge_case_program, enabled, tmp_path, mode):
    records, trace = tmp_path / "work.jsonl", tmp_path / "work.json"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}", "HOOKSCOPE_STATS": "work",
                                                   "HOOKSCOPE_TIMELINE": f"work={trace}"}, mode, N)
    returned = PAIRING[mode]
    with Checks() as check:
        check.expect(f"{mode}: the program's own count of returned calls", (code, out), (0, f"calls {len(returned)}\n"))
        pairs = [(r["kwargs"][0][1]["int"], r["result"]["int"]) for r in read_records(records)]
        check.expect(f"{mode}: one record per returned call, each with its own result (10 n)", sorted(pairs),
                     sorted((n, 10 * n) for n in returned))
        check.expect(f"{mode}: statistics count every returned call", stats_tables(err), [{"work": len(returned)}])
        check.expect(f"{mode}: one timeline event per returned call, with its argument",
                     sorted(int(e["args"]["n"]) for e in events(strict_json(trace))), sorted(returned))


def test_refused_calls_with_sampling(edge_case_program, enabled, tmp_path):
    """every=2 leaves out calls whose pre callback still sees the address a refused call left its entry at."""
    records = tmp_path / "sampled.jsonl"
    code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}[every=2]"}, "refused", N)
    pairs = [(r["kwargs"][0][1]["int"], r["result"]["int"]) for r in read_records(records)]
    expect("every=2 with refused calls: the sampled calls that returned, each with its own result", (code, pairs),
           (0, [(n, 10 * n) for n in range(N) if n % 2 == 0 and n % 3 != 0]))


# --- recursion of any depth ---

@pytest.mark.parametrize("depth", [127, 128, 129, 1000])
def test_recursion_depth(edge_case_program, enabled, tmp_path, depth):
    trace = tmp_path / "depth.json"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_STATS": "depth", "HOOKSCOPE_TIMELINE":
                                                   f"depth={trace}"}, "recursion", depth)
    slices = sorted(events(strict_json(trace)), key=lambda e: int(e["args"]["n"]))
    with Checks() as check:
        check.expect(f"depth {depth}: the program ran", (code, out), (0, f"calls {depth + 1}\n"))
        check.expect(f"depth {depth}: statistics count every level", stats_tables(err), [{"depth": depth + 1}])
        check.expect(f"depth {depth}: one event per level", [int(e["args"]["n"]) for e in slices],
                     list(range(depth + 1)))
        # Each level's slice lies within its caller's (ts and dur in µs with three decimals).
        check.expect(f"depth {depth}: the slices nest",
                     [i for i in range(depth) if not (slices[i + 1]["ts"] <= slices[i]["ts"] and
                      slices[i]["ts"] + slices[i]["dur"] <= slices[i + 1]["ts"] + slices[i + 1]["dur"] + 0.001)], [])


# --- the timeline is valid JSON, whatever the bytes ---

# edge_case_program's non_utf8 samples, each passed to text() and bytes_back().
SAMPLES = [b"\xff\xfe", "caf\u00e9".encode(), b"cut \xe2\x82", b"\xed\xa0\x80 surrogate", b'quote " back \\ nul',
           b"a\0b", b"\xc0\xaf overlong"]


def test_timeline_non_utf8(edge_case_program, enabled, tmp_path):
    trace = tmp_path / "bytes.json"
    code, _, err = run_edge_case(edge_case_program, {"HOOKSCOPE_TIMELINE": f"text,bytes_back={trace}"}, "non_utf8", 0)
    document = strict_json(trace)
    # Each byte that is not UTF-8 appears as the text \xNN: what Python's 'backslashreplace' gives. format_arg
    # quotes strings.
    shown = ['"' + s.decode("utf-8", "backslashreplace") + '"' for s in SAMPLES]
    with Checks() as check:
        check.expect("non-UTF-8: the program ran, nothing logged", (code, err), (0, []))
        check.expect("non-UTF-8: each argument shown, invalid bytes as \\xNN",
                     [e["args"]["s"] for e in events(document, "text")], shown)
        check.expect("non-UTF-8: the same for the other function", [e["args"]["s"] for e in events(document, "bytes_back")],
                     shown)
        check.expect("a thread name the kernel cut inside a character loses the partial character only",
                     [e["args"]["name"] for e in document["traceEvents"] if e["ph"] == "M"], ["abcdefghijklmn"])


def text_of(encoded):
    """The bytes of a recorded string: {"str": "..."} (UTF-8 text) or {"str": {"base64": "..."}} (docs/record_format.md)."""
    inner = encoded["str"]
    return base64.b64decode(inner["base64"], validate=True) if isinstance(inner, dict) else inner.encode("utf-8")


def test_record_non_utf8_round_trip(edge_case_program, hookscope_shapes, enabled, tmp_path):
    records = tmp_path / "bytes.jsonl"
    code, _, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"text={records},bytes_back={records}"},
                               "non_utf8", 0)
    lines = read_records(records)
    with Checks() as check:
        check.expect("non-UTF-8 records: the program ran, nothing logged", (code, err), (0, []))
        check.expect("every argument read back as the same bytes",
                     [text_of(r["kwargs"][0][1]) for r in lines if r["function"] == "text"], SAMPLES)
        check.expect("every result read back as the same bytes",
                     [text_of(r["result"]) for r in lines if r["function"] == "bytes_back"], SAMPLES)
        for function in ("text", "bytes_back"):
            check.expect(f"the library's reader accepts the file ({function})",
                         library_reads(hookscope_shapes, records, function), (0, ""))


def float_of(encoded):
    """A recorded double: {"float": X}, or "nan", "inf", "-inf" as strings (docs/record_format.md)."""
    x = encoded["float"]
    return float(x) if isinstance(x, str) else x


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def test_record_round_trip_random_arguments(edge_case_program, hookscope_shapes, enabled, tmp_path):
    """A property: random strings of arbitrary bytes, inf/nan/-0, extreme ints, through HOOKSCOPE_RECORD, read back
    by Python's json and by the library's reader as the values the program passed."""
    seed = random.randrange(1 << 30)
    records = tmp_path / "random.jsonl"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"mixed={records}"}, "random", seed)
    sent = []
    for line in out.splitlines()[:-1]:  # the last line is the count
        s, bits, i, *words = line.split(" ")
        sent.append((bytes.fromhex(s[1:]), struct.unpack("<d", bytes.fromhex(bits)[::-1])[0], int(i),
                     [bytes.fromhex(w[1:]) for w in words]))
    got = [(text_of(r["kwargs"][0][1]), float_of(r["kwargs"][1][1]), r["kwargs"][2][1]["int"],
            [text_of(w) for w in r["kwargs"][3][1]["list"]], float_of(r["result"])) for r in read_records(records)]
    with Checks() as check:
        check.expect(f"seed {seed}: the program ran, nothing logged", (code, err, len(sent)), (0, [], 300))
        check.expect(f"seed {seed}: one record per call", len(got), len(sent))
        check.expect(f"seed {seed}: strings, ints and lists read back the same",
                     [(g[0], g[2], g[3]) for g in got], [(s[0], s[2], s[3]) for s in sent])
        check.expect(f"seed {seed}: doubles (argument and result) read back the same, NaN and -0.0 included",
                     [k for k, (g, s) in enumerate(zip(got, sent)) if not (same_float(g[1], s[1]) and
                                                                          same_float(g[4], s[1]))], [])
        check.expect(f"seed {seed}: the library's reader accepts the file",
                     library_reads(hookscope_shapes, records, "mixed"), (0, ""))


@pytest.mark.parametrize("attempt", range(10))
def test_timeline_exit_while_threads_trace(edge_case_program, enabled, tmp_path, attempt):
    trace = tmp_path / "busy.json"
    # A ring of one event per thread, which each thread overwrites on every call while the file is written.
    code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_TIMELINE": f"text,work={trace}[events=1]"},
                             "exit_while_tracing", 8)
    document = strict_json(trace)
    texts = {e["args"]["s"] for e in events(document, "text")}
    allowed = {'"' + '"\\\u20ac' + str(t) + '"' for t in range(8)}
    works = [e for e in events(document, "work") if not re.fullmatch(r"\d+", e["args"]["n"])]
    with Checks() as check:
        check.expect("exit while threads trace: exit 0", code, 0)
        check.expect("every traced thread named", len([e for e in document["traceEvents"] if e["ph"] == "M"]), 8)
        check.expect("no event is torn: every text() argument is one the threads passed", texts - allowed, set())
        check.expect("no event is torn: every work() argument is a number", works, [])


# --- a call whose value cannot be captured is refused, once said, never written; the others are kept ---

def test_record_refuses_uncapturable_tensor(edge_case_program, hookscope_shapes, enabled, tmp_path):
    records = tmp_path / "odd.jsonl"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"odd={records}"}, "odd_tensors", 5)
    with Checks() as check:
        check.expect("odd tensors: the program is not disturbed", (code, out), (0, "calls 10\n"))
        check.expect("one message for the function, naming it and the fault", err,
                     ["hookscope: HOOKSCOPE_RECORD: 'odd': a call is not recorded: dimension 0 is negative (later "
                      "such calls of this function are left out without a message)"])
        check.expect("every other call recorded, with its tensor",
                     [r["kwargs"][0][1]["shape"] for r in read_records(records)], [[i, 2] for i in range(5)])
        check.expect("the library's reader accepts the file", library_reads(hookscope_shapes, records, "odd")[0], 0)


# --- paths are resolved at start-up; fork ---

def test_relative_paths_resolved_at_start(edge_case_program, enabled, tmp_path):
    start, later = tmp_path / "start", tmp_path / "later"
    start.mkdir()
    later.mkdir()
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": "work=r.jsonl", "HOOKSCOPE_STATS": "work=s.txt",
                                                   "HOOKSCOPE_TIMELINE": "work=t.json"},
                                 "chdir", 3, later, cwd=start)
    with Checks() as check:
        check.expect("chdir: the program ran, nothing logged", (code, out, err), (0, "calls 6\n", []))
        check.expect("every file where the program started, none where it went", (sorted(os.listdir(start)),
                     sorted(os.listdir(later))), (["r.jsonl", "s.txt", "t.json"], []))
        check.expect("the timeline holds the calls after the chdir",
                     sorted(int(e["args"]["n"]) for e in events(strict_json(start / "t.json"))),
                     [0, 1, 2, 100, 101, 102])
        check.expect("so do the records", len(read_records(start / "r.jsonl")), 6)


def test_forked_child_starts_with_empty_statistics(record_program, enabled):
    n = 40
    code, err = (lambda d: (d.returncode, d.stderr.splitlines()))(
        run([record_program, "fork", str(n)], {"HOOKSCOPE_STATS": "step"}, timeout=120))
    # record_program fork N: N calls of step(), a fork, then N calls in each process.
    expect("fork: the child's table counts its own calls only, the parent's all of its own", (code,
           sorted(t.get("step") for t in stats_tables(err))), (0, [n, 2 * n]))


def test_forked_child_records_into_its_own_file_with_pid(record_program, enabled, tmp_path):
    n = 20
    pattern = tmp_path / "r-%p.jsonl"
    done = run([record_program, "fork", str(n)], {"HOOKSCOPE_RECORD": f"step={pattern},fork_in_flight={pattern}"},
               timeout=120)
    files = sorted(os.listdir(tmp_path))
    contents = sorted(([r["function"] for r in read_records(tmp_path / f) if "signature" in r],
                       sorted(r["kwargs"][0][1]["int"] for r in read_records(tmp_path / f) if r["function"] == "step"))
                      for f in files)
    with Checks() as check:
        check.expect("%p: a file per process", (done.returncode, len(files), all(re.fullmatch(r"r-\d+\.jsonl", f)
                                                                                for f in files)), (0, 2, True))
        # record_program fork N: N calls of step(), fork_in_flight(7) across a fork, then N calls in each process.
        check.expect("%p: each process's calls in its own file, each file signed by its own first lines", contents,
                     sorted([(["step"], [100000 + i for i in range(n)]),
                             (["step", "fork_in_flight"], list(range(n)) + [200000 + i for i in range(n)])]))


# --- ends other than returning from main; signals while threads record ---

# A whole record line of work(n), as the writer spells it (the first one of a file with the signature). A file
# written at full speed holds a million of them: a regular expression over the whole file tells them apart from
# anything else in a fraction of what json.loads line by line takes, and only the lines it does not match are
# parsed to be judged.
WORK_LINE = re.compile(rb'^\{"function":"work",(?:"signature":\[\{"name":"n"\}\],)?"args":\[\],'
                       rb'"kwargs":\[\["n",\{"int":(-?\d+)\}\]\],"result":\{"int":-?\d+\},"latency_ns":\d+\}\n',
                       re.MULTILINE)


WORK_ARGUMENT = re.compile(rb'"kwargs":\[\["n",\{"int":(-?\d+)\}')


def work_lines(path):
    """(the n of each whole work(n) line, the lines that are not whole JSON documents ending in a newline as
    (line number, start)) of a record file."""
    data = Path(path).read_bytes()
    calls = [int(n) for n in WORK_LINE.findall(data)]
    if not data or (len(calls) == data.count(b"\n") and data.endswith(b"\n")):
        return calls, []
    torn = []
    for number, line in enumerate(data.splitlines(keepends=True)):
        if WORK_LINE.fullmatch(line):
            continue
        try:
            json.loads(line.decode("utf-8"))
            if not line.endswith(b"\n"):
                raise ValueError("no newline")
        except ValueError:
            torn.append((number, line[:80]))
    return calls, torn


def torn_lines(path):
    """The lines of a record file that are not whole JSON documents ending in a newline (line number, start)."""
    return work_lines(path)[1]


def test_record_lines_whole_when_sigterm_arrives_while_threads_record(edge_case_program, enabled, tmp_path):
    """docs/environment.md: "A call's line is complete or absent, never cut", with SIGTERM among the signals whose
    handler writes the buffer. Four threads record work() without pause when the process receives SIGTERM: the
    handler takes the files over and waits for a thread in the middle of an append, so no line is cut or spliced."""
    found = []
    for attempt in range(20):
        records = tmp_path / f"term-{attempt}.jsonl"
        code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}"}, "sigterm", 4)
        torn = torn_lines(records)
        if code != -15 or torn:
            found.append((attempt, code, torn[:3]))
            break
        records.unlink()
    expect("SIGTERM while 4 threads record: every run dies by SIGTERM and every line written is whole "
           "(attempt, exit code, first torn lines)", found, [])


def test_timeline_whole_when_sigterm_arrives_while_threads_trace(edge_case_program, enabled, tmp_path):
    for attempt in range(5):
        trace = tmp_path / f"term-{attempt}.json"
        code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_TIMELINE": f"work={trace}[events=4]"}, "sigterm", 4)
        expect(f"attempt {attempt}: SIGTERM while 4 threads trace: the signal kills, the timeline is strict JSON "
               "with the last events of each thread", (code, len(events(strict_json(trace))) > 0), (-15, True))


@pytest.mark.parametrize("mode, exit_code", [("quick_exit", 0), ("escape", -6)])
def test_calls_kept_when_program_ends_by_quick_exit_or_escaping_exception(edge_case_program, enabled, tmp_path, mode,
                                                                            exit_code):
    """quick_exit() and an exception escaping main (std::terminate, SIGABRT): records, statistics and the timeline
    all hold the N calls made before."""
    n = 7
    records, trace = tmp_path / "r.jsonl", tmp_path / "t.json"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}", "HOOKSCOPE_STATS": "work",
                                                   "HOOKSCOPE_TIMELINE": f"work={trace}"}, mode, n)
    with Checks() as check:
        check.expect(f"{mode}: how the program ended", (code, out), (exit_code, f"calls {n}\n"))
        check.expect(f"{mode}: every call recorded", sorted(r["kwargs"][0][1]["int"] for r in read_records(records)),
                     list(range(n)))
        check.expect(f"{mode}: statistics printed", stats_tables(err), [{"work": n}])
        check.expect(f"{mode}: every call on the timeline", sorted(int(e["args"]["n"]) for e in
                                                                   events(strict_json(trace))), list(range(n)))


def test_record_calls_from_static_destructor(edge_case_program, enabled, tmp_path):
    """docs/environment.md: "Calls made by static and thread-local destructors are recorded", here by an object
    constructed before the library's start-up (so destroyed after its exit actions ran)."""
    records = tmp_path / "r.jsonl"
    code, out, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}"}, "static_destructor", 6)
    expect("calls from a static destructor: all recorded", (code, out, sorted(r["kwargs"][0][1]["int"] for r in
                                                                               read_records(records))),
           (0, "calls 6\n", list(range(6))))


@pytest.mark.parametrize("attempt", range(3))
def test_outputs_whole_when_a_thread_calls_exit(edge_case_program, enabled, tmp_path, attempt):
    """std::exit from a thread while the main thread records and traces without pause."""
    records, trace = tmp_path / "r.jsonl", tmp_path / "t.json"
    code, _, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}", "HOOKSCOPE_STATS": "work",
                                                 "HOOKSCOPE_TIMELINE": f"work={trace}[events=4]"},
                               "exit_from_thread", 30)
    with Checks() as check:
        check.expect("exit from a thread: exit 0, every record line whole", (code, torn_lines(records)), (0, []))
        # The main thread traces without pause while the timeline is copied: the copy keeps up with it (docs/
        # environment.md), so some of the ring's last events are there, never more than the ring holds.
        check.expect("the timeline is strict JSON with some of the ring's last events",
                     1 <= len(events(strict_json(trace))) <= 4, True)
        check.expect("one statistics table", len(stats_tables(err)), 1)


def test_record_lines_whole_when_a_thread_calls_exit_while_another_writes_long_lines(edge_case_program, enabled,
                                                                                    tmp_path):
    """The main thread records lines of 100 kB (25 pages each) without pause when another thread calls std::exit, and
    the exit lasts 30 ms after the library's exit actions: they write the buffers on the exiting thread, and no other
    thread starts a write from then on, so the process's end never stops one in the middle of a line
    (docs/environment.md: "Nothing completed is lost"). A library whose other threads still wrote cut the last line
    in 1 to 3 runs of 10."""
    found = []
    for attempt in range(20):
        records = tmp_path / f"long-{attempt}.jsonl"
        code, _, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"text={records}"},
                                   "exit_from_thread_long_lines", 20)
        lines = records.read_bytes().split(b"\n")
        cut = [i for i, line in enumerate(lines[:-1]) if not line.endswith(b"}")]
        cut += [len(lines) - 1] if lines[-1] else []  # the last line has no newline
        if code != 0 or cut or len(lines) < 21:
            found.append((attempt, code, len(lines), cut[:3], err[-2:]))
    assert found == []


def test_timeline_thread_name_of_whole_multibyte_characters(edge_case_program, enabled, tmp_path):
    """pthread_setname_np with 15 bytes of 3-byte characters (five euro signs): nothing cut, nothing lost."""
    trace = tmp_path / "t.json"
    code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_TIMELINE": f"work={trace}"}, "multibyte_thread_name", 0)
    expect("a 15-byte name of whole characters shown whole", (code, [e["args"]["name"] for e in
                                                                      strict_json(trace)["traceEvents"]
                                                                      if e["ph"] == "M"]), (0, ["\u20ac" * 5]))


@pytest.mark.parametrize("n", [10, 300])
def test_refusal_in_recursion_pairs_the_levels_around_it(edge_case_program, enabled, tmp_path, n):
    """Rethrow mode, a pre callback refusing depth(n/2) inside depth(n): the refused level is nowhere; the levels
    above it are recorded, counted and traced as having thrown; a later depth(n/2 - 1) returns normally."""
    records, trace = tmp_path / "r.jsonl", tmp_path / "t.json"
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"depth={records}", "HOOKSCOPE_STATS": "depth",
                                                   "HOOKSCOPE_TIMELINE": f"depth={trace}"}, "refused_in_recursion", n)
    threw = list(range(n // 2 + 1, n + 1))
    returned = list(range(n // 2))
    lines = [r for r in read_records(records) if "kwargs" in r]
    with Checks() as check:
        check.expect(f"depth {n}: the program ran", (code, out), (0, f"calls {n // 2}\n"))
        check.expect(f"depth {n}: records of the levels that threw, then of those that returned",
                     (sorted(r["kwargs"][0][1]["int"] for r in lines if "threw" in r),
                      sorted(r["kwargs"][0][1]["int"] for r in lines if "result" in r)), (threw, returned))
        check.expect(f"depth {n}: statistics count every level that ended", stats_tables(err),
                     [{"depth": len(threw) + len(returned)}])
        check.expect(f"depth {n}: timeline events, the levels above the refusal marked as thrown",
                     sorted((int(e["args"]["n"]), e["args"].get("threw", False)) for e in events(strict_json(trace))),
                     sorted([(k, False) for k in returned] + [(k, True) for k in threw]))


def test_fork_while_threads_record_trace_and_count(edge_case_program, enabled, tmp_path):
    """30 forks from the main thread while two threads record, trace and count without pause (%p in every path):
    no child hangs on a lock a thread held at the fork, and each child's files and table hold its own 5 calls."""
    children = 30
    code, out, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={tmp_path}/r%p.jsonl",
                                                   "HOOKSCOPE_STATS": "work",
                                                   "HOOKSCOPE_TIMELINE": f"work={tmp_path}/t%p.json"},
                                 "fork_while_threads_call", children)
    own_records, own_events = [], []
    for path in sorted(tmp_path.iterdir()):
        if path.name.startswith("r"):
            # The parent's file holds a million lines: the calls' n are found by a regular expression, and only a
            # file holding a child's call is read as records. The parent ends by _Exit() while its threads write:
            # its last line may be cut. A child's 5 calls are all there (a cut line of a child would leave 4).
            if any(int(n) >= 1000000 for n in WORK_ARGUMENT.findall(path.read_bytes())):
                records = read_records(path, cut_last_line_allowed=True)
                own_records.append(sorted(r["kwargs"][0][1]["int"] for r in records if "kwargs" in r))
        else:
            calls = [int(e["args"]["n"]) for e in events(strict_json(path))]
            if any(c >= 1000000 for c in calls):
                own_events.append(sorted(calls))
    with Checks() as check:
        check.expect("fork while threads call: no child hung", (code, out), (0, "hung 0\n"))
        check.expect("each child's record file holds its 5 calls only",
                     sorted(own_records), [[1000000 + c] * 5 for c in range(children)])
        check.expect("each child's timeline holds its 5 calls only",
                     sorted(own_events), [[1000000 + c] * 5 for c in range(children)])
        check.expect("each child's table counts its 5 calls (the parent ends by _Exit: no table)",
                     stats_tables(err), [{"work": 5}] * children)


def test_record_each_call_once_when_sigterm_arrives_while_threads_record(edge_case_program, enabled, tmp_path):
    """docs/environment.md: one line per recorded call. Four threads record work() (every argument distinct) when
    SIGTERM arrives: the handler writes each batch once, never one a thread's flush is writing."""
    found = []
    for attempt in range(20):
        records = tmp_path / f"term-{attempt}.jsonl"
        code, _, _ = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={records}"}, "sigterm", 4)
        calls, _ = work_lines(records)  # a cut line: test_record_lines_whole_when_sigterm_arrives_while_threads_record
        seen = set(calls)
        repeated = len(calls) - len(seen)
        if code != -15 or repeated:
            found.append((attempt, code, f"{repeated} of {len(seen)} calls recorded twice"))
            break
        records.unlink()
    expect("SIGTERM while 4 threads record: each call's line at most once (attempt, exit code, repeats)", found, [])


def test_record_file_also_named_by_timeline_is_not_emptied_silently(edge_case_program, enabled, tmp_path):
    """docs/environment.md: record files are "appended to, never truncated", "nothing completed is lost", and every
    error is reported once. The same path given to HOOKSCOPE_RECORD and HOOKSCOPE_TIMELINE: the timeline written
    at exit replaces the file, and the 6 recorded lines vanish without a message. Either the lines survive or a
    message names the path both variables write."""
    shared = tmp_path / "shared.json"
    code, _, err = run_edge_case(edge_case_program, {"HOOKSCOPE_RECORD": f"work={shared}",
                                                 "HOOKSCOPE_TIMELINE": f"work={shared}"}, "chdir", 3, tmp_path)
    with open(shared, "rb") as f:
        recorded = sum(b'"function":"work"' in line and b'"latency_ns"' in line for line in f)
    said = [line for line in err if str(shared) in line]
    expect("one path for records and timeline: the 6 record lines kept, or a message naming the path",
           (code, recorded == 6 or len(said) > 0), (0, True))
