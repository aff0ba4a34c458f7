#!/usr/bin/env python3
"""Checks the examples' output: its structure and its deterministic content, never timings.

Usage:
  check_demo.py DEMO [--hooks=on|off]         the tiny_llm demo (examples/tiny_llm), run twice
  check_demo.py trace PROGRAM [--hooks=on|off]
      lowering_passes run with HOOKSCOPE_TRACE (from the environment; default fold_constants,eliminate_*):
      the traced passes, and only they, appear on stderr.
"""
import json
import os
import re
import subprocess
import sys

SECTIONS = ["== 1. Observing generation ==", "== 2. Inferring dynamic shapes ==", "== 3. What the hooks cost =="]
PROMPT = re.compile(r"^  prompt (\w+): batch (\d+) x (\d+) tokens, (with an image|text only); (\d+) new tokens$")
STEP = re.compile(r"^    step (\d+)\s+input_ids (\S+)\s+attention_mask (\S+)\s+past (\d+)\s+pixel_values (\S+)"
                  r"\s+-> logits (\S+)\s+[\d.]+ µs$")
TOKENS = re.compile(r"^    generated tokens \(sequence (\d+)\):((?: \d+)+)$")
FORWARD_PARAMS = ["input_ids", "attention_mask", "past_key_values", "pixel_values"]
VOCAB, IMAGE, HEADS, HEAD_DIM = 64, "3x16x16", 2, 16
COMPILED_OUT = "(hooks are compiled out in this build: the callbacks see no call)"


class CheckError(Exception):
    pass


def require(ok, what):
    if not ok:
        raise CheckError(what)


