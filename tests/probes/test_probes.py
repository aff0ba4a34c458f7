"""USDT probes, checked with the real tools from outside the process (docs/probes.md is the layout promised):

1. `readelf -n` lists an entry and a return probe of provider `hookscope` per annotation, with their operand counts
   and semaphores (none at all in a build without probes);
2. gdb stops at each probe of tests/probes/probe_program.cpp (`break -probe-stap`) and reads every operand
   ($_probe_argc, $_probe_arg0...): integers and enums by value, everything else by address, the registry name first,
   the return probe's "threw" flag and result;
3. bpftrace (as root; tracefs is mounted at /sys/kernel/tracing when missing) attaches to the running program and
   prints the arguments of its calls, and the docs' latency histogram per batch size works;
4. a program that raises every semaphore itself runs each call through its probes and gets the plain results.

A tool that cannot run here makes its tests skip with a sentence naming the tool and why (pytest -rs shows it).
"""
import os
import re
import subprocess

import pytest

from attach import attach_while_running
from support import Checks, expect, run

NAME = "name"  # the registry name, arg0 of every probe


def wrap32(value):
    return (value + 2**31) % 2**32 - 2**31


# What tests/probes/probe_program.cpp's `once` gives each probe, hit by hit: a list of (gdb expression kind, value).
# Kinds: "argc"; "name" (arg0 as a string); ("int", k) arg k's value; ("double", k), ("float", k): the value at arg
# k's address; ("string", k) the std::string at arg k; ("cstring", k) arg k as a char*; ("long", k, offset),
# ("i32", k, offset): the integer at arg k's address plus offset; ("nonzero", k).
def hit(argc, name, *operands):
    return [("argc", argc), ("name", name)] + list(operands)


def entry(name, *operands):
    """A hit of an entry probe: always 12 operands, those past the arguments 0 (annotations named alike share a
    probe, and bpftrace refuses a script reading an operand one of its sites lacks)."""
    last = max((kind[1] for kind, _ in operands), default=0)
    return hit(12, name, *operands, *((("int", k), 0) for k in range(last + 1, 12)))


EXPECTED_HITS = {
    "add__entry": [entry("probed::add", (("int", 1), 7), (("int", 2), -3000000000))],
    "add__return": [hit(3, "probed::add", (("int", 1), 0), (("int", 2), wrap32(7 - 3000000000)))],
    "scale__entry": [entry("probed::scale", (("double", 1), 2.5), (("float", 2), 4.0))],
    "scale__return": [hit(3, "probed::scale", (("int", 1), 0), (("double", 2), 10.0))],
    "greet__entry": [entry("probed::greet", (("string", 1), "hi"), (("int", 2), ord("!")))],
    "greet__return": [hit(3, "probed::greet", (("int", 1), 0), (("string", 2), "hi!"))],
    "pick__entry": [entry("probed::pick", (("int", 1), 1), (("int", 2), 0))],
    "pick__return": [hit(3, "probed::pick", (("int", 1), 0), (("int", 2), 1))],
    "label__entry": [entry("probed::label", (("cstring", 1), "tag"), (("nonzero", 2), 1))],
    "label__return": [hit(3, "probed::label", (("int", 1), 0), (("cstring", 2), "tag"))],
    "tick__entry": [entry("probed::tick", (("int", 1), 2**32 - 1))],
    # A void function's return probe: the result operand is 0.
    "tick__return": [hit(3, "probed::tick", (("int", 1), 0), (("int", 2), 0))],
    "may_throw__entry": [entry("probed::may_throw", (("int", 1), 21)),
                         entry("probed::may_throw", (("int", 1), -1))],
    "may_throw__return": [hit(3, "probed::may_throw", (("int", 1), 0), (("int", 2), 42)),
                          hit(3, "probed::may_throw", (("int", 1), 1), (("int", 2), 0))],
    # 13 parameters: the registry name and the first 11 arguments, <sys/sdt.h>'s 12 operands.
    "wide__entry": [entry("probed::wide", *((("int", k), k) for k in range(1, 12)))],
    "wide__return": [hit(3, "probed::wide", (("int", 1), 0), (("int", 2), 91))],
    # blend(1): the arguments left to their defaults are 0.
    "blend__entry": [entry("probed::blend", (("int", 1), 1), (("int", 2), 0), (("int", 3), 0))],
    "blend__return": [hit(3, "probed::blend", (("int", 1), 0), (("int", 2), 541))],
    # A default with a comma outside parentheses: the pair's two ints at arg2's address.
    "paired__entry": [entry("probed::paired", (("int", 1), 5), (("i32", 2, 0), 10), (("i32", 2, 4), 20))],
    "paired__return": [hit(3, "probed::paired", (("int", 1), 0), (("int", 2), 35))],
    # A member function: the object's address, then the arguments.
    "forward__entry": [entry("probed::model::forward", (("nonzero", 1), 1), (("int", 2), 4),
                             (("long", 3, 0), 3), (("long", 3, 8), 5))],
    "forward__return": [hit(3, "probed::model::forward", (("int", 1), 0), (("long", 2, 0), 12),
                            (("long", 2, 8), 5))],
    "run__entry": [entry("probed::layer<int>::run", (("nonzero", 1), 1), (("int", 2), 41))],
    "run__return": [hit(3, "probed::layer<int>::run", (("int", 1), 0), (("int", 2), 42))],
    # Two annotations named alike share the probe; the registry name tells them apart.
    "step__entry": [entry("probed::first::step", (("int", 1), 1)), entry("probed::second::step", (("int", 1), 1))],
    "step__return": [hit(3, "probed::first::step", (("int", 1), 0), (("int", 2), 2)),
                     hit(3, "probed::second::step", (("int", 1), 0), (("int", 2), 3))],
}


