"""The README's demo (examples/tiny_llm), run twice: its output's structure and deterministic content, never timings.
One case per section of each run, and one for the tokens, which must be the same in both runs."""
import json
import re

import pytest

from support import Checks, run

SECTIONS = ["== 1. Observing generation ==", "== 2. Inferring dynamic shapes ==", "== 3. What the hooks cost =="]
PROMPT = re.compile(r"^  prompt (\w+): batch (\d+) x (\d+) tokens, (with an image|text only); (\d+) new tokens$")
STEP = re.compile(r"^    step (\d+)\s+input_ids (\S+)\s+attention_mask (\S+)\s+past (\d+)\s+pixel_values (\S+)"
                  r"\s+-> logits (\S+)\s+[\d.]+ µs$")
TOKENS = re.compile(r"^    generated tokens \(sequence (\d+)\):((?: \d+)+)$")
FORWARD_PARAMS = ["input_ids", "attention_mask", "past_key_values", "pixel_values"]
VOCAB, IMAGE, HEADS, HEAD_DIM = 64, "3x16x16", 2, 16
COMPILED_OUT = "(hooks are compiled out in this build: the callbacks see no call)"
RUNS = ["first run", "second run"]


@pytest.fixture(scope="module")
def outputs(tiny_llm):
    """The stdout lines of two runs."""
    lines = []
    for _ in RUNS:
        done = run([tiny_llm], timeout=120)
        assert done.returncode == 0, (f"{tiny_llm} exited {done.returncode}\nstdout:\n{done.stdout}\n"
                                      f"stderr:\n{done.stderr}")
        lines.append(done.stdout.splitlines())
    return lines


def section_lines(lines, index):
    assert SECTIONS[index] in lines, f"no section {SECTIONS[index]!r}"
    start = lines.index(SECTIONS[index])
    end = lines.index(SECTIONS[index + 1]) if index + 1 < len(SECTIONS) else len(lines)
    return lines[start + 1:end]


def expected_steps(batch, length, image, new_tokens):
    """(input_ids, attention_mask, past, pixel_values, logits) of every forward call of one generation."""
    steps = [(f"{batch}x{length}", f"{batch}x{length}", 0, f"{batch}x{IMAGE}" if image else "none",
              f"{batch}x{length}x{VOCAB}")]
    for k in range(1, new_tokens):
        past = length + k - 1
        steps.append((f"{batch}x1", f"{batch}x{past + 1}", past, "none", f"{batch}x1x{VOCAB}"))
    return steps


def generation(lines, hooks, check):
    """Section 1: per prompt, the shapes of every step (hooks on) and the generated tokens. Returns the tokens."""
    check.require((COMPILED_OUT in lines) == (not hooks), "section 1 says whether hooks are compiled out")
    prompts = [i for i, line in enumerate(lines) if PROMPT.match(line)]
    check.require(len(prompts) == 2, f"two prompts in section 1, found {len(prompts)}")
    tokens = {}
    for n, start in enumerate(prompts):
        name, batch, length, image, new_tokens = PROMPT.match(lines[start]).groups()
        batch, length, new_tokens = int(batch), int(length), int(new_tokens)
        block = lines[start + 1:prompts[n + 1] if n + 1 < len(prompts) else len(lines)]
        steps = [STEP.match(line).groups() for line in block if STEP.match(line)]
        want = expected_steps(batch, length, image == "with an image", new_tokens) if hooks else []
        got = [(ids, mask, int(past), pixels, logits) for _, ids, mask, past, pixels, logits in steps]
        check.expect(f"prompt {name}: step shapes", got, want)
        check.require([int(s[0]) for s in steps] == list(range(len(want))), f"prompt {name}: steps numbered from 0")
        rows = [TOKENS.match(line).groups() for line in block if TOKENS.match(line)]
        check.require([int(r[0]) for r in rows] == list(range(batch)), f"prompt {name}: one token line per sequence")
        for _, ids in rows:
            values = [int(t) for t in ids.split()]
            check.require(len(values) == new_tokens and all(0 <= t < VOCAB for t in values),
                          f"prompt {name}: {new_tokens} token ids in [0, {VOCAB})")
        tokens[name] = [r[1].strip() for r in rows]
    return tokens


@pytest.mark.parametrize("run_index", range(len(RUNS)), ids=RUNS)
def test_section_headers_in_order(outputs, run_index):
    lines = outputs[run_index]
    positions = [lines.index(s) if s in lines else -1 for s in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), f"the section headers, in order: {SECTIONS}"


@pytest.mark.parametrize("run_index", range(len(RUNS)), ids=RUNS)
def test_generation(outputs, hooks_enabled, run_index):
    with Checks() as check:
        generation(section_lines(outputs[run_index], 0), hooks_enabled, check)


def test_same_tokens_in_two_runs(outputs, hooks_enabled):
    # The generation cases report what else is wrong in section 1 (these Checks are never asserted): here the tokens.
    runs = [generation(section_lines(lines, 0), hooks_enabled, Checks()) for lines in outputs]
    assert runs[0] == runs[1], f"the same tokens in two runs: {runs[0]} vs {runs[1]}"


