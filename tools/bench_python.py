#!/usr/bin/env python3
"""Observe + infer cost, hookscope.torch.InputObserver vs onnx-diagnostic's InputObserver (the reference), on the
same calls: N forward calls of varying batch and length inside `with observer(model)`, then infer_dynamic_shapes()
and infer_arguments(). Two models: a small module taking a tuple cache, and a tiny Llama's decode steps with
transformers' DynamicCache (registered by transformers' register_cache_pytrees_for_model; decode steps only, since
the reference refuses a generate() whose prefill has an empty cache). Prints a Markdown table (median of REPEAT runs,
milliseconds); the Llama's forward time is in both columns.

Run with the venv of tools/python_env.sh (Debian's /usr/bin/python3 made it):
  build/pyenv/bin/python tools/bench_python.py [--repeat 5]
"""
import argparse
import copy
import statistics
import time

import torch

from hookscope.torch import InputObserver as HookscopeObserver
from onnx_diagnostic.investigate.input_observer import InputObserver as ReferenceObserver


class Model(torch.nn.Module):
    def forward(self, input_ids, attention_mask, past=None):
        return input_ids.sum() + attention_mask.sum()


def inputs(n):
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(n):
        b, s = 1 + i % 3, 1 + i % 17
        out.append(dict(input_ids=torch.randint(0, 10, (b, s), generator=g),
                        attention_mask=torch.ones(b, s + i % 5, dtype=torch.int64),
                        past=(torch.zeros(b, 2, i % 11, 4), torch.zeros(b, 2, i % 11, 4)) if i else None))
    return out


def llama_calls(n):
    """A tiny Llama and n decode calls (batch 1..3, past 4..9) with a filled DynamicCache each."""
    import transformers
    from transformers.exporters.exporter_dynamo import register_cache_pytrees_for_model
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=100, attn_implementation="eager")
    model = transformers.LlamaForCausalLM(cfg).eval()
    register_cache_pytrees_for_model(model)
    g = torch.Generator().manual_seed(0)
    prefilled = {}
    calls = []
    for i in range(n):
        b, past = 1 + i % 3, 4 + i % 6
        if (b, past) not in prefilled:
            with torch.no_grad():
                prefilled[b, past] = model(input_ids=torch.randint(0, 100, (b, past), generator=g),
                                           use_cache=True).past_key_values
        calls.append(dict(input_ids=torch.randint(0, 100, (b, 1), generator=g),
                          position_ids=torch.full((b, 1), past), cache=copy.deepcopy(prefilled[b, past])))
    return model, calls


def run(observer_cls, calls, store, model=None):
    model = model if model is not None else Model()
    calls = copy.deepcopy(calls)  # the model updates a DynamicCache in place: every run starts from the same one
    if observer_cls is None:  # the model alone
        start = time.perf_counter()
        with torch.no_grad():
            for kw in calls:
                model(**kw)
        return time.perf_counter() - start, 0.0
    obs = observer_cls()
    start = time.perf_counter()
    with obs(model, store_n_calls=store), torch.no_grad():
        for kw in calls:
            model(**kw)
    vars(model).pop("forward", None)  # the reference leaves the bound method as an instance attribute
    observed = time.perf_counter() - start
    obs.infer_dynamic_shapes()
    obs.infer_arguments()
    return observed, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    print("| model | calls (all stored) | model alone | hookscope observe | hookscope observe+infer | onnx-diagnostic observe | "
          "onnx-diagnostic observe+infer |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, n in (("tuple cache", 3), ("tuple cache", 1000), ("Llama + DynamicCache", 3),
                     ("Llama + DynamicCache", 1000)):
        model, calls = llama_calls(n) if label.startswith("Llama") else (None, inputs(n))
        row = [statistics.median(run(None, calls, n, model)[0] for _ in range(a.repeat)) * 1e3]
        for cls in (HookscopeObserver, ReferenceObserver):
            runs = [run(cls, calls, n, model) for _ in range(a.repeat)]
            row += [statistics.median(r[0] for r in runs) * 1e3, statistics.median(r[1] for r in runs) * 1e3]
        print(f"| {label} | {n} | " + " | ".join(f"{x:.2f} ms" for x in row) + " |")


if __name__ == "__main__":
    main()
