"""hookscope-shapes against odd and damaged files: damaged summaries refused with the JSON path of the field
that contradicts another, never a crash; summaries however a pretty printer spaced or sorted them; byte-order marks;
one depth limit for records, summaries and `args`; lines longer than the record format's limit skipped with a
warning, a long line that cannot be text refused; `summarize -o` onto FIFOs, sockets, devices and link loops;
`--typed` with a struct of empty name; and a table of odd files, each refused with a sentence or read."""
import copy
import json
import os
import random
import re
import socket
import stat
import subprocess

import pytest

from support import DATA

CRASH_MARKS = ("Sanitizer", "runtime error", "terminate called", "Segmentation", "Aborted")


def shapes(program, *argv, cwd, timeout=60):
    return subprocess.run([program, *map(str, argv)], capture_output=True, timeout=timeout, cwd=cwd,
                          env={k: v for k, v in os.environ.items() if not k.startswith("HOOKSCOPE_")})


def text(done):
    return done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def no_crash(done):
    """A refusal or an answer: status 0, 1 or 2, and no sanitizer report or abort."""
    err = text(done)[1]
    assert done.returncode in (0, 1, 2) and not any(m in err for m in CRASH_MARKS), (done.returncode, err[-2000:])


@pytest.fixture(scope="module")
def llm_summary(hookscope_shapes, tmp_path_factory):
    """The summary of tests/data/llm.jsonl (a prefill without the cache, then decode steps), parsed."""
    d = tmp_path_factory.mktemp("summary")
    done = shapes(hookscope_shapes, "summarize", DATA / "llm.jsonl", "-o", d / "llm.json", cwd=d)
    assert done.returncode == 0, done.stderr
    return json.loads((d / "llm.json").read_text())


