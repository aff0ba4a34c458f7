"""HOOKSCOPE_TIMELINE's arguments that do not fit an event's slot (160 bytes of `"name":"value",...`): every argument
given appears, values over their fair share are cut at a character boundary and end with `…(N)` (N the whole
formatted value's length in bytes), and names that do not fit are counted under the key `"…"`
(docs/environment.md). tests/environment/edge_case_program.cpp `timeline_args` makes one call per line of stdin:
args_one(s), args_many(a, bb, ..., hhhh) (eight strings) or args_wide(...) (six strings under long names). Each event
is checked against the arguments given: the file strict JSON and valid UTF-8, each kept value whole or a prefix of
the whole cut between characters (never inside a `\\xNN` or a JSON escape), the names in order, the slot never
overfull, the cut values given fair shares."""
import json
import random

import pytest

from support import Checks, expect, run

CAPACITY = 160
FUNCTIONS = {
    "one": ("args_one", ["s"]),
    "many": ("args_many", ["a", "bb", "ccc", "dddd", "e", "ff", "ggg", "hhhh"]),
    "wide": ("args_wide", [f"{n}_parameter_of_a_long_name" for n in ("first", "second", "third", "fourth", "fifth",
                                                                     "sixth")]),
}


@pytest.fixture
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: no timeline (test_stats_timeline.py checks that)")


