#!/usr/bin/env python3
"""InputObserver cost: hookscope.torch.InputObserver against torch.onnx.InputObserver (the anchor, torch >= 2.11) and
onnx-diagnostic's (the reference), on the same calls, in one process.

Rows (every call stored, as each observer's store_n_calls allows):
- per-call overhead: (observed - plain model) / calls, microseconds, for a small module taking a tuple cache;
- observe + infer: the `with observer(model)` block of N calls, then infer_dynamic_shapes() and infer_arguments(),
  milliseconds, the model's own time included;
- a tiny Llama's decode steps with transformers' DynamicCache (registered by register_cache_pytrees_for_model;
  decode steps only: onnx-diagnostic refuses a generate() whose prefill has an empty cache).

Each figure is the median of --repeat runs after one warm-up run, with gc.collect() before each run (single runs
on a loaded machine jump by 150 ms). Ratios are against torch.onnx's. Prints a Markdown table.

Run with the test venv (tools/python_env.sh; Debian's /usr/bin/python3 made it), the package installed first:
  build/pyenv/bin/python bench/input_observer_bench.py [--repeat 7] [--calls 1000] [--llama-calls 100] [--no-llama]
"""
import argparse
import copy
import gc
import statistics
import time

import torch

from hookscope.torch import InputObserver as HookscopeObserver

OBSERVERS = {"hookscope": HookscopeObserver}
try:
    from torch.onnx import InputObserver as TorchOnnxObserver
    OBSERVERS["torch.onnx"] = TorchOnnxObserver
except ImportError:  # torch < 2.11
    pass
try:
    from onnx_diagnostic.investigate.input_observer import InputObserver as OnnxDiagnosticObserver
    OBSERVERS["onnx-diagnostic"] = OnnxDiagnosticObserver
except ImportError:
    pass


class TupleCache(torch.nn.Module):
    def forward(self, input_ids, attention_mask, past=None):
        return input_ids.sum() + attention_mask.sum()


def tuple_cache_calls(n):
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


def run(observer_cls, model, calls):
    """(seconds observing, seconds observing + inferring); the plain model when observer_cls is None."""
    calls = copy.deepcopy(calls)  # the model updates a DynamicCache in place: every run starts from the same one
    gc.collect()
    if observer_cls is None:
        start = time.perf_counter()
        with torch.no_grad():
            for kw in calls:
                model(**kw)
        elapsed = time.perf_counter() - start
        return elapsed, elapsed
    obs = observer_cls()
    start = time.perf_counter()
    with obs(model, store_n_calls=len(calls)), torch.no_grad():
        for kw in calls:
            model(**kw)
    observed = time.perf_counter() - start
    obs.infer_dynamic_shapes()
    obs.infer_arguments()
    total = time.perf_counter() - start
    vars(model).pop("forward", None)  # a reference may leave the bound method as an instance attribute
    return observed, total


def medians(model, calls, repeat):
    """{name: (median observe, median observe+infer)} with None for the plain model, runs interleaved."""
    names = [None, *OBSERVERS]
    for name in names:  # warm-up
        run(OBSERVERS.get(name), model, calls)
    runs = {name: [] for name in names}
    for _ in range(repeat):
        for name in names:
            runs[name].append(run(OBSERVERS.get(name), model, calls))
    return {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
            for name, rs in runs.items()}


def ratio(x, anchor):
    return f"{x / anchor:.2f}x" if anchor else "-"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--llama-calls", type=int, default=100, help="decode calls of the long Llama row")
    p.add_argument("--no-llama", action="store_true")
    p.add_argument("--threads", type=int, default=1, help="torch's intra-op threads (1: steadier on a shared machine)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    names = list(OBSERVERS)
    anchor = "torch.onnx" if "torch.onnx" in OBSERVERS else None
    print(f"torch {torch.__version__}, {a.threads} thread(s); medians of {a.repeat} runs; ratios against "
          f"{anchor or '(no torch.onnx)'}\n")
    print("| row | plain model | " + " | ".join(names) + " | " +
          " | ".join(f"{n} / {anchor}" for n in names if anchor and n != anchor) + " |")
    print("|---|---:|" + "---:|" * len(names) + "---:|" * (len(names) - 1 if anchor else 0))

    def row(label, plain, values, unit):
        cells = [f"{values[n]:.1f} {unit}" for n in names]
        ratios = [ratio(values[n], values[anchor]) for n in names if anchor and n != anchor]
        print(f"| {label} | {plain} | " + " | ".join(cells + ratios) + " |")

    n = a.calls
    m = medians(TupleCache(), tuple_cache_calls(n), a.repeat)
    plain = m[None][0]
    row(f"tuple cache: per-call overhead ({n} calls)", f"{plain / n * 1e6:.1f} µs",
        {k: (v[0] - plain) / n * 1e6 for k, v in m.items() if k}, "µs")
    row(f"tuple cache: observe + infer, {n} stored calls", f"{plain * 1e3:.1f} ms",
        {k: v[1] * 1e3 for k, v in m.items() if k}, "ms")
    m3 = medians(TupleCache(), tuple_cache_calls(3), a.repeat)
    row("tuple cache: observe + infer, 3 stored calls", f"{m3[None][0] * 1e3:.2f} ms",
        {k: v[1] * 1e3 for k, v in m3.items() if k}, "ms")
    if not a.no_llama:
        for k in (3, a.llama_calls):
            model, calls = llama_calls(k)
            ml = medians(model, calls, a.repeat)
            row(f"Llama + DynamicCache decode: observe + infer, {k} stored calls", f"{ml[None][0] * 1e3:.1f} ms",
                {name: v[1] * 1e3 for name, v in ml.items() if name}, "ms")


if __name__ == "__main__":
    main()
