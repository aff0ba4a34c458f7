#!/usr/bin/env python3
"""Checks the libtorch_attention example's output: its structure and deterministic content, never timings.

Usage: check_libtorch_example.py PROGRAM HOOKSCOPE_SHAPES [--hooks=on|off]

Runs PROGRAM with a record file in a temporary directory, then checks: every generation step's shapes (prefill and
decode steps of batch 1 x 7 and batch 2 x 5 prompts, the KV cache growing by one position per step), the KV cache
check, and with hooks on: the JSON Lines record (one line per call, shapes equal to the printed steps), the dynamic
shapes in every format (batch and sequence dims of input_ids and attention_mask dynamic, the cache tensors dynamic
in batch and past length only, labels shared), and that hookscope-shapes infers the same from the record file.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

VOCAB, HEADS, HEAD_DIM = 32, 2, 8
PROMPTS = [(1, 7), (2, 5)]
NEW_TOKENS = 3
SECTIONS = ["== 1. Generation", "== 2. Recording", "== 3. Dynamic shapes"]
STEP = re.compile(r"^    (prefill|decode)\s+input_ids (\S+)\s+attention_mask (\S+)\s+past (\S+)\s+-> logits (\S+)$")
PROMPT = re.compile(r"^  batch (\d+), prompt of (\d+) tokens, (\d+) new tokens$")
COMPILED_OUT = "  (hooks are compiled out in this build: nothing is recorded, so there is no shape to infer)"
PARAMS = ["input_ids", "attention_mask", "past_key_values"]


class CheckError(Exception):
    pass


def require(ok, what):
    if not ok:
        raise CheckError(what)


def run(argv):
    done = subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", timeout=120)
    if done.returncode != 0:
        raise CheckError(f"{argv} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


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
    require(len(starts) == 1, f"one section '{SECTIONS[index]}'")
    start = starts[0]
    ends = [i for i, line in enumerate(lines) if i > start and line.startswith("== ")]
    return lines[start + 1:ends[0] if ends else len(lines)]


def check_generation(lines):
    body = section(lines, 0)
    prompts = [tuple(int(g) for g in m.groups()) for m in map(PROMPT.match, body) if m]
    require(prompts == [(b, n, NEW_TOKENS) for b, n in PROMPTS], f"the prompts, in order: {prompts}")
    steps = [m.groups() for m in map(STEP.match, body) if m]
    require(steps == expected_steps(), "the shapes of every step:\n  got      " + "\n           ".join(map(str, steps)) +
            "\n  expected " + "\n           ".join(map(str, expected_steps())))
    checks = [line for line in body if "KV cache check" in line]
    require(len(checks) == len(PROMPTS) and all(line.endswith(": yes") for line in checks),
            f"the KV cache check holds for every prompt: {checks}")


def shape_of(value):
    require(isinstance(value, dict) and "shape" in value, f"a tensor: {value}")
    return dims(*value["shape"])


def check_record(path):
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    steps = expected_steps()
    require(len(records) == len(steps), f"{len(steps)} records in {path}, got {len(records)}")
    require([p["name"] for p in records[0].get("signature", [])] == PARAMS, f"the signature: {records[0]}")
    require(all("signature" not in r for r in records[1:]), "the signature in the first record only")
    for r, (_, ids, mask, past, logits) in zip(records, steps):
        require(r["function"] == "attention_block::forward", f"the function's name: {r['function']}")
        kwargs = dict(r["kwargs"])
        require(list(kwargs) == PARAMS, f"every parameter by name: {list(kwargs)}")
        cache = kwargs["past_key_values"]["list"]
        got = (shape_of(kwargs["input_ids"]), shape_of(kwargs["attention_mask"]), [shape_of(t) for t in cache])
        require(got == (ids, mask, [past, past]), f"a record's shapes: {got}, expected {(ids, mask, [past, past])}")
        require(kwargs["input_ids"]["dtype"] == "int64" and cache[0]["dtype"] == "float32", "the dtypes")
        result = r["result"]["tuple"]
        require(shape_of(result[0]) == logits, f"the logits' shape recorded: {result[0]}")


def indented_block(body, title):
    i = body.index(title)
    block = []
    for line in body[i + 1:]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    require(block, f"something under '{title}'")
    return block


def profile(text):
    """{name: shape} of one trtexec / ORT list 'a:1x2,b:3x4'."""
    return dict(item.split(":", 1) for item in text.split(","))


def check_shapes(body):
    torch_json = json.loads("".join(indented_block(body, "  torch.export dynamic_shapes:")))
    require(list(torch_json) == PARAMS, f"dynamic shapes of every parameter, by name: {list(torch_json)}")
    batch = torch_json["input_ids"].get("0")
    require(set(torch_json["input_ids"]) == {"0", "1"}, f"input_ids: batch and sequence dynamic: {torch_json}")
    require(set(torch_json["attention_mask"]) == {"0", "1"}, f"attention_mask: batch and total length dynamic")
    cache = torch_json["past_key_values"]
    require(isinstance(cache, list) and len(cache) == 2, f"past_key_values: a list of key and value: {cache}")
    for t in cache:
        require(set(t) == {"0", "2"}, f"a cache tensor: batch and past length dynamic, heads and head_dim static: {t}")
    labels = [torch_json["attention_mask"]["0"]] + [t["0"] for t in cache]
    require(batch == "batch_size" and all(label == batch for label in labels), f"one batch label shared: {torch_json}")
    seq, total, past = torch_json["input_ids"]["1"], torch_json["attention_mask"]["1"], cache[0]["2"]
    require(len({seq, total, past}) == 3 and cache[1]["2"] == past,
            f"sequence, total and past lengths each their own label, shared by key and value: {torch_json}")

    trtexec = " ".join(indented_block(body, "  trtexec:")).split()
    flags = dict(flag.split("=", 1) for flag in trtexec)
    require(sorted(flags) == ["--maxShapes", "--minShapes", "--optShapes"], f"trtexec flags: {sorted(flags)}")
    names = ["input_ids", "attention_mask", "past_key_values.0", "past_key_values.1"]
    lengths = [n for _, n in PROMPTS]
    longest = max(lengths) + NEW_TOKENS - 1
    # Every profile point satisfies total = sequence + past (the relation the engine finds), so min and max of the
    # mask are widened to the sum of the others' min and max: 1 + 0, and the longest prompt + the longest past.
    want_min = {"input_ids": dims(1, 1), "attention_mask": dims(1, 1 + 0),
                "past_key_values.0": dims(1, HEADS, 0, HEAD_DIM), "past_key_values.1": dims(1, HEADS, 0, HEAD_DIM)}
    want_max = {"input_ids": dims(2, max(lengths)), "attention_mask": dims(2, max(lengths) + longest - 1),
                "past_key_values.0": dims(2, HEADS, longest - 1, HEAD_DIM),
                "past_key_values.1": dims(2, HEADS, longest - 1, HEAD_DIM)}
    for kind in ["--minShapes", "--optShapes", "--maxShapes"]:
        point = {name: [int(d) for d in shape.split("x")] for name, shape in profile(flags[kind]).items()}
        require(point["attention_mask"][1] == point["input_ids"][1] + point["past_key_values.0"][2],
                f"{kind}: total = sequence + past holds at the profile point: {flags[kind]}")
    require(list(profile(flags["--minShapes"])) == names, f"trtexec names every tensor leaf: {flags['--minShapes']}")
    require(profile(flags["--minShapes"]) == want_min, f"trtexec min shapes: {flags['--minShapes']}, want {want_min}")
    require(profile(flags["--maxShapes"]) == want_max, f"trtexec max shapes: {flags['--maxShapes']}, want {want_max}")

    ort = dict(line.split("=", 1) for line in indented_block(body, "  ONNX Runtime TensorRT provider options:"))
    for kind in ["min", "opt", "max"]:
        require(profile(ort[f"trt_profile_{kind}_shapes"]) == profile(flags[f"--{kind}Shapes"]),
                f"ONNX Runtime {kind} shapes equal trtexec's")

    report = indented_block(body, "  report:")
    require(report[0].split() == ["input", "dtype", "shapes", "seen"], f"the report's header: {report[0]}")
    for name in names:
        require(any(line.split()[:1] == [name] for line in report), f"the report lists {name}")
    require(sum("dim 2: " + past in line for line in report) == 2, f"the report's cache dims: {report}")
    return torch_json, flags


def main():
    args = sys.argv[1:]
    hooks = "--hooks=off" not in args
    args = [a for a in args if not a.startswith("--hooks=")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    program, shapes_cli = args
    try:
        with tempfile.TemporaryDirectory() as tmp:
            record = os.path.join(tmp, "forward.jsonl")
            done = run([program, record])
            lines = done.stdout.splitlines()
            check_generation(lines)
            require((COMPILED_OUT in lines) == (not hooks), "section 2 says whether hooks are compiled out")
            if not hooks:
                require(not os.path.exists(record), "nothing recorded when hooks are compiled out")
                require(not any(line.startswith(SECTIONS[2]) for line in lines), "no shapes when compiled out")
                print("OK: libtorch_attention generates, hooks compiled out: nothing recorded")
                return 0
            require(f"  {len(expected_steps())} calls of attention_block::forward written to {record}" in lines,
                    "section 2 says how many calls were written where")
            check_record(record)
            torch_json, flags = check_shapes(section(lines, 2))
            # The record file, read by the command-line engine, gives the same shapes as the in-process observer.
            cli = ["--store-n-calls", "all", "--batch", "input_ids,attention_mask", "--dim-names"]
            from_file = json.loads(run([shapes_cli, "infer", record] + cli).stdout)
            require(from_file == torch_json, f"hookscope-shapes on the record: {from_file}, in process: {torch_json}")
            trt = run([shapes_cli, "infer", record] + cli + ["--format", "trtexec"]).stdout.split()
            require(dict(f.split("=", 1) for f in trt) == flags, f"hookscope-shapes' trtexec flags: {trt}")
    except (CheckError, ValueError, KeyError, IndexError, json.JSONDecodeError) as e:
        print(f"FAIL: {e}\n--- output of {program}:\n{done.stdout if 'done' in dir() else ''}", file=sys.stderr)
        return 1
    print("OK: libtorch_attention: steps, record, dynamic shapes in every format, hookscope-shapes agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
