"""hookscope-shapes' TensorRT syntaxes and its file arguments: inputs
whose paths flatten to one name, names a shell reads, a summary that is not JSON, empty paths and a destination whose
name is as long as a file system allows. Each output is checked by its consumer's rules, not against the code's."""
import json
import os
import subprocess

import pytest

from support import DATA

CRASH_MARKS = ("Sanitizer", "runtime error", "terminate called", "Segmentation", "Aborted")


def shapes(program, *argv, cwd):
    done = subprocess.run([program, *map(str, argv)], capture_output=True, timeout=60, cwd=cwd,
                          env={k: v for k, v in os.environ.items() if not k.startswith("HOOKSCOPE_")})
    assert done.returncode in (0, 1, 2) and not any(m in done.stderr.decode("utf-8", "replace") for m in CRASH_MARKS)
    return done


def tensor(shape):
    return {"shape": shape, "dtype": "float32"}


def write_records(path, calls):
    path.write_text("".join(json.dumps({"function": "f", "args": [], "kwargs": kwargs}) + "\n" for kwargs in calls))


def encoder_records(tmp_path):
    path = tmp_path / "in.jsonl"
    write_records(path, [[["x", tensor([1, 5])]], [["x", tensor([2, 9])]]])
    return path


#=== the TensorRT syntaxes ===#

# Two keyword arguments whose tensors flatten to one name: printed twice, trtexec kept one entry, ONNX Runtime read
# the second as another profile, and both Torch-TensorRT Inputs carried the second one's numbers.
COLLISIONS = [
    ("a key a.0 beside a list a", [["a.0", tensor([1, 2])], ["a", {"list": [tensor([3, 4])]}]],
     [["a.0", tensor([2, 2])], ["a", {"list": [tensor([3, 5])]}]], "a.0", "['a.0'] and ['a', '0']"),
    ("a key a.b.c beside a dict a.b", [["a.b.c", tensor([1, 2])], ["a.b", {"dict": [["c", tensor([3, 4])]]}]],
     [["a.b.c", tensor([2, 2])], ["a.b", {"dict": [["c", tensor([3, 5])]]}]], "a.b.c", "['a.b.c'] and ['a.b', 'c']"),
]


@pytest.mark.parametrize("fmt,consumer", [("trtexec", "trtexec"), ("ort", "ONNX Runtime"),
                                          ("torch-tensorrt", "Torch-TensorRT")])
@pytest.mark.parametrize("what,first,second,name,paths", COLLISIONS, ids=[c[0] for c in COLLISIONS])
def test_two_inputs_of_one_flattened_name_are_refused(hookscope_shapes, tmp_path, fmt, consumer, what, first, second,
                                                      name, paths):
    write_records(tmp_path / "in.jsonl", [first, second])
    done = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", fmt, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == b""
    assert (f"hookscope-shapes: tensor inputs 0 and 1 (paths {paths}) are both named '{name}', which {consumer} "
            f"cannot tell apart; rename one of them") in done.stderr.decode()


@pytest.mark.parametrize("name", ["a$b", "a;b", "a&b", "a`b", "a\\b", "a*", "a?", "a[0]", "f(x)", "a<b",
                                  "a>b", "a!b"])
def test_a_name_a_shell_reads_is_refused_by_trtexec_and_kept_by_the_others(hookscope_shapes, tmp_path, name):
    """trtexec's line is pasted into a shell unquoted: `$`, `;`, a glob... would change the command. ONNX Runtime's
    value (a provider option string) and Torch-TensorRT's JSON carry the name as it is."""
    write_records(tmp_path / "in.jsonl", [[[name, tensor([1, 3])]], [[name, tensor([2, 3])]]])
    trt = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "trtexec", cwd=tmp_path)
    assert trt.returncode == 1 and trt.stdout == b""
    assert "which a shell reads in the trtexec command line" in trt.stderr.decode()
    ort = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "ort", cwd=tmp_path)
    assert ort.returncode == 0
    # ONNX Runtime's parser: split at ',', the name ends at the first ':'.
    values = dict(line.split("=", 1) for line in ort.stdout.decode().splitlines())
    assert [entry.split(":", 1)[0] for entry in values["trt_profile_min_shapes"].split(",")] == [name]
    torch_trt = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "torch-tensorrt", cwd=tmp_path)
    assert torch_trt.returncode == 0
    assert json.loads(torch_trt.stdout)[0]["name"] == name


