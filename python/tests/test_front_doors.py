"""The command and the Python API are two spellings of one front door (hookscope::load_engine): on every record file of
tests/data, every option and every format, and on summaries, they give identical output and the same warnings, or
the same refusal (the same sentence, exit status 1 for an InferenceError, 2 for any other error)."""
import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

import hookscope
from helpers import DATA, build_dir

FILES = sorted(p.name for p in DATA.glob("*.jsonl"))
FORMATS = [name for name, _ in hookscope.output_formats()] + ["typed"]
PROGRAM = "hookscope-shapes"


def cli() -> str:
    """hookscope-shapes as `pip install .` put it next to the extension (the same build), else the build dir's."""
    for candidate in (os.path.join(sys.prefix, "bin", PROGRAM), build_dir() / PROGRAM, shutil.which(PROGRAM)):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.fail("no hookscope-shapes: neither in the build dir nor installed with the package")


def run_cli(*argv, cwd=DATA):
    return subprocess.run([cli(), *map(str, argv)], capture_output=True, text=True, timeout=120, cwd=cwd)


def run_python(call, cwd=DATA):
    """(result, [warning sentences], exception) of a Python call, warnings recorded, run in `cwd` as the command is
    (messages name the sources as given)."""
    here = os.getcwd()
    os.chdir(cwd)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = call(), None
        except (ValueError, TypeError) as e:  # every hookscope error is one of these
            result, error = None, e
        finally:
            os.chdir(here)
    return result, [w.message for w in caught if issubclass(w.category, hookscope.RecordWarning)], error


def sentence(text: str) -> str:
    return text.removeprefix("hookscope: ")


# How the command spells the library's options; Python spells them as its keywords (hookscope._errors).
COMMAND_SPELLING = {
    "function": "--function", "store_n_calls": "--store-n-calls", "values_if_missing": "--value-if-missing",
    "signature_from": "--signature-from", "remove_inputs": "--remove-inputs", "batch_dimension_for": "--batch",
    "batch_dimension_for_all": "--batch-all", "dim_names": "--dim-names", "dim_labels": "--dim-name",
    "profile_phases": "--profiles", "candidate": "--index", "flat": "--flat", "as_args_kwargs": "--as-args-kwargs",
    "avoid_specialization": "--avoid-specialization",
}


def as_the_command_says(error) -> str:
    """A Python refusal's sentence with the options it names spelled as the command spells them: the two front
    doors refuse alike when this equals the command's sentence."""
    pieces = getattr(error, "pieces", None)
    if pieces:
        return "".join(text if option is None else COMMAND_SPELLING[option] for text, option in pieces)
    return sentence(str(error))


def shapes_answer(ds, fmt):
    """What the command prints of a DynamicShapes: the format on stdout, the warnings on stderr, as the library's
    table of output formats says for both front ends ("typed": --typed, the torch format's typed form)."""
    if fmt == "typed":
        return ds.write("torch", typed=True), list(ds.warnings_for("torch"))
    return ds.write(fmt), list(ds.warnings_for(fmt))


def arguments_answer(a):
    return a.to_json(), list(a.warnings)


def assert_same_answer(done, answer, python_warnings, error):
    """The command's stdout, stderr and status against the Python call's answer ((text, warnings)), its warnings
    issued, or its exception. The warnings met before a refusal are printed and issued alike."""
    warned = [f"{PROGRAM}: warning: {as_the_command_says(w)}" for w in python_warnings]
    lines = done.stderr.splitlines()
    if done.returncode != 0:
        assert error is not None, f"the command refused ({done.stderr!r}) and Python answered {answer!r}"
        printed = [line for line in lines if line.startswith(f"{PROGRAM}: warning: ")]
        refusal = [line for line in lines if not line.startswith(f"{PROGRAM}: warning: ")]
        assert refusal[:1] == [f"{PROGRAM}: {as_the_command_says(error)}"]
        assert printed == warned
        assert done.returncode == (1 if isinstance(error, hookscope.InferenceError) else 2), (done.stderr, repr(error))
        return
    assert error is None, f"Python raised {error!r}, the command answered (stderr {done.stderr!r})"
    text, result_warnings = answer
    assert done.stdout.rstrip("\n") == text.rstrip("\n")
    expected = warned + [f"{PROGRAM}: warning: {sentence(w)}" for w in result_warnings]
    assert sorted(lines) == sorted(expected)


