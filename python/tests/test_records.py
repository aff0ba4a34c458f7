"""hookscope.read_records / hookscope.infer on record files give what `hookscope-shapes` prints, errors included."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import hookscope
from helpers import DATA, build_dir


def cli() -> str:
    """hookscope-shapes as `pip install .` put it next to the extension (the same build), else the build dir's."""
    for candidate in (os.path.join(sys.prefix, "bin", "hookscope-shapes"), build_dir() / "hookscope-shapes",
                      shutil.which("hookscope-shapes")):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.fail("no hookscope-shapes: neither in the build dir nor installed with the package")


def run_cli(*argv):
    return subprocess.run([cli(), *map(str, argv)], capture_output=True, text=True, timeout=60)


CASES = [
    ("llm.jsonl", [], {}),
    ("llm.jsonl", ["--dim-names", "--batch", "input_ids,attention_mask"],
     {"dim_names": True, "batch": {"input_ids", "attention_mask"}}),
    ("encoder.jsonl", ["--dim-names"], {"dim_names": True}),
    ("encoder.jsonl", ["--store-n-calls", "all"], {"store_n_calls": None}),
    ("positional.jsonl", ["--batch-all"], {"batch_all": True}),
    ("decoder_kv.jsonl", ["--dim-names"], {"dim_names": True}),
    ("decoder_kv.jsonl", ["--dim-names", "--profiles", "auto"], {"dim_names": True, "profiles": "auto"}),
    ("optional.jsonl", ["--value-if-missing", 'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}'],
     {"value_if_missing": {"pixel_values": {"shape": [0, 3, 8, 8], "dtype": "float32"}}}),
]


@pytest.mark.parametrize("name,argv,options", CASES)
@pytest.mark.parametrize("fmt", ["torch", "trtexec", "ort", "report", "onnx", "typed"])
def test_infer_equals_cli(name, argv, options, fmt):
    done = run_cli("infer", DATA / name, *argv, *(["--typed"] if fmt == "typed" else ["--format", fmt]))
    assert done.returncode == 0, done.stderr
    ds = hookscope.infer([DATA / name], **options)
    text = getattr(ds, {"torch": "to_json", "trtexec": "to_trtexec", "ort": "to_ort_options", "report": "report",
                        "onnx": "to_onnx", "typed": "to_typed_json"}[fmt])()
    assert done.stdout.rstrip("\n") == text.rstrip("\n")


def test_infer_arguments_equals_cli():
    for argv, options in (([], {}), (["--as-args-kwargs"], {"as_args_kwargs": True}), (["--flat"], {"flat": True}),
                          (["--index", "0"], {"index": 0}),
                          (["--avoid-specialization"], {"avoid_specialization": True})):
        done = run_cli("args", DATA / "llm.jsonl", *argv)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == hookscope.infer_arguments([DATA / "llm.jsonl"], **options).value


def test_shards_read_as_one_stream():
    parts = [DATA / "encoder_part1.jsonl", DATA / "encoder_part2_crlf.jsonl"]
    done = run_cli("infer", *parts)
    assert hookscope.infer(parts).to_json() == done.stdout.strip()


def test_read_records():
    records = hookscope.read_records(DATA / "llm.jsonl")
    assert records[0]["function"] == "Model::forward"
    assert [p["name"] for p in records[0]["signature"]] == ["input_ids", "attention_mask", "past_key_values"]
    assert dict(records[0]["kwargs"])["input_ids"] == {"shape": [2, 7], "dtype": "int64"}
    _, warnings = hookscope.read_records(DATA / "cut_last_line.jsonl", with_warnings=True)
    assert warnings and "cut_last_line.jsonl" in warnings[0]


def test_a_line_over_the_limit_is_skipped_with_a_record_warning(tmp_path):
    """Another producer's line longer than the record format's limit (hookscope's writers never write one): the
    readers skip it, say so (file, line, length) and read every other call."""
    limit = hookscope._engine.MAX_RECORD_LINE_BYTES
    start, end = b'{"function":"Model::forward","args":[],"kwargs":[["input_ids",{"str":"', b'"}]]}'
    lines = (DATA / "llm.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(lines[:2]) + start + b"x" * (limit + 1 - len(start) - len(end)) + end + b"\n" +
                     b"".join(lines[2:]))
    warning = (f"{path}:3: skipped a line of {limit + 1} bytes, longer than the reader's limit of {limit} "
               "(hookscope::max_record_line_bytes, which hookscope's writers keep to)")
    records, warnings = hookscope.read_records(path, with_warnings=True)
    assert records == hookscope.read_records(DATA / "llm.jsonl") and warnings == [warning]
    with pytest.warns(hookscope.RecordWarning) as caught:
        assert len(hookscope.read_records(path)) == 4
    assert [str(w.message) for w in caught] == [warning]
    alone = hookscope.infer(DATA / "llm.jsonl", store_n_calls=None).to_json()
    with pytest.warns(hookscope.RecordWarning) as caught:
        assert hookscope.infer(path, store_n_calls=None).to_json() == alone
    assert [str(w.message) for w in caught] == [warning]