def infer_summary(program, doc, tmp_path, *options, name="s.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return shapes(program, "infer", name, *options, cwd=tmp_path)


#=== damaged summaries ===#

def cache_leaf(doc):
    return doc["arguments"][2]["leaves"][0]  # past_key_values' first tensor: absent at the prefill


def test_a_leaf_rank_that_disagrees_with_its_last_tensor_is_refused(hookscope_shapes, llm_summary, tmp_path):
    """Rank, dims and shapes_seen of one more dimension (varying), the last tensor of the old rank: the placeholder
    of the prefill's cache indexed the last tensor by the leaf's rank (a heap overflow under ASan)."""
    doc = copy.deepcopy(llm_summary)
    leaf = cache_leaf(doc)
    leaf["rank"] += 1
    leaf["dims"].append(dict(leaf["dims"][2]))
    leaf["shapes_seen"] = [s + [s[2]] for s in leaf["shapes_seen"]]
    for options in ((), ("--profiles", "auto", "--format", "report"), ("--profiles", "auto", "--format", "trtexec")):
        done = infer_summary(hookscope_shapes, doc, tmp_path, *options)
        no_crash(done)
        assert done.returncode == 2, text(done)
        assert "not a valid summary: $.arguments[2].leaves[0].last_tensor: [2,4,9,16] is not of rank 5" in \
            text(done)[1]
    args = shapes(hookscope_shapes, "args", "s.json", cwd=tmp_path)
    assert args.returncode == 2 and "$.arguments[2].leaves[0].last_tensor" in text(args)[1]


def damage(doc, path, change):
    """Applies `change` to the member at `path` (keys and indices) of a copy of `doc`."""
    doc = copy.deepcopy(doc)
    node = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = change(node[path[-1]])
    return doc


DAMAGES = [
    # (what, path, change, the JSON path and words of the refusal)
    ("counts that do not add up to the tensors seen", ["arguments", 0, "leaves", 0, "dims", 1, "counts", 0, 1],
     lambda n: n + 1, "$.arguments[0].leaves[0].dims[1].counts[1][1]: more calls counted"),
    ("varies that contradicts min and max", ["arguments", 0, "leaves", 0, "dims", 0, "varies"], lambda v: not v,
     "$.arguments[0].leaves[0].dims[0].varies"),
    ("a negative size", ["arguments", 0, "leaves", 0, "dims", 0, "min"], lambda v: -1,
     "$.arguments[0].leaves[0].dims[0]"),
    ("a shape seen outside [min, max]", ["arguments", 1, "leaves", 0, "shapes_seen", 0], lambda s: [s[0], 99],
     "$.arguments[1].leaves[0].shapes_seen[0]: [2,99] lies outside"),
    ("a shape seen of another rank without a conflict", ["arguments", 1, "leaves", 0, "shapes_seen", 0],
     lambda s: s + [1], "$.arguments[1].leaves[0].shapes_seen[0]: [2,7,1] is not of rank 2"),
    ("an argument present in more calls than recorded", ["arguments", 0, "present"], lambda n: n + 100,
     "$.arguments[0].present: more than the 4 calls recorded"),
    ("provided more often than present", ["arguments", 2, "provided"], lambda n: n + 1, "$.arguments[2]"),
    ("a first tensor call beyond the calls", ["arguments", 0, "leaves", 0, "first_tensor_call"], lambda n: 40,
     "$.arguments[0].leaves[0].first_tensor_call: call 40 is beyond the 4 calls recorded"),
    ("combinations counting more calls than recorded", ["combinations", 0, 1], lambda n: n + 1, "$.combinations"),
    ("a dtype not among dtypes", ["arguments", 0, "leaves", 0, "dtypes"], lambda d: ["float32"],
     "$.arguments[0].leaves[0].dtype: not among dtypes"),
    ("a stored call's tensor outside its leaf's range", ["stored_calls", 0, "kwargs", 1, 1, "shape"],
     lambda s: [s[0], 9999], "lies outside its leaf's dims' [min, max]"),
    ("a rank conflict at the first tensor's call", ["arguments", 0, "leaves", 0, "rank_conflict"],
     lambda c: [0, [2, 1, 1]], "$.arguments[0].leaves[0].rank_conflict[0]: not after first_tensor_call"),
    ("a count too large for any integer", ["calls"], lambda n: 2 ** 70, "$.calls"),
    ("calls of -1", ["calls"], lambda n: -1, "$.calls: expected a count"),
]


@pytest.mark.parametrize("what,path,change,refusal", DAMAGES, ids=[d[0] for d in DAMAGES])
def test_a_damaged_summary_is_refused_naming_the_field(hookscope_shapes, llm_summary, tmp_path, what, path, change,
                                                       refusal):
    done = infer_summary(hookscope_shapes, damage(llm_summary, path, change), tmp_path, "--store-n-calls", "all")
    no_crash(done)
    assert done.returncode == 2, text(done)
    assert refusal in text(done)[1], text(done)[1]


def integer_paths(node, path=()):
    """The path of every integer (not a boolean) in a parsed document."""
    if isinstance(node, bool):
        return
    if isinstance(node, int):
        yield path
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from integer_paths(v, path + (i,))
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from integer_paths(v, path + (k,))


def test_random_damage_gives_a_refusal_or_an_answer_never_a_crash(hookscope_shapes, tmp_path):
    """Property: any integer of a valid summary (of each summary CI fuzzes from) set to a neighbour, 0, -1 or a huge
    value, one to three at a time: status 0, 1 or 2, never a crash. A fixed seed; each case names its damage."""
    rng = random.Random(27)
    summaries = sorted((DATA.parent / "fuzz" / "summaries").glob("*.json"))
    assert summaries
    options = [(), ("--profiles", "auto", "--format", "report"), ("--format", "trtexec", "--dim-names")]
    for case in range(120):
        source = summaries[case % len(summaries)]
        doc = json.loads(source.read_text())
        paths = list(integer_paths(doc))
        changes = []
        for _ in range(rng.randint(1, 3)):
            p = rng.choice(paths)
            new = rng.choice([lambda v: v + 1, lambda v: v - 1, lambda v: 0, lambda v: -1, lambda v: 2 ** 63 - 1,
                              lambda v: v * 1000 + 1])
            doc = damage(doc, list(p), new)
            changes.append(p)
        done = infer_summary(hookscope_shapes, doc, tmp_path, *options[case % len(options)])
        assert done.returncode in (0, 1, 2) and not any(m in text(done)[1] for m in CRASH_MARKS), \
            (source.name, changes, text(done)[1][-1500:])
        args = shapes(hookscope_shapes, "args", "s.json", cwd=tmp_path)
        assert args.returncode in (0, 1, 2) and not any(m in text(args)[1] for m in CRASH_MARKS), \
            (source.name, changes, text(args)[1][-1500:])


#=== summaries however they are written ===#

def random_records(rng, n):
    lines = []
    for i in range(n):
        batch, seq, past = rng.randint(1, 3), rng.choice([1, 1, rng.randint(2, 9)]), rng.randint(0, 6)
        kwargs = [["input_ids", {"shape": [batch, seq], "dtype": "int64"}],
                  ["attention_mask", {"shape": [batch, past + seq], "dtype": "int64"}]]
        if past:
            kwargs.append(["past_key_values", {"struct": "DynamicCache", "fields": [
                ["key_0", {"shape": [batch, 2, past, 4], "dtype": "float16"}],
                ["value_0", {"shape": [batch, 2, past, 4], "dtype": "float16"}]]}])
        record = {"function": "forward", "args": [], "kwargs": kwargs}
        if i == 0:
            record["signature"] = [{"name": "input_ids"}, {"name": "attention_mask"},
                                   {"name": "past_key_values", "default": None}]
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def test_summaries_read_however_written(hookscope_shapes, tmp_path):
    """Property (fixed seed): records → summarize → the summary as written, as `jq .` and `jq -S .` print it, and
    after a byte-order mark: each infers what one pass over the records infers, with every option tried."""
    rng = random.Random(2027)
    for case in range(8):
        (tmp_path / "r.jsonl").write_text(random_records(rng, rng.randint(1, 30)))
        done = shapes(hookscope_shapes, "summarize", "r.jsonl", "-o", "s.json", cwd=tmp_path)
        assert done.returncode == 0, text(done)
        written = (tmp_path / "s.json").read_text()
        doc = json.loads(written)
        forms = {"compact": written, "jq": json.dumps(doc, indent=2) + "\n",
                 "jq -S": json.dumps(doc, indent=2, sort_keys=True) + "\n",
                 "sorted on one line": json.dumps(doc, sort_keys=True, separators=(",", ":")),
                 "bom": "\ufeff" + written, "bom jq -S": "\ufeff" + json.dumps(doc, indent=1, sort_keys=True),
                 "crlf": json.dumps(doc, indent=2).replace("\n", "\r\n"),
                 # A tool that escapes what JSON lets it escape: the key and the name are still a summary's.
                 "escaped": written.replace('"format"', '"\\u0066ormat"', 1).replace(
                     '"hookscope-shapes-summary"', '"hookscope\\u002Dshapes-summ\\u0061ry"', 1)}
        for options in (("--format", "report"), ("--profiles", "auto", "--format", "trtexec"), ("--dim-names",)):
            expected = shapes(hookscope_shapes, "infer", "r.jsonl", "--store-n-calls", "all", *options, cwd=tmp_path)
            for name, form in forms.items():
                (tmp_path / "form.json").write_text(form, encoding="utf-8", newline="")
                got = shapes(hookscope_shapes, "infer", "form.json", *options, cwd=tmp_path)
                assert (got.returncode, got.stdout) == (expected.returncode, expected.stdout), (case, name, text(got))
        args_expected = shapes(hookscope_shapes, "args", "r.jsonl", "--store-n-calls", "all", cwd=tmp_path)
        (tmp_path / "form.json").write_text(forms["jq -S"])
        args = shapes(hookscope_shapes, "args", "form.json", cwd=tmp_path)
        assert (args.returncode, args.stdout) == (args_expected.returncode, args_expected.stdout), text(args)


@pytest.mark.parametrize("form", ["jq -S", "sorted on one line"])
@pytest.mark.parametrize("damage", ["a comma removed", "a number with a leading zero", "too deep"])
def test_a_summary_damaged_before_its_format_member_is_refused_as_a_summary(hookscope_shapes, llm_summary, tmp_path,
                                                                             form, damage):
    """Its keys sorted, "format" comes late: damage before it leaves the head no JSON. The summary reader still says
    where, alone and among summaries (never "holds records"); a damaged first record stays a record file's error."""
    doc = llm_summary
    compact = form != "jq -S"
    written = json.dumps(doc, sort_keys=True, indent=None if compact else 2,
                         separators=(",", ":") if compact else None) + "\n"
    assert written.index('"format"') > written.index('"arguments"')
    first_comma = written.index(",")
    damaged = {"a comma removed": written[:first_comma] + written[first_comma + 1:],
               "a number with a leading zero": re.sub(r": ?1\b", ": 01", written, count=1),
               "too deep": written[:1] + ("" if compact else "\n") + '"a":' + "[" * 200 + "]" * 200 + "," + written[1:]
               }[damage]
    assert damaged.index('"format"') > 0 and damaged != written
    (tmp_path / "bad.json").write_text(damaged)
    (tmp_path / "good.json").write_text(json.dumps(llm_summary))
    alone = shapes(hookscope_shapes, "infer", "bad.json", cwd=tmp_path)
    among = shapes(hookscope_shapes, "infer", "good.json", "bad.json", cwd=tmp_path)
    for done in (among,) if compact else (alone, among):
        assert done.returncode == 2 and "bad.json: not a valid summary: not JSON" in text(done)[1], text(done)
    if compact:  # one line: it may be a damaged record file, and alone it is read as one, saying where on that line
        assert alone.returncode == 2 and "bad.json:1: not JSON" in text(alone)[1], text(alone)
    record = (DATA / "llm.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "bad.jsonl").write_text(record[0].replace(",", "", 1) + "".join(record[1:]))
    records = shapes(hookscope_shapes, "infer", "bad.jsonl", cwd=tmp_path)
    assert records.returncode == 2 and "bad.jsonl:1: not JSON" in text(records)[1], text(records)


def test_a_summary_with_long_keys_before_its_format_member_is_a_summary(hookscope_shapes, llm_summary, tmp_path):
    """Any member may come before "format", whatever its key's length (a tool's own annotation, say)."""
    (tmp_path / "s.json").write_text(json.dumps({"k" * 70: 1, **llm_summary}) + "\n")
    (tmp_path / "plain.json").write_text(json.dumps(llm_summary) + "\n")
    expected = shapes(hookscope_shapes, "infer", "plain.json", cwd=tmp_path)
    got = shapes(hookscope_shapes, "infer", "s.json", cwd=tmp_path)
    assert expected.returncode == 0 and (got.returncode, got.stdout) == (0, expected.stdout), text(got)


def test_a_byte_order_mark_before_records_is_skipped(hookscope_shapes, tmp_path):
    records = (DATA / "llm.jsonl").read_bytes()
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + records)
    (tmp_path / "plain.jsonl").write_bytes(records)
    expected = shapes(hookscope_shapes, "infer", "plain.jsonl", cwd=tmp_path)
    got = shapes(hookscope_shapes, "infer", "bom.jsonl", cwd=tmp_path)
    assert (got.returncode, got.stdout) == (0, expected.stdout), text(got)
    # Only at the start of a file: one inside is not a record.
    (tmp_path / "inside.jsonl").write_bytes(records + b"\xef\xbb\xbf" + records.splitlines(keepends=True)[0])
    inside = shapes(hookscope_shapes, "infer", "inside.jsonl", cwd=tmp_path)
    assert inside.returncode == 2 and "inside.jsonl:5: not JSON: syntax error at column 1" in text(inside)[1]


#=== one depth limit ===#

def nested(levels_of_lists, size):
    """A tensor inside lists: 2 JSON levels per list, 2 for the tensor."""
    v = {"shape": [2, size], "dtype": "float32"}
    for _ in range(levels_of_lists):
        v = {"list": [v]}
    return v


@pytest.mark.parametrize("lists,accepted", [(8, True), (61, True), (62, False), (63, False)],
                         ids=["16 levels", "limit minus 1", "one past the limit", "two past the limit"])
@pytest.mark.parametrize("where", ["positional", "keyword"])
def test_infer_args_and_summaries_accept_the_same_depth(hookscope_shapes, tmp_path, lists, accepted, where):
    """A value nests at most 125 JSON levels (a tensor in 61 lists: 124; in 62: 126), as a positional or keyword
    argument: infer, args and summarize accept the same ones, and what summarize writes reads back."""
    lines = []
    for i in range(3):
        v = nested(lists, i + 3)
        lines.append(json.dumps({"function": "f", "args": [v] if where == "positional" else [],
                                 "kwargs": [] if where == "positional" else [["x", v]]}))
    (tmp_path / "deep.jsonl").write_text("\n".join(lines) + "\n")
    infer = shapes(hookscope_shapes, "infer", "deep.jsonl", "--store-n-calls", "all", cwd=tmp_path)
    args = shapes(hookscope_shapes, "args", "deep.jsonl", "--store-n-calls", "all", cwd=tmp_path)
    args_kw = shapes(hookscope_shapes, "args", "deep.jsonl", "--as-args-kwargs", cwd=tmp_path)
    summary = shapes(hookscope_shapes, "summarize", "deep.jsonl", "-o", "deep.json", cwd=tmp_path)
    for done in (infer, args, args_kw, summary):
        no_crash(done)
        assert done.returncode == (0 if accepted else 2), text(done)
    if accepted:
        back = shapes(hookscope_shapes, "infer", "deep.json", cwd=tmp_path)
        assert (back.returncode, back.stdout) == (0, infer.stdout), text(back)
        back_args = shapes(hookscope_shapes, "args", "deep.json", cwd=tmp_path)
        assert (back_args.returncode, back_args.stdout) == (0, args.stdout), text(back_args)
        assert json.loads(args.stdout)  # the containers around the arguments add their levels: still JSON
    else:
        assert all("deeper than 125 JSON levels" in text(d)[1] or "too deep" in text(d)[1] for d in (infer, args))


#=== odd files ===#

ODD_RECORDS = [
    # (name, bytes, status, words of the answer or refusal)
    ("empty", b"", 1, "no call recorded"),
    ("crlf lines", (DATA / "llm.jsonl").read_bytes().replace(b"\n", b"\r\n"), 0, "attention_mask"),
    ("a nul byte", b'{"function":"f","args":[],"kwargs":[]}\n\x00\n', 2, ":2: not JSON"),
    ("not utf-8 in a name", b'{"function":"f\xff","args":[],"kwargs":[]}\n', 2, ":1:"),
    ("a huge dim", b'{"function":"f","args":[{"shape":[99999999999999999999],"dtype":"float32"}],"kwargs":[]}\n', 2,
     ":1:"),
    ("a negative dim", b'{"function":"f","args":[{"shape":[-1],"dtype":"float32"}],"kwargs":[]}\n', 2, ":1:"),
    ("a dim of 2**63", b'{"function":"f","args":[{"shape":[9223372036854775808],"dtype":"float32"}],"kwargs":[]}\n',
     2, ":1:"),
    ("a number past the doubles", b'{"function":"f","args":[{"float":1e999}],"kwargs":[]}\n', 0, "["),
    ("a bare bom", b"\xef\xbb\xbf", 1, "no call recorded"),
    ("a summary cut short", None, 2, "not a valid summary"),
]


@pytest.mark.parametrize("name,data,status,words", ODD_RECORDS, ids=[r[0] for r in ODD_RECORDS])
def test_odd_files(hookscope_shapes, llm_summary, tmp_path, name, data, status, words):
    if data is None:
        data = json.dumps(llm_summary, indent=2, sort_keys=True).encode()[:-40]
    (tmp_path / "odd").write_bytes(data)
    for command in ("infer", "args"):
        done = shapes(hookscope_shapes, command, "odd", cwd=tmp_path)
        no_crash(done)
        assert done.returncode == status and words in text(done)[0] + text(done)[1], (command, text(done))


def test_odd_sources(hookscope_shapes, tmp_path):
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    (tmp_path / "dir").mkdir()
    for source, words in (("loop_a", "loop_a: cannot open: Too many levels of symbolic links"),
                          ("dir", "dir: cannot read: it is a directory"),
                          ("missing", "missing: cannot open: No such file or directory")):
        done = shapes(hookscope_shapes, "infer", source, cwd=tmp_path)
        assert done.returncode == 2 and words in text(done)[1], text(done)


#=== lines longer than the record format's limit ===#

LIMIT = 64 << 20  # hookscope::max_record_line_bytes


def long_record_line(size):
    """A record line of exactly `size` bytes (another producer's: hookscope's writers elide to stay under LIMIT)."""
    start, end = b'{"function":"Model::forward","args":[],"kwargs":[["input_ids",{"str":"', b'"}]]}'
    return start + b"x" * (size - len(start) - len(end)) + end


def skipped(source, line, size):
    return (f"hookscope-shapes: warning: {source}:{line}: skipped a line of {size} bytes, longer than the reader's "
            f"limit of {LIMIT} (hookscope::max_record_line_bytes, which hookscope's writers keep to)\n")


@pytest.fixture(scope="module")
def long_line_file(tmp_path_factory):
    """tests/data/llm.jsonl with a line one byte over the limit after its second line, and one of exactly the limit
    (read, and a call of its own) at the end, as CRLF."""
    d = tmp_path_factory.mktemp("long_lines")
    lines = (DATA / "llm.jsonl").read_bytes().splitlines(keepends=True)
    (d / "long.jsonl").write_bytes(b"".join(lines[:2]) + long_record_line(LIMIT + 1) + b"\n" + b"".join(lines[2:]))
    (d / "at_limit.jsonl").write_bytes(b"".join(lines) + long_record_line(LIMIT) + b"\r\n")
    return d


@pytest.mark.parametrize("command", ["infer", "args", "summarize"])
def test_a_line_over_the_limit_is_skipped_with_a_warning_and_every_other_call_read(hookscope_shapes, long_line_file,
                                                                                 command):
    """The answer is the one of the file without the long line; the warning names the file, the line, its length."""
    d = long_line_file
    alone = shapes(hookscope_shapes, command, DATA / "llm.jsonl", "--store-n-calls", "all", cwd=d)
    done = shapes(hookscope_shapes, command, "long.jsonl", "--store-n-calls", "all", cwd=d, timeout=120)
    assert alone.returncode == 0, text(alone)
    assert (done.returncode, text(done)) == (0, (text(alone)[0], skipped("long.jsonl", 3, LIMIT + 1))), text(done)


def test_a_line_over_the_limit_on_standard_input_and_as_the_last_line(hookscope_shapes, long_line_file, tmp_path):
    data = (long_line_file / "long.jsonl").read_bytes()
    done = subprocess.run([hookscope_shapes, "summarize", "-", "-o", "-"], input=data, capture_output=True,
                          timeout=120)
    assert done.returncode == 0 and text(done)[1] == skipped("<stdin>", 3, LIMIT + 1), text(done)
    (tmp_path / "last.jsonl").write_bytes((DATA / "llm.jsonl").read_bytes() + long_record_line(LIMIT + 100))
    done = shapes(hookscope_shapes, "summarize", "last.jsonl", "-o", "-", cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and text(done)[1] == skipped("last.jsonl", 5, LIMIT + 100), text(done)
    assert json.loads(text(done)[0])["calls"] == 4


def test_a_line_of_exactly_the_limit_reads(hookscope_shapes, long_line_file):
    done = shapes(hookscope_shapes, "summarize", "at_limit.jsonl", "-o", "-", cwd=long_line_file, timeout=120)
    assert done.returncode == 0 and text(done)[1] == "", text(done)
    assert json.loads(text(done)[0])["calls"] == 5


def test_a_long_line_that_cannot_be_text_is_an_error(hookscope_shapes, tmp_path):
    """A binary file is not skipped line after line: a byte JSON text never holds ends the reading at once."""
    (tmp_path / "binary.jsonl").write_bytes(b'{"function":"f","args":[],"kwargs":[]}\n' + b"{" * (LIMIT + 10) +
                                            b"\x00\xff" * 1000 + b"\n")
    done = shapes(hookscope_shapes, "infer", "binary.jsonl", cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and text(done)[1] == (
        f"hookscope-shapes: binary.jsonl:2: the line holds the byte 0x00 at column {LIMIT + 11}, which JSON text "
        f"never holds, and is longer than {LIMIT} bytes, the reader's limit: not a record file\n"), text(done)


#=== summarize -o ===#

def record_file(tmp_path):
    (tmp_path / "r.jsonl").write_bytes((DATA / "llm.jsonl").read_bytes())
    return "r.jsonl"


def test_summarize_output_refuses_fifos_sockets_devices_and_loops(hookscope_shapes, tmp_path):
    records = record_file(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    os.symlink("fifo", tmp_path / "to_fifo")
    try:
        for output, why in (("fifo", "it is a FIFO"), ("to_fifo", "it is a FIFO"), ("sock", "it is a socket"),
                            ("/dev/zero", "it is a device"), ("loop_a", "a loop of symbolic links")):
            done = shapes(hookscope_shapes, "summarize", records, "-o", output, cwd=tmp_path, timeout=30)
            assert done.returncode == 2, text(done)
            assert f"{output}: cannot write: {why}" in text(done)[1], text(done)
    finally:
        server.close()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode) and stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    assert os.readlink(tmp_path / "to_fifo") == "fifo" and os.readlink(tmp_path / "loop_a") == "loop_b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "loop_a", "loop_b", "r.jsonl", "sock", "to_fifo"]


def test_summarize_output_to_dev_null_and_standard_output(hookscope_shapes, tmp_path):
    """/dev/null is written in place (never replaced: as root a rename would replace the device); a path that is
    the command's standard output (/dev/stdout, /dev/fd/1) writes there as -o - does, appending when it appends."""
    records = record_file(tmp_path)
    before = os.stat("/dev/null")
    done = shapes(hookscope_shapes, "summarize", records, "-o", "/dev/null", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == b"", text(done)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    plain = shapes(hookscope_shapes, "summarize", records, cwd=tmp_path).stdout
    for output in ("/dev/stdout", "/dev/fd/1"):
        done = shapes(hookscope_shapes, "summarize", records, "-o", output, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, plain), text(done)
        with open(tmp_path / "appended.json", "wb") as out:
            out.write(b"first\n")
            out.flush()
            with open(tmp_path / "appended.json", "ab") as appending:
                subprocess.run([hookscope_shapes, "summarize", records, "-o", output], cwd=tmp_path,
                               stdout=appending, check=True)
        assert (tmp_path / "appended.json").read_bytes() == b"first\n" + plain


#=== --typed ===#

def test_typed_keeps_a_struct_of_empty_name(hookscope_shapes, tmp_path):
    lines = [json.dumps({"function": "f", "args": [{"struct": "", "fields": [["a", {"shape": [2, n], "dtype":
                                                                                      "float32"}]]}], "kwargs": []})
             for n in (3, 4)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    typed = shapes(hookscope_shapes, "infer", "s.jsonl", "--typed", cwd=tmp_path)
    assert typed.returncode == 0, text(typed)
    assert json.loads(typed.stdout) == {"tuple": [{"struct": "", "fields": [["a", {"1": "DYNAMIC"}]]}]}


#=== options naming inputs that are not there ===#

@pytest.mark.parametrize("options,warning", [
    (["--batch", "nosuch,input_ids"], "'nosuch' (given a batch dimension) is no input of the calls "
                                      "(input_ids, attention_mask, past_key_values): it changes nothing"),
    (["--dim-name", "input_idz:1=seq"], "'input_idz' (given the label 'seq') is no input of the calls "
                                        "(input_ids, attention_mask, past_key_values): it changes nothing"),
], ids=["--batch", "--dim-name"])
def test_options_naming_unknown_inputs_warn(hookscope_shapes, options, warning):
    done = shapes(hookscope_shapes, "infer", "llm.jsonl", *options, cwd=DATA)
    assert done.returncode == 0 and f"hookscope-shapes: warning: {warning}\n" in text(done)[1], text(done)
    report = shapes(hookscope_shapes, "infer", "llm.jsonl", "--format", "report", *options, cwd=DATA)
    assert warning in text(report)[0]
    known = shapes(hookscope_shapes, "infer", "llm.jsonl", "--batch", "input_ids", "--dim-name", "input_ids:1=s",
                   cwd=DATA)
    assert "is no input" not in text(known)[1]


def test_value_if_missing_for_an_unknown_input_is_refused(hookscope_shapes):
    done = shapes(hookscope_shapes, "infer", "llm.jsonl", "--value-if-missing", 'nosuch={"int":1}', cwd=DATA)
    assert done.returncode == 1, text(done)
    assert "unexpected keyword argument 'nosuch' provided as a value_if_missing input" in text(done)[1]
    assert "(input_ids, attention_mask, past_key_values)" in text(done)[1]


def test_remove_inputs_naming_no_input_warns(hookscope_shapes, llm_summary, tmp_path):
    warning = ("hookscope-shapes: warning: --remove-inputs: no call gave an input named 'nosuch' and no parameter "
               "has that name: nothing removed for it\n")
    (tmp_path / "s.json").write_text(json.dumps(llm_summary))
    for source in (DATA / "llm.jsonl", tmp_path / "s.json"):
        done = shapes(hookscope_shapes, "infer", source, "--remove-inputs", "nosuch,attention_mask", cwd=tmp_path)
        assert done.returncode == 0 and warning in text(done)[1], text(done)
        assert "attention_mask" not in text(done)[0]  # the known one is removed
        known = shapes(hookscope_shapes, "infer", source, "--remove-inputs", "attention_mask", cwd=tmp_path)
        assert "--remove-inputs" not in text(known)[1]