def no_lone_surrogate(value):
    if isinstance(value, str):
        value.encode("utf-8")  # raises on a lone surrogate (json.loads accepts "\ud800")
    elif isinstance(value, list):
        for item in value:
            no_lone_surrogate(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            no_lone_surrogate(key)
            no_lone_surrogate(item)


def timeline_of(program, tmp_path, calls):
    """Runs the calls [(function key, [bytes, ...])]; the complete events of the timeline, in call order."""
    trace = tmp_path / "args.json"
    lines = "".join(f"{key} " + " ".join(arg.hex() or "-" for arg in args) + "\n" for key, args in calls)
    done = run([program, "timeline_args", "0"], {"HOOKSCOPE_TIMELINE": f"args_*={trace}"}, timeout=120, input=lines)
    expect("the program made every call, nothing logged", (done.returncode, done.stdout, done.stderr),
           (0, f"calls {len(calls)}\n", ""))
    with open(trace, "rb") as f:
        document = json.loads(f.read().decode("utf-8"))  # strict: bytes that are not UTF-8 raise
    no_lone_surrogate(document)
    events = [e for e in document["traceEvents"] if e["ph"] == "X"]
    return sorted(events, key=lambda e: e["ts"])


def units(raw):
    """The characters of `raw` as the timeline shows them, one by one: a UTF-8 character, or the text \\xNN for a
    byte that is not part of one (what Python's 'backslashreplace' shows)."""
    out, i = [], 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            try:
                char = raw[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(char)
            i += n
            break
        else:
            out.append(f"\\x{raw[i]:02x}")
            i += 1
    return out


def shown(raw):
    """An argument's whole value as the timeline shows it: quoted, each byte that is not UTF-8 as the text \\xNN."""
    return '"' + "".join(units(raw)) + '"'


def escaped_length(text):
    """Bytes of `text` in a JSON string body as the library writes it."""
    return sum(2 if c in '"\\' else 6 if ord(c) < 0x20 else len(c.encode("utf-8")) for c in text)


def marker(raw):
    return f"\u2026({len(raw) + 2})"  # format_arg quotes strings: two bytes more


def check_event(check, what, event, key, args):
    """The event of one call: the names, each value whole or cut as promised, the slot, the shares."""
    function, names = FUNCTIONS[key]
    names = names[:len(args)]
    got = event["args"]
    check.expect(f"{what}: the function", event["name"], function)
    keys = list(got)
    kept = [k for k in keys if k != "\u2026"]
    check.expect(f"{what}: the first names, in order", kept, names[:len(kept)])
    if len(kept) < len(names):
        check.expect(f"{what}: the names left out are counted, last", (keys[-1], got.get("\u2026")),
                     ("\u2026", f"{len(names) - len(kept)} more"))
    slot = sum(escaped_length(k) + escaped_length(v) + 5 for k, v in got.items()) + len(got) - 1
    check.require(slot <= CAPACITY, f"{what}: the slot holds {slot} bytes, over {CAPACITY}: {got}")
    cut, content = [], {}
    for name, raw in zip(kept, args):
        value, whole = got[name], shown(raw)
        end = marker(raw)
        if value == whole:
            content[name] = escaped_length(value) - min(escaped_length(value), len(end.encode()))
            continue
        if not check.require(value.endswith(end), f"{what}: {name}: neither whole nor ending with {end!r}: {value!r}"):
            continue
        prefix = value[:-len(end)]
        starts, start = {'"'}, '"'  # the whole value's starts that end between two characters
        for unit in units(raw):
            start += unit
            starts.add(start)
        check.require(prefix in starts,
                      f"{what}: {name}: {prefix!r} is not a start of {whole[:200]!r}... cut between characters")
        cut.append(name)
        content[name] = escaped_length(value) - len(end.encode())
    if cut and len(kept) == len(names):
        # Max-min shares: no value keeps more than a cut one, beyond the last character that did not fit (<= 6 bytes).
        least = min(content[n] for n in cut)
        check.require(all(c <= least + 6 for c in content.values()),
                      f"{what}: unfair shares {content} (cut: {cut})")
        check.require(slot >= CAPACITY - 6 * len(cut) - len(kept),
                      f"{what}: the slot holds {slot} bytes while values were cut: {got}")
    return cut


def check_calls(program, tmp_path, calls, what):
    events = timeline_of(program, tmp_path, calls)
    with Checks() as check:
        check.expect(f"{what}: one event per call", len(events), len(calls))
        cuts = [check_event(check, f"{what}, call {i}", e, key, args)
                for i, (e, (key, args)) in enumerate(zip(events, calls))]
    return events, cuts


def test_long_string_is_cut_with_its_length(edge_case_program, enabled, tmp_path):
    events, _ = check_calls(edge_case_program, tmp_path, [("one", [b"a" * 5000])], "a 5000-byte string")
    value = events[0]["args"]["s"]
    expect("a 5000-byte string: the slot's worth of it, then …(5002)",
           (value.endswith("\u2026(5002)"), len(value.encode()) >= CAPACITY - 10), (True, True))


def test_many_arguments_share_the_slot(edge_case_program, enabled, tmp_path):
    args = [bytes([ord("a") + i]) * 100 for i in range(8)]
    events, cuts = check_calls(edge_case_program, tmp_path, [("many", args)], "eight 100-byte strings")
    expect("eight 100-byte strings: all eight present, all cut", cuts[0], FUNCTIONS["many"][1])


def test_short_values_keep_their_length(edge_case_program, enabled, tmp_path):
    args = [b"x" * 400, b"1", b"22", b"333", b"", b"55555", b"6", b"7" * 10]
    events, cuts = check_calls(edge_case_program, tmp_path, [("many", args)], "one long value among short ones")
    got = events[0]["args"]
    expect("one long value among short ones: only it is cut, the others whole",
           (cuts[0], [got[n] for n in FUNCTIONS["many"][1][1:]]), (["a"], [shown(a) for a in args[1:]]))


def test_names_that_do_not_fit_are_counted(edge_case_program, enabled, tmp_path):
    args = [b"1", b"2", b"3", b"4", b"5", b"6"]
    events, _ = check_calls(edge_case_program, tmp_path, [("wide", args)], "six long names")
    expect("six long names: the first three kept, '…': '3 more'", events[0]["args"],
           {"first_parameter_of_a_long_name": '"1"', "second_parameter_of_a_long_name": '"2"',
            "third_parameter_of_a_long_name": '"3"', "\u2026": "3 more"})


# Characters whose escapes or encodings are several bytes: the cut falls at every offset inside them.
UNITS = {"not UTF-8": b"\xff", "a quote": b'"', "a backslash": b"\\", "a control character": b"\x01",
         "a 2-byte character": "\u00e9".encode(), "a 3-byte character": "\u20ac".encode(),
         "a 4-byte character": "\U0001d11e".encode(), "a cut character": b"\xe2\x82",
         "an encoded surrogate": b"\xed\xa0\x80"}


@pytest.mark.parametrize("unit", UNITS, ids=list(UNITS))
def test_cut_never_splits_an_escape(edge_case_program, enabled, tmp_path, unit):
    calls = [("one", [b"a" * offset + UNITS[unit] * 200]) for offset in range(8)]
    calls += [("many", [b"b" * offset + UNITS[unit] * 60 for _ in range(8)]) for offset in range(8)]
    _, cuts = check_calls(edge_case_program, tmp_path, calls, unit)
    expect(f"{unit}: every value cut", [bool(c) for c in cuts], [True] * len(calls))


def random_text(rng):
    pieces = [b"a", b"\xff", b'"', b"\\", b"\x01", b"\n", "\u00e9".encode(), "\u20ac".encode(),
              "\U0001d11e".encode(), b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b" "]
    length = rng.choice([0, 1, 5, 20, 40, 80, 150, 400])
    return b"".join(rng.choice(pieces) for _ in range(length))


def test_random_argument_texts(edge_case_program, enabled, tmp_path):
    """Property: 400 calls of random arity, random texts of random lengths: every event keeps its promises."""
    rng = random.Random(36)
    calls = []
    for _ in range(400):
        key = rng.choice(list(FUNCTIONS))
        calls.append((key, [random_text(rng) for _ in FUNCTIONS[key][1]]))
    _, cuts = check_calls(edge_case_program, tmp_path, calls, "random texts")
    expect("random texts: some events cut values, some keep them whole",
           (any(cuts), not all(cuts)), (True, True))