def test_notes_of_dropped_records_are_skipped_with_a_record_warning_each():
    """dropped_note.jsonl is encoder.jsonl with notes of records its writer dropped between its records: each note is
    a RecordWarning (the sentence hookscope-shapes prints), the records and every answer are encoder.jsonl's, and the
    counts per function come through the binding as numbers."""
    path, plain = DATA / "dropped_note.jsonl", DATA / "encoder.jsonl"
    notes = [(1, 1234, "encode", "buffer_full"), (3, 7, "decode", "buffer_full"), (5, 1, "encode", "too_large_at_signal"),
             (7, 5, "encode", "buffer_full")]
    expected = [f"{path}:{line}: the writer dropped {n} record{'s' if n != 1 else ''} of '{f}' ({reason})"
                for line, n, f, reason in notes]
    records, warnings = hookscope.read_records(path, with_warnings=True)
    assert records == hookscope.read_records(plain) and warnings == expected
    with pytest.warns(hookscope.RecordWarning) as caught:
        assert hookscope.read_records(path) == records
    assert [str(w.message) for w in caught] == expected
    for store_n_calls in (3, None):
        with pytest.warns(hookscope.RecordWarning) as caught:
            ds = hookscope.infer(path, store_n_calls=store_n_calls)
        assert [str(w.message) for w in caught] == expected
        assert ds.to_json() == hookscope.infer(plain, store_n_calls=store_n_calls).to_json()
        assert ds.report() == hookscope.infer(plain, store_n_calls=store_n_calls).report()
    with pytest.warns(hookscope.RecordWarning):
        assert hookscope.summarize(path) == hookscope.summarize(plain)
    with pytest.warns(hookscope.RecordWarning):
        assert hookscope.load(path).num_obs == 3
    dropped = {"encode": 1240, "decode": 7}
    assert hookscope._engine.read_records([os.fsencode(path)])[2] == dropped
    assert hookscope._engine.read_records([os.fsencode(plain)])[2] == {}
    loaded = hookscope._engine.load([os.fsencode(path)])
    assert loaded.dropped_records == dropped and loaded.warnings == expected


def test_a_malformed_note_is_a_record_error(tmp_path):
    path = tmp_path / "bad_note.jsonl"
    path.write_text('{"function":"f","dropped":{"count":0,"reason":"buffer_full"}}\n', encoding="utf-8")
    with pytest.raises(hookscope.RecordError, match=r"bad_note.jsonl:1: \$.dropped.count: expected a count >= 1, "
                                                    r"found 0$"):
        hookscope.read_records(path)


@pytest.mark.parametrize("name", ["bad_dtype.jsonl", "bad_kind.jsonl", "bad_negative_dim.jsonl", "bad_not_json.jsonl",
                                  "bad_signature_change.jsonl", "rank_mismatch.jsonl"])
def test_errors_are_exceptions_with_the_cli_sentence(name):
    done = run_cli("infer", DATA / name)
    assert done.returncode != 0
    with pytest.raises((hookscope.FormatError, hookscope.InferenceError)) as e:
        hookscope.infer([DATA / name])
    # hookscope-shapes prints "hookscope-shapes: <the sentence>", the library's "hookscope: " prefix removed.
    sentence = str(e.value).removeprefix("hookscope: ")
    assert f"hookscope-shapes: {sentence}" in done.stderr


def test_record_error_is_a_format_error_and_value_error():
    with pytest.raises(hookscope.RecordError) as e:
        hookscope.read_records(DATA / "bad_dtype.jsonl")
    assert isinstance(e.value, hookscope.FormatError) and isinstance(e.value, ValueError)
    assert "bad_dtype.jsonl:" in str(e.value)


def test_no_call_is_an_inference_error():
    with pytest.raises(hookscope.InferenceError, match="no call recorded in"):
        hookscope.infer([DATA / "empty.jsonl"])


def test_two_functions_need_a_choice():
    with pytest.raises(ValueError, match="several functions"):
        hookscope.infer([DATA / "two_functions.jsonl"])
    names = {r["function"] for r in hookscope.read_records(DATA / "two_functions.jsonl")}
    for name in names:
        done = run_cli("infer", DATA / "two_functions.jsonl", "--function", name)
        assert hookscope.infer([DATA / "two_functions.jsonl"], function=name).to_json() == done.stdout.strip()


def test_tiny_llm_demo_records_equal_cli(tmp_path):
    """The C++ demo (examples/tiny_llm) records model::forward with HOOKSCOPE_RECORD; Python reads the same answer."""
    demo = build_dir() / "examples" / "tiny_llm"
    if not os.access(demo, os.X_OK):
        pytest.skip(f"the C++ demo is not built in {build_dir()} (tools/test.sh builds it; Eigen is needed)")
    path = tmp_path / "forward.jsonl"
    env = dict(os.environ, HOOKSCOPE_RECORD=f"*model::forward={path}")  # registry names are qualified
    done = subprocess.run([str(demo)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    records = hookscope.read_records(path)
    assert records and all(r["function"].endswith("model::forward") for r in records)
    for argv, options in (([], {}), (["--dim-names"], {"dim_names": True}), (["--store-n-calls", "all"],
                                                                             {"store_n_calls": None})):
        out = run_cli("infer", path, *argv)
        assert out.returncode == 0, out.stderr
        assert hookscope.infer([path], **options).to_json() == out.stdout.strip()
        report = run_cli("infer", path, *argv, "--format", "report")
        assert hookscope.infer([path], **options).report().rstrip() == report.stdout.rstrip()