def test_a_name_with_a_bar_is_refused_by_trtexec_and_ort_and_kept_by_torch_tensorrt(hookscope_shapes, tmp_path):
    """onnxruntime_perf_test's `-i "key|value ..."` splits at every '|', and a shell at the first: only the JSON of
    Torch-TensorRT carries the name."""
    write_records(tmp_path / "in.jsonl", [[["a|b", tensor([1, 3])]], [["a|b", tensor([2, 3])]]])
    trt = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "trtexec", cwd=tmp_path)
    assert trt.returncode == 1 and "contains '|', which a shell reads" in trt.stderr.decode()
    ort = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "ort", cwd=tmp_path)
    assert ort.returncode == 1 and ort.stdout == b""
    assert "contains '|', which onnxruntime_perf_test's -i option reads as key|value" in ort.stderr.decode()
    torch_trt = shapes(hookscope_shapes, "infer", "in.jsonl", "--format", "torch-tensorrt", cwd=tmp_path)
    assert torch_trt.returncode == 0 and json.loads(torch_trt.stdout)[0]["name"] == "a|b"


#=== a summary that is not JSON ===#

def test_a_summary_that_is_not_json_names_line_and_column(hookscope_shapes, tmp_path):
    """A summary printed by jq spans lines: the error says where, as a record file's errors do."""
    done = shapes(hookscope_shapes, "summarize", encoder_records(tmp_path), "-o", "s.json", cwd=tmp_path)
    assert done.returncode == 0
    lines = json.dumps(json.loads((tmp_path / "s.json").read_text()), indent=1).splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith('"calls"'))
    lines[at] = lines[at].replace(",", ",,")  # the second ',' is the syntax error
    column = lines[at].index(",,") + 2
    (tmp_path / "bad.json").write_text("\n".join(lines) + "\n")
    done = shapes(hookscope_shapes, "infer", "bad.json", cwd=tmp_path)
    assert done.returncode == 2
    assert (f"hookscope-shapes: bad.json: not a valid summary: not JSON: syntax error at line {at + 1}, "
            f"column {column}") in done.stderr.decode()


#=== file arguments ===#

@pytest.mark.parametrize("argv,said", [
    (["infer", ""], "an empty input file name"),
    (["infer", "--", ""], "an empty input file name"),
    (["summarize", "IN", "-o", ""], "-o: an empty file name"),
    (["summarize", "IN", "--output="], "--output: an empty file name"),
    (["summarize", "IN", "--signature-from", "", "-o", "/dev/null"], "--signature-from: an empty file name"),
])
def test_an_empty_path_is_a_usage_error_naming_the_option(hookscope_shapes, tmp_path, argv, said):
    """An unset shell variable ("$OUT") gave ": cannot write: No such file or directory", naming nothing."""
    records = encoder_records(tmp_path)
    done = shapes(hookscope_shapes, *[str(records) if a == "IN" else a for a in argv], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"hookscope-shapes: {said}")
    assert list(tmp_path.iterdir()) == [records]  # nothing written, no temporary left


