"""The libtorch_attention example's output: its structure and deterministic content, never timings.

Runs the program with a record file in a temporary directory, then checks: every generation step's shapes (prefill
and decode steps of batch 1 x 7 and batch 2 x 5 prompts, the KV cache growing by one position per step), the KV cache
check, and with hooks on: the JSON Lines record (one line per call, shapes equal to the printed steps), the dynamic
shapes in every format (batch and sequence dims of input_ids and attention_mask dynamic, the cache tensors dynamic
in batch and past length only, labels shared), and that hookscope-shapes infers the same from the record file.
"""
import json
import os
import re

import pytest

from support import Checks, run

VOCAB, HEADS, HEAD_DIM = 32, 2, 8
PROMPTS = [(1, 7), (2, 5)]
NEW_TOKENS = 3
SECTIONS = ["== 1. Generation", "== 2. Recording", "== 3. Dynamic shapes"]
STEP = re.compile(r"^    (prefill|decode)\s+input_ids (\S+)\s+attention_mask (\S+)\s+past (\S+)\s+-> logits (\S+)$")
PROMPT = re.compile(r"^  batch (\d+), prompt of (\d+) tokens, (\d+) new tokens$")
COMPILED_OUT = "  (hooks are compiled out in this build: nothing is recorded, so there is no shape to infer)"
PARAMS = ["input_ids", "attention_mask", "past_key_values"]
TENSOR_NAMES = ["input_ids", "attention_mask", "past_key_values.0", "past_key_values.1"]
CLI = ["--store-n-calls", "all", "--batch", "input_ids,attention_mask", "--dim-names"]


def checked_run(argv):
    done = run(argv, timeout=120)
    assert done.returncode == 0, f"{argv} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done


class Output:
    def __init__(self, record, lines):
        self.record, self.lines = record, lines


@pytest.fixture(scope="module")
def output(libtorch_attention, tmp_path_factory):
    record = str(tmp_path_factory.mktemp("libtorch") / "forward.jsonl")
    return Output(record, checked_run([libtorch_attention, record]).stdout.splitlines())


@pytest.fixture(scope="module")
def enabled(hooks_enabled):
    if not hooks_enabled:
        pytest.skip("-Dhooks=false compiles the observables out: nothing is recorded, no shape inferred "
                    "(test_hooks_compiled_out checks that)")


def dims(*d):
    return "x".join(str(x) for x in d)


def expected_steps():
    """(kind, input_ids, attention_mask, past, logits) of every forward call, in order."""
    steps = []
    for batch, length in PROMPTS:
        steps.append(("prefill", dims(batch, length), dims(batch, length), dims(batch, HEADS, 0, HEAD_DIM),
                      dims(batch, length, VOCAB)))
        for k in range(1, NEW_TOKENS):
            past = length + k - 1
            steps.append(("decode", dims(batch, 1), dims(batch, past + 1), dims(batch, HEADS, past, HEAD_DIM),
                          dims(batch, 1, VOCAB)))
    return steps


def section(lines, index):
    starts = [i for i, line in enumerate(lines) if line.startswith(SECTIONS[index])]
    assert len(starts) == 1, f"one section '{SECTIONS[index]}'"
    start = starts[0]
    ends = [i for i, line in enumerate(lines) if i > start and line.startswith("== ")]
    return lines[start + 1:ends[0] if ends else len(lines)]


def indented_block(body, title):
    i = body.index(title)
    block = []
    for line in body[i + 1:]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    assert block, f"something under '{title}'"
    return block


def profile(text):
    """{name: shape} of one trtexec / ORT list 'a:1x2,b:3x4'."""
    return dict(item.split(":", 1) for item in text.split(","))


def shape_of(value):
    assert isinstance(value, dict) and "shape" in value, f"a tensor: {value}"
    return dims(*value["shape"])


# --- section 1, both modes ---

def test_prompts(output):
    body = section(output.lines, 0)
    prompts = [tuple(int(g) for g in m.groups()) for m in map(PROMPT.match, body) if m]
    assert prompts == [(b, n, NEW_TOKENS) for b, n in PROMPTS], f"the prompts, in order: {prompts}"