# (the command's options, Python's keywords); the files without the inputs named get the same refusal or the
# same answer from both.
INFER_OPTIONS = [
    ([], {}),
    (["--dim-names"], {"dim_names": True}),
    (["--batch", "0"], {"batch": [0]}),
    (["--batch", "input_ids,attention_mask"], {"batch": ["input_ids", "attention_mask"]}),
    (["--batch-all"], {"batch_all": True}),
    (["--batch-all"], {"batch": True}),
    (["--store-n-calls", "all"], {"store_n_calls": None}),
    (["--store-n-calls", "1"], {"store_n_calls": 1}),
    (["--store-n-calls", "3"], {"store_n_calls": 3}),
    (["--profiles", "auto", "--dim-names"], {"profiles": "auto", "dim_names": True}),
    (["--remove-inputs", "attention_mask"], {"remove_inputs": ["attention_mask"]}),
    (["--value-if-missing", 'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}'],
     {"value_if_missing": {"pixel_values": {"shape": [0, 3, 8, 8], "dtype": "float32"}}}),
    (["--function", "Model::forward"], {"function": "Model::forward"}),
    (["--function", "no_such_function"], {"function": "no_such_function"}),
    (["--dim-name", "0:0=batch"], {"dim_names": {0: {0: "batch"}}}),
    (["--signature-from", "llm.jsonl"], {"signature_from": "llm.jsonl"}),
    (["--batch", "0", "--batch-all"], {"batch": [0], "batch_all": True}),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("argv,options", INFER_OPTIONS, ids=[" ".join(a) or "defaults" for a, _ in INFER_OPTIONS])
@pytest.mark.parametrize("name", FILES)
def test_infer(name, argv, options, fmt):
    done = run_cli("infer", name, *argv, *(["--typed"] if fmt == "typed" else ["--format", fmt]))
    answer = run_python(lambda: shapes_answer(hookscope.infer([name], **options), fmt))
    assert_same_answer(done, *answer)


ARGS_OPTIONS = [
    ([], {}),
    (["--index", "0"], {"index": 0}),
    (["--index", "2"], {"index": 2}),
    (["--index", "7"], {"index": 7}),
    (["--avoid-specialization"], {"avoid_specialization": True}),
    (["--flat"], {"flat": True}),
    (["--as-args-kwargs"], {"as_args_kwargs": True}),
    (["--store-n-calls", "all"], {"store_n_calls": None}),
    (["--store-n-calls", "all", "--index", "0"], {"store_n_calls": None, "index": 0}),
    (["--store-n-calls", "all", "--avoid-specialization"], {"store_n_calls": None, "avoid_specialization": True}),
    (["--index", "0", "--avoid-specialization"], {"index": 0, "avoid_specialization": True}),
    (["--flat", "--as-args-kwargs"], {"flat": True, "as_args_kwargs": True}),
    (["--value-if-missing", 'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}', "--as-args-kwargs"],
     {"value_if_missing": {"pixel_values": {"shape": [0, 3, 8, 8], "dtype": "float32"}}, "as_args_kwargs": True}),
    (["--remove-inputs", "attention_mask"], {"remove_inputs": ["attention_mask"]}),
    (["--signature-from", "llm.jsonl"], {"signature_from": "llm.jsonl"}),
]


@pytest.mark.parametrize("argv,options", ARGS_OPTIONS, ids=[" ".join(a) or "defaults" for a, _ in ARGS_OPTIONS])
@pytest.mark.parametrize("name", FILES)
def test_args(name, argv, options):
    done = run_cli("args", name, *argv)
    assert_same_answer(done, *run_python(lambda: arguments_answer(hookscope.infer_arguments([name], **options))))


SUMMARIZE_OPTIONS = [
    ([], {}),
    (["--function", "Model::forward"], {"function": "Model::forward"}),
    (["--value-if-missing", 'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}'],
     {"value_if_missing": {"pixel_values": {"shape": [0, 3, 8, 8], "dtype": "float32"}}}),
    (["--signature-from", "llm.jsonl"], {"signature_from": "llm.jsonl"}),
]


@pytest.mark.parametrize("argv,options", SUMMARIZE_OPTIONS, ids=[" ".join(a) or "defaults" for a, _ in SUMMARIZE_OPTIONS])
@pytest.mark.parametrize("name", FILES)
def test_summarize(name, argv, options):
    done = run_cli("summarize", name, *argv)
    assert_same_answer(done, *run_python(lambda: (hookscope.summarize([name], **options), [])))


# Files that summarise; their summaries are the inputs below.
SUMMARISED = ["decoder_kv.jsonl", "encoder.jsonl", "llm.jsonl", "optional.jsonl", "positional.jsonl"]


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    out = tmp_path_factory.mktemp("summaries")
    for name in SUMMARISED + ["encoder_part1.jsonl", "encoder_part2_crlf.jsonl"]:
        done = run_cli("summarize", name, "-o", out / (name + ".summary.json"))
        assert done.returncode == 0, done.stderr
    # A summary as a pretty printer leaves it is still a summary.
    pretty = json.dumps(json.loads((out / "llm.jsonl.summary.json").read_text()), indent=2)
    (out / "llm.pretty.summary.json").write_text(pretty + "\n")
    return out


SUMMARY_INPUTS = [[f"{n}.summary.json"] for n in SUMMARISED] + [
    ["encoder_part1.jsonl.summary.json", "encoder_part2_crlf.jsonl.summary.json"],
    ["llm.pretty.summary.json"],
    ["llm.jsonl.summary.json", "encoder.jsonl.summary.json"],  # two functions
    ["llm.jsonl.summary.json", str(DATA / "llm.jsonl")],       # a summary and records
]
SUMMARY_OPTIONS = [
    ([], {}),
    (["--dim-names"], {"dim_names": True}),
    (["--store-n-calls", "all"], {"store_n_calls": None}),
    (["--store-n-calls", "3"], {"store_n_calls": 3}),
    (["--value-if-missing", 'x={"int":1}'], {"value_if_missing": {"x": {"int": 1}}}),
    (["--signature-from", str(DATA / "llm.jsonl")], {"signature_from": DATA / "llm.jsonl"}),
    (["--function", "Model::forward"], {"function": "Model::forward"}),
    (["--remove-inputs", "attention_mask"], {"remove_inputs": ["attention_mask"]}),
]


@pytest.mark.parametrize("fmt", ["torch", "report"])
@pytest.mark.parametrize("argv,options", SUMMARY_OPTIONS, ids=[" ".join(a) or "defaults" for a, _ in SUMMARY_OPTIONS])
@pytest.mark.parametrize("inputs", SUMMARY_INPUTS, ids=["+".join(os.path.basename(i) for i in s) for s in SUMMARY_INPUTS])
def test_infer_on_summaries(summaries, inputs, argv, options, fmt):
    done = run_cli("infer", *inputs, *argv, "--format", fmt, cwd=summaries)
    assert_same_answer(done, *run_python(lambda: shapes_answer(hookscope.infer(inputs, **options), fmt), cwd=summaries))


@pytest.mark.parametrize("argv,options", [([], {}), (["--index", "0"], {"index": 0}),
                                          (["--avoid-specialization"], {"avoid_specialization": True})])
@pytest.mark.parametrize("inputs", SUMMARY_INPUTS[:3], ids=lambda s: "+".join(s))
def test_args_on_summaries(summaries, inputs, argv, options):
    done = run_cli("args", *inputs, *argv, cwd=summaries)
    assert_same_answer(done, *run_python(lambda: arguments_answer(hookscope.infer_arguments(inputs, **options)),
                                         cwd=summaries))


@pytest.mark.parametrize("source", ["missing.jsonl", "."], ids=["a missing file", "a directory"])
def test_unreadable_sources(source):
    done = run_cli("infer", source)
    _, _, error = run_python(lambda: hookscope.infer([DATA / source]))
    assert isinstance(error, hookscope.LoadError) and error.kind == "unreadable"
    assert done.returncode == 2 and "cannot" in done.stderr
    assert sentence(str(error)).split(": ", 1)[1] == done.stderr.split(": ", 2)[2].strip()


def test_load_error_kinds():
    """Each refusal of the front door says its kind: what a front end decides from, never the sentence."""
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer([DATA / "two_functions.jsonl"])
    assert e.value.kind == "several_functions"
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer([DATA / "llm.jsonl"], function="nope")
    assert e.value.kind == "no_such_function"
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer_arguments([DATA / "llm.jsonl"], store_n_calls=None, index=0)
    assert e.value.kind == "bad_option"


def test_inferred_arguments_name_the_call_chosen():
    """Property: the call reported is the stored call whose inputs the arguments start from, for every index."""
    engine = hookscope.load([DATA / "decoder_kv.jsonl"], store_n_calls=8)
    info = engine.info()
    for i, call in enumerate(info["calls"]):
        chosen = engine.infer_arguments(candidate=i)
        assert chosen.call == i
        leaves = json.loads(call["inputs"])["kwargs"]
        arguments = dict(json.loads(chosen.json)["dict"])
        assert arguments["input_ids"] == dict(leaves)["input_ids"]
    assert engine.infer_arguments(candidate=json.dumps(json.loads(info["calls"][0]["inputs"]))).call is None


# Findings of an adversarial pass over the Python front door, each kept as a test.

def test_a_file_name_that_is_not_utf8(tmp_path):
    name = os.fsdecode(b"n\xffame.jsonl")
    shutil.copy(DATA / "encoder.jsonl", tmp_path / name)
    done = run_cli("infer", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert hookscope.infer(tmp_path / name).to_json() == done.stdout.strip()
    assert hookscope.infer(os.fsencode(tmp_path / name)).to_json() == done.stdout.strip()


def test_a_read_error_is_a_load_error():
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer("/proc/self/mem")
    assert e.value.kind == "unreadable"


@pytest.mark.parametrize("key", ["0", 0, "1", 1])
def test_a_key_written_as_digits_is_a_position(key):
    """As on the command line (--value-if-missing 1=JSON, --dim-name 0:0=b): "1" and 1 are the same position."""
    placeholder = {"shape": [0, 3, 8, 8], "dtype": "float32"}
    done = run_cli("args", "optional.jsonl", "--value-if-missing", f"{key}={json.dumps(placeholder)}")
    assert_same_answer(done, *run_python(lambda: arguments_answer(
        hookscope.infer_arguments(["optional.jsonl"], value_if_missing={key: placeholder}))))
    done = run_cli("infer", "positional.jsonl", "--dim-name", f"{key}:0=b")
    assert_same_answer(done, *run_python(lambda: shapes_answer(
        hookscope.infer(["positional.jsonl"], dim_names={key: {0: "b"}}), "torch")))


@pytest.mark.parametrize("options, sentence", [
    ({"dim_names": {"x": {0: "é"}}}, "dim_names: the label 'é' is not an identifier"),
    ({"dim_names": {"x": {0: "a-b"}}}, "dim_names: the label 'a-b' is not an identifier"),
    ({"store_n_calls": 0}, "store_n_calls: expected at least 1 (or all)"),
    ({"store_n_calls": -1}, "store_n_calls: expected a non-negative integer, got '-1'"),
    ({"store_n_calls": 2**70}, f"store_n_calls: expected a non-negative integer, got '{2**70}'"),
    ({"batch": [0], "batch_all": True}, "batch and batch_all exclude each other"),
    ({"profiles": 2}, "profiles: expected 1 or auto, got '2'"),
    ({"profiles": True}, "profiles: expected 1 or auto, got 'True'"),
    ({"profiles": "Auto"}, "profiles: expected 1 or auto, got 'Auto'"),
    ({"store_n_calls": 2**64 - 1}, f"store_n_calls: {2**64 - 1} is too large (all keeps every call)"),
    ({"value_if_missing": {"": {"int": 1}}}, "value_if_missing: empty input name"),
    ({"dim_names": {"": {0: "b"}}}, "dim_names: empty input name"),
    ({"value_if_missing": {"x": "{bad"}}, "value_if_missing x={bad: "),
    ({"value_if_missing": {"x": float("nan")}}, "value_if_missing x: not a value of the record encoding"),
    ({"value_if_missing": {2**40: {"int": 1}}}, "a position is an int from 0 to 2**30"),
    ({"dim_names": {-3: {0: "b"}}}, "a position is an int from 0 to 2**30, got -3"),
    ({"dim_names": {"x": {2**70: "b"}}}, f"dim_names: expected a non-negative integer, got '{2**70}'"),
])
def test_bad_options_are_load_errors_of_kind_bad_option(options, sentence):
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer([DATA / "encoder.jsonl"], **options)
    assert e.value.kind == "bad_option"
    assert sentence in str(e.value)


@pytest.mark.parametrize("options, sentence", [
    ({"index": -1}, "index: expected a non-negative integer, got '-1'"),
    ({"index": 2**70}, f"index: expected a non-negative integer, got '{2**70}'"),
    ({"index": 2**64 - 1}, f"index: {2**64 - 1} is too large"),
    ({"index": 0, "avoid_specialization": True}, "avoid_specialization and index exclude each other"),
    ({"flat": True, "as_args_kwargs": True}, "as_args_kwargs and flat exclude each other"),
])
def test_bad_argument_options_are_refused_before_reading(options, sentence):
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer_arguments(["/nonexistent.jsonl"], **options)  # refused before any file is opened
    assert e.value.kind == "bad_option" and sentence in str(e.value)


@pytest.mark.parametrize("argv, options", [
    (["infer", "encoder.jsonl", "--dim-name", "x:0=a-b"], {"dim_names": {"x": {0: "a-b"}}}),
    (["infer", "encoder.jsonl", "--store-n-calls", "0"], {"store_n_calls": 0}),
    (["infer", "encoder.jsonl", "--store-n-calls", "-1"], {"store_n_calls": -1}),
    (["infer", "encoder.jsonl", "--batch", "0", "--batch-all"], {"batch": [0], "batch_all": True}),
    (["infer", "encoder.jsonl", "--profiles", "2"], {"profiles": 2}),
    (["infer", "encoder.jsonl", "--store-n-calls", "18446744073709551615"], {"store_n_calls": 2**64 - 1}),
    (["infer", "encoder.jsonl", "--value-if-missing", "=null"], {"value_if_missing": {"": None}}),
    (["infer", "encoder.jsonl", "--dim-name", ":0=b"], {"dim_names": {"": {0: "b"}}}),
    (["infer", "encoder.jsonl", "--dim-name", "x:18446744073709551615=b"], {"dim_names": {"x": {2**64 - 1: "b"}}}),
    (["args", "encoder.jsonl", "--index", "18446744073709551615"], {"index": 2**64 - 1}),
    (["args", "encoder.jsonl", "--index", "0", "--avoid-specialization"], {"index": 0, "avoid_specialization": True}),
    (["args", "encoder.jsonl", "--flat", "--as-args-kwargs"], {"flat": True, "as_args_kwargs": True}),
    (["args", "encoder.jsonl", "--index", "0", "--store-n-calls", "all"], {"index": 0, "store_n_calls": None}),
])
def test_option_refusals_name_each_front_doors_spelling(argv, options):
    """One rule, two spellings: the command names its flags, Python its keywords, and the sentence is the same."""
    fn = hookscope.infer_arguments if argv[0] == "args" else hookscope.infer
    with pytest.raises(hookscope.LoadError) as e:
        fn([DATA / "encoder.jsonl"], **options)
    assert e.value.kind == "bad_option"
    assert not any(part.startswith("--") for part in str(e.value).split()), str(e.value)
    done = run_cli(*argv)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"{PROGRAM}: {as_the_command_says(e.value)}"


@pytest.mark.parametrize("options", [{"index": True}, {"index": "0"}, {"store_n_calls": True},
                                     {"batch": "input_ids"}, {"dim_names": "yes"}])
def test_wrong_types_are_type_errors_naming_the_keyword(options):
    with pytest.raises(TypeError, match="hookscope: "):
        if "index" in options:
            hookscope.infer_arguments([DATA / "encoder.jsonl"], **options)
        else:
            hookscope.infer([DATA / "encoder.jsonl"], **options)


def test_batch_false_is_no_batch():
    assert hookscope.infer([DATA / "encoder.jsonl"], batch=False).to_json() == \
        hookscope.infer([DATA / "encoder.jsonl"]).to_json()


def test_merge_summaries_refuses_one_text():
    text = hookscope.summarize([DATA / "encoder.jsonl"])
    with pytest.raises(TypeError, match="wrap it in a list"):
        hookscope.merge_summaries(text)
    assert hookscope.merge_summaries([text]).num_obs == 3


def test_signature_from_takes_the_function_read(tmp_path):
    full = [{"function": "encode", "signature": [{"name": "tokens"}], "args": [{"shape": [1], "dtype": "int64"}],
             "kwargs": []},
            {"function": "decode", "signature": [{"name": "hidden"}], "args": [{"shape": [1], "dtype": "float32"}],
             "kwargs": []},
            {"function": "decode", "args": [{"shape": [2], "dtype": "float32"}], "kwargs": []}]
    (tmp_path / "full.jsonl").write_text("".join(json.dumps(r) + "\n" for r in full))
    (tmp_path / "part.jsonl").write_text(json.dumps(full[2]) + "\n")
    summary = json.loads(hookscope.summarize(tmp_path / "part.jsonl", signature_from=tmp_path / "full.jsonl"))
    assert [p["name"] for p in summary["signature"]] == ["hidden"]
    with pytest.raises(hookscope.LoadError, match="holds no record of 'decode'"):
        hookscope.summarize(tmp_path / "part.jsonl", signature_from=DATA / "encoder.jsonl")