@pytest.mark.parametrize("length", [247, 248, 255])
def test_o_onto_a_name_as_long_as_the_file_system_allows(hookscope_shapes, tmp_path, length):
    """The temporary beside the destination is named after it: with the destination's name near NAME_MAX (255),
    '.' + name + '.XXXXXX' was too long, and a valid -o was refused ("File name too long")."""
    records = encoder_records(tmp_path)
    name = "s" * (length - 5) + ".json"
    assert len(name) == length
    done = shapes(hookscope_shapes, "summarize", records, "-o", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first = (tmp_path / name).read_bytes()
    assert json.loads(first)["format"] == "hookscope-shapes-summary"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([records.name, name])  # the temporary renamed
    (tmp_path / name).write_text("old")
    again = shapes(hookscope_shapes, "summarize", records, "-o", name, cwd=tmp_path)  # replacing a file of that name
    assert again.returncode == 0 and (tmp_path / name).read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([records.name, name])


#=== --dim-name naming a dimension that takes no label ===#

@pytest.mark.parametrize("options,warning", [
    # encoder records: x is [1|2, 5|9, 16]; its dim 2 is static, it has no dim 9.
    (["--dim-name", "x:2=width"], "the label 'width' names no dimension: dimension 2 of 'x' is static, or past the "
                                  "rank, in every call: it changes nothing"),
    (["--dim-name", "x:9=width"], "the label 'width' names no dimension: dimension 9 of 'x' is static, or past the "
                                  "rank, in every call: it changes nothing"),
    (["--dim-name", "x:0=a", "--dim-name", "x:0=b"], "dimension 0 of 'x' is given the label 'a' and then 'b': the "
                                                     "first is kept"),
], ids=["a static dim", "past the rank", "two labels"])
def test_a_label_that_names_nothing_warns(hookscope_shapes, tmp_path, options, warning):
    """The unknown-input warnings covered a wrong KEY only: a wrong DIM, or a second label, changed nothing silently."""
    write_records(tmp_path / "in.jsonl", [[["x", tensor([1, 5, 16])]], [["x", tensor([2, 9, 16])]]])
    done = shapes(hookscope_shapes, "infer", "in.jsonl", *options, cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr.decode() == f"hookscope-shapes: warning: {warning}\n"
    # The first label of dim 0 is taken; a label for a dim that takes none leaves the automatic names.
    assert json.loads(done.stdout)["x"] == ({"0": "a", "1": "x_dim_1"} if "then" in warning else
                                           {"0": "x_dim_0", "1": "x_dim_1"})


@pytest.mark.parametrize("options", [["--dim-name", "x:1=seq"], ["--dim-name", "x:0=a", "--dim-name", "x:0=a"],
                                     ["--dim-name", "x:0=b", "--dim-name", "x:1=s"]])
def test_a_label_that_names_a_dynamic_dim_is_quiet(hookscope_shapes, tmp_path, options):
    write_records(tmp_path / "in.jsonl", [[["x", tensor([1, 5, 16])]], [["x", tensor([2, 9, 16])]]])
    done = shapes(hookscope_shapes, "infer", "in.jsonl", *options, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == b""


#=== a stored call that contradicts its argument's leaf count ===#

@pytest.mark.parametrize("change", ["one more", "one fewer"])
def test_a_stored_call_with_another_leaf_count_is_refused(hookscope_shapes, tmp_path, change):
    """decoder_kv's cache is a pair in every call (leaf_count 2, no count conflict): a stored call whose pair has
    three or one tensors was read, and changed the profile's opt (a wrong answer from a contradiction)."""
    done = shapes(hookscope_shapes, "summarize", DATA / "decoder_kv.jsonl", "-o", "s.json", cwd=tmp_path)
    assert done.returncode == 0
    doc = json.loads((tmp_path / "s.json").read_text())
    at = next(i for i, combo in enumerate(doc["combinations"]) if combo[0] != doc["best"])
    call = doc["stored_calls"][doc["combinations"][at][0]]
    cache = next(value for key, value in call["kwargs"] if key == "past_key_values")["tuple"]
    cache.append(cache[0]) if change == "one more" else cache.pop()
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    done = shapes(hookscope_shapes, "infer", "bad.json", "--format", "trtexec", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == b""
    stderr = done.stderr.decode()
    assert stderr.count("hookscope") == 1, stderr  # the program's name only: a quoted sentence has no prefix
    assert (f"bad.json: not a valid summary: $.combinations[{at}][0]: it does not fit the summaries of the arguments: "
            f"named argument 'past_key_values' has {3 if change == 'one more' else 1} flattened leaves but "
            f"previously got 2") in stderr