def test_step_shapes(output):
    steps = [m.groups() for m in map(STEP.match, section(output.lines, 0)) if m]
    assert steps == expected_steps(), ("the shapes of every step:\n  got      " + "\n           ".join(map(str, steps)) +
                                       "\n  expected " + "\n           ".join(map(str, expected_steps())))


def test_kv_cache_check(output):
    checks = [line for line in section(output.lines, 0) if "KV cache check" in line]
    assert len(checks) == len(PROMPTS) and all(line.endswith(": yes") for line in checks), \
        f"the KV cache check holds for every prompt: {checks}"


def test_says_whether_hooks_are_compiled_out(output, hooks_enabled):
    assert (COMPILED_OUT in output.lines) == (not hooks_enabled), "section 2 says whether hooks are compiled out"


def test_hooks_compiled_out(output, hooks_enabled):
    if hooks_enabled:
        pytest.skip("hooks are enabled in this build: the other cases check the record and the shapes")
    with Checks() as check:
        check.require(not os.path.exists(output.record), "nothing recorded when hooks are compiled out")
        check.require(not any(line.startswith(SECTIONS[2]) for line in output.lines), "no shapes when compiled out")


# --- hooks on: the record ---

def test_says_how_many_calls_were_written(output, enabled):
    assert f"  {len(expected_steps())} calls of attention_block::forward written to {output.record}" in output.lines, \
        "section 2 says how many calls were written where"