@pytest.fixture(scope="module")
def probes_built(usdt_enabled, hooks_enabled):
    return usdt_enabled and hooks_enabled


# --- 1. the notes ---

def notes(readelf, program):
    """{probe name: [(arguments, semaphore address)]} of provider hookscope, from `readelf -n`."""
    done = run([readelf, "-n", "--wide", program])
    assert done.returncode == 0, f"readelf -n failed: {done.stderr}"
    found = {}
    for block in done.stdout.split("stapsdt ")[1:]:
        provider = re.search(r"Provider: (\S+)", block)
        name = re.search(r"Name: (\S+)", block)
        semaphore = re.search(r"Semaphore: (0x[0-9a-f]+)", block)
        arguments = re.search(r"Arguments: ?(.*)", block)
        assert provider and name and semaphore, f"an unreadable stapsdt note:\n{block}"
        if provider.group(1) == "hookscope":
            found.setdefault(name.group(1), []).append(
                ((arguments.group(1).split() if arguments else []), int(semaphore.group(1), 16)))
    return found


def test_notes_list_every_probe(readelf_tool, probe_program, probes_built):
    found = notes(readelf_tool, probe_program)
    if not probes_built:
        expect("hookscope's probes in a build without them (hooks disabled or no USDT)", found, {})
        return
    with Checks() as check:
        check.expect("the probes", sorted(found), sorted(EXPECTED_HITS))
        for probe, hits in EXPECTED_HITS.items():
            argc = hits[0][0][1]
            for arguments, semaphore in found.get(probe, []):
                check.expect(f"{probe}: operands {arguments}", len(arguments), argc)
                check.require(semaphore != 0, f"{probe} has no semaphore")
        for name in {p.rsplit("__", 1)[0] for p in EXPECTED_HITS}:
            entry = {s for _, s in found.get(name + "__entry", [])}
            ret = {s for _, s in found.get(name + "__return", [])}
            # One semaphore per probe name, wherever it fires; the return probe's beside the entry's (one word).
            if check.require(len(entry) == 1 and len(ret) == 1, f"{name}: semaphores {entry} and {ret}"):
                check.expect(f"{name}: the return semaphore's address", ret.pop(), entry.pop() + 2)


def test_calls_through_raised_probes_return_plain_results(probe_program, probes_built):
    # `raise` is the program raising every semaphore itself: each call then runs through its probes (no tool on
    # them, so each probe is a nop) and must return what the plain call returns, throw what it throws.
    done = run([probe_program, "raise"])
    if probes_built:
        expect("probe_program raise", (done.returncode, done.stdout, done.stderr), (0, "raised ok\n", ""))
    else:
        assert done.returncode == 3, f"a program without probes ran `raise`: {done}"


def test_calls_unchanged_with_nobody_attached(probe_program):
    done = run([probe_program, "once"])
    expect("probe_program once", (done.returncode, done.stdout, done.stderr), (0, "", ""))


# --- 2. gdb ---

def gdb_print(kind):
    if kind == "argc":
        return 'printf "%d\\n", $_probe_argc'
    if kind == "name":
        return 'printf "%s\\n", (char*)$_probe_arg0'
    what, k = kind[0], kind[1]
    arg = f"$_probe_arg{k}"
    offset = kind[2] if len(kind) > 2 else 0
    return {
        "int": f'printf "%ld\\n", (long){arg}',
        "nonzero": f'printf "%d\\n", {arg} != 0',
        "double": f'printf "%.17g\\n", *(double*){arg}',
        "float": f'printf "%.9g\\n", *(float*){arg}',
        "string": f'printf "%s\\n", *(char**){arg}',
        "cstring": f'printf "%s\\n", (char*){arg}',
        "long": f'printf "%ld\\n", *(long*)({arg} + {offset})',
        "i32": f'printf "%d\\n", *(int*)({arg} + {offset})',
    }[what]


def expected_text(kind, value):
    if kind not in ("argc", "name") and kind[0] in ("double", "float"):
        return repr(float(value)).removesuffix(".0")
    return str(value)