@pytest.mark.parametrize("run_index", range(len(RUNS)), ids=RUNS)
def test_shape_inference(outputs, hooks_enabled, run_index):
    """Section 2's second part: hookscope::input_observer's inferred shapes."""
    lines = section_lines(outputs[run_index], 1)
    assert "Inferring dynamic shapes with hookscope::input_observer:" in lines, "the shape inference part"
    if not hooks_enabled:
        assert any("nothing is observed, so there is no shape to infer" in line for line in lines), \
            "section 2 says there is nothing to infer without hooks"
        return
    with Checks() as check:
        check.require(not any("shape inference failed" in line for line in lines), "shape inference did not fail")
        check.require(any(line.startswith("  observed 6 calls of model::forward") for line in lines), "6 calls observed")
        torch = json.loads(lines[lines.index("  torch.export dynamic_shapes:") + 1])
        check.expect(f"torch.export dynamic_shapes keyed by {FORWARD_PARAMS}", list(torch), FORWARD_PARAMS)
        # Worked out by hand from the calls: prompt A (batch 1, 7 tokens, image) and prompt B (batch 2, 5 tokens),
        # a prefill and two decode steps each. Batch varies (1, 2), so does every length; the cache is empty at
        # prefill (past 0) then 7, 8 / 5, 6; pixel_values is 1 at A's prefill and the 0-batch stand-in elsewhere.
        cache = {"0": "batch_size", "2": "past_sequence_length"}
        check.expect("the inferred dynamic shapes", torch,
                     {"input_ids": {"0": "batch_size", "1": "sequence_length"},
                      "attention_mask": {"0": "batch_size", "1": "total_sequence_length"},
                      "past_key_values": [cache, cache, cache, cache],
                      # 1,0,0,0,0,0 is not the batch (1,1,1,2,2,2): a shared batch_size would tell torch.export they
                      # are equal (a label is shared only by dimensions equal in every call), so the image's batch has a name of its own.
                      "pixel_values": {"0": "pixel_values_dim_0"}})
        trtexec = lines[lines.index("  trtexec:") + 1].split()
        # One consistent profile: attention_mask = input_ids + past in every call, so its min 5 and max 9
        # are widened to 1 + 0 and 7 + 8 (the per-dim extremes 1x5 / 2x9 were no shape the model can run with those).
        check.require(trtexec[0].startswith("--minShapes=input_ids:1x1,attention_mask:1x1,"
                                            "past_key_values.key_0:1x2x0x16,") and
                      trtexec[2].startswith("--maxShapes=input_ids:2x7,attention_mask:2x15,"
                                            "past_key_values.key_0:2x2x8x16,"),
                      f"the TensorRT profile's min and max shapes, got {trtexec}")
        check.require(any("dimension 0 of 'pixel_values'" in line and "only seen as 0 and 1" in line for line in lines),
                      "the 0/1 specialisation warning for pixel_values")
        for title in ("  trtexec:", "  ONNX Runtime TensorRT provider options:", "  report:"):
            check.require(title in lines, f"section 2 shows {title.strip()!r}")


@pytest.mark.parametrize("run_index", range(len(RUNS)), ids=RUNS)
def test_records(outputs, hooks_enabled, run_index):
    """Section 2: the JSON Lines records of call_recorder."""
    lines = section_lines(outputs[run_index], 1)
    if not hooks_enabled:
        assert "  (hooks are compiled out in this build: the recorder records nothing)" in lines, \
            "section 2 says the recorder records nothing"
        return
    start = next((i for i, line in enumerate(lines) if line.endswith("the first two records (JSON Lines):")), None)
    assert start is not None, "section 2 announces the first two records"
    with Checks() as check:
        check.require(lines[start].strip().startswith("3 calls recorded of 4"), "the recorder kept 3 calls of 4")
        records = [json.loads(line) for line in lines[start + 1:start + 3]]
        for r in records:
            check.expect("record of tiny_llm::model::forward", r["function"], "tiny_llm::model::forward")
            check.expect(f"kwargs named {FORWARD_PARAMS}", [k for k, _ in r["kwargs"]], FORWARD_PARAMS)
            check.require(r["args"] == [] and isinstance(r["latency_ns"], int), "no positional args, an integer latency")
            check.require(r["result"]["dtype"] == "float32", "the logits are recorded as the result")
        check.expect("the first record carries the signature", [p["name"] for p in records[0]["signature"]],
                     FORWARD_PARAMS)
        first, second = (dict(r["kwargs"]) for r in records)
        check.expect("prefill input_ids 1x7 int64", first["input_ids"], {"shape": [1, 7], "dtype": "int64"})
        check.expect("prefill pixel_values", first["pixel_values"], {"shape": [1, 3, 16, 16], "dtype": "float32"})
        check.require(second["input_ids"]["shape"] == [1, 1] and second["pixel_values"] is None, "decode: 1x1, no image")
        for record, past in ((first, 0), (second, 7)):
            cache = record["past_key_values"]
            check.expect("past_key_values captured as DynamicCache", cache["struct"], "DynamicCache")
            check.expect("cache fields", [name for name, _ in cache["fields"]], ["key_0", "value_0", "key_1", "value_1"])
            check.require(all(v["shape"] == [1, HEADS, past, HEAD_DIM] for _, v in cache["fields"]), f"cache past {past}")


@pytest.mark.parametrize("run_index", range(len(RUNS)), ids=RUNS)
def test_cost_section(outputs, run_index):
    """Section 3: its rows and statements, never the figures."""
    text = "\n".join(section_lines(outputs[run_index], 2))
    missing = [label for label in ("median of", "no callback attached", "empty pre + post callbacks",
                                   "pre + post callbacks (section", "call_recorder", "-Dhooks=false")
               if label not in text]
    assert not missing, f"section 3 does not mention {missing}"