def test_record(output, enabled):
    with open(output.record, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    steps = expected_steps()
    assert len(records) == len(steps), f"{len(steps)} records in {output.record}, got {len(records)}"
    with Checks() as check:
        check.require([p["name"] for p in records[0].get("signature", [])] == PARAMS, f"the signature: {records[0]}")
        check.require(all("signature" not in r for r in records[1:]), "the signature in the first record only")
        for r, (_, ids, mask, past, logits) in zip(records, steps):
            check.require(r["function"] == "attention_block::forward", f"the function's name: {r['function']}")
            kwargs = dict(r["kwargs"])
            check.require(list(kwargs) == PARAMS, f"every parameter by name: {list(kwargs)}")
            cache = kwargs["past_key_values"]["list"]
            got = (shape_of(kwargs["input_ids"]), shape_of(kwargs["attention_mask"]), [shape_of(t) for t in cache])
            check.require(got == (ids, mask, [past, past]),
                          f"a record's shapes: {got}, expected {(ids, mask, [past, past])}")
            check.require(kwargs["input_ids"]["dtype"] == "int64" and cache[0]["dtype"] == "float32", "the dtypes")
            result = r["result"]["tuple"]
            check.require(shape_of(result[0]) == logits, f"the logits' shape recorded: {result[0]}")


# --- hooks on: the dynamic shapes, in every format ---

@pytest.fixture(scope="module")
def shapes_section(output, enabled):
    return section(output.lines, 2)


@pytest.fixture(scope="module")
def torch_json(shapes_section):
    return json.loads("".join(indented_block(shapes_section, "  torch.export dynamic_shapes:")))


@pytest.fixture(scope="module")
def trtexec_flags(shapes_section):
    trtexec = " ".join(indented_block(shapes_section, "  trtexec:")).split()
    return dict(flag.split("=", 1) for flag in trtexec)


def test_torch_export_dynamic_shapes(enabled, torch_json):
    with Checks() as check:
        check.require(list(torch_json) == PARAMS, f"dynamic shapes of every parameter, by name: {list(torch_json)}")
        batch = torch_json["input_ids"].get("0")
        check.require(set(torch_json["input_ids"]) == {"0", "1"}, f"input_ids: batch and sequence dynamic: {torch_json}")
        check.require(set(torch_json["attention_mask"]) == {"0", "1"}, "attention_mask: batch and total length dynamic")
        cache = torch_json["past_key_values"]
        assert isinstance(cache, list) and len(cache) == 2, f"past_key_values: a list of key and value: {cache}"
        for t in cache:
            check.require(set(t) == {"0", "2"},
                          f"a cache tensor: batch and past length dynamic, heads and head_dim static: {t}")
        labels = [torch_json["attention_mask"]["0"]] + [t["0"] for t in cache]
        check.require(batch == "batch_size" and all(label == batch for label in labels),
                      f"one batch label shared: {torch_json}")
        seq, total, past = torch_json["input_ids"]["1"], torch_json["attention_mask"]["1"], cache[0]["2"]
        check.require(len({seq, total, past}) == 3 and cache[1]["2"] == past,
                      f"sequence, total and past lengths each their own label, shared by key and value: {torch_json}")


def test_trtexec_profile(enabled, trtexec_flags):
    flags = trtexec_flags
    assert sorted(flags) == ["--maxShapes", "--minShapes", "--optShapes"], f"trtexec flags: {sorted(flags)}"
    lengths = [n for _, n in PROMPTS]
    longest = max(lengths) + NEW_TOKENS - 1
    # Every profile point satisfies total = sequence + past (the relation the engine finds), so min and max of the
    # mask are widened to the sum of the others' min and max: 1 + 0, and the longest prompt + the longest past.
    want_min = {"input_ids": dims(1, 1), "attention_mask": dims(1, 1 + 0),
                "past_key_values.0": dims(1, HEADS, 0, HEAD_DIM), "past_key_values.1": dims(1, HEADS, 0, HEAD_DIM)}
    want_max = {"input_ids": dims(2, max(lengths)), "attention_mask": dims(2, max(lengths) + longest - 1),
                "past_key_values.0": dims(2, HEADS, longest - 1, HEAD_DIM),
                "past_key_values.1": dims(2, HEADS, longest - 1, HEAD_DIM)}
    with Checks() as check:
        for kind in ["--minShapes", "--optShapes", "--maxShapes"]:
            point = {name: [int(d) for d in shape.split("x")] for name, shape in profile(flags[kind]).items()}
            check.require(point["attention_mask"][1] == point["input_ids"][1] + point["past_key_values.0"][2],
                          f"{kind}: total = sequence + past holds at the profile point: {flags[kind]}")
        check.require(list(profile(flags["--minShapes"])) == TENSOR_NAMES,
                      f"trtexec names every tensor leaf: {flags['--minShapes']}")
        check.expect("trtexec min shapes", profile(flags["--minShapes"]), want_min)
        check.expect("trtexec max shapes", profile(flags["--maxShapes"]), want_max)


def test_onnx_runtime_options_equal_trtexec(enabled, shapes_section, trtexec_flags):
    ort = dict(line.split("=", 1) for line in indented_block(shapes_section, "  ONNX Runtime TensorRT provider options:"))
    with Checks() as check:
        for kind in ["min", "opt", "max"]:
            check.expect(f"ONNX Runtime {kind} shapes equal trtexec's", profile(ort[f"trt_profile_{kind}_shapes"]),
                         profile(trtexec_flags[f"--{kind}Shapes"]))


def test_report(enabled, shapes_section, torch_json):
    report = indented_block(shapes_section, "  report:")
    past = torch_json["past_key_values"][0]["2"]
    with Checks() as check:
        check.require(report[0].split() == ["input", "dtype", "shapes", "seen"], f"the report's header: {report[0]}")
        for name in TENSOR_NAMES:
            check.require(any(line.split()[:1] == [name] for line in report), f"the report lists {name}")
        check.require(sum("dim 2: " + past in line for line in report) == 2, f"the report's cache dims: {report}")


# --- hooks on: the record file, read by the command-line engine, gives the same shapes as the in-process observer ---

def test_hookscope_shapes_agrees_torch(enabled, output, hookscope_shapes, torch_json):
    from_file = json.loads(checked_run([hookscope_shapes, "infer", output.record] + CLI).stdout)
    assert from_file == torch_json, f"hookscope-shapes on the record: {from_file}, in process: {torch_json}"


def test_hookscope_shapes_agrees_trtexec(enabled, output, hookscope_shapes, trtexec_flags):
    trt = checked_run([hookscope_shapes, "infer", output.record] + CLI + ["--format", "trtexec"]).stdout.split()
    assert dict(f.split("=", 1) for f in trt) == trtexec_flags, f"hookscope-shapes' trtexec flags: {trt}"