def run(argv, env=None):
    done = subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", timeout=120, env=env)
    if done.returncode != 0:
        raise CheckError(f"{argv[0]} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def section_lines(lines, index):
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


def check_generation(lines, hooks):
    """Section 1: per prompt, the shapes of every step (hooks on) and the generated tokens. Returns the tokens."""
    require((COMPILED_OUT in lines) == (not hooks), "section 1 says whether hooks are compiled out")
    prompts = [i for i, line in enumerate(lines) if PROMPT.match(line)]
    require(len(prompts) == 2, f"two prompts in section 1, found {len(prompts)}")
    tokens = {}
    for n, start in enumerate(prompts):
        name, batch, length, image, new_tokens = PROMPT.match(lines[start]).groups()
        batch, length, new_tokens = int(batch), int(length), int(new_tokens)
        block = lines[start + 1:prompts[n + 1] if n + 1 < len(prompts) else len(lines)]
        steps = [STEP.match(line).groups() for line in block if STEP.match(line)]
        want = expected_steps(batch, length, image == "with an image", new_tokens) if hooks else []
        got = [(ids, mask, int(past), pixels, logits) for _, ids, mask, past, pixels, logits in steps]
        require(got == want, f"prompt {name}: step shapes\n  expected {want}\n  got      {got}")
        require([int(s[0]) for s in steps] == list(range(len(want))), f"prompt {name}: steps numbered from 0")
        rows = [TOKENS.match(line).groups() for line in block if TOKENS.match(line)]
        require([int(r[0]) for r in rows] == list(range(batch)), f"prompt {name}: one token line per sequence")
        for _, ids in rows:
            values = [int(t) for t in ids.split()]
            require(len(values) == new_tokens and all(0 <= t < VOCAB for t in values),
                    f"prompt {name}: {new_tokens} token ids in [0, {VOCAB})")
        tokens[name] = [r[1].strip() for r in rows]
    return tokens


def cache_shape(record):
    return dict(record["kwargs"])["past_key_values"]


def check_inference(lines, hooks):
    """Section 2's second part: hookscope::input_observer's inferred shapes."""
    require("Inferring dynamic shapes with hookscope::input_observer:" in lines, "the shape inference part")
    if not hooks:
        require(any("nothing is observed, so there is no shape to infer" in line for line in lines),
                "section 2 says there is nothing to infer without hooks")
        return
    require(not any("shape inference failed" in line for line in lines), "shape inference did not fail")
    require(any(line.startswith("  observed 6 calls of model::forward") for line in lines), "6 calls observed")
    torch = json.loads(lines[lines.index("  torch.export dynamic_shapes:") + 1])
    require(list(torch) == FORWARD_PARAMS, f"torch.export dynamic_shapes keyed by {FORWARD_PARAMS}")
    # Worked out by hand from the calls: prompt A (batch 1, 7 tokens, image) and prompt B (batch 2, 5 tokens),
    # a prefill and two decode steps each. Batch varies (1, 2), so does every length; the cache is empty at
    # prefill (past 0) then 7, 8 / 5, 6; pixel_values is 1 at A's prefill and the 0-batch stand-in elsewhere.
    cache = {"0": "batch_size", "2": "past_sequence_length"}
    require(torch == {"input_ids": {"0": "batch_size", "1": "sequence_length"},
                      "attention_mask": {"0": "batch_size", "1": "total_sequence_length"},
                      "past_key_values": [cache, cache, cache, cache],
                      # 1,0,0,0,0,0 is not the batch (1,1,1,2,2,2): a shared batch_size would tell torch.export they
                      # are equal (issue 12, "labels never lie"), so the image's batch has a name of its own.
                      "pixel_values": {"0": "pixel_values_dim_0"}}, f"the inferred dynamic shapes, got {torch}")
    trtexec = lines[lines.index("  trtexec:") + 1].split()
    # One consistent profile (issue 12): attention_mask = input_ids + past in every call, so its min 5 and max 9 are
    # widened to 1 + 0 and 7 + 8 (the per-dim extremes 1x5 / 2x9 were no shape the model can run with those).
    require(trtexec[0].startswith("--minShapes=input_ids:1x1,attention_mask:1x1,past_key_values.key_0:1x2x0x16,")
            and trtexec[2].startswith("--maxShapes=input_ids:2x7,attention_mask:2x15,past_key_values.key_0:2x2x8x16,"),
            f"the TensorRT profile's min and max shapes, got {trtexec}")
    require(any("dimension 0 of 'pixel_values'" in line and "only seen as 0 and 1" in line for line in lines),
            "the 0/1 specialisation warning for pixel_values")
    for title in ("  trtexec:", "  ONNX Runtime TensorRT provider options:", "  report:"):
        require(title in lines, f"section 2 shows {title.strip()!r}")


def check_records(lines, hooks):
    """Section 2: the JSON Lines records of call_recorder, and the shape inference (when it exists)."""
    check_inference(lines, hooks)
    if not hooks:
        require("  (hooks are compiled out in this build: the recorder records nothing)" in lines,
                "section 2 says the recorder records nothing")
        return
    start = next((i for i, line in enumerate(lines) if line.endswith("the first two records (JSON Lines):")), None)
    require(start is not None, "section 2 announces the first two records")
    require(lines[start].strip().startswith("3 calls recorded of 4"), "the recorder kept 3 calls of 4")
    records = [json.loads(line) for line in lines[start + 1:start + 3]]
    for r in records:
        require(r["function"] == "tiny_llm::model::forward", f"record of tiny_llm::model::forward, got {r['function']!r}")
        require([k for k, _ in r["kwargs"]] == FORWARD_PARAMS, f"kwargs named {FORWARD_PARAMS}")
        require(r["args"] == [] and isinstance(r["latency_ns"], int), "no positional args, an integer latency")
        require(r["result"]["dtype"] == "float32", "the logits are recorded as the result")
    require([p["name"] for p in records[0]["signature"]] == FORWARD_PARAMS, "the first record carries the signature")
    first, second = (dict(r["kwargs"]) for r in records)
    require(first["input_ids"] == {"shape": [1, 7], "dtype": "int64"}, "prefill input_ids 1x7 int64")
    require(first["pixel_values"] == {"shape": [1, 3, 16, 16], "dtype": "float32"}, "prefill pixel_values")
    require(second["input_ids"]["shape"] == [1, 1] and second["pixel_values"] is None, "decode: 1x1, no image")
    for record, past in ((first, 0), (second, 7)):
        cache = record["past_key_values"]
        require(cache["struct"] == "DynamicCache", "past_key_values captured as DynamicCache")
        require([name for name, _ in cache["fields"]] == ["key_0", "value_0", "key_1", "value_1"], "cache fields")
        require(all(v["shape"] == [1, HEADS, past, HEAD_DIM] for _, v in cache["fields"]), f"cache past {past}")


def check_cost(lines):
    """Section 3: its rows and statements, never the figures."""
    text = "\n".join(lines)
    for label in ("median of", "no callback attached", "empty pre + post callbacks", "pre + post callbacks (section",
                  "call_recorder", "-Dhooks=false"):
        require(label in text, f"section 3 mentions {label!r}")


def check_demo(program, hooks):
    runs = []
    for _ in range(2):
        lines = run([program]).stdout.splitlines()
        positions = [lines.index(s) if s in lines else -1 for s in SECTIONS]
        require(-1 not in positions and positions == sorted(positions), f"the section headers, in order: {SECTIONS}")
        runs.append(check_generation(section_lines(lines, 0), hooks))
        check_records(section_lines(lines, 1), hooks)
        check_cost(section_lines(lines, 2))
    require(runs[0] == runs[1], f"the same tokens in two runs: {runs[0]} vs {runs[1]}")
    print(f"ok: {program}: sections, per-step shapes, records and tokens {runs[0]} (hooks {'on' if hooks else 'off'})")


def check_trace(program, hooks):
    env = dict(os.environ)
    env.setdefault("HOOKSCOPE_TRACE", "passes::fold_constants,passes::eliminate_*")
    done = run([program], env)
    traced = [line for line in done.stderr.splitlines() if line.startswith("hookscope: trace: ")]
    want = [] if not hooks else [
        "hookscope: trace: passes::fold_constants(graph=graph(9 ops))",
        "hookscope: trace: passes::fold_constants returned graph(9 ops)",
        "hookscope: trace: passes::eliminate_dead_code(graph=graph(9 ops))",
        "hookscope: trace: passes::eliminate_dead_code returned graph(5 ops)",
    ] * 2  # the program lowers twice: once observed by its own callbacks, once not; the trace sees both
    require(traced == want, "trace lines (HOOKSCOPE_TRACE=%s)\n  expected %s\n  got      %s"
            % (env["HOOKSCOPE_TRACE"], want, traced))
    print(f"ok: {program}: {len(traced)} trace lines for HOOKSCOPE_TRACE={env['HOOKSCOPE_TRACE']}")


def main(argv):
    hooks = "--hooks=off" not in argv
    argv = [a for a in argv if not a.startswith("--hooks=")]
    try:
        if argv[:1] == ["trace"] and len(argv) == 2:
            check_trace(argv[1], hooks)
        elif len(argv) == 1:
            check_demo(argv[0], hooks)
        else:
            sys.exit(__doc__)
    except (CheckError, ValueError, KeyError, TypeError, IndexError) as e:
        sys.exit(f"check_demo.py: FAILED: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