@pytest.fixture(scope="module")
def gdb_hits(probe_program, probes_built, gdb_tool, tmp_path_factory):
    """{probe: [[printed line per expected operand] per hit]} from one gdb run of `probe_program once`."""
    if not probes_built:
        pytest.skip("no probes in this build (hooks disabled or no USDT): nothing for gdb to stop at")
    gdb = gdb_tool
    script = tmp_path_factory.mktemp("gdb") / "probes.gdb"
    lines = ["set pagination off", "set confirm off", "set breakpoint pending off"]
    for probe, hits in EXPECTED_HITS.items():
        lines += [f"break -probe-stap hookscope:{probe}", "commands", "silent", f'printf "HIT {probe}\\n"']
        lines += [gdb_print(kind) for kind, _ in hits[0]]
        lines += ['printf "END\\n"', "continue", "end"]
    lines += ["run once", "quit"]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # LeakSanitizer cannot run under ptrace: in an ASan build the program would end with its fatal error.
    env = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"])))
    done = subprocess.run([gdb, "-nx", "-batch", "-x", str(script), "--args", str(probe_program)],
                          capture_output=True, text=True, timeout=120, env=env)
    got, current = {}, None
    for line in done.stdout.splitlines():
        if line.startswith("HIT "):
            current = []
            got.setdefault(line[4:], []).append(current)
        elif line == "END":
            current = None
        elif current is not None:
            current.append(line)
    assert got, f"gdb stopped at no probe.\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert "exited normally" in done.stdout, f"the program did not end normally under gdb:\n{done.stdout[-3000:]}"
    return got


@pytest.mark.parametrize("probe", sorted(EXPECTED_HITS))
def test_gdb_reads_operands(gdb_hits, probe):
    want = [[expected_text(kind, value) for kind, value in h] for h in EXPECTED_HITS[probe]]
    expect(f"what gdb read at hookscope:{probe}, hit by hit", gdb_hits.get(probe), want)


# --- 3. bpftrace ---

@pytest.fixture(scope="module")
def bpftrace(probes_built, bpftrace_tool):
    if not probes_built:
        pytest.skip("no probes in this build (hooks disabled or no USDT): nothing for bpftrace to attach to")
    return bpftrace_tool


def attach_to_running(bpftrace, probe_program, script, iterations=400):
    """bpftrace's stdout lines, attached (-p) to `probe_program loop N` while it runs."""
    done, _ = attach_while_running(bpftrace, [probe_program, "loop", iterations], script)
    # stderr may hold a harmless RLIMIT_MEMLOCK line: the output is what is judged.
    assert done.returncode == 0, f"bpftrace failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout.splitlines()


def test_bpftrace_prints_arguments_of_a_running_program(bpftrace, probe_program):
    script = (f'usdt:{probe_program}:hookscope:add__entry {{ printf("add %s %d %d\\n", str(arg0), arg1, arg2); '
              '@n = @n + 1; if (@n >= 3) { exit(); } }')
    lines = [line.split() for line in attach_to_running(bpftrace, probe_program, script) if line.startswith("add ")]
    assert len(lines) == 3, f"expected three calls of probed::add, bpftrace printed {lines}"
    names = {line[1] for line in lines}
    counters = [int(line[2]) for line in lines]
    expect("the registry names", names, {"probed::add"})
    expect("the second arguments", [int(line[3]) for line in lines], [1000] * 3)
    expect("consecutive first arguments", counters, list(range(counters[0], counters[0] + 3)))


def test_bpftrace_latency_histogram_per_batch_size(bpftrace, probe_program):
    # docs/probes.md's histogram, on the program's model::forward (its batch size is its first argument, arg2).
    script = (f'usdt:{probe_program}:hookscope:forward__entry /str(arg0) == "probed::model::forward"/ '
              '{ @start[tid] = nsecs; @batch[tid] = arg2; } '
              f'usdt:{probe_program}:hookscope:forward__return /@start[tid]/ '
              '{ @ns[@batch[tid]] = hist(nsecs - @start[tid]); delete(@start[tid]); delete(@batch[tid]); '
              '@calls = @calls + 1; if (@calls >= 12) { exit(); } }')
    lines = attach_to_running(bpftrace, probe_program, script)
    batches = sorted(int(m.group(1)) for line in lines for m in [re.match(r"@ns\[(\d+)\]:", line)] if m)
    expect("the histogram's batch sizes", batches, [1, 2, 4, 8])
    assert any(re.match(r"\[\d+\w*, \d+\w*\)\s+\d+", line) for line in lines), "no histogram bucket:\n" + "\n".join(lines)


def test_semaphores_fall_back_when_bpftrace_detaches(bpftrace, probe_program):
    # Attached, the program sees its semaphore raised; after bpftrace exits, idle again (the program prints both).
    script = f'usdt:{probe_program}:hookscope:add__entry {{ @n = @n + 1; if (@n >= 3) {{ exit(); }} }}'
    done, out = attach_while_running(bpftrace, [probe_program, "loop", "250"], script, wait_for_program=True)
    assert done.returncode == 0, f"bpftrace failed:\n{done.stdout}\n{done.stderr}"
    seen = dict(re.findall(r"^(\w+): (\d+)$", out, re.M))
    expect("the loop's semaphore readings (attached at some point, idle at the end)",
           (seen.get("raised_while_looping"), seen.get("raised_at_end")), ("1", "0"))
